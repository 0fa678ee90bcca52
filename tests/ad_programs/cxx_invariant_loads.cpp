/* Loads that read the same value in every iteration of their loop although LLVM left them in it
   (plan._invariant_load: pushed once per loop entry, from the loop's exit blocks, through a phi
   where an exit block also follows a bypass of the loop), std::vector data pointers
   (`n ? new T[n] : nullptr`, one object for the memory analysis: MemoryInfo._canon), and the
   reverse of increments `p[j] += ...` (increments.py). GMM's Q x on vector temporaries, the same
   product done in place (the store may alias the load: nothing hoisted), a loop whose call
   writes memory, and C-style `n ? malloc : NULL` buffers; n = 0 .. 9, so inner loops also run
   zero times. Every gradient entry is checked against central differences and the forward
   mode dot product. */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
enum { M = 10 };

/* out = (D + L) x with L strictly lower triangular, on vector temporaries */
static void qtimesx(int d, const double *diag, const double *l, const double *x, double *out) {
  for (int i = 0; i < d; i++) out[i] = diag[i] * x[i];
  int k = 0;
  for (int i = 0; i < d; i++)
    for (int j = i + 1; j < d; j++) out[j] = out[j] + l[k++] * x[i];
}

double gmm_like(const double *p, int n) {
  std::vector<double> xc(n), qx(n), diag(n), low(n * (n - 1) / 2 + 1);
  double s = 0;
  for (int rep = 0; rep < 3; rep++) {
    for (int i = 0; i < n; i++) {
      xc[i] = p[i] - 0.1 * rep;
      diag[i] = std::exp(0.3 * p[(i + rep) % n]);
    }
    for (int k = 0; k < n * (n - 1) / 2; k++) low[k] = 0.2 * p[k % n];
    qtimesx(n, diag.data(), low.data(), xc.data(), qx.data());
    for (int i = 0; i < n; i++) s += qx[i] * qx[i];
  }
  return s;
}

/* the same product in place: the loop's store may alias its load, nothing is hoisted */
double in_place(const double *p, int n) {
  std::vector<double> v(p, p + n);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) v[j] = v[j] + 0.3 * std::sin(v[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  return s;
}

/* a call in the loop writes memory the load reads: the load stays per iteration */
static double glob[M];
__attribute__((noinline)) static void bump(int j, double v) { glob[j % M] += v; }
double with_call(const double *p, int n) {
  for (int i = 0; i < M; i++) glob[i] = 0.5;
  double s = 0;
  for (int i = 0; i < n; i++) {
    double acc = 0;
    for (int j = 0; j < n; j++) {
      acc += glob[i % M] * p[j];
      bump(i, 0.01 * p[j]);
    }
    s += acc * p[i];
  }
  return s;
}

/* C-style temporaries that are null when empty */
double c_buffers(const double *p, int n) {
  double *a = n ? (double *)std::malloc(n * sizeof(double)) : nullptr;
  double *b = n ? (double *)std::calloc(n, sizeof(double)) : nullptr;
  for (int i = 0; i < n; i++) a[i] = std::cos(p[i]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) b[j] = b[j] + a[i] * p[j] * 0.25;
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i] * a[i];
  std::free(a);
  std::free(b);
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
DERIVS(gmm_like)
DERIVS(in_place)
DERIVS(with_call)
DERIVS(c_buffers)

static void test(const char *name, fn f, int n, void (*grad)(double *, double *, int),
                 double (*tan)(double *, double *, int)) {
  double x[M], dx[M] = {0}, tx[M] = {0}, h = 1e-6, dot = 0;
  for (int k = 0; k < M; k++) x[k] = 0.3 + 0.5 * std::sin(1.0 + 2.3 * k);
  grad(x, dx, n);
  for (int k = 0; k < M; k++) {
    double x0 = x[k];
    x[k] = x0 + h;
    double fp = f(x, n);
    x[k] = x0 - h;
    double fm = f(x, n);
    x[k] = x0;
    char nm[64];
    std::snprintf(nm, sizeof nm, "%s_n%d_dx[%d]", name, n, k);
    check(nm, dx[k], (fp - fm) / (2 * h));
    tx[k] = std::sin(0.4 * k + 1);
    dot += tx[k] * dx[k];
  }
  char nm[64];
  std::snprintf(nm, sizeof nm, "dot_%s_n%d", name, n);
  check(nm, tan(x, tx, n), dot);
}
#define TEST(f, n) test(#f, f, n, grad_##f, tan_##f)

int main() {
  for (int n = 0; n < M; n++) {
    TEST(gmm_like, n);
    TEST(in_place, n);
    TEST(with_call, n);
    TEST(c_buffers, n);
  }
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
