/* Adjoints of loads whose address is the same in every iteration of a loop are summed in a
   register over the reverse loop and added to the shadow once where the reverse leaves it
   (docs/performance.md, item f); where something in the loop may read that shadow back (a
   store through a possibly aliasing pointer, a call), the adjoint goes to memory every
   iteration as before. The loads are conditional, so LLVM cannot hoist them out of the loop
   before AD. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

enum { N = 9 };

/* x[i] is invariant in the j loop but not in the i loop: one flush per outer iteration */
double nested(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (x[j] > 0.4) s += x[j] * x[i] * x[i];
  return s;
}

/* the inner loop has two exits (its bound and the break): the reverse enters it from either */
double twoexit(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int j = 0; j < n; j++) {
      if (t > 1.5 + 0.2 * i) break;
      if (x[j] < 0.9) t += x[i] * (1.0 + x[j]);
    }
    s += t * t;
  }
  return s;
}

/* stores into a local array that cannot alias x: x[i]'s adjoint still goes to a register */
double localstore(const double *x, int n) {
  double out[N], s = 0;
  for (int j = 0; j < n; j++) out[j] = x[j];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (out[j] > 0.2) out[j] = out[j] * 0.75 + x[i] * x[j];
  for (int j = 0; j < n; j++) s += out[j] * out[j];
  return s;
}

/* a and b are the same array: the loads of a[1] and b[j] (which is a[1] when j == 1) both add
   to that shadow; a sum held back for a[1] commutes with b[1]'s additions */
__attribute__((noinline)) static double twoloads(const double *a, const double *b, int n) {
  double s = 0;
  for (int j = 0; j < n; j++)
    if (b[j] > 0.4) s += a[1] * b[j] * b[j];
  return s;
}
double sameload(const double *x, int n) { return twoloads(x, x, n) + x[1]; }

/* w is a + 1: the store to w[2] overwrites a[3] mid-loop, so the reverse of that store reads
   a[3]'s shadow: it must already hold the later iterations' adjoint (kept per iteration) */
__attribute__((noinline)) static void upd(const double *a, double *w, int n) {
  for (int j = 0; j < n - 1; j++)
    if (w[j] > -5.0) w[j] = 0.5 * w[j] + a[3] * a[3];
}
double aliasparam(const double *x, int n) {
  double w[N], s = 0;
  for (int k = 0; k < n; k++) w[k] = x[k];
  upd(w, w + 1, n);
  for (int k = 0; k < n; k++) s += w[k] * w[k] * (1.0 + 0.1 * k);
  return s;
}

/* the same through one local array: p[j] is w[j + 1], the stored location includes w[4] */
double aliaslocal(const double *x, int n) {
  double w[N + 1], s = 0;
  for (int k = 0; k < n; k++) w[k] = x[k];
  w[n] = 0.5;
  double *p = w + 1;
  for (int j = 0; j < n; j++)
    if (p[j] > -5.0) p[j] = p[j] * w[4] + 0.25;
  for (int k = 0; k <= n; k++) s += w[k] * w[k];
  return s;
}

/* a call in the loop reads x: its reverse adds into x's shadow through a pointer argument */
__attribute__((noinline)) static double g(const double *x, int j) { return x[j] * x[j]; }
double withcall(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (x[j] > 0.4) s += x[i] * g(x, j);
  return s;
}

static double fd(double (*f)(const double *, int), double *x, int n, int k) {
  double h = 1e-6, x0 = x[k];
  x[k] = x0 + h;
  double fp = f(x, n);
  x[k] = x0 - h;
  double fm = f(x, n);
  x[k] = x0;
  return (fp - fm) / (2 * h);
}

/* a macro: __enzyme_autodiff needs the function itself, not a pointer chosen at run time */
#define TEST(f, x, n)                                                                  \
  do {                                                                                \
    double dx[N] = {0}, v[N];                                                         \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);                 \
    for (int k = 0; k < N; k++) checki(#f, k, dx[k], fd(f, x, n, k));                 \
    for (int k = 0; k < N; k++) v[k] = rnd(k);                                        \
    check("dot_" #f, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n),  \
          dotp(v, dx, N));                                                            \
  } while (0)

int main(void) {
  double x[N];
  for (int k = 0; k < N; k++) x[k] = 0.5 + 0.45 * sin(1.0 + 2.3 * k);
  TEST(nested, x, N);
  TEST(twoexit, x, N);
  TEST(localstore, x, N);
  TEST(sameload, x, N);
  TEST(aliasparam, x, N);
  TEST(aliaslocal, x, N);
  TEST(withcall, x, N);
  return report();
}
