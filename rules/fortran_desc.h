/* Flang's array descriptor and the element walks shared by enzyme-cc's C implementations of
   flang runtime entries (fortran_runtime.c, fortran_transform.c, fortran_derived.c).

   A descriptor is ISO_Fortran_binding's `CFI_cdesc_t` as flang lays it out: base address,
   element length, version, rank, type code, attribute, extra flags (bit 0: an addendum follows
   the dimensions; bits 1-3: the allocator index), then `rank` dimensions of {lower bound,
   extent, byte stride}, then the addendum (a derived type's type description). */
#ifndef ENZYME_CC_FORTRAN_DESC_H
#define ENZYME_CC_FORTRAN_DESC_H
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { ptrdiff_t lower, extent, stride; } Dim;
typedef struct {
  void *base;
  size_t elem_len;
  int version;
  unsigned char rank;
  signed char type;
  unsigned char attribute;
  unsigned char extra;
  Dim dim[15];
} Desc;

enum { ALLOCATABLE = 2, T_FLOAT = 27, T_DOUBLE = 28, T_CFLOAT = 34, T_CDOUBLE = 35, T_BOOL = 39 };

static inline size_t elements(const Desc *d) {
  size_t n = 1;
  for (int k = 0; k < d->rank; k++) n *= d->dim[k].extent > 0 ? (size_t)d->dim[k].extent : 0;
  return n;
}

/* elements laid out one after the other in column-major order (a whole array, a contiguous
   section) */
static inline int contiguous(const Desc *d) {
  ptrdiff_t stride = (ptrdiff_t)d->elem_len;
  for (int k = 0; k < d->rank; k++) {
    if (d->dim[k].extent > 1 && d->dim[k].stride != stride) return 0;
    stride *= d->dim[k].extent;
  }
  return 1;
}

/* the intrinsic numeric and logical types (CFI type codes): what our copies move */
static inline int intrinsic_type(int t) {
  return (t >= 1 && t <= 24) || t == T_FLOAT || t == T_DOUBLE || t == T_CFLOAT ||
         t == T_CDOUBLE || t == T_BOOL;
}

/* REAL and COMPLEX of any kind, derived types (which may hold them) and unknown types */
static inline int carries_float(const Desc *d) {
  int t = d->type;
  return (t >= 25 && t <= 38) || t == 42 || t < 0;
}

/* the byte range [lo, hi) that the elements of d occupy when its base is b */
static inline void extent_of(const Desc *d, const char *b, const char **lo, const char **hi) {
  const char *a = b;
  for (int k = 0; k < d->rank; k++) {
    ptrdiff_t span = d->dim[k].extent > 0 ? (d->dim[k].extent - 1) * d->dim[k].stride : 0;
    if (span < 0) a += span; else b += span;
  }
  *lo = a;
  *hi = b + d->elem_len;
}

/* the byte offset of the i-th element (column-major order) from the base */
static inline ptrdiff_t offset_of(const Desc *d, size_t i) {
  ptrdiff_t off = 0;
  for (int k = 0; k < d->rank; k++) {
    ptrdiff_t e = d->dim[k].extent, j = (ptrdiff_t)(i % (size_t)e);
    i /= (size_t)e;
    off += j * d->dim[k].stride;
  }
  return off;
}

/* the result: unallocated on entry; allocated here with default lower bounds */
static inline char *allocate_result(Desc *r, const Desc *like, int rank, const ptrdiff_t *ext) {
  size_t n = 1;
  ptrdiff_t stride = (ptrdiff_t)like->elem_len;
  r->elem_len = like->elem_len;
  r->type = like->type;
  r->rank = (unsigned char)rank;
  for (int k = 0; k < rank; k++) {
    ptrdiff_t e = ext[k] > 0 ? ext[k] : 0;
    r->dim[k].lower = 1;
    r->dim[k].extent = e;
    r->dim[k].stride = stride;
    stride *= e;
    n *= (size_t)e;
  }
  r->base = malloc(n * like->elem_len ? n * like->elem_len : 1);
  return r->base;
}

/* whether MASK (a LOGICAL of any kind; none: all true) is false at element i */
static inline int masked_out(const Desc *mask, size_t i) {
  if (!mask) return 0;
  const char *p = mask->base;
  size_t rest = i;
  for (int k = 0; k < mask->rank; k++) {
    ptrdiff_t e = mask->dim[k].extent, j = (ptrdiff_t)(rest % (size_t)e);
    rest /= (size_t)e;
    p += j * mask->dim[k].stride;
  }
  for (size_t b = 0; b < mask->elem_len; b++)
    if (p[b]) return 0;
  return 1;
}

/* Visits the elements of `to` in column-major order with the byte offset of each in `to` and
   in `from` (a scalar source stays at 0): an odometer over the dimensions, no division. */
#define EACH_ELEMENT(to, from, BODY)                                                 \
  {                                                                                  \
    size_t n_ = elements(to);                                                        \
    ptrdiff_t idx_[15] = {0}, to_off = 0, from_off = 0;                              \
    for (size_t i_ = 0; i_ < n_; i_++) {                                             \
      BODY;                                                                          \
      for (int k = 0; k < (to)->rank; k++) {                                         \
        ptrdiff_t fs = (from)->rank ? (from)->dim[k].stride : 0;                     \
        idx_[k]++;                                                                   \
        to_off += (to)->dim[k].stride;                                               \
        from_off += fs;                                                              \
        if (idx_[k] < (to)->dim[k].extent) break;                                    \
        to_off -= idx_[k] * (to)->dim[k].stride;                                     \
        from_off -= idx_[k] * fs;                                                    \
        idx_[k] = 0;                                                                 \
      }                                                                              \
    }                                                                                \
  }

/* typed copies (AD sees the float loads and stores); contiguous arrays as one flat loop */
#define COPY(name, T, parts)                                                         \
  static inline void name(const Desc *to, char *tb, const Desc *from, const char *fb) {\
    T *t = (T *)tb;                                                                  \
    const T *f = (const T *)fb;                                                      \
    if (contiguous(to) && from->rank && contiguous(from)) {                          \
      size_t n = elements(to) * (parts);                                             \
      for (size_t i = 0; i < n; i++) t[i] = f[i];                                    \
      return;                                                                        \
    }                                                                                \
    EACH_ELEMENT(to, from, for (int c = 0; c < (parts); c++)                         \
                 ((T *)(tb + to_off))[c] = ((const T *)(fb + from_off))[c])          \
  }
COPY(copy_double, double, 1)
COPY(copy_float, float, 1)
COPY(copy_cdouble, double, 2)
COPY(copy_cfloat, float, 2)

/* integers and logicals hold no derivative (fortran_runtime.c registers it inactive) */
void __enzyme_cc_fortran_copy_bytes(const Desc *to, char *tb, const Desc *from, const char *fb);

static inline void copy(const Desc *to, char *tb, const Desc *from, const char *fb) {
  switch (to->type) {
  case T_DOUBLE: copy_double(to, tb, from, fb); break;
  case T_FLOAT: copy_float(to, tb, from, fb); break;
  case T_CDOUBLE: copy_cdouble(to, tb, from, fb); break;
  case T_CFLOAT: copy_cfloat(to, tb, from, fb); break;
  default: __enzyme_cc_fortran_copy_bytes(to, tb, from, fb);
  }
}

/* flang's own entry behind our wrapper `__enzyme_cc_fortran_<entry>_other`, registered with
   derivatives `_fwd` (forward mode, and reverse mode's augmented forward) and `_rev` */
#define REGISTER(entry)                                                                       \
  void *__enzyme_register_derivative_fortran_##entry[2] = {                                   \
      (void *)__enzyme_cc_fortran_##entry##_other, (void *)__enzyme_cc_fortran_##entry##_fwd};\
  void *__enzyme_register_gradient_fortran_##entry[3] = {                                     \
      (void *)__enzyme_cc_fortran_##entry##_other, (void *)__enzyme_cc_fortran_##entry##_fwd, \
      (void *)__enzyme_cc_fortran_##entry##_rev};

#endif
