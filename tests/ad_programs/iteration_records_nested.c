/* Values of one iteration of an inner loop read by the reverse of several blocks of that
   iteration (both arms of a branch, and the block after them), inside an outer time-step loop
   that overwrites the memory they were loaded from: each iteration's latch pushes them once
   (ad/plan/plan.py, iteration records), also when the loop is nested in another (before, the outer
   loop's cycle hid that the blocks run once per inner iteration, and every block pushed its
   own copy). Checked against central finite differences and forward mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define N 7
#define STEPS 4

double steps(double *u, const double *c) {
  double s = 0;
  for (int t = 0; t < STEPS; t++) {
    for (int i = 0; i < N; i++) {
      double a = u[i], b = u[(i + 1) % N] * c[i], q = a * b;
      double r;
      if (q > 0.05)
        r = sin(q) * a + b * b;
      else
        r = exp(-q) * b - a * a;
      s += r * q + cos(a) * b;
      u[i] = 0.9 * a + 0.1 * r;          /* the next step reads what this one wrote */
    }
  }
  return s;
}

int main(void) {
  double u0[N], c[N], du[N], dc[N], u[N];
  for (int i = 0; i < N; i++) {
    u0[i] = 0.2 + 0.15 * i - 0.03 * i * i;
    c[i] = 0.5 + 0.1 * sin(i);
  }
  for (int i = 0; i < N; i++) u[i] = u0[i], du[i] = 0, dc[i] = 0;
  __enzyme_autodiff((void *)steps, enzyme_dup, u, du, enzyme_dup, c, dc);
  double h = 1e-6, dot = 0, vu[N], vc[N];
  char label[32];
  for (int k = 0; k < 2 * N; k++) {
    double *x = k < N ? c : u0, keep = x[k % N];
    x[k % N] = keep + h;
    for (int i = 0; i < N; i++) u[i] = u0[i];
    double up = steps(u, c);
    x[k % N] = keep - h;
    for (int i = 0; i < N; i++) u[i] = u0[i];
    double down = steps(u, c);
    x[k % N] = keep;
    snprintf(label, sizeof label, "d%s[%d]", k < N ? "c" : "u", k % N);
    check(label, k < N ? dc[k % N] : du[k % N], (up - down) / (2 * h));
  }
  for (int i = 0; i < N; i++) {
    vu[i] = 0.3 + 0.1 * i;
    vc[i] = 1.0 - 0.2 * i;
    dot += du[i] * vu[i] + dc[i] * vc[i];
    u[i] = u0[i];
  }
  double jv = __enzyme_fwddiff((void *)steps, enzyme_dup, u, vu, enzyme_dup, c, vc);
  check("forward=reverse", jv, dot);
  return failed != 0;
}
