/* Loops annotated for checkpointing (Enzyme's loop attributes and pragma): the link step outlines
 * each into a checkpointed loop. The state is a global, a malloc'ed block, a local array, a
 * carried scalar and memory behind a pointer argument (extent from __enzyme_ptr_size_hint); an
 * active float argument is read in every step. For every schedule and budget spelling and for 0,
 * 1, 2, 7 and 20 steps the gradient must equal the same loop without the annotation (1e-12) and
 * central differences, the primal must be the same, and forward mode through the annotated loop
 * must match reverse mode (dot-product test). Also a loop counting down by 2. */
#include <enzyme/checkpoint.h>
void __enzyme_ptr_size_hint(void *, long);  /* declared by the program, as in Enzyme */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const, enzyme_out;

static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

static double g;          /* a global the loop writes: the snapshots hold it */

/* One step of the time loop, written out in each function (the attribute is on the loop). */
#define BODY                                                                                  \
  {                                                                                           \
    double t[N];                                                                              \
    for (int k = 0; k < N; k++)                                                               \
      t[k] = u[k] + 0.1 * u[(k + 1) % N] * g + 0.01 * sin(u[k] + 0.1 * (double)i) + c * w[k]; \
    for (int k = 0; k < N; k++) {                                                             \
      u[k] = t[k];                                                                            \
      w[k] = 0.9 * w[k] + 0.05 * cos(t[k]);                                                   \
    }                                                                                         \
    g = 0.9 * g + 0.1 * u[0];                                                                 \
    acc += u[1] * g;                                                                          \
  }

#define RUN(NAME, ATTR)                                                                       \
  __attribute__((noinline)) double NAME(const double *x, double *w, double c, long n) {      \
    double *u = (double *)malloc(N * sizeof(double));                                         \
    for (int k = 0; k < N; k++)                                                               \
      u[k] = x[k];                                                                            \
    double acc = 0;                                                                           \
    g = 0.5;                                                                                  \
    __enzyme_ptr_size_hint(w, N * sizeof(double));                                            \
    ATTR for (long i = 0; i < n; i++) BODY                                                    \
    double r = acc + g;                                                                       \
    for (int k = 0; k < N; k++)                                                               \
      r += u[k] * u[k] + w[k];                                                                \
    free(u);                                                                                  \
    return r;                                                                                 \
  }

RUN(plain, )
RUN(revolve2, __attribute__((enzyme_checkpoint("revolve", 2))))
RUN(regular3, __attribute__((enzyme_checkpointing_enable("regular", 3))))
RUN(dflt, __attribute__((enzyme_checkpoint)))
RUN(binomial, __attribute__((enzyme_checkpoint("binomial"))))
RUN(storeall, __attribute__((enzyme_checkpoint("store_all"))))

__attribute__((noinline)) double pragma(const double *x, double *w, double c, long n) {
  double *u = (double *)malloc(N * sizeof(double));
  for (int k = 0; k < N; k++)
    u[k] = x[k];
  double acc = 0;
  g = 0.5;
  __enzyme_ptr_size_hint(w, N * sizeof(double));
#pragma enzyme checkpoint("revolve", 3)
  for (long i = 0; i < n; i++) BODY
  double r = acc + g;
  for (int k = 0; k < N; k++)
    r += u[k] * u[k] + w[k];
  free(u);
  return r;
}

/* counting down by 2 from n (n/2 rounded up steps), the state in a local array */
#define DOWN(NAME, ATTR)                                                                      \
  __attribute__((noinline)) double NAME(const double *x, double *w, double c, long n) {      \
    double u[N], acc = 0;                                                                     \
    for (int k = 0; k < N; k++)                                                               \
      u[k] = x[k];                                                                            \
    g = 0.25;                                                                                 \
    __enzyme_ptr_size_hint(w, N * sizeof(double));                                            \
    ATTR for (long i = n; i > 0; i -= 2) BODY                                                 \
    return acc + g + u[0] * u[3] + w[2];                                                      \
  }
DOWN(down_plain, )
DOWN(down_ckpt, __attribute__((enzyme_checkpoint("revolve", 2))))

typedef double (*fn)(const double *, double *, double, long);

/* a local array the loop only reads, overwritten after it: the steps recomputed in the reverse
 * sweep must see it as the loop did (the snapshots hold it) */
#define LATER(NAME, ATTR)                                                                     \
  __attribute__((noinline)) double NAME(double x, long n) {                                  \
    double a[4] = {1, 2, 3, 4}, acc = 0;                                                      \
    ATTR for (long i = 0; i < n; i++) acc = sin(acc * a[i % 4] + x);                          \
    a[1] = 100;                                                                               \
    a[2] = -7;                                                                                \
    return acc + a[1] * 1e-3 + a[2] * 1e-3;                                                   \
  }
LATER(later_plain, )
LATER(later_ckpt, __attribute__((enzyme_checkpoint("revolve", 2))))

/* d/dx and d/dc of f, the adjoint of w's initial values, and the forward-mode tangent in
 * direction (v, tw, tc) */
#define DERIVS(NAME)                                                                          \
  static void grad_##NAME(long n, double *dx, double *dw, double *dc) {                       \
    double x[N] = {0.3, 0.7, 1.1, 1.5}, w[N] = {0.2, -0.1, 0.4, 0.3};                         \
    memset(dx, 0, N * sizeof(double));                                                        \
    memset(dw, 0, N * sizeof(double));                                                        \
    *dc = __enzyme_autodiff((void *)NAME, enzyme_dup, x, dx, enzyme_dup, w, dw, enzyme_out,    \
                            0.6, enzyme_const, n);                                            \
  }                                                                                           \
  static double tangent_##NAME(long n, const double *v, const double *tw, double tc) {        \
    double x[N] = {0.3, 0.7, 1.1, 1.5}, w[N] = {0.2, -0.1, 0.4, 0.3}, t[N];                   \
    memcpy(t, tw, sizeof t);                                                                  \
    return __enzyme_fwddiff((void *)NAME, enzyme_dup, x, v, enzyme_dup, w, t, 0.6, tc,         \
                            enzyme_const, n);                                                 \
  }
DERIVS(plain)
DERIVS(revolve2)
DERIVS(regular3)
DERIVS(dflt)
DERIVS(binomial)
DERIVS(storeall)
DERIVS(pragma)
DERIVS(down_plain)
DERIVS(down_ckpt)
typedef void (*gfn)(long, double *, double *, double *);
typedef double (*tfn)(long, const double *, const double *, double);

static double value(fn f, const double *x, const double *w0, double c, long n) {
  double w[N];
  memcpy(w, w0, sizeof w);
  return f(x, w, c, n);
}

int main(void) {
  long steps[] = {0, 1, 2, 7, 20};
  fn fs[] = {revolve2, regular3, dflt, binomial, storeall, pragma, down_ckpt};
  fn refs[] = {plain, plain, plain, plain, plain, plain, down_plain};
  gfn gs[] = {grad_revolve2, grad_regular3, grad_dflt, grad_binomial, grad_storeall,
              grad_pragma, grad_down_ckpt};
  gfn grefs[] = {grad_plain, grad_plain, grad_plain, grad_plain, grad_plain, grad_plain,
                 grad_down_plain};
  tfn ts[] = {tangent_revolve2, tangent_regular3, tangent_dflt, tangent_binomial,
              tangent_storeall, tangent_pragma, tangent_down_ckpt};
  const char *names[] = {"revolve2", "regular3", "default", "binomial", "storeall", "pragma",
                         "down"};
  char name[96];
  for (int a = 0; a < 5; a++) {
    long n = steps[a];
    for (int s = 0; s < 7; s++) {
      double want[N], wantw[N], wantc, got[N], gotw[N], gotc;
      double x[N] = {0.3, 0.7, 1.1, 1.5}, w[N] = {0.2, -0.1, 0.4, 0.3};
      grefs[s](n, want, wantw, &wantc);
      gs[s](n, got, gotw, &gotc);
      snprintf(name, sizeof name, "%s_n%ld_primal", names[s], n);
      check(name, value(fs[s], x, w, 0.6, n), value(refs[s], x, w, 0.6, n), 0);
      for (int k = 0; k < N; k++) {
        snprintf(name, sizeof name, "%s_n%ld_dx%d", names[s], n, k);
        check(name, got[k], want[k], 1e-12);
        snprintf(name, sizeof name, "%s_n%ld_dw%d", names[s], n, k);
        check(name, gotw[k], wantw[k], 1e-12);
        /* central differences in x[k] */
        double h = 1e-6, xp[N], xm[N];
        memcpy(xp, x, sizeof x);
        memcpy(xm, x, sizeof x);
        xp[k] += h;
        xm[k] -= h;
        snprintf(name, sizeof name, "%s_n%ld_fd_dx%d", names[s], n, k);
        check(name, got[k], (value(fs[s], xp, w, 0.6, n) - value(fs[s], xm, w, 0.6, n)) / (2 * h),
              1e-6);
      }
      snprintf(name, sizeof name, "%s_n%ld_dc", names[s], n);
      check(name, gotc, wantc, 1e-12);
      snprintf(name, sizeof name, "%s_n%ld_fd_dc", names[s], n);
      check(name, gotc,
            (value(fs[s], x, w, 0.6 + 1e-6, n) - value(fs[s], x, w, 0.6 - 1e-6, n)) / 2e-6, 1e-6);
      /* forward mode through the annotated loop against the reverse gradient */
      double v[N] = {0.3, -0.2, 0.5, 0.1}, tw[N] = {-0.4, 0.2, 0.1, 0.3}, tc = 0.7, dot = 0;
      for (int k = 0; k < N; k++)
        dot += v[k] * got[k] + tw[k] * gotw[k];
      dot += tc * gotc;
      double jv = ts[s](n, v, tw, tc);
      snprintf(name, sizeof name, "%s_n%ld_forward_dot", names[s], n);
      check(name, jv, dot, 1e-10);
    }
  }
  for (long n = 0; n < 12; n += 3) {
    double want = __enzyme_autodiff((void *)later_plain, 0.3, enzyme_const, n);
    double got = __enzyme_autodiff((void *)later_ckpt, 0.3, enzyme_const, n);
    snprintf(name, sizeof name, "later_n%ld", n);
    check(name, got, want, 1e-12);
    snprintf(name, sizeof name, "later_n%ld_fd", n);
    check(name, got, (later_ckpt(0.3 + 1e-6, n) - later_ckpt(0.3 - 1e-6, n)) / 2e-6, 1e-6);
    snprintf(name, sizeof name, "later_n%ld_forward", n);
    check(name, __enzyme_fwddiff((void *)later_ckpt, 0.3, 1.0, enzyme_const, n), got, 1e-10);
  }
  if (failed)
    printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
