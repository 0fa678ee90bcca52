/* Annotated checkpointed loops in two situations that once broke:
 * 1. the loop is in a noinline callee of the differentiated function (split mode: an augmented
 *    and a reverse function). Its state is the caller's array behind a pointer argument (extent
 *    from __enzyme_ptr_size_hint), a stack array and a carried scalar. The checkpoint driver
 *    keeps pointers to the stack objects (snapshot regions, the schedule's config) until the
 *    reverse sweep, after the augmented function has returned: they must outlive its frame.
 * 2. the loop's only state is a global array, no active value is passed to the loop, and its
 *    results are used after it (at -O2 they leave the outlined step through output slots):
 *    those slots receive active data from the global and need shadows.
 * Each is compared with the same loop without the annotation (1e-12) and central differences,
 * for several schedules and 0, 1, 2, 7 and 20 steps, and forward mode is checked against
 * reverse mode (dot-product test). */
#include <enzyme/checkpoint.h>
void __enzyme_ptr_size_hint(void *, long);
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 4
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;

static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

/* ---- 1: the loop in a callee, state behind a pointer argument and on its stack ---- */
#define STEP1                                                                                \
  {                                                                                          \
    double t[M];                                                                             \
    for (int k = 0; k < M; k++)                                                              \
      t[k] = u[k] + 0.2 * u[(k + 3) % M] * cos(u[k]) + 0.01 * (double)i;                     \
    for (int k = 0; k < M; k++)                                                              \
      u[k] = t[k];                                                                           \
    s = 0.8 * s + u[2] * u[0];                                                               \
  }

#define INNER(NAME, ATTR)                                                                    \
  __attribute__((noinline)) static void NAME(double *u, long n) {                           \
    double s = 0.1;                                                                          \
    __enzyme_ptr_size_hint(u, M * sizeof(double));                                           \
    ATTR for (long i = 0; i < n; i++) STEP1                                                  \
    u[1] += s;                                                                               \
  }
INNER(inner_plain, )
INNER(inner_binomial, __attribute__((enzyme_checkpointing_enable("binomial", 3))))
INNER(inner_revolve, __attribute__((enzyme_checkpoint("revolve", 2))))
INNER(inner_periodic, __attribute__((enzyme_checkpoint("periodic", 3))))

typedef void (*inner_fn)(double *, long);
#define OUTER(NAME, INNER_FN)                                                                \
  __attribute__((noinline)) double NAME(const double *x, long n) {                          \
    double *u = (double *)malloc(M * sizeof(double));                                        \
    for (int k = 0; k < M; k++)                                                              \
      u[k] = x[k] * (1.0 + 0.1 * k);                                                         \
    INNER_FN(u, n);                                                                          \
    double r = 0;                                                                            \
    for (int k = 0; k < M; k++)                                                              \
      r += u[k] * u[k] * (k + 1);                                                            \
    free(u);                                                                                 \
    return r;                                                                                \
  }
OUTER(outer_plain, inner_plain)
OUTER(outer_binomial, inner_binomial)
OUTER(outer_revolve, inner_revolve)
OUTER(outer_periodic, inner_periodic)

/* ---- 2: a global state, results used after the loop ---- */
double state[3];
#define GLOBAL(NAME, ATTR)                                                                   \
  __attribute__((noinline)) double NAME(double x, long n) {                                 \
    for (int k = 0; k < 3; k++)                                                              \
      state[k] = x * (k + 1);                                                                \
    ATTR for (long i = 0; i < n; i++) {                                                      \
      for (int k = 0; k < 3; k++)                                                            \
        state[k] = sin(state[k]) * (1.0 + 0.1 * k) + 0.05 * state[(k + 1) % 3];              \
    }                                                                                        \
    return state[0] + state[1] * state[2];                                                   \
  }
GLOBAL(global_plain, )
GLOBAL(global_binomial, __attribute__((enzyme_checkpoint("binomial", 2))))
GLOBAL(global_revolve, __attribute__((enzyme_checkpointing_enable("revolve", 2))))
GLOBAL(global_storeall, __attribute__((enzyme_checkpoint("store_all"))))

typedef double (*outer_fn)(const double *, long);
typedef double (*global_fn)(double, long);

/* the gradient and the tangent in direction v of each (Enzyme needs the function itself) */
#define DERIVS_OUTER(NAME)                                                                   \
  static void grad_##NAME(long n, double *dx) {                                              \
    double x[M] = {0.4, -0.3, 0.9, 0.2};                                                     \
    memset(dx, 0, M * sizeof(double));                                                       \
    __enzyme_autodiff((void *)NAME, enzyme_dup, x, dx, enzyme_const, n);                     \
  }                                                                                          \
  static double tangent_##NAME(long n, const double *v) {                                    \
    double x[M] = {0.4, -0.3, 0.9, 0.2}, t[M];                                               \
    memcpy(t, v, sizeof t);                                                                  \
    return __enzyme_fwddiff((void *)NAME, enzyme_dup, x, t, enzyme_const, n);                \
  }
DERIVS_OUTER(outer_plain)
DERIVS_OUTER(outer_binomial)
DERIVS_OUTER(outer_revolve)
DERIVS_OUTER(outer_periodic)
#define DERIVS_GLOBAL(NAME)                                                                  \
  static double grad_##NAME(double x, long n) {                                              \
    return __enzyme_autodiff((void *)NAME, x, enzyme_const, n);                              \
  }                                                                                          \
  static double tangent_##NAME(double x, long n) {                                           \
    return __enzyme_fwddiff((void *)NAME, x, 1.0, enzyme_const, n);                          \
  }
DERIVS_GLOBAL(global_plain)
DERIVS_GLOBAL(global_binomial)
DERIVS_GLOBAL(global_revolve)
DERIVS_GLOBAL(global_storeall)

int main(void) {
  long steps[] = {0, 1, 2, 7, 20};
  outer_fn outers[] = {outer_binomial, outer_revolve, outer_periodic};
  void (*grads[])(long, double *) = {grad_outer_binomial, grad_outer_revolve,
                                     grad_outer_periodic};
  double (*tangents[])(long, const double *) = {tangent_outer_binomial, tangent_outer_revolve,
                                                tangent_outer_periodic};
  global_fn globals[] = {global_binomial, global_revolve, global_storeall};
  global_fn ggrads[] = {grad_global_binomial, grad_global_revolve, grad_global_storeall};
  global_fn gtangents[] = {tangent_global_binomial, tangent_global_revolve,
                           tangent_global_storeall};
  const char *names[] = {"binomial", "revolve", "periodic"};
  const char *gnames[] = {"binomial", "revolve", "storeall"};
  char name[96];
  for (int a = 0; a < 5; a++) {
    long n = steps[a];
    double x[M] = {0.4, -0.3, 0.9, 0.2}, want[M], got[M];
    grad_outer_plain(n, want);
    for (int s = 0; s < 3; s++) {
      grads[s](n, got);
      snprintf(name, sizeof name, "split_%s_n%ld_primal", names[s], n);
      check(name, outers[s](x, n), outer_plain(x, n), 0);
      double dot = 0, v[M] = {0.3, -0.2, 0.5, 0.1};
      for (int k = 0; k < M; k++) {
        snprintf(name, sizeof name, "split_%s_n%ld_dx%d", names[s], n, k);
        check(name, got[k], want[k], 1e-12);
        double h = 1e-6, xp[M], xm[M];
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[k] += h;
        xm[k] -= h;
        snprintf(name, sizeof name, "split_%s_n%ld_fd_dx%d", names[s], n, k);
        check(name, got[k], (outers[s](xp, n) - outers[s](xm, n)) / (2 * h), 1e-6);
        dot += v[k] * got[k];
      }
      snprintf(name, sizeof name, "split_%s_n%ld_forward_dot", names[s], n);
      check(name, tangents[s](n, v), dot, 1e-10);
    }
    double gwant = grad_global_plain(0.7, n);
    for (int s = 0; s < 3; s++) {
      double ggot = ggrads[s](0.7, n);
      snprintf(name, sizeof name, "global_%s_n%ld_primal", gnames[s], n);
      check(name, globals[s](0.7, n), global_plain(0.7, n), 0);
      snprintf(name, sizeof name, "global_%s_n%ld_dx", gnames[s], n);
      check(name, ggot, gwant, 1e-12);
      snprintf(name, sizeof name, "global_%s_n%ld_fd", gnames[s], n);
      check(name, ggot, (globals[s](0.7 + 1e-6, n) - globals[s](0.7 - 1e-6, n)) / 2e-6, 1e-6);
      snprintf(name, sizeof name, "global_%s_n%ld_forward", gnames[s], n);
      check(name, gtangents[s](0.7, n), ggot, 1e-10);
    }
  }
  if (failed)
    printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
