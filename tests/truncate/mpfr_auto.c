/* Truncation to formats without an LLVM type goes through Enzyme's runtime ABI
   (__enzyme_fprt_*): this program neither includes <enzyme/fprt/mpfr.h> nor links MPFR, so
   enzyme-cc supplies the runtime and -lmpfr. A p-bit significand keeps p bits of precision
   (as in Enzyme's MPFR runtime); the expected values round each exact double result to p bits
   with frexp/ldexp. */
#include "check.h"
#include <enzyme/fprt/fprt.h>
void *__enzyme_truncate_op_func(void *, int, int, ...);
void *__enzyme_truncate_mem_func(void *, int, int, ...);

static double round_bits(double x, int p) { /* to nearest-even, p significant bits */
  int e;
  double m = frexp(x, &e);
  return ldexp(nearbyint(ldexp(m, p)), e - p);
}
/* products and sums of short numbers are exact in double: one rounding per operation */
static double poly(double a, double b) {
  double p = a * b;
  double q = p + a;
  double r = q * b;
  return r - 1.0;
}
static double poly_p(double a, double b, int p) {
  a = round_bits(a, p), b = round_bits(b, p);
  double q = round_bits(round_bits(a * b, p) + a, p);
  return round_bits(round_bits(q * b, p) - 1.0, p);
}
/* a comparison made in the narrow format */
static double pick(double a, double b) { return a > b ? a - b : 2.0 * b; }
static void scale_all(double *x, int n, double c) {
  for (int i = 0; i < n; i++) x[i] = x[i] * c + 0.5;
}
typedef double (*Poly)(double, double);
typedef void (*Scale)(double *, int, double);
enum { N = 4 };

int main(void) {
  Poly p10 = (Poly)__enzyme_truncate_op_func((void *)poly, 64, 8, 10);
  Poly p5 = (Poly)__enzyme_truncate_op_func((void *)poly, 64, 4, 5);
  for (int k = 0; k < 4; k++) {
    double a = rnd(k), b = rnd(k + 10);
    check_exact("op_p10", p10(a, b), poly_p(a, b, 10));
    check_exact("op_p5", p5(a, b), poly_p(a, b, 5));
  }
  /* 1 + 2^-12 and 1 are equal with 10 bits: the truncated comparison takes the other branch */
  Poly pk = (Poly)__enzyme_truncate_op_func((void *)pick, 64, 8, 10);
  double one = seed - 0.7 + 1.0, big = one + ldexp(1, -12);
  check_exact("pick_full", pick(big, one), big - one);
  check_exact("pick_p10", pk(big, one), 2.0);
  /* mem mode: values are the runtime's numbers, made and read with fprt.h's functions */
  Scale ms = (Scale)__enzyme_truncate_mem_func((void *)scale_all, 64, 8, 10);
  double x[N], xm[N];
  for (int i = 0; i < N; i++)
    x[i] = rnd(20 + i), xm[i] = __enzyme_fprt_64_52_new(x[i], 8, 10, 1, "mpfr_auto.c");
  ms(xm, N, __enzyme_fprt_64_52_new(1.5, 8, 10, 1, "mpfr_auto.c"));
  for (int i = 0; i < N; i++) {
    double want = round_bits(round_bits(round_bits(x[i], 10) * 1.5, 10) + 0.5, 10);
    check_exact("mem_p10", __enzyme_fprt_64_52_get(xm[i], 8, 10, 1, "mpfr_auto.c"), want);
  }
  /* zeroed memory reads as +0 in mem mode (it never held a runtime number) */
  double z[N] = {0};
  z[1] = __enzyme_fprt_64_52_new(x[1], 8, 10, 1, "mpfr_auto.c");
  ms(z, N, __enzyme_fprt_64_52_new(2.0, 8, 10, 1, "mpfr_auto.c"));
  check_exact("mem_zero", __enzyme_fprt_64_52_get(z[0], 8, 10, 1, "mpfr_auto.c"), 0.5);
  check_exact("mem_zero_other", __enzyme_fprt_64_52_get(z[1], 8, 10, 1, "mpfr_auto.c"),
              round_bits(round_bits(x[1], 10) * 2 + 0.5, 10));
  return report();
}
