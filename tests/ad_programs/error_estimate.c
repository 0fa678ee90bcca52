/* __enzyme_error_estimate: forward mode whose tangents are rounding-error estimates. Enzyme's
   definition, per operation r = f(x_1..x_n) with operand errors e_i:
     err(r) = max(ulp(r), sum_i |df/dx_i * e_i * x_i / r|),  ulp(r) = nextafter(|r|, inf) - |r|.
   Each expected value is that formula written out here (derivatives from __enzyme_autodiff where
   a libm call is involved). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * fabs(want) || got == want;
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
double __enzyme_error_estimate(void *, ...);
float __enzyme_error_estimatef(void *, ...) __asm__("__enzyme_error_estimate");

static double ulp(double v) { return nextafter(fabs(v), INFINITY) - fabs(v); }
static float ulpf(float v) { return nextafterf(fabsf(v), INFINITY) - fabsf(v); }
static double max(double a, double b) { return a > b ? a : b; }

double sum(double a, double b) { return a + b; }
double prod(double a, double b) { return a * b; }
double quot(double a, double b) { return a / b; }
double cosine(double x) { return cos(x); }
double mixed(double x, double y) { return x * y + 1.0 / x; }
/* (1 - cos x) / x^2 near 0: catastrophic cancellation makes the error large */
double cancel(double x) { double c = cos(x); double n = 1 - c; return n / (x * x); }
void accumulate(const double *x, int n, double *out) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double sq = x[i] * x[i];   /* its own statement: clang would fuse s += x*x into fmuladd */
    s += sq;
  }
  *out = s;
}
float sumf(float a, float b) { return a + b; }

int main(void) {
  double a = 3.7, b = -1.25, ea = 1e-10, eb = 3e-12;
  double s = a + b;
  check("sum", __enzyme_error_estimate((void *)sum, a, ea, b, eb),
        max(ulp(s), fabs(ea * a / s) + fabs(eb * b / s)));
  check("sum_exact_inputs", __enzyme_error_estimate((void *)sum, 99.0, 0.0, 127.0, 0.0), ulp(226.0));
  double p = a * b;
  check("prod", __enzyme_error_estimate((void *)prod, a, ea, b, eb),
        max(ulp(p), fabs(b * (ea * a / p)) + fabs(a * (eb * b / p))));
  double q = a / b;
  check("quot", __enzyme_error_estimate((void *)quot, a, ea, b, eb),
        max(ulp(q), fabs((ea * a / q) / b) + fabs(-q / b * (eb * b / q))));
  double x = 0.8, ex = 1e-9, c = cos(x);
  double dcos = __enzyme_autodiff((void *)cosine, x);
  check("cos", __enzyme_error_estimate((void *)cosine, x, ex), max(ulp(c), fabs(dcos * ex * x / c)));
  check("cos_exact_input", __enzyme_error_estimate((void *)cosine, 1e-7, 0.0), ulp(cos(1e-7)));
  /* zero input errors: only the rounding of each operation */
  double y = 2.7, w3 = a * y, w4 = 1.0 / a, w5 = w3 + w4;
  double e3 = ulp(w3), e4 = ulp(w4);
  check("mixed", __enzyme_error_estimate((void *)mixed, a, 0.0, y, 0.0),
        max(ulp(w5), fabs(e3 * w3 / w5) + fabs(e4 * w4 / w5)));
  double t = 1e-7, c1 = cos(t), n1 = 1 - c1, d1 = t * t, r1 = n1 / d1;
  double ec = ulp(c1), en = max(ulp(n1), fabs(-(ec * c1 / n1))), ed = ulp(d1);
  double want_cancel = max(ulp(r1), fabs((en * n1 / r1) / d1) + fabs(-r1 / d1 * (ed * d1 / r1)));
  check("cancel", __enzyme_error_estimate((void *)cancel, t, 0.0), want_cancel);
  check("cancel_magnitude", want_cancel > 0.02 && want_cancel < 0.025, 1.0);
  /* a loop over memory: errors of the inputs in the shadow array, of the result in its shadow */
  double xs[5] = {1.5, -2.25, 0.1, 3.3, 1e-3}, exs[5] = {1e-12, 0, 5e-13, 2e-12, 1e-9};
  double out = 0, eout = 0;
  __enzyme_error_estimate((void *)accumulate, xs, exs, 5, &out, &eout);
  double acc = 0, eacc = 0;
  for (int i = 0; i < 5; i++) {
    double sq = xs[i] * xs[i];
    double esq = max(ulp(sq), 2 * fabs(xs[i] * (exs[i] * xs[i] / sq)));
    double next = acc + sq;
    eacc = max(ulp(next), fabs(eacc * acc / next) + fabs(esq * sq / next));
    acc = next;
  }
  check("loop_value", out, acc);
  check("loop_error", eout, eacc);
  float fa = 1.5f, fb = 2.25f;
  check("float_sum", __enzyme_error_estimatef((void *)sumf, fa, 0.0f, fb, 0.0f), ulpf(fa + fb));
  /* forward/reverse dot test of the function differentiated above */
  const double v = sin(1.3 + 7.1 * 1);
  check("dot_cos", __enzyme_fwddiff((void *)cosine, x, v), v * dcos);
  return report();
}
