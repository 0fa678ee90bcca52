/* Vector code leaves the lanes nobody reads undefined (poison in LLVM IR): a reciprocal computed
   in lane 0 of {1.0, undef} / b, a lane moved into an 8-wide vector whose other lanes are
   undefined (Eigen's 4x4 inverse under AVX-512 does both). An unread lane has a zero adjoint,
   and 0 * poison is poison: the reverse sweep made the adjoint of b's real lane 1 garbage (14 of
   Eigen's 16 derivatives lost with no error). Reverse mode against central finite differences,
   forward mode against reverse, in double and float. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddiff_f(void *, ...) __asm__("__enzyme_fwddiff");
typedef double v2d __attribute__((vector_size(16)));
typedef double v8d __attribute__((vector_size(64)));
typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
#define N 4

__attribute__((noinline)) static double lanes_d(const double *x) {
  v2d a = {x[0], x[1]}, b = {x[2], x[3]};
  v2d m = a * b;
  v2d one = __builtin_shufflevector((v2d){1.0, 2.0}, (v2d){1.0, 2.0}, 0, -1);  /* {1, undef} */
  v2d r = one / b;                                                            /* lane 0 read */
  v8d w = __builtin_shufflevector(m, m, 1, -1, -1, -1, 0, -1, -1, -1);
  v8d v = __builtin_shufflevector(r, r, 0, 0, -1, -1, 0, -1, -1, -1);
  v8d p = w * v + w;
  return p[0] + 0.5 * p[4];
}

static double f(const double *x) { return lanes_d(x) + sin(x[1]); }

__attribute__((noinline)) static float lanes_f(const float *x) {
  v4f a = {x[0], x[1], x[2], x[3]};
  v4f one = __builtin_shufflevector((v4f){1.0f, 2.0f, 3.0f, 4.0f}, (v4f){0}, 0, 1, -1, -1);
  v4f r = one / (a * a + 1.0f);                                 /* lanes 0 and 1 read */
  v8f w = __builtin_shufflevector(r, a, 1, 6, -1, -1, -1, -1, 0, 7);
  return w[0] * w[1] + w[6] * w[7];
}

static void grad_d(void) {
  double x[N] = {0.8, -1.3, 1.7, 0.4}, dx[N] = {0}, t[N], dot = 0, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    double keep = x[i];
    x[i] = keep + h;
    double up = f(x);
    x[i] = keep - h;
    double down = f(x);
    x[i] = keep;
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], (up - down) / (2 * h), 1e-6);
    t[i] = cos(1.0 + i);
    dot += t[i] * dx[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, x, t), dot, 1e-9);
}

static void grad_f(void) {
  /* lanes_f is r1 * x2 + r0 * x3 with r0 = 1 / (x0^2 + 1), r1 = 2 / (x1^2 + 1): analytic */
  float x[N] = {0.8f, -1.3f, 1.7f, 0.4f}, dx[N] = {0}, t[N];
  double q0 = x[0] * x[0] + 1.0, q1 = x[1] * x[1] + 1.0, want[N], dot = 0;
  want[0] = -2.0 * x[0] * x[3] / (q0 * q0);
  want[1] = -4.0 * x[1] * x[2] / (q1 * q1);
  want[2] = 2.0 / q1;
  want[3] = 1.0 / q0;
  __enzyme_autodiff((void *)lanes_f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "fx[%d]", i);
    check(name, dx[i], want[i], 1e-6);
    t[i] = (float)cos(1.0 + i);
    dot += t[i] * want[i];
  }
  check("fwd_f", __enzyme_fwddiff_f((void *)lanes_f, enzyme_dup, x, t), dot, 1e-6);
}

int main(void) {
  grad_d();
  grad_f();
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
