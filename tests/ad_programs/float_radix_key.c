/* Order-preserving integer keys made from a float's bits, as radix sorts of floats make them:
   negative values get all their bits flipped (~u), the others their sign bit set. The keys are
   only compared (an argmin LLVM turns into umin, an argmax), so they carry no derivative and
   lose none; the derivative flows through the floats they select. It was refused
   ("integer arithmetic on data that holds a float"): a float view of the loop-carried key, left
   unused, and the umin counted as the bits becoming data again. Reverse mode against the
   analytic gradient, forward mode against reverse. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);
#define N 6

static uint32_t key32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static uint64_t key64(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  uint64_t mask = (uint64_t)(-(int64_t)(u >> 63)) | 0x8000000000000000ull;
  return u ^ mask;
}

/* the smallest x squared (float keys, an argmin LLVM turns into umin) plus the largest w
   cubed (double keys, made with a sign mask as CUB does, an argmax) */
__attribute__((noinline)) static float f(const float *x, const double *w) {
  int best = 0;
  uint32_t kb = key32(x[0]);
  for (int i = 1; i < N; i++) {
    uint32_t k = key32(x[i]);
    if (k < kb) { kb = k; best = i; }
  }
  int top = 0;
  uint64_t kt = key64(w[0]);
  for (int i = 1; i < N; i++) {
    uint64_t k = key64(w[i]);
    if (k > kt) { kt = k; top = i; }
  }
  return x[best] * x[best] + (float)(w[top] * w[top] * w[top]);
}

int main(void) {
  float x[N] = {0.7f, -0.3f, 1.5f, -2.25f, 0.0f, 0.9f}, dx[N] = {0};
  double w[N] = {0.5, -1.5, 2.0, -0.25, 0.75, -3.0}, dw[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, w, dw);
  /* argmin of x: x[3] = -2.25 */
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], i == 3 ? 2 * x[3] : 0.0);
  }
  /* argmax of w: w[2] = 2.0 */
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "dw[%d]", i);
    check(name, dw[i], i == 2 ? 3 * w[2] * w[2] : 0.0);
  }
  float vx[N];
  double vw[N], dot = 0;
  for (int i = 0; i < N; i++) {
    vx[i] = cosf(1.0f + i);
    vw[i] = sin(2.0 + i);
    dot += vx[i] * dx[i] + vw[i] * dw[i];
  }
  check("fwd.rev", __enzyme_fwddiff((void *)f, enzyme_dup, x, vx, enzyme_dup, w, vw), dot);
  return failed != 0;
}
