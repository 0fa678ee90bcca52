/* __enzyme_set_fixed_point with the state in a global (as Fortran module variables and Enzyme's
   own examples have it) and the parameters in another, the loop carrying its error, a count and
   a tolerance it tightens from one iteration to the next. The gradient with respect to the
   global parameters (their implicit shadows, __enzyme_shadow) must equal central differences
   and the gradient through every iteration of the same loop without the marker; the state's
   shadow is zero afterwards; forward mode (tangents seeded in the shadows) matches reverse mode
   (dot-product test). */
#include <enzyme/fixed_point.h>
#include <math.h>
#include <stdio.h>

#define N 5
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern void *shadow_default(void *, int, int) __asm__("__enzyme_shadow");

static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1e-12 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

double u[N], p[N];

#define ITERATE(MARK)                                                                         \
  double err = 1, tol = 1e-6;                                                                 \
  long count = 0;                                                                             \
  for (int k = 0; k < N; k++)                                                                 \
    u[k] = 0;                                                                                 \
  while (err > tol) {                                                                         \
    MARK;                                                                                     \
    double t[N];                                                                              \
    err = 0;                                                                                  \
    for (int k = 0; k < N; k++)                                                               \
      t[k] = 0.25 * cos(u[k] - 0.5 * u[(k + 1) % N]) + p[k] * p[k];                           \
    for (int k = 0; k < N; k++) {                                                             \
      err += fabs(t[k] - u[k]);                                                               \
      u[k] = t[k];                                                                            \
    }                                                                                         \
    if (++count > 3)                                                                          \
      tol = tol * 1e-3 + 1e-16;                                                               \
  }                                                                                           \
  double s = 0;                                                                               \
  for (int k = 0; k < N; k++)                                                                 \
    s += u[k] * (k + 1);                                                                      \
  return s;

__attribute__((noinline)) double marked(void) {
  ITERATE(__enzyme_set_fixed_point(1e-28, (int64_t)-1, (void *)0, u, (int64_t)sizeof u))
}
__attribute__((noinline)) double plain(void) { ITERATE((void)0) }

/* a constant count of iterations of a function that is not inlined: the marked loop is kept
   from being unrolled, so it is still a loop when the link step outlines it */
__attribute__((noinline)) static void sweep(void) {
  double t[N];
  for (int k = 0; k < N; k++)
    t[k] = 0.05 * sin(u[k] + u[(k + 1) % N]) + p[k] * p[k];
  for (int k = 0; k < N; k++)
    u[k] = t[k];
}
#define COUNTED(MARK)                                                                         \
  for (int k = 0; k < N; k++)                                                                 \
    u[k] = 0;                                                                                 \
  for (int it = 0; it < 16; it++) {                                                           \
    MARK;                                                                                     \
    sweep();                                                                                  \
  }                                                                                           \
  return u[0] + 2 * u[1] + 3 * u[2] + 4 * u[3] + 5 * u[4];
__attribute__((noinline)) double counted(void) {
  COUNTED(__enzyme_set_fixed_point(1e-28, (int64_t)-1, (void *)0, u, (int64_t)sizeof u))
}
__attribute__((noinline)) double counted_plain(void) { COUNTED((void)0) }

int main(void) {
  double *du = (double *)shadow_default((void *)u, 1, 0);
  double *dp = (double *)shadow_default((void *)p, 1, 0);
  double got[N], want[N], h = 1e-6;
  char name[64];
  for (int k = 0; k < N; k++)
    p[k] = 0.1 * (k + 1);
  for (int k = 0; k < N; k++)
    dp[k] = du[k] = 0;
  __enzyme_autodiff((void *)plain);
  for (int k = 0; k < N; k++) {
    want[k] = dp[k];
    dp[k] = du[k] = 0;
  }
  __enzyme_autodiff((void *)marked);
  for (int k = 0; k < N; k++) {
    got[k] = dp[k];
    snprintf(name, sizeof name, "state_shadow_zero_%d", k);
    check(name, du[k], 0, 0);
  }
  for (int k = 0; k < N; k++) {
    snprintf(name, sizeof name, "reverse_vs_taped_%d", k);
    check(name, got[k], want[k], 1e-9);
    double s = p[k];
    p[k] = s + h;
    double a = marked();
    p[k] = s - h;
    double b = marked();
    p[k] = s;
    snprintf(name, sizeof name, "fd_%d", k);
    check(name, got[k], (a - b) / (2 * h), 1e-6);
  }
  check("primal", marked(), plain(), 1e-14);
  /* forward mode: the tangents of p in its shadow, u's zero */
  double v[N] = {0.3, -0.2, 0.5, 0.1, -0.4}, dot = 0;
  for (int k = 0; k < N; k++) {
    dp[k] = v[k];
    du[k] = 0;
    dot += v[k] * got[k];
  }
  check("forward_dot", __enzyme_fwddiff((void *)marked), dot, 1e-9);
  for (int k = 0; k < N; k++)
    dp[k] = du[k] = 0;
  __enzyme_autodiff((void *)counted_plain);
  for (int k = 0; k < N; k++) {
    want[k] = dp[k];
    dp[k] = du[k] = 0;
  }
  __enzyme_autodiff((void *)counted);
  for (int k = 0; k < N; k++) {
    snprintf(name, sizeof name, "counted_vs_taped_%d", k);
    check(name, dp[k], want[k], 1e-12);
  }
  if (failed)
    printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
