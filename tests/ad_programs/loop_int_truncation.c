/* A loop whose step sizes are truncated to integers (fptosi of active values), an integer
   noinline callee, printf of integers, a scale of the output by an integer product, and a result
   returned from the last iteration; __enzyme_autodiff is declared void although the gradient
   returns d/dh (the unused result used to be emitted unnamed, breaking the value numbering:
   "instruction expected to be numbered" / "forward referenced with type 'label'"). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
int enzyme_const, enzyme_dup;

__attribute__((noinline)) int tiles(int rows, int cols) { return rows * cols + 1; }

double sweep(double h, double *w) {
  double step = 2, last = 0;
  for (int k = 0; k < 8; k++) {
    int rows = (int)h, cols = (int)step;
    double t = tiles(rows, cols);
    w[k] *= rows * cols + 0.5;
    printf("tiles %d\n", rows * cols);
    last = t * h;
    h /= 0.9;
    step = h / 3.0;
  }
  return last;
}

static double factor(double h, int k) {       /* the integer scale of w[k] */
  double step = 2;
  for (int j = 0; j < k; j++) { h /= 0.9; step = h / 3.0; }
  return (int)h * (int)step + 0.5;
}

int main(void) {
  char name[32];
  for (int call = 0; call < 3; call++) {
    double h0 = 50.0 + 7 * call, w[8], dw[8];
    for (int k = 0; k < 8; k++) { w[k] = 1 + k; dw[k] = 1.0; }
    __enzyme_autodiff((void *)sweep, h0, w, dw);
    for (int k = 0; k < 8; k++) {
      snprintf(name, sizeof name, "dw[%d]@%d", k, call);
      check(name, dw[k], factor(h0, k));
    }
  }
  /* forward/reverse dot test on w (h held constant) */
  double w[8], v[8], jv[8], jtw[8], wt[8], dot_f = 0, dot_r = 0;
  for (int k = 0; k < 8; k++) { w[k] = 1 + k; v[k] = sin(k + 0.3); jv[k] = v[k]; wt[k] = cos(2.0 * k); jtw[k] = wt[k]; }
  __enzyme_fwddiff((void *)sweep, enzyme_const, 51.0, enzyme_dup, w, jv);
  for (int k = 0; k < 8; k++) w[k] = 1 + k;
  __enzyme_autodiff((void *)sweep, enzyme_const, 51.0, enzyme_dup, w, jtw);
  for (int k = 0; k < 8; k++) { dot_f += jv[k] * wt[k]; dot_r += v[k] * jtw[k]; }
  check("dot", dot_f, dot_r);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
