/* Loads the reverse sweep re-executes although a store that may alias them runs after them: a
   store run once per call is undone in the reverse sweep (its old bytes put back before the
   reloads, its value stored again at the end). Checked with `out` a separate buffer and with
   `out` pointing into the input itself, where a reload that skipped the undo would read the
   result instead of the input. A conditional store cannot be undone: its loads are taped. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

enum { N = 6 };

/* one store after two loop nests that read x */
void quad(double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += x[i] * x[j] * (1.0 + 0.1 * (i - j));
  for (int i = 0; i < n; i++) s += sin(x[i]) * x[(i + 1) % n];
  out[0] = s;
}

/* two stores; the loop between them reads x after the first (which may have changed x) */
void two(double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * x[(i + 2) % n];
  out[0] = s;
  double t = 0;
  for (int i = 0; i < n; i++) t += exp(0.2 * x[i]) * x[(i + 3) % n];
  out[1] = t * s;
}

/* the store runs on one path only: not undone, so the loads come from the tape */
void cond(double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += cos(x[i] * x[j]);
  if (x[1] > 0) out[0] = s;
  out[1] = s * x[0];
}

/* a store to a global after the loads: as far as the IR tells, x may point into the global, so
   without the undo the loads of x would be taped */
double g_last;
void glob(double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) s += x[i] * sin(x[j]);
  g_last = s;
  out[0] = s * s;
}

/* a value loaded before the store and used after it: its reverse runs before the undo, so it
   must not be reloaded (out[0] may be x[0]) */
void later_use(double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[(i + 1) % n];
  double x0 = x[0];
  out[0] = s;
  out[1] = x0 * x0 * s + sin(x[1]);
}

static double weight(int k) { return sin(1.3 + 7.1 * k); }

/* L = sum w * (x after the call) + sum w' * (separate out after the call); off < 0: out separate */
#define LOSS(f, x, off, L)                                                    \
  do {                                                                        \
    double c_[N], o_[2] = {0.5, -0.25};                                       \
    memcpy(c_, x, sizeof c_);                                                 \
    f(c_, N, (off) < 0 ? o_ : c_ + (off));                                    \
    L = 0;                                                                    \
    for (int k = 0; k < N; k++) L += weight(k) * c_[k];                       \
    if ((off) < 0) L += weight(N) * o_[0] + weight(N + 1) * o_[1];            \
  } while (0)

#define TEST(f, off)                                                                    \
  do {                                                                                  \
    double x[N], c[N], dc[N], o[2] = {0.5, -0.25}, dout[2];                             \
    for (int k = 0; k < N; k++) x[k] = 0.4 + 0.6 * sin(0.7 + 1.9 * k);                  \
    memcpy(c, x, sizeof c);                                                             \
    for (int k = 0; k < N; k++) dc[k] = weight(k);                                      \
    dout[0] = weight(N), dout[1] = weight(N + 1);                                       \
    double *out = (off) < 0 ? o : c + (off), *dpo = (off) < 0 ? dout : dc + (off);      \
    __enzyme_autodiff((void *)f, enzyme_dup, c, dc, enzyme_const, N, enzyme_dup, out,   \
                      dpo);                                                             \
    double L0;                                                                          \
    LOSS(f, x, off, L0);                                                                \
    double after[N];                                                                    \
    memcpy(after, x, sizeof after);                                                     \
    double oo[2] = {0.5, -0.25};                                                        \
    f(after, N, (off) < 0 ? oo : after + (off));                                        \
    for (int k = 0; k < N; k++) check(#f "_primal", c[k], after[k]);                    \
    double dot_r = 0, h = 1e-6;                                                         \
    for (int k = 0; k < N; k++) {                                                       \
      double xp[N], xm[N], Lp, Lm;                                                      \
      memcpy(xp, x, sizeof xp);                                                         \
      memcpy(xm, x, sizeof xm);                                                         \
      xp[k] += h, xm[k] -= h;                                                           \
      LOSS(f, xp, off, Lp);                                                             \
      LOSS(f, xm, off, Lm);                                                             \
      char nm[64];                                                                      \
      snprintf(nm, sizeof nm, "%s_off%d[%d]", #f, off, k);                              \
      check(nm, dc[k], (Lp - Lm) / (2 * h));                                            \
      dot_r += weight(10 + k) * dc[k];                                                  \
    }                                                                                   \
    /* forward mode: tangent v = weight(10 + k) on x, the same L's directional derivative */ \
    double c2[N], t2[N], o2[2] = {0.5, -0.25}, to2[2] = {0, 0};                         \
    memcpy(c2, x, sizeof c2);                                                           \
    for (int k = 0; k < N; k++) t2[k] = weight(10 + k);                                 \
    __enzyme_fwddiff((void *)f, enzyme_dup, c2, t2, enzyme_const, N, enzyme_dup,        \
                     (off) < 0 ? o2 : c2 + (off), (off) < 0 ? to2 : t2 + (off));        \
    double dot_f = 0;                                                                   \
    for (int k = 0; k < N; k++) dot_f += weight(k) * t2[k];                             \
    if ((off) < 0) dot_f += weight(N) * to2[0] + weight(N + 1) * to2[1];                \
    check("dot_" #f, dot_f, dot_r);                                                     \
    (void)L0;                                                                           \
  } while (0)

int main(void) {
  TEST(quad, -1);
  TEST(quad, 2);
  TEST(two, -1);
  TEST(two, 0);
  TEST(two, 4);
  TEST(cond, -1);
  TEST(cond, 1);
  TEST(glob, -1);
  TEST(glob, 3);
  TEST(later_use, -1);
  TEST(later_use, 0);
  return report();
}
