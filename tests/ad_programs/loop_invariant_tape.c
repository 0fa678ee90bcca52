/* Values defined in an outer loop and read by the reverse of an inner loop are taped once per
   execution of the inner loop (docs/performance.md): a lower-triangular product over a buffer
   rewritten every outer iteration (ADBench GMM's Qtimesx), an inner loop left by a data-dependent
   break (two exit blocks), a goto leaving two loops at once, and three nesting levels. */
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

enum { D = 5, R = 3, N = R * D + D * (D - 1) / 2 };

/* x[0 .. R*D) data rows, x[R*D ..) the strict lower triangle L; buf is rewritten per row */
double qtx(const double *x, int d) {
  const double *ltri = x + R * D;
  double buf[8], out[8], s = 0;
  for (int r = 0; r < R; r++) {
    for (int i = 0; i < d; i++) buf[i] = sin(x[r * D + i]);
    for (int i = 0; i < d; i++) out[i] = buf[i];
    int l = 0;
    for (int i = 0; i < d; i++)
      for (int j = i + 1; j < d; j++) out[j] += ltri[l++] * buf[i];
    for (int i = 0; i < d; i++) s += out[i] * out[i];
  }
  return s;
}

/* the inner loop leaves by its bound or by the break: both exits must restore `w` */
double brk(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double w = x[i] * x[i] + 0.5;
    double t = 0;
    for (int j = 0; j < n; j++) {
      if (t > 2.0 + 0.1 * i) break;
      t += w * (1.1 + cos(x[j]));
    }
    s += t * w;
  }
  return s;
}

/* a goto leaves the two inner loops at once; three nesting levels read the outer values */
double nest3(const double *x, int d) {
  double s = 0;
  for (int a = 0; a < R; a++) {
    double u = exp(0.1 * x[a]);
    for (int b = 0; b < d; b++) {
      double v = u * x[R * D + b];
      for (int c = 0; c < d; c++) {
        if (s > 40.0 + a) goto next;
        s += u * v * x[c] + v * v;
      }
    }
  next:
    s += u;
  }
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
  for (int k = 0; k < N; k++) x[k] = 0.3 + 0.7 * sin(1.0 + 2.3 * k);
  TEST(qtx, x, D);
  TEST(brk, x, N);
  TEST(nest3, x, D);
  return report();
}
