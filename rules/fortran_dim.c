/* enzyme-cc's versions of flang's reductions along one dimension (`SUM(a, DIM=2)`, PRODUCT,
   MAXVAL, MINVAL with DIM= and an optional MASK, NORM2 with DIM=), linked into a program's
   bitcode before AD in place of `_FortranASumDim`, ... (rules/fortran.py lists them). flang
   keeps them as runtime calls at -O0 (NORM2's at -O2 too). Each result element is a loop along
   the dimension, so AD differentiates them as code. REAL(4) and REAL(8) are handled here; other
   types go to flang's entry, whose registered derivatives stop with a message when the data
   carries floats (integers need none). */
#include <math.h>

#include "fortran_desc.h"

/* the array without dimension d: the result's shape, and a view to walk the other dimensions */
static Desc without_dim(const Desc *x, int d, ptrdiff_t *ext) {
  Desc v;
  v.base = x->base;
  v.elem_len = x->elem_len;
  v.type = x->type;
  v.rank = (unsigned char)(x->rank - 1);
  for (int k = 0, j = 0; k < x->rank; k++)
    if (k != d) {
      v.dim[j] = x->dim[k];
      ext[j++] = x->dim[k].extent;
    }
  return v;
}

static int true_at(const char *p, size_t len) {
  for (size_t b = 0; b < len; b++)
    if (p[b]) return 1;
  return 0;
}

/* flang's entry, and derivatives that run it for data without floats and stop otherwise */
#define OTHER(entry, WHAT)                                                                     \
  void _FortranA##entry(Desc *r, const Desc *x, int dim, const char *file, int line,          \
                        const Desc *mask);                                                     \
  __attribute__((noinline)) void __enzyme_cc_fortran_##entry##_other(                         \
      Desc *r, const Desc *x, int dim, const char *file, int line, const Desc *mask) {         \
    _FortranA##entry(r, x, dim, file, line, mask);                                             \
  }                                                                                            \
  void __enzyme_cc_fortran_##entry##_fwd(Desc *r, Desc *dr, const Desc *x, const Desc *dx,    \
                                         int dim, const char *file, const char *dfile,         \
                                         int line, const Desc *mask, const Desc *dmask) {      \
    (void)dr, (void)dx, (void)dfile, (void)dmask;                                              \
    if (carries_float(x)) {                                                                    \
      fprintf(stderr, "enzyme-cc: the derivative reached " WHAT " with DIM= at %s:%d on an "   \
              "array of a kind it cannot differentiate (REAL(10), REAL(16) or COMPLEX); "      \
              "reduce with a loop instead\n", file ? file : "?", line);                        \
      abort();                                                                                 \
    }                                                                                          \
    _FortranA##entry(r, x, dim, file, line, mask);                                             \
  }                                                                                            \
  void __enzyme_cc_fortran_##entry##_rev(Desc *r, Desc *dr, const Desc *x, const Desc *dx,    \
                                         int dim, const char *file, const char *dfile,         \
                                         int line, const Desc *mask, const Desc *dmask) {      \
    (void)r, (void)dr, (void)x, (void)dx, (void)dim, (void)file, (void)dfile, (void)line,      \
        (void)mask, (void)dmask;                                                               \
  }                                                                                            \
  REGISTER(entry)
OTHER(SumDim, "SUM")
OTHER(ProductDim, "PRODUCT")
OTHER(MaxvalDim, "MAXVAL")
OTHER(MinvalDim, "MINVAL")

/* r = the reduction of x along dimension d (0-based); MASK is a scalar or x's shape */
#define ALONG(name, T, init, step)                                                             \
  static void name(Desc *r, const Desc *x, int d, const Desc *mask) {                          \
    ptrdiff_t ext[15];                                                                         \
    Desc v = without_dim(x, d, ext), mv;                                                       \
    T *out = (T *)allocate_result(r, x, x->rank - 1, ext);                                     \
    if (mask && mask->rank) mv = without_dim(mask, d, ext);                                    \
    ptrdiff_t n = x->dim[d].extent, s = x->dim[d].stride;                                      \
    ptrdiff_t ms = mask && mask->rank ? mask->dim[d].stride : 0;                               \
    if (mask && !mask->rank && !true_at(mask->base, mask->elem_len)) n = 0;                   \
    for (size_t i = 0, m = elements(r); i < m; i++) {                                          \
      const char *p = (const char *)x->base + offset_of(&v, i);                                \
      const char *q = mask && mask->rank ? (const char *)mask->base + offset_of(&mv, i) : 0;   \
      T acc = (init);                                                                          \
      for (ptrdiff_t l = 0; l < n; l++) {                                                      \
        if (q && !true_at(q + l * ms, mask->elem_len)) continue;                               \
        T e = *(const T *)(p + l * s);                                                         \
        step;                                                                                  \
      }                                                                                        \
      out[i] = acc;                                                                            \
    }                                                                                          \
  }
ALONG(sum_double, double, 0.0, acc += e)
ALONG(sum_float, float, 0.0f, acc += e)
ALONG(product_double, double, 1.0, acc *= e)
ALONG(product_float, float, 1.0f, acc *= e)
ALONG(maxval_double, double, -DBL_MAX, if (e > acc) acc = e)
ALONG(maxval_float, float, -FLT_MAX, if (e > acc) acc = e)
ALONG(minval_double, double, DBL_MAX, if (e < acc) acc = e)
ALONG(minval_float, float, FLT_MAX, if (e < acc) acc = e)

#define ENTRY(entry, stem)                                                                     \
  void __enzyme_cc_fortran_##entry(Desc *r, const Desc *x, int dim, const char *file,         \
                                   int line, const Desc *mask) {                               \
    if (dim < 1 || dim > x->rank || r->base || (x->type != T_DOUBLE && x->type != T_FLOAT)) { \
      __enzyme_cc_fortran_##entry##_other(r, x, dim, file, line, mask);                        \
      return;                                                                                  \
    }                                                                                          \
    if (x->type == T_DOUBLE) stem##_double(r, x, dim - 1, mask);                               \
    else stem##_float(r, x, dim - 1, mask);                                                    \
  }
ENTRY(SumDim, sum)
ENTRY(ProductDim, product)
ENTRY(MaxvalDim, maxval)
ENTRY(MinvalDim, minval)

/* NORM2 along a dimension, scaled by the largest magnitude as flang does (no overflow for
   large elements); all zeros give 0 */
void _FortranANorm2Dim(Desc *r, const Desc *x, int dim, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Norm2Dim_other(Desc *r, const Desc *x, int dim,
                                                                 const char *file, int line) {
  _FortranANorm2Dim(r, x, dim, file, line);
}
void __enzyme_cc_fortran_Norm2Dim_fwd(Desc *r, Desc *dr, const Desc *x, const Desc *dx, int dim,
                                      const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)x, (void)dx, (void)dim, (void)dfile;
  fprintf(stderr, "enzyme-cc: the derivative reached NORM2 with DIM= at %s:%d on an array of a "
          "kind it cannot differentiate (REAL(10) or REAL(16)); reduce with a loop instead\n",
          file ? file : "?", line);
  abort();
}
void __enzyme_cc_fortran_Norm2Dim_rev(Desc *r, Desc *dr, const Desc *x, const Desc *dx, int dim,
                                      const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)x, (void)dx, (void)dim, (void)file, (void)dfile, (void)line;
}
REGISTER(Norm2Dim)

#define NORM2_ALONG(name, T, ABS, SQRT)                                                        \
  static void name(Desc *r, const Desc *x, int d) {                                            \
    ptrdiff_t ext[15];                                                                         \
    Desc v = without_dim(x, d, ext);                                                           \
    T *out = (T *)allocate_result(r, x, x->rank - 1, ext);                                     \
    ptrdiff_t n = x->dim[d].extent, s = x->dim[d].stride;                                      \
    for (size_t i = 0, m = elements(r); i < m; i++) {                                          \
      const char *p = (const char *)x->base + offset_of(&v, i);                                \
      T scale = 0, sum = 0;                                                                    \
      for (ptrdiff_t l = 0; l < n; l++) {                                                      \
        T a = ABS(*(const T *)(p + l * s));                                                    \
        if (a > scale) scale = a;                                                              \
      }                                                                                        \
      if (scale == 0) {                                                                        \
        out[i] = 0;                                                                            \
        continue;                                                                              \
      }                                                                                        \
      for (ptrdiff_t l = 0; l < n; l++) {                                                      \
        T q = *(const T *)(p + l * s) / scale;                                                 \
        sum += q * q;                                                                          \
      }                                                                                        \
      out[i] = scale * SQRT(sum);                                                              \
    }                                                                                          \
  }
NORM2_ALONG(norm2_double, double, fabs, sqrt)
NORM2_ALONG(norm2_float, float, fabsf, sqrtf)

void __enzyme_cc_fortran_Norm2Dim(Desc *r, const Desc *x, int dim, const char *file, int line) {
  if (dim < 1 || dim > x->rank || r->base || (x->type != T_DOUBLE && x->type != T_FLOAT)) {
    __enzyme_cc_fortran_Norm2Dim_other(r, x, dim, file, line);
    return;
  }
  if (x->type == T_DOUBLE) norm2_double(r, x, dim - 1);
  else norm2_float(r, x, dim - 1);
}
