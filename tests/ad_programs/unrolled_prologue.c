/* Loops whose trip count is known only at run time: at -O2/-O3 LLVM unrolls them with a
   prologue or epilogue, and the unrolled loop starts from `phi [x, %pre], [x.next, %prologue]`.
   The reverse sweep recomputes such a phi as a select on the branch that skipped the prologue
   (phi_select.py). Triangular loops give every trip count parity, so both sides of that branch
   run; a running index carried across rows (a phi no select can rebuild) must still come out
   right. Checked against central differences and forward mode, for n = 1 .. 9. */
#include <math.h>
#include <stdio.h>
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
double __enzyme_fwddiff(void *, ...);

enum { M = 9 };

/* out[j] += l[L] * x[i] over the strict lower triangle (GMM's Q x), then a sum of squares */
double triangle(const double *x, const double *l, int n) {
  double q[M];
  for (int i = 0; i < n; i++) q[i] = exp(0.1 * x[i]) * x[i];
  int L = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      q[j] += l[L] * x[i];
      L++;
    }
  double s = 0;
  for (int i = 0; i < n; i++) s += q[i] * q[i];
  return s;
}

/* an inner loop starting at a row-dependent offset, with a product that needs the values */
double offsets(const double *x, const double *l, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double r = 0;
    for (int j = i; j < n; j++) r += sin(x[j] * l[j - i]) * x[i];
    s += r * r;
  }
  return s;
}

typedef double (*fn)(const double *, const double *, int);

/* a macro: __enzyme_autodiff needs the function itself, not a pointer chosen at run time */
#define TEST(NAME, f, n) test(NAME, f, n, grad_##f, tan_##f)
#define DERIVS(f)                                                                           \
  static void grad_##f(double *x, double *dx, double *l, double *dl, int n) {               \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, l, dl, enzyme_const, n);     \
  }                                                                                         \
  static double tan_##f(double *x, double *tx, double *l, double *tl, int n) {              \
    return __enzyme_fwddiff((void *)f, enzyme_dup, x, tx, enzyme_dup, l, tl, enzyme_const, n); \
  }
DERIVS(triangle)
DERIVS(offsets)
typedef void (*gfn)(double *, double *, double *, double *, int);
typedef double (*tfn)(double *, double *, double *, double *, int);

static void test(const char *name, fn f, int n, gfn grad, tfn tan) {
  double x[M], l[M * M], dx[M] = {0}, dl[M * M] = {0}, h = 1e-6;
  for (int k = 0; k < M; k++) x[k] = 0.3 + 0.5 * sin(1.0 + 2.3 * k);
  for (int k = 0; k < M * M; k++) l[k] = 0.2 * cos(0.7 * k);
  grad(x, dx, l, dl, n);
  double dot = 0;
  for (int k = 0; k < n; k++) {
    double x0 = x[k];
    x[k] = x0 + h;
    double fp_ = f(x, l, n);
    x[k] = x0 - h;
    double fm = f(x, l, n);
    x[k] = x0;
    char nm[64];
    snprintf(nm, sizeof nm, "%s_n%d_dx[%d]", name, n, k);
    check(nm, dx[k], (fp_ - fm) / (2 * h));
    dot += sin(0.4 * k + 1) * dx[k];
  }
  for (int k = 0; k < n * n; k += 3) {
    double l0 = l[k];
    l[k] = l0 + h;
    double fp_ = f(x, l, n);
    l[k] = l0 - h;
    double fm = f(x, l, n);
    l[k] = l0;
    char nm[64];
    snprintf(nm, sizeof nm, "%s_n%d_dl[%d]", name, n, k);
    check(nm, dl[k], (fp_ - fm) / (2 * h));
  }
  /* forward mode along v = sin(0.4 k + 1) on x: the same directional derivative */
  double tx[M] = {0}, tl[M * M] = {0};
  for (int k = 0; k < n; k++) tx[k] = sin(0.4 * k + 1);
  char nm[64];
  snprintf(nm, sizeof nm, "dot_%s_n%d", name, n);
  check(nm, tan(x, tx, l, tl, n), dot);
}

int main(void) {
  for (int n = 1; n <= M; n++) {
    TEST("triangle", triangle, n);
    TEST("offsets", offsets, n);
  }
  return report();
}
