#include <math.h>
#include <stdio.h>
/* Built with -g by tests/test_debug_locations.py: the derivatives of energy() (a call kept by
   noinline) must map to energy's own source lines, and damp's through its inlining. */
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static inline double damp(double t) {
  return exp(-0.5 * t * t);                     /* LINE_DAMP */
}

__attribute__((noinline)) double energy(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = sin(x[i]) * x[i];                /* LINE_SIN */
    s += damp(t) * t;                           /* LINE_SUM */
  }
  return s;
}

double total(const double *x, int n) { return 2 * energy(x, n); }

int main(void) {
  double x[4] = {0.3, -0.7, 1.1, 0.5}, dx[4] = {0};
  __enzyme_autodiff((void *)total, enzyme_dup, x, dx, enzyme_const, 4);
  double v[4] = {1, 0.5, -2, 0.25};
  double dir = __enzyme_fwddiff((void *)total, enzyme_dup, x, v, enzyme_const, 4);
  int bad = 0;
  double dot = 0;
  for (int i = 0; i < 4; i++) {
    double t = sin(x[i]) * x[i], dt = cos(x[i]) * x[i] + sin(x[i]);
    double want = 2 * (exp(-0.5 * t * t) * (1 - t * t)) * dt;
    printf("CHECK dx[%d] %.12g %.12g\n", i, dx[i], want);
    bad |= fabs(dx[i] - want) > 1e-10 * (1 + fabs(want));
    dot += want * v[i];
  }
  printf("CHECK forward %.12g %.12g\n", dir, dot);
  bad |= fabs(dir - dot) > 1e-10 * (1 + fabs(dot));
  return bad;
}
