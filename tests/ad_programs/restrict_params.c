/* restrict (noalias) parameters: reads of a restrict input are recomputed in the reverse sweep
   instead of taped, and the shadows are marked restrict too. The second function writes the
   input through a pointer kept in a struct (the restrict pointer escapes): its old values must
   still be taped. Reverse mode against finite differences, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 6

void smooth(double *restrict y, const double *restrict x, const double *restrict w, int n) {
  for (int i = 0; i < n; i++) {
    double l = x[(i + n - 1) % n], r = x[(i + 1) % n];
    y[i] = w[0] * sin(x[i]) * x[i] + w[1] * l * r + w[2] * fma(l, r, x[i]);
  }
}

struct holder { double *p; };
__attribute__((noinline)) static void scale_through(struct holder *h, int n) {
  for (int i = 0; i < n; i++) h->p[i] *= 1.5;
}
double escaped(double *restrict x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];      /* reads x, then x changes: */
  struct holder h = {x};
  scale_through(&h, n);
  for (int i = 0; i < n; i++) s += x[i] * s * 0.01;
  return s;
}

static double sum_smooth(const double *x, const double *w, const double *c) {
  double y[N], s = 0;
  smooth(y, x, w, N);
  for (int i = 0; i < N; i++) s += c[i] * y[i];
  return s;
}

int main(void) {
  double x[N] = {0.3, -0.7, 1.1, 0.5, -1.3, 0.9}, w[3] = {0.5, -1.2, 0.8}, c[N];
  for (int i = 0; i < N; i++) c[i] = 0.3 * i - 0.4;
  double y[N], dy[N], dx[N] = {0}, dw[3] = {0}, h = 1e-6;
  for (int i = 0; i < N; i++) dy[i] = c[i];
  __enzyme_autodiff((void *)smooth, enzyme_dupnoneed, y, dy, enzyme_dup, x, dx, enzyme_dup, w, dw,
                    enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double xp[N], xm[N];
    for (int i = 0; i < N; i++) xp[i] = xm[i] = x[i];
    xp[k] += h, xm[k] -= h;
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", k);
    check(name, dx[k], (sum_smooth(xp, w, c) - sum_smooth(xm, w, c)) / (2 * h));
  }
  for (int k = 0; k < 3; k++) {
    double wp[3] = {w[0], w[1], w[2]}, wm[3] = {w[0], w[1], w[2]};
    wp[k] += h, wm[k] -= h;
    char name[16];
    snprintf(name, sizeof name, "dw[%d]", k);
    check(name, dw[k], (sum_smooth(x, wp, c) - sum_smooth(x, wm, c)) / (2 * h));
  }
  /* forward: (J v) . c == v . (J^T c) */
  double vx[N], vw[3] = {0.2, -0.1, 0.3}, ty[N] = {0}, jv = 0, vjt = 0;
  for (int i = 0; i < N; i++) vx[i] = sin(1.3 + 7.1 * i);
  __enzyme_fwddiff((void *)smooth, enzyme_dup, y, ty, enzyme_dup, x, vx, enzyme_dup, w, vw,
                   enzyme_const, N);
  for (int i = 0; i < N; i++) jv += ty[i] * c[i], vjt += vx[i] * dx[i];
  for (int k = 0; k < 3; k++) vjt += vw[k] * dw[k];
  check("dot_smooth", jv, vjt);

  double e[N], de[N] = {0}, ep[N], em[N];
  for (int i = 0; i < N; i++) e[i] = x[i];
  double r = 0;
  __enzyme_autodiff((void *)escaped, enzyme_dup, e, de, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    for (int i = 0; i < N; i++) ep[i] = em[i] = x[i];
    ep[k] += h, em[k] -= h;
    double fp = escaped(ep, N), fm = escaped(em, N);
    char name[16];
    snprintf(name, sizeof name, "de[%d]", k);
    check(name, de[k], (fp - fm) / (2 * h));
  }
  double ve[N], te[N];           /* te: the tangent of x in, overwritten by that of x out */
  for (int i = 0; i < N; i++) e[i] = x[i], ve[i] = te[i] = cos(0.7 * i);
  double tf = __enzyme_fwddiff((void *)escaped, enzyme_dup, e, te, enzyme_const, N);
  for (int i = 0; i < N; i++) r += ve[i] * de[i];
  check("dot_escaped", tf, r);
  return failed != 0;
}
