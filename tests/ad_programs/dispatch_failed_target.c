// Plans that call their children through function pointers (FFTW's shape), one of whose
// possible targets cannot be differentiated (it stores an active value into the constant plan). Its failed derivative names the dispatcher of its own child call while
// it is built, and builds the derivative of a helper that the other targets use too: the
// failure must drop what leads back to it (else the module calls an undefined function) and
// keep the rest (it was all dropped and rebuilt: FFTW's link built its codelets many times).
// The refused target is never called, so the derivatives run.
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;

struct plan;
typedef void (*apply_t)(const struct plan *, const double *, double *);
struct plan { apply_t apply; const struct plan *child; double w; };

__attribute__((noinline)) static double smooth(double x) { return sin(x) + x * x; }

__attribute__((noinline)) static void apply_odd(const struct plan *p, const double *in, double *out);

/* called by apply_odd and calling it back: its derivative, complete, names apply_odd's */
__attribute__((noinline)) static void again(const struct plan *p, const double *in, double *out,
                                            int depth) {
  if (depth > 0) apply_odd(p, in, out);
  else { out[0] = in[0] * in[1]; out[1] = in[1]; }
}

__attribute__((noinline)) static void apply_odd(const struct plan *p, const double *in, double *out) {
  double t[2], u[2];
  if (p->child) p->child->apply(p->child, in, t);
  else again(p, in, t, (int)p->w);
  out[0] = smooth(t[0]) * p->w;
  ((struct plan *)p)->w = t[1];                     /* refused: the plan has no shadow */
  again(p, t, u, 0);
  out[1] = u[0];
}

__attribute__((noinline)) static void apply_leaf(const struct plan *p, const double *in, double *out) {
  out[0] = cos(in[0]) * p->w;
  out[1] = in[0] * in[1];
}

__attribute__((noinline)) static void apply_pair(const struct plan *p, const double *in, double *out) {
  double t[2];
  p->child->apply(p->child, in, t);
  out[0] = t[0] * t[1] * p->w;
  out[1] = smooth(t[1]) + in[1];
}

double f(const double *x, const struct plan *p) {
  double o[2];
  p->apply(p, x, o);
  return o[0] + 3 * o[1];
}

int main(int argc, char **argv) {
  (void)argv;
  struct plan odd = {apply_odd, 0, 2.0}, leaf = {apply_leaf, 0, 1.5};
  struct plan pair = {apply_pair, &leaf, 0.7}, top = {apply_pair, &pair, 1.1};
  const struct plan *p = argc > 5 ? &odd : &top;     // the refused target never runs
  double x[2] = {0.3, -0.8}, dx[2] = {0}, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, p);
  for (int i = 0; i < 2; i++) {
    double t[2] = {0}, s = x[i];
    t[i] = 1;
    x[i] = s + h; double fp = f(x, p);
    x[i] = s - h; double fm = f(x, p);
    x[i] = s;
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, x, t, enzyme_const, p);
    printf("CHECK rev_%d %.9g %.9g\n", i, dx[i], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, (fp - fm) / (2 * h));
  }
  return 0;
}
