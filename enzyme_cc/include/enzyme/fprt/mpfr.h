/* enzyme-cc: Enzyme's floating-point truncation runtime (<enzyme/fprt/mpfr.h>) on MPFR.

   Weak definitions of the __enzyme_fprt_* functions (fprt.h) that truncated functions call for
   targets without an LLVM type; a program may define any of them itself. Link with -lmpfr
   (enzyme-cc adds it when the program needs it). As in Enzyme: a number keeps `significand`
   bits of precision, rounded to nearest-even; the exponent width is passed on but not
   enforced (MPFR's exponent range is wider). Op mode (2) rounds the operands to that precision
   and computes there; mem mode (1) keeps each value in a heap-allocated __enzyme_fp whose
   pointer travels in the double's bits (one per operation, never freed unless the program
   calls __enzyme_fprt_64_52_delete). */
#ifndef ENZYME_CC_FPRT_MPFR_H
#define ENZYME_CC_FPRT_MPFR_H

#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>

#include "fprt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ECC_FPRT_WEAK __attribute__((weak))
#define ECC_RND MPFR_RNDN
#ifdef __cplusplus
#define ECC_BOOL bool
#else
#define ECC_BOOL _Bool
#endif

typedef struct __enzyme_fp {
  mpfr_t v;
} __enzyme_fp;

ECC_FPRT_WEAK struct __enzyme_fp *__enzyme_fprt_64_52_new_intermediate(int64_t exponent,
                                                                       int64_t significand,
                                                                       int64_t mode,
                                                                       const char *loc) {
  (void)exponent, (void)mode, (void)loc;
  __enzyme_fp *p = (__enzyme_fp *)malloc(sizeof(__enzyme_fp));
  if (!p)
    abort();
  mpfr_init2(p->v, (mpfr_prec_t)significand);
  return p;
}
ECC_FPRT_WEAK double __enzyme_fprt_64_52_new(double a, int64_t exponent, int64_t significand,
                                             int64_t mode, const char *loc) {
  __enzyme_fp *p = __enzyme_fprt_64_52_new_intermediate(exponent, significand, mode, loc);
  mpfr_set_d(p->v, a, ECC_RND);
  return __enzyme_fprt_ptr_to_double(p);
}
ECC_FPRT_WEAK double __enzyme_fprt_64_52_const(double a, int64_t exponent, int64_t significand,
                                               int64_t mode, const char *loc) {
  return __enzyme_fprt_64_52_new(a, exponent, significand, mode, loc);
}
/* The number a mem-mode value holds. All-zero bits (memory cleared with memset or calloc, which
   never held a runtime number) read as +0, as in Enzyme's runtime. */
static __thread mpfr_t ecc_fprt_zero;
static __thread int ecc_fprt_zero_made;
static inline mpfr_srcptr ecc_fprt_number(double a) {
  if (__enzyme_fprt_double_to_ptr(a))
    return __enzyme_fprt_double_to_ptr(a)->v;
  if (!ecc_fprt_zero_made) {
    mpfr_init2(ecc_fprt_zero, MPFR_PREC_MIN);
    mpfr_set_zero(ecc_fprt_zero, 1);
    ecc_fprt_zero_made = 1;
  }
  return ecc_fprt_zero;
}
ECC_FPRT_WEAK double __enzyme_fprt_64_52_get(double a, int64_t exponent, int64_t significand,
                                             int64_t mode, const char *loc) {
  (void)exponent, (void)significand, (void)mode, (void)loc;
  return mpfr_get_d(ecc_fprt_number(a), ECC_RND);
}
ECC_FPRT_WEAK void __enzyme_fprt_64_52_delete(double a, int64_t exponent, int64_t significand,
                                              int64_t mode, const char *loc) {
  (void)exponent, (void)significand, (void)mode, (void)loc;
  __enzyme_fp *p = __enzyme_fprt_double_to_ptr(a);
  mpfr_clear(p->v);
  free(p);
}

/* every operation as f(result, operands...), rounded to the result's precision */
#define ECC_UN(N, CALL)                                                                        \
  static inline void ecc_fprt_##N(mpfr_ptr r, mpfr_srcptr a) { CALL; }
#define ECC_BIN(N, CALL)                                                                       \
  static inline void ecc_fprt_##N(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b) { CALL; }
ECC_UN(sqrt, mpfr_sqrt(r, a, ECC_RND))
ECC_UN(cbrt, mpfr_cbrt(r, a, ECC_RND))
ECC_UN(exp, mpfr_exp(r, a, ECC_RND))
ECC_UN(exp2, mpfr_exp2(r, a, ECC_RND))
ECC_UN(expm1, mpfr_expm1(r, a, ECC_RND))
ECC_UN(log, mpfr_log(r, a, ECC_RND))
ECC_UN(log2, mpfr_log2(r, a, ECC_RND))
ECC_UN(log10, mpfr_log10(r, a, ECC_RND))
ECC_UN(log1p, mpfr_log1p(r, a, ECC_RND))
ECC_UN(sin, mpfr_sin(r, a, ECC_RND))
ECC_UN(cos, mpfr_cos(r, a, ECC_RND))
ECC_UN(tan, mpfr_tan(r, a, ECC_RND))
ECC_UN(asin, mpfr_asin(r, a, ECC_RND))
ECC_UN(acos, mpfr_acos(r, a, ECC_RND))
ECC_UN(atan, mpfr_atan(r, a, ECC_RND))
ECC_UN(sinh, mpfr_sinh(r, a, ECC_RND))
ECC_UN(cosh, mpfr_cosh(r, a, ECC_RND))
ECC_UN(tanh, mpfr_tanh(r, a, ECC_RND))
ECC_UN(asinh, mpfr_asinh(r, a, ECC_RND))
ECC_UN(acosh, mpfr_acosh(r, a, ECC_RND))
ECC_UN(atanh, mpfr_atanh(r, a, ECC_RND))
ECC_UN(erf, mpfr_erf(r, a, ECC_RND))
ECC_UN(erfc, mpfr_erfc(r, a, ECC_RND))
ECC_UN(tgamma, mpfr_gamma(r, a, ECC_RND))
ECC_UN(lgamma, int sign; mpfr_lgamma(r, &sign, a, ECC_RND))
ECC_UN(fabs, mpfr_abs(r, a, ECC_RND))
ECC_UN(floor, mpfr_floor(r, a))
ECC_UN(ceil, mpfr_ceil(r, a))
ECC_UN(trunc, mpfr_trunc(r, a))
ECC_UN(round, mpfr_round(r, a))
ECC_UN(rint, mpfr_rint(r, a, ECC_RND))
ECC_UN(nearbyint, mpfr_rint(r, a, ECC_RND))
ECC_BIN(fadd, mpfr_add(r, a, b, ECC_RND))
ECC_BIN(fsub, mpfr_sub(r, a, b, ECC_RND))
ECC_BIN(fmul, mpfr_mul(r, a, b, ECC_RND))
ECC_BIN(fdiv, mpfr_div(r, a, b, ECC_RND))
ECC_BIN(frem, mpfr_fmod(r, a, b, ECC_RND)) /* LLVM's frem is C's fmod */
ECC_BIN(pow, mpfr_pow(r, a, b, ECC_RND))
ECC_BIN(atan2, mpfr_atan2(r, a, b, ECC_RND))
ECC_BIN(hypot, mpfr_hypot(r, a, b, ECC_RND))
ECC_BIN(fmod, mpfr_fmod(r, a, b, ECC_RND))
ECC_BIN(remainder, mpfr_remainder(r, a, b, ECC_RND))
ECC_BIN(copysign, mpfr_copysign(r, a, b, ECC_RND))
ECC_BIN(fmin, mpfr_min(r, a, b, ECC_RND))
ECC_BIN(fmax, mpfr_max(r, a, b, ECC_RND))
ECC_BIN(fdim, mpfr_dim(r, a, b, ECC_RND))
static inline void ecc_fprt_fma(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c) {
  mpfr_fma(r, a, b, c, ECC_RND); /* one rounding */
}
static inline void ecc_fprt_fmuladd(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c) {
  mpfr_mul(r, a, b, ECC_RND); /* two roundings, as LLVM computes it without FMA */
  mpfr_add(r, r, c, ECC_RND);
}
static inline int ecc_fprt_fcmp(mpfr_srcptr a, mpfr_srcptr b, int pred) {
  /* LLVM's predicate numbering: bit 0 equal, 1 greater, 2 less, 3 unordered */
  if (mpfr_nan_p(a) || mpfr_nan_p(b))
    return (pred & 8) != 0;
  int c = mpfr_cmp(a, b);
  return (pred & (c < 0 ? 4 : c > 0 ? 2 : 1)) != 0;
}

typedef void (*ecc_fprt_un)(mpfr_ptr, mpfr_srcptr);
typedef void (*ecc_fprt_bin)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr);
typedef void (*ecc_fprt_tern)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_srcptr);
#define ECC_SIG int64_t exponent, int64_t significand, int64_t mode, const char *loc
#define ECC_ARGS exponent, significand, mode, loc

/* An operand: op mode rounds the ordinary float to the precision (in `tmp`); mem mode reads
   the number its representation points to (doubles only: a float cannot hold a pointer). */
static inline mpfr_srcptr ecc_fprt_in_d(mpfr_ptr tmp, double x, ECC_SIG) {
  (void)exponent, (void)loc;
  if (__enzyme_fprt_is_op_mode(mode)) {
    mpfr_init2(tmp, (mpfr_prec_t)significand);
    mpfr_set_d(tmp, x, ECC_RND);
    return tmp;
  }
  return ecc_fprt_number(x);
}
static inline mpfr_srcptr ecc_fprt_in_f(mpfr_ptr tmp, float x, ECC_SIG) {
  (void)exponent, (void)loc;
  if (!__enzyme_fprt_is_op_mode(mode))
    abort();
  mpfr_init2(tmp, (mpfr_prec_t)significand);
  mpfr_set_flt(tmp, x, ECC_RND);
  return tmp;
}
/* The result register: a temporary (op mode) or a new number (mem mode). */
static inline mpfr_ptr ecc_fprt_out(mpfr_ptr tmp, __enzyme_fp **res, ECC_SIG) {
  if (__enzyme_fprt_is_op_mode(mode)) {
    mpfr_init2(tmp, (mpfr_prec_t)significand);
    return tmp;
  }
  *res = __enzyme_fprt_64_52_new_intermediate(exponent, significand, mode, loc);
  return (*res)->v;
}
static inline double ecc_fprt_done_d(mpfr_ptr r, __enzyme_fp *res, mpfr_ptr *tmps, int n,
                                     int64_t mode) {
  if (!__enzyme_fprt_is_op_mode(mode))
    return __enzyme_fprt_ptr_to_double(res);
  double out = mpfr_get_d(r, ECC_RND);
  mpfr_clear(r);
  for (int k = 0; k < n; k++)
    mpfr_clear(tmps[k]);
  return out;
}
static inline float ecc_fprt_done_f(mpfr_ptr r, mpfr_ptr *tmps, int n) {
  float out = mpfr_get_flt(r, ECC_RND);
  mpfr_clear(r);
  for (int k = 0; k < n; k++)
    mpfr_clear(tmps[k]);
  return out;
}

static inline double ecc_fprt_un_d(ecc_fprt_un f, double a, ECC_SIG) {
  mpfr_t t0, tr;
  mpfr_ptr tmps[1] = {t0};
  __enzyme_fp *res = 0;
  mpfr_srcptr x = ecc_fprt_in_d(t0, a, ECC_ARGS);
  mpfr_ptr r = ecc_fprt_out(tr, &res, ECC_ARGS);
  f(r, x);
  return ecc_fprt_done_d(r, res, tmps, 1, mode);
}
static inline double ecc_fprt_bin_d(ecc_fprt_bin f, double a, double b, ECC_SIG) {
  mpfr_t t0, t1, tr;
  mpfr_ptr tmps[2] = {t0, t1};
  __enzyme_fp *res = 0;
  mpfr_srcptr x = ecc_fprt_in_d(t0, a, ECC_ARGS), y = ecc_fprt_in_d(t1, b, ECC_ARGS);
  mpfr_ptr r = ecc_fprt_out(tr, &res, ECC_ARGS);
  f(r, x, y);
  return ecc_fprt_done_d(r, res, tmps, 2, mode);
}
static inline double ecc_fprt_tern_d(ecc_fprt_tern f, double a, double b, double c, ECC_SIG) {
  mpfr_t t0, t1, t2, tr;
  mpfr_ptr tmps[3] = {t0, t1, t2};
  __enzyme_fp *res = 0;
  mpfr_srcptr x = ecc_fprt_in_d(t0, a, ECC_ARGS), y = ecc_fprt_in_d(t1, b, ECC_ARGS),
              z = ecc_fprt_in_d(t2, c, ECC_ARGS);
  mpfr_ptr r = ecc_fprt_out(tr, &res, ECC_ARGS);
  f(r, x, y, z);
  return ecc_fprt_done_d(r, res, tmps, 3, mode);
}
static inline float ecc_fprt_un_f(ecc_fprt_un f, float a, ECC_SIG) {
  mpfr_t t0, tr;
  mpfr_ptr tmps[1] = {t0};
  mpfr_srcptr x = ecc_fprt_in_f(t0, a, ECC_ARGS);
  mpfr_init2(tr, (mpfr_prec_t)significand);
  f(tr, x);
  return ecc_fprt_done_f(tr, tmps, 1);
}
static inline float ecc_fprt_bin_f(ecc_fprt_bin f, float a, float b, ECC_SIG) {
  mpfr_t t0, t1, tr;
  mpfr_ptr tmps[2] = {t0, t1};
  mpfr_srcptr x = ecc_fprt_in_f(t0, a, ECC_ARGS), y = ecc_fprt_in_f(t1, b, ECC_ARGS);
  mpfr_init2(tr, (mpfr_prec_t)significand);
  f(tr, x, y);
  return ecc_fprt_done_f(tr, tmps, 2);
}
static inline float ecc_fprt_tern_f(ecc_fprt_tern f, float a, float b, float c, ECC_SIG) {
  mpfr_t t0, t1, t2, tr;
  mpfr_ptr tmps[3] = {t0, t1, t2};
  mpfr_srcptr x = ecc_fprt_in_f(t0, a, ECC_ARGS), y = ecc_fprt_in_f(t1, b, ECC_ARGS),
              z = ecc_fprt_in_f(t2, c, ECC_ARGS);
  mpfr_init2(tr, (mpfr_prec_t)significand);
  f(tr, x, y, z);
  return ecc_fprt_done_f(tr, tmps, 3);
}
static inline int ecc_fprt_cmp_d(int pred, double a, double b, ECC_SIG) {
  mpfr_t t0, t1;
  mpfr_srcptr x = ecc_fprt_in_d(t0, a, ECC_ARGS), y = ecc_fprt_in_d(t1, b, ECC_ARGS);
  int out = ecc_fprt_fcmp(x, y, pred);
  if (__enzyme_fprt_is_op_mode(mode))
    mpfr_clear(t0), mpfr_clear(t1);
  return out;
}
static inline int ecc_fprt_cmp_f(int pred, float a, float b, ECC_SIG) {
  mpfr_t t0, t1;
  mpfr_srcptr x = ecc_fprt_in_f(t0, a, ECC_ARGS), y = ecc_fprt_in_f(t1, b, ECC_ARGS);
  int out = ecc_fprt_fcmp(x, y, pred);
  mpfr_clear(t0), mpfr_clear(t1);
  return out;
}
static __thread int ecc_fprt_powi_n; /* the integer exponent of llvm.powi, for ecc_fprt_powi */
static inline void ecc_fprt_powi(mpfr_ptr r, mpfr_srcptr a) {
  mpfr_pow_si(r, a, ecc_fprt_powi_n, ECC_RND);
}

/* The exported operations: <from>_binop_<op>, _intr_llvm_<name>_<type> (the intrinsic's name
   with '.' -> '_'), _func_<libm name>, _fcmp_<predicate>. */
#define ECC_D1(NAME, OP)                                                                       \
  ECC_FPRT_WEAK double __enzyme_fprt_64_52_##NAME(double a, ECC_SIG) {                         \
    return ecc_fprt_un_d(ecc_fprt_##OP, a, ECC_ARGS);                                          \
  }
#define ECC_D2(NAME, OP)                                                                       \
  ECC_FPRT_WEAK double __enzyme_fprt_64_52_##NAME(double a, double b, ECC_SIG) {               \
    return ecc_fprt_bin_d(ecc_fprt_##OP, a, b, ECC_ARGS);                                      \
  }
#define ECC_F1(NAME, OP)                                                                       \
  ECC_FPRT_WEAK float __enzyme_fprt_32_23_##NAME(float a, ECC_SIG) {                           \
    return ecc_fprt_un_f(ecc_fprt_##OP, a, ECC_ARGS);                                          \
  }
#define ECC_F2(NAME, OP)                                                                       \
  ECC_FPRT_WEAK float __enzyme_fprt_32_23_##NAME(float a, float b, ECC_SIG) {                  \
    return ecc_fprt_bin_f(ecc_fprt_##OP, a, b, ECC_ARGS);                                      \
  }
#define ECC_BINOP(OP) ECC_D2(binop_##OP, OP) ECC_F2(binop_##OP, OP)
#define ECC_LIBM1(OP) ECC_D1(func_##OP, OP) ECC_F1(func_##OP##f, OP)
#define ECC_LIBM2(OP) ECC_D2(func_##OP, OP) ECC_F2(func_##OP##f, OP)
#define ECC_INTR1(N, OP) ECC_D1(intr_llvm_##N##_f64, OP) ECC_F1(intr_llvm_##N##_f32, OP)
#define ECC_INTR2(N, OP) ECC_D2(intr_llvm_##N##_f64, OP) ECC_F2(intr_llvm_##N##_f32, OP)
#define ECC_CMP(P, N)                                                                          \
  ECC_FPRT_WEAK ECC_BOOL __enzyme_fprt_64_52_fcmp_##P(double a, double b, ECC_SIG) {              \
    return ecc_fprt_cmp_d(N, a, b, ECC_ARGS);                                                  \
  }                                                                                            \
  ECC_FPRT_WEAK ECC_BOOL __enzyme_fprt_32_23_fcmp_##P(float a, float b, ECC_SIG) {                \
    return ecc_fprt_cmp_f(N, a, b, ECC_ARGS);                                                  \
  }

ECC_BINOP(fadd) ECC_BINOP(fsub) ECC_BINOP(fmul) ECC_BINOP(fdiv) ECC_BINOP(frem)
ECC_LIBM1(sqrt) ECC_LIBM1(cbrt) ECC_LIBM1(exp) ECC_LIBM1(exp2) ECC_LIBM1(expm1) ECC_LIBM1(log)
ECC_LIBM1(log2) ECC_LIBM1(log10) ECC_LIBM1(log1p) ECC_LIBM1(sin) ECC_LIBM1(cos) ECC_LIBM1(tan)
ECC_LIBM1(asin) ECC_LIBM1(acos) ECC_LIBM1(atan) ECC_LIBM1(sinh) ECC_LIBM1(cosh) ECC_LIBM1(tanh)
ECC_LIBM1(asinh) ECC_LIBM1(acosh) ECC_LIBM1(atanh) ECC_LIBM1(erf) ECC_LIBM1(erfc)
ECC_LIBM1(tgamma) ECC_LIBM1(lgamma) ECC_LIBM1(fabs) ECC_LIBM1(floor) ECC_LIBM1(ceil)
ECC_LIBM1(trunc) ECC_LIBM1(round) ECC_LIBM1(rint) ECC_LIBM1(nearbyint)
ECC_LIBM2(pow) ECC_LIBM2(atan2) ECC_LIBM2(hypot) ECC_LIBM2(fmod) ECC_LIBM2(remainder)
ECC_LIBM2(copysign) ECC_LIBM2(fmin) ECC_LIBM2(fmax) ECC_LIBM2(fdim)
ECC_INTR1(sqrt, sqrt) ECC_INTR1(sin, sin) ECC_INTR1(cos, cos) ECC_INTR1(tan, tan)
ECC_INTR1(exp, exp) ECC_INTR1(exp2, exp2) ECC_INTR1(log, log) ECC_INTR1(log2, log2)
ECC_INTR1(log10, log10) ECC_INTR1(fabs, fabs) ECC_INTR1(floor, floor) ECC_INTR1(ceil, ceil)
ECC_INTR1(trunc, trunc) ECC_INTR1(round, round) ECC_INTR1(rint, rint)
ECC_INTR1(nearbyint, nearbyint)
ECC_INTR2(pow, pow) ECC_INTR2(copysign, copysign) ECC_INTR2(minnum, fmin) ECC_INTR2(maxnum, fmax)
ECC_CMP(false, 0) ECC_CMP(oeq, 1) ECC_CMP(ogt, 2) ECC_CMP(oge, 3) ECC_CMP(olt, 4)
ECC_CMP(ole, 5) ECC_CMP(one, 6) ECC_CMP(ord, 7) ECC_CMP(uno, 8) ECC_CMP(ueq, 9)
ECC_CMP(ugt, 10) ECC_CMP(uge, 11) ECC_CMP(ult, 12) ECC_CMP(ule, 13) ECC_CMP(une, 14)
ECC_CMP(true, 15)

ECC_FPRT_WEAK double __enzyme_fprt_64_52_intr_llvm_fma_f64(double a, double b, double c,
                                                           ECC_SIG) {
  return ecc_fprt_tern_d(ecc_fprt_fma, a, b, c, ECC_ARGS);
}
ECC_FPRT_WEAK double __enzyme_fprt_64_52_intr_llvm_fmuladd_f64(double a, double b, double c,
                                                               ECC_SIG) {
  return ecc_fprt_tern_d(ecc_fprt_fmuladd, a, b, c, ECC_ARGS);
}
ECC_FPRT_WEAK float __enzyme_fprt_32_23_intr_llvm_fma_f32(float a, float b, float c, ECC_SIG) {
  return ecc_fprt_tern_f(ecc_fprt_fma, a, b, c, ECC_ARGS);
}
ECC_FPRT_WEAK float __enzyme_fprt_32_23_intr_llvm_fmuladd_f32(float a, float b, float c,
                                                              ECC_SIG) {
  return ecc_fprt_tern_f(ecc_fprt_fmuladd, a, b, c, ECC_ARGS);
}
ECC_FPRT_WEAK double __enzyme_fprt_64_52_intr_llvm_powi_f64_i32(double a, int32_t n, ECC_SIG) {
  ecc_fprt_powi_n = n;
  return ecc_fprt_un_d(ecc_fprt_powi, a, ECC_ARGS);
}
ECC_FPRT_WEAK float __enzyme_fprt_32_23_intr_llvm_powi_f32_i32(float a, int32_t n, ECC_SIG) {
  ecc_fprt_powi_n = n;
  return ecc_fprt_un_f(ecc_fprt_powi, a, ECC_ARGS);
}

#ifdef __cplusplus
}
#endif
#endif
