/* The fast inverse square root (integer bit manipulation of a float) with a registered custom
   gradient whose augmented forward function returns nothing: the primal result must still be
   computed ("use of undefined value" before). Checked against the analytic -x_i / |x|^3 (to the
   approximation's accuracy; exactly the rule's value) and forward mode against reverse mode. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_const, enzyme_dup;

float approx_rsqrt(float v) {
  uint32_t bits;
  float y;
  memcpy(&bits, &v, sizeof bits);
  bits = 0x5f3759dfu - (bits >> 1);
  memcpy(&y, &bits, sizeof y);
  return y * (1.5f - 0.5f * v * y * y);
}
void approx_rsqrt_aug(float v) { (void)v; }
float approx_rsqrt_rev(float v, float d) { return -d * approx_rsqrt(v) / (2 * v); }
float approx_rsqrt_fwd(float v, float dv) { return -dv * approx_rsqrt(v) / (2 * v); }
void *__enzyme_register_gradient_approx_rsqrt[3] = {(void *)approx_rsqrt, (void *)approx_rsqrt_aug,
                                                    (void *)approx_rsqrt_rev};
void *__enzyme_register_derivative_approx_rsqrt[2] = {(void *)approx_rsqrt, (void *)approx_rsqrt_fwd};

double inv_norm(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i];
  return approx_rsqrt(s);
}

int main(void) {
  char name[32];
  for (int call = 0; call < 3; call++) {
    double a[3] = {1 + call, 2, 3}, da[3] = {0, 0, 0};
    __enzyme_autodiff((void *)inv_norm, a, da, 3);
    double s = a[0] * a[0] + a[1] * a[1] + a[2] * a[2], r = 1 / sqrt(s);
    float sf = (float)s, rule = -1.0f * approx_rsqrt(sf) / (2 * sf);   /* what the rule returns */
    for (int i = 0; i < 3; i++) {
      snprintf(name, sizeof name, "da[%d]@%d", i, call);
      check(name, da[i], 2 * a[i] * (double)rule, 1e-6);
      /* and the approximation is close to the exact -a_i/|a|^3 */
      snprintf(name, sizeof name, "close[%d]@%d", i, call);
      check(name, fabs(da[i] / (-a[i] * r * r * r) - 1) < 5e-3, 1, 0);
    }
  }
  double a[3] = {1, 2, 3}, v[3] = {0.3, -0.7, 0.2}, g[3] = {0, 0, 0};
  double jv = __enzyme_fwddiff((void *)inv_norm, enzyme_dup, a, v, enzyme_const, 3);
  __enzyme_autodiff((void *)inv_norm, a, g, 3);
  check("dot", jv, v[0] * g[0] + v[1] * g[1] + v[2] * g[2], 1e-6);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
