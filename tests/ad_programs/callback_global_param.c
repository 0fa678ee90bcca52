// A parameter handed to a user callback through a global (MINPACK's and ODEPACK's classic
// interfaces have no user-data argument): the objective stores it, and a solver calls the
// residual, which reads it, through a function pointer. The global's adjoint was silently lost
// (a gradient of 0): the analysis of what uses the global did not follow calls through function
// pointers. Also through a global pointer to the parameter, and a callback that returns it.
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
double g_p;
double *g_pp;
typedef void (*residual)(const double *, double *);
typedef double (*source)(void);
__attribute__((noinline)) void solver(residual f, double *x, int iters) {
  double r;
  for (int k = 0; k < iters; k++) { f(x, &r); *x -= 0.5 * r; }
}
__attribute__((noinline)) double integrate(source s, int n) {
  double t = 0;
  for (int k = 0; k < n; k++) t += s() * (k + 1);
  return t;
}
static void resid(const double *x, double *r) { *r = sin(*x) - g_p; }
static void resid_ptr(const double *x, double *r) { *r = *x * *x - *g_pp; }
static double value(void) { return g_p * g_p; }
double f(const double *p) {
  double x = 0.0, y = 1.0;
  g_p = p[0];
  solver(resid, &x, 6);
  g_pp = (double *)&p[1];
  solver(resid_ptr, &y, 4);
  g_p = p[2];
  return x * y + integrate(value, 3);
}
int main(void) {
  enum { N = 3 };
  double p[N] = {0.4, 1.7, -0.6}, dp[N] = {0}, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
  for (int i = 0; i < N; i++) {
    double t[N] = {0}, s = p[i];
    t[i] = 1;
    p[i] = s + h; double fp = f(p);
    p[i] = s - h; double fm = f(p);
    p[i] = s;
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, p, t);
    printf("CHECK rev_%d %.9g %.9g\n", i, dp[i], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, (fp - fm) / (2 * h));
  }
  return 0;
}
