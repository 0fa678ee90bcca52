/* A float's bits returned by value in an integer register: a union of a double and a pointer
   (rax on x86-64), a double memcpy'd into `unsigned long long` and a float into `unsigned int`.
   The caller reads the float back out of the integer. The callee's derivative takes the returned
   integer as the float it carries (reverse mode: the return's adjoint goes in as that float;
   forward mode: its tangent comes back as the integer, as the caller keeps it). It was refused
   ("returns a float's bits in an integer"). Each line: enzyme-cc | analytic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;
typedef unsigned long long u64;
typedef unsigned int u32;
typedef union { double value; char *message; } Outcome;

__attribute__((noinline)) static Outcome attempt(double t) {
  Outcome r;
  if (t > -1.0) r.value = sqrt(t + 1.0) * t;
  else { r.message = malloc(4); r.message[0] = 0; }
  return r;
}
__attribute__((noinline)) static u64 square_bits(double v) {
  u64 b;
  double w = v * v;
  memcpy(&b, &w, sizeof b);
  return b;
}
__attribute__((noinline)) static u32 sin_bits(float v) {
  u32 b;
  float w = sinf(v);
  memcpy(&b, &w, sizeof b);
  return b;
}

double settle(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    Outcome r = attempt(x[i]);
    if (x[i] > -1.0) s += r.value * x[i]; else free(r.message);
  }
  u64 b = square_bits(x[0]);
  double v;
  memcpy(&v, &b, sizeof v);
  u32 fb = sin_bits((float)x[2]);
  float f;
  memcpy(&f, &fb, sizeof f);
  return s + 3 * v + f;
}

/* d/dt of t * t * sqrt(t + 1) where t > -1, else 0 */
static double d_attempt(double t) {
  return t > -1.0 ? 2 * t * sqrt(t + 1.0) + t * t * 0.5 / sqrt(t + 1.0) : 0.0;
}

int main(void) {
  double x[3] = {0.5, -2.0, 1.5}, dx[3] = {0};
  double want[3] = {d_attempt(x[0]) + 6 * x[0], d_attempt(x[1]),
                    d_attempt(x[2]) + cos((float)x[2])};
  __enzyme_autodiff((void *)settle, enzyme_dup, x, dx, enzyme_const, 3);
  for (int k = 0; k < 3; k++) {
    double tx[3] = {0};
    tx[k] = 1.0;
    double fwd = __enzyme_fwddiff((void *)settle, enzyme_dup, x, tx, enzyme_const, 3);
    printf("reverse dx[%d]: %.9g | %.9g\n", k, dx[k], want[k]);
    printf("forward dx[%d]: %.9g | %.9g\n", k, fwd, want[k]);
  }
  return 0;
}
