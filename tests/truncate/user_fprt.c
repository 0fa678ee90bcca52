/* A program's own runtime functions are honoured, as in Enzyme: defining
   __enzyme_fprt_64_52_binop_fmul makes every truncation of doubles call the runtime (even to
   float); the multiplications reach this definition, the additions the library's. */
#include "check.h"
#include <stdint.h>
void *__enzyme_truncate_op_func(void *, int, int, ...);
static int muls, bad_args;
double __enzyme_fprt_64_52_binop_fmul(double a, double b, int64_t exponent, int64_t significand,
                                      int64_t mode, const char *loc) {
  muls++;
  bad_args += exponent != 8 || significand != 23 || mode != 2 || !loc;
  return (double)((float)a * (float)b);      /* this runtime's own rounding */
}
static double g(double a, double b) {
  double p = a * b;
  double q = p * p;
  return q + a;
}
typedef double (*G)(double, double);
int main(void) {
  G t = (G)__enzyme_truncate_op_func((void *)g, 64, 32);
  double a = rnd(1), b = rnd(2);
  double p = (double)((float)a * (float)b), q = (double)((float)p * (float)p);
  double got = t(a, b);
  check_exact("user_muls", muls, 2);
  check_exact("user_args_ok", bad_args, 0);
  /* the addition: the library runtime, 23 bits of precision (Enzyme's convention) */
  check_near("user_result", got, q + a, 1e-6);
  return report();
}
