/* Marker-call options of Enzyme's current API: return activities (enzyme_const_return,
   enzyme_active_return, enzyme_dup_return), enzyme_primal_return / enzyme_noret, enzyme_interleave
   (primals first, shadows after the marker), __enzyme_augmentfwd returning {primal, tape} (Enzyme's
   field order) as well as {tape, primal}, and a marker whose
   function is chosen by an if/else (clang merges the two calls into one on a select). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_out, enzyme_width, enzyme_tape;
int enzyme_const_return, enzyme_active_return, enzyme_dup_return, enzyme_primal_return, enzyme_noret;
int enzyme_interleave;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double primal, tangent; } PT;
PT __enzyme_fwddiff_pt(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double primal; void *tape; } AugPT;
typedef struct { void *tape; double primal; } AugTP;
AugPT __enzyme_augmentfwd(void *, ...);
AugTP __enzyme_augmentfwd_tp(void *, ...) __asm__("__enzyme_augmentfwd");
double __enzyme_reverse(void *, ...);

/* returns 3 x0 and writes y = x0^2 x1 */
double both(double *y, const double *x) { y[0] = x[0] * x[0] * x[1]; return 3 * x[0]; }
double f1(double x, double k) { return sin(x) * k; }
double f2(double x, double k) { return x * x * x * k; }
static volatile int pick_second;

double call_picked(int second, double x) {
  double d;
  if (second) d = __enzyme_autodiff((void *)f2, x, enzyme_const, 2.0);
  else d = __enzyme_autodiff((void *)f1, x, enzyme_const, 2.0);
  return d;
}
double fwd_picked(int second, double x) {
  double t;
  if (second) t = __enzyme_fwddiff((void *)f2, x, 1.0, enzyme_const, 2.0);
  else t = __enzyme_fwddiff((void *)f1, x, 1.0, enzyme_const, 2.0);
  return t;
}

int main(void) {
  double x[2] = {1.5, -0.5}, dx[2], y, dy;
  /* the result is not seeded with enzyme_const_return: only y's adjoint counts */
  dx[0] = dx[1] = 0; dy = 1;
  __enzyme_autodiff((void *)both, enzyme_const_return, enzyme_dup, &y, &dy, enzyme_dup, x, dx);
  check("const_return_dx0", dx[0], 2 * x[0] * x[1]);
  check("const_return_dx1", dx[1], x[0] * x[0]);
  dx[0] = dx[1] = 0; dy = 1;
  __enzyme_autodiff((void *)both, enzyme_active_return, enzyme_noret, enzyme_dup, &y, &dy, enzyme_dup, x, dx);
  check("active_return_dx0", dx[0], 2 * x[0] * x[1] + 3);
  /* enzyme_interleave: primal arguments, then the shadows in order */
  dx[0] = dx[1] = 0; dy = 1;
  __enzyme_autodiff((void *)both, enzyme_dup, &y, enzyme_dup, x, enzyme_interleave, &dy, dx);
  check("interleave_dx0", dx[0], 2 * x[0] * x[1] + 3);
  check("interleave_dx1", dx[1], x[0] * x[0]);
  /* forward: primal and tangent, primal only, tangent only */
  double v[2] = {0.25, 1}, tv[2] = {0.25, 1}, ty = 0;
  PT pt = __enzyme_fwddiff_pt((void *)f1, enzyme_dup_return, enzyme_primal_return, 0.7, 1.0, enzyme_const, 2.0);
  check("fwd_primal", pt.primal, 2 * sin(0.7));
  check("fwd_tangent", pt.tangent, 2 * cos(0.7));
  double prim = __enzyme_fwddiff((void *)both, enzyme_const_return, enzyme_primal_return, &y, &ty, x, tv);
  check("fwd_const_primal", prim, 3 * x[0]);
  check("fwd_const_y_tangent", ty, 2 * x[0] * x[1] * v[0] + x[0] * x[0] * v[1]);
  ty = 0;
  double tr = __enzyme_fwddiff((void *)both, enzyme_noret, &y, x, enzyme_interleave, &ty, tv);
  check("fwd_interleave_y", ty, 2 * x[0] * x[1] * v[0] + x[0] * x[0] * v[1]);
  check("fwd_interleave_ret", tr, 3 * v[0]);
  /* __enzyme_augmentfwd in both field orders */
  AugPT a = __enzyme_augmentfwd((void *)f1, 0.3, enzyme_const, 2.0);
  double d1 = __enzyme_reverse((void *)f1, 0.3, enzyme_const, 2.0, 1.0, enzyme_tape, a.tape);
  check("aug_primal_tape", a.primal, 2 * sin(0.3));
  check("aug_primal_tape_d", d1, 2 * cos(0.3));
  AugTP b = __enzyme_augmentfwd_tp((void *)f2, 0.3, enzyme_const, 2.0);
  double d2 = __enzyme_reverse((void *)f2, 0.3, enzyme_const, 2.0, 1.0, b.tape);
  check("aug_tape_primal", b.primal, 2 * 0.027);
  check("aug_tape_primal_d", d2, 6 * 0.09);
  /* one marker call on a select of two functions */
  for (int s = 0; s < 2; s++) {
    pick_second = s;
    double xs = 0.9;
    check(s ? "picked_f2" : "picked_f1", call_picked(pick_second, xs), s ? 6 * xs * xs : 2 * cos(xs));
    check(s ? "fwd_picked_f2" : "fwd_picked_f1", fwd_picked(pick_second, xs), s ? 6 * xs * xs : 2 * cos(xs));
  }
  /* forward/reverse dot test on both(): outputs (y, result) with weights (w0, w1) */
  double w0 = 0.7, w1 = -1.3;
  dx[0] = dx[1] = 0; dy = w0 / w1; ty = 0;
  double jr = __enzyme_fwddiff((void *)both, &y, &ty, x, v);
  __enzyme_autodiff((void *)both, &y, &dy, x, dx);
  check("dot_both", ty * w0 + jr * w1, (v[0] * dx[0] + v[1] * dx[1]) * w1);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
