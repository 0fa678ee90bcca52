/* Entering a loop backwards needs the iteration it left on. For counted loops whose latch
   compares an induction variable with a bound (`i.next == n`), the reverse sweep computes that
   count from the bound and the start value instead of taping it (exit_count.py). Each kernel
   runs an inner loop many times with counts that vary (0, 1, odd, even), counting up and down,
   with steps of 1, 2 and 3, int and unsigned counters, pointer iterators, and an inner start
   that depends on the outer index, and a do-while entered past its bound; every gradient entry is checked against central differences
   and forward mode, for n = 0 .. 11. */
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

enum { M = 12 };

/* a strided inner loop (step 2 from a row-dependent start) whose body needs the values */
double stride2(const double *x, int n) {
  double s = 0;
  for (int r = 0; r < n; r++) {
    double acc = 0;
    for (int j = r; j < n; j += 2) acc += sin(x[j]) * x[r];
    s += acc * acc;
  }
  return s;
}

/* counting down, unsigned counter, inner bound from the outer index */
double down(const double *x, int n) {
  double s = 0;
  for (unsigned r = 0; r < (unsigned)n; r++) {
    double p = 1;
    for (unsigned j = r; j-- > 0;) p = p * cos(x[j]) + x[r] * x[j];
    s += p;
  }
  return s;
}

/* step 3, and a loop over a pointer range [b, e) */
double step3_ptr(const double *x, int n) {
  double s = 0;
  for (int r = 0; r < n; r++) {
    double acc = 0;
    for (int j = r % 3; j < n; j += 3) acc += x[j] * x[j] * x[r];
    for (const double *p = x + r, *e = x + n; p != e; ++p) acc = acc * 0.5 + exp(0.1 * *p);
    s += acc * x[r];
  }
  return s;
}

/* a triangular product with an exit count that varies every row, as GMM's Q x */
double triangle_prod(const double *x, int n) {
  double q[M];
  for (int i = 0; i < n; i++) q[i] = x[i];
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) q[j] = q[j] * 0.9 + sin(q[i]) * x[j];
  double s = 0;
  for (int i = 0; i < n; i++) s += q[i] * q[i];
  return s;
}

/* a do-while: the body runs once even when the start is already past the bound */
double dowhile(const double *x, int n) {
  double s = 0;
  for (int r = 0; r < n; r++) {
    int j = 2 * r;
    double acc = x[r];
    do {
      acc = acc * 0.7 + sin(x[j % n]) * x[r];
      j += 3;
    } while (j < n);
    s += acc * acc;
  }
  return s;
}

typedef double (*fn)(const double *, int);
#define DERIVS(f)                                                                        \
  static void grad_##f(double *x, double *dx, int n) {                                   \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);                    \
  }                                                                                      \
  static double tan_##f(double *x, double *tx, int n) {                                  \
    return __enzyme_fwddiff((void *)f, enzyme_dup, x, tx, enzyme_const, n);              \
  }
DERIVS(stride2)
DERIVS(down)
DERIVS(step3_ptr)
DERIVS(triangle_prod)
DERIVS(dowhile)
#define TEST(f, n) test(#f, f, n, grad_##f, tan_##f)

static void test(const char *name, fn f, int n, void (*grad)(double *, double *, int),
                 double (*tan)(double *, double *, int)) {
  double x[M], dx[M] = {0}, tx[M] = {0}, h = 1e-6, dot = 0;
  for (int k = 0; k < M; k++) x[k] = 0.3 + 0.5 * sin(1.0 + 2.3 * k);
  grad(x, dx, n);
  for (int k = 0; k < M; k++) {
    double x0 = x[k];
    x[k] = x0 + h;
    double fp_ = f(x, n);
    x[k] = x0 - h;
    double fm = f(x, n);
    x[k] = x0;
    char nm[64];
    snprintf(nm, sizeof nm, "%s_n%d_dx[%d]", name, n, k);
    check(nm, dx[k], (fp_ - fm) / (2 * h));
    tx[k] = sin(0.4 * k + 1);
    dot += tx[k] * dx[k];
  }
  char nm[64];
  snprintf(nm, sizeof nm, "dot_%s_n%d", name, n);
  check(nm, tan(x, tx, n), dot);
}

int main(void) {
  for (int n = 0; n < M; n++) {
    TEST(stride2, n);
    TEST(down, n);
    TEST(step3_ptr, n);
    TEST(triangle_prod, n);
    TEST(dowhile, n);
  }
  return report();
}
