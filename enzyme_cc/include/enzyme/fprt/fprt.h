/* enzyme-cc: the ABI of Enzyme's floating-point truncation runtime (names and signatures as in
   Enzyme's <enzyme/fprt/fprt.h>). A truncated function calls
   __enzyme_fprt_<from>_<kind>_<op>(operands..., exponent, significand, mode, loc) for each
   operation whose target format has no LLVM type; <enzyme/fprt/mpfr.h> defines them (weak)
   with MPFR, and a program may define its own instead. <from> is 64_52 (double) or 32_23
   (float); mode is 1 (mem: a value is the runtime's representation, here a pointer to an
   __enzyme_fp kept in the double's bits) or 2 (op: values are ordinary floats). */
#ifndef ENZYME_CC_FPRT_FPRT_H
#define ENZYME_CC_FPRT_FPRT_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct __enzyme_fp;

double __enzyme_fprt_64_52_get(double a, int64_t exponent, int64_t significand, int64_t mode,
                               const char *loc);
double __enzyme_fprt_64_52_new(double a, int64_t exponent, int64_t significand, int64_t mode,
                               const char *loc);
double __enzyme_fprt_64_52_const(double a, int64_t exponent, int64_t significand, int64_t mode,
                                 const char *loc);
void __enzyme_fprt_64_52_delete(double a, int64_t exponent, int64_t significand, int64_t mode,
                                const char *loc);
struct __enzyme_fp *__enzyme_fprt_64_52_new_intermediate(int64_t exponent, int64_t significand,
                                                         int64_t mode, const char *loc);

/* Lowered by enzyme-cc (ad/api/truncate.py); widths 16, 32 or 64. */
double __enzyme_truncate_mem_value_d(double, int, int);
float __enzyme_truncate_mem_value_f(float, int, int);
double __enzyme_expand_mem_value_d(double, int, int);
float __enzyme_expand_mem_value_f(float, int, int);

static inline int __enzyme_fprt_is_mem_mode(int64_t mode) { return (mode & 1) != 0; }
static inline int __enzyme_fprt_is_op_mode(int64_t mode) { return (mode & 2) != 0; }
/* a mem-mode value of the runtime: the pointer's bits in a double */
static inline double __enzyme_fprt_ptr_to_double(struct __enzyme_fp *p) {
  double d;
  memcpy(&d, &p, sizeof d);
  return d;
}
static inline struct __enzyme_fp *__enzyme_fprt_double_to_ptr(double d) {
  struct __enzyme_fp *p;
  memcpy(&p, &d, sizeof p);
  return p;
}

#ifdef __cplusplus
}
#endif
#endif
