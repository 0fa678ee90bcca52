/* enzyme-cc's versions of flang's array-moving runtime entries (TRANSPOSE, RESHAPE, CSHIFT,
   EOSHIFT, SPREAD, PACK, UNPACK), linked into a program's bitcode before AD in place of `_FortranATranspose`,
   ... (rules/fortran.py lists them). An unoptimized build keeps these intrinsics as runtime
   calls (PACK and UNPACK stay calls at -O2 too), which have no bitcode. Each result is allocated by malloc and filled by the typed
   copies of fortran_desc.h between descriptor *views* of the operands (the same memory with
   permuted, shifted or zero strides), so AD sees every float load and store and differentiates
   them as code.

   The intrinsic numeric and logical types are handled here. Other element types (derived
   types, characters) go to flang's own entry, whose registered derivatives stop with a message
   if the derivative reaches them; so do RESHAPE with ORDER=, and CSHIFT/EOSHIFT whose SHIFT or
   BOUNDARY is an array. */
#include <stdint.h>

#include "fortran_desc.h"

static int plain(const Desc *d) { return d->elem_len > 0 && intrinsic_type(d->type); }

/* an INTEGER of any kind at byte offset off of d's base */
static int64_t int_at(const Desc *d, ptrdiff_t off) {
  const char *p = (const char *)d->base + off;
  switch (d->elem_len) {
  case 1: return *(const int8_t *)p;
  case 2: return *(const int16_t *)p;
  case 4: return *(const int32_t *)p;
  default: return *(const int64_t *)p;
  }
}

/* a view of d (same element type) with `rank` dimensions and nothing set yet */
static Desc view_of(const Desc *d, int rank) {
  Desc v;
  v.base = d->base;
  v.elem_len = d->elem_len;
  v.type = d->type;
  v.rank = (unsigned char)rank;
  return v;
}

/* d's elements in a fresh contiguous buffer (column-major order) */
static char *packed(const Desc *d) {
  Desc v = view_of(d, d->rank);
  ptrdiff_t stride = (ptrdiff_t)d->elem_len;
  for (int k = 0; k < d->rank; k++) {
    v.dim[k].lower = 1;
    v.dim[k].extent = d->dim[k].extent;
    v.dim[k].stride = stride;
    stride *= d->dim[k].extent > 0 ? d->dim[k].extent : 0;
  }
  size_t bytes = elements(d) * d->elem_len;
  char *buf = malloc(bytes ? bytes : 1);
  copy(&v, buf, d, d->base);
  return buf;
}

/* a rank-1 contiguous view of n elements like d's */
static Desc flat(const Desc *d, ptrdiff_t n) {
  Desc v = view_of(d, 1);
  v.dim[0].lower = 1;
  v.dim[0].extent = n;
  v.dim[0].stride = (ptrdiff_t)d->elem_len;
  return v;
}

/* flang's entry for what is not handled here, and derivatives of it that stop with a message */
#define STOP_DERIVATIVE(entry)                                                                \
  static void entry##_stops(const char *file, int line) {                                     \
    fprintf(stderr, "enzyme-cc: the derivative reached " #entry " at %s:%d on operands it "   \
            "cannot differentiate (derived types, characters, ORDER= or an array SHIFT or "   \
            "BOUNDARY); move the data with an assignment loop instead\n",                     \
            file ? file : "?", line);                                                         \
    abort();                                                                                  \
  }

void _FortranATranspose(Desc *r, const Desc *m, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Transpose_other(Desc *r, const Desc *m,
                                                                  const char *file, int line) {
  _FortranATranspose(r, m, file, line);
}
STOP_DERIVATIVE(Transpose)
void __enzyme_cc_fortran_Transpose_fwd(Desc *r, Desc *dr, const Desc *m, const Desc *dm,
                                       const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)m, (void)dm, (void)dfile;
  Transpose_stops(file, line);
}
void __enzyme_cc_fortran_Transpose_rev(Desc *r, Desc *dr, const Desc *m, const Desc *dm,
                                       const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)m, (void)dm, (void)file, (void)dfile, (void)line;
}

void __enzyme_cc_fortran_Transpose(Desc *r, const Desc *m, const char *file, int line) {
  if (!plain(m) || m->rank != 2 || r->base) {
    __enzyme_cc_fortran_Transpose_other(r, m, file, line);
    return;
  }
  ptrdiff_t ext[2] = {m->dim[1].extent, m->dim[0].extent};
  char *out = allocate_result(r, m, 2, ext);
  Desc v = view_of(m, 2);
  v.dim[0] = m->dim[1];
  v.dim[1] = m->dim[0];
  copy(r, out, &v, m->base);
}

void _FortranAReshape(Desc *r, const Desc *src, const Desc *shape, const Desc *pad,
                      const Desc *order, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Reshape_other(
    Desc *r, const Desc *src, const Desc *shape, const Desc *pad, const Desc *order,
    const char *file, int line) {
  _FortranAReshape(r, src, shape, pad, order, file, line);
}
STOP_DERIVATIVE(Reshape)
void __enzyme_cc_fortran_Reshape_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                     const Desc *shape, const Desc *dshape, const Desc *pad,
                                     const Desc *dpad, const Desc *order, const Desc *dorder,
                                     const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shape, (void)dshape, (void)pad, (void)dpad,
      (void)order, (void)dorder, (void)dfile;
  Reshape_stops(file, line);
}
void __enzyme_cc_fortran_Reshape_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                     const Desc *shape, const Desc *dshape, const Desc *pad,
                                     const Desc *dpad, const Desc *order, const Desc *dorder,
                                     const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shape, (void)dshape, (void)pad, (void)dpad,
      (void)order, (void)dorder, (void)file, (void)dfile, (void)line;
}

void __enzyme_cc_fortran_Reshape(Desc *r, const Desc *src, const Desc *shape, const Desc *pad,
                                 const Desc *order, const char *file, int line) {
  int rank = shape->rank == 1 ? (int)shape->dim[0].extent : -1;
  size_t n = 1, have = elements(src), npad = pad ? elements(pad) : 0;
  ptrdiff_t ext[15];
  int ok = plain(src) && !order && !r->base && rank >= 1 && rank <= 15 &&
           (!pad || (pad->type == src->type && pad->elem_len == src->elem_len));
  for (int k = 0; ok && k < rank; k++) {
    ext[k] = (ptrdiff_t)int_at(shape, k * shape->dim[0].stride);
    ok = ext[k] >= 0;
    n *= (size_t)(ext[k] > 0 ? ext[k] : 0);
  }
  if (!ok || (n > have && npad == 0)) {    /* flang reports a short source without PAD= */
    __enzyme_cc_fortran_Reshape_other(r, src, shape, pad, order, file, line);
    return;
  }
  char *out = allocate_result(r, src, rank, ext);
  size_t len = src->elem_len, take = n < have ? n : have;
  char *buf = contiguous(src) ? (char *)src->base : packed(src);
  Desc to = flat(src, (ptrdiff_t)take), from = to;
  copy(&to, out, &from, buf);
  if (buf != src->base) free(buf);
  if (take < n) {                          /* the rest from PAD, repeated in element order */
    char *pbuf = contiguous(pad) ? (char *)pad->base : packed(pad);
    for (size_t at = take; at < n; at += npad) {
      size_t m = n - at < npad ? n - at : npad;
      Desc t = flat(src, (ptrdiff_t)m), f = t;
      copy(&t, out + at * len, &f, pbuf);
    }
    if (pbuf != pad->base) free(pbuf);
  }
}

/* CSHIFT and EOSHIFT along dimension `dim` (0-based) by a scalar shift: the result is the
   source moved by `s` elements along it, the vacated elements wrapped around (CSHIFT) or taken
   from `fill` (EOSHIFT: BOUNDARY, or zero). Two or three block copies between views. */
static void shift_along(Desc *r, char *out, const Desc *src, int dim, int64_t s, int circular,
                        const Desc *fill, const char *fillbase) {
  ptrdiff_t n = src->dim[dim].extent > 0 ? src->dim[dim].extent : 0;
  if (n == 0) return;
  if (circular) {
    s %= n;
    if (s < 0) s += n;
  }
  ptrdiff_t keep = s >= 0 ? n - s : n + s;       /* elements that move within the array */
  if (keep < 0) keep = 0;
  ptrdiff_t from_at = s >= 0 ? s : 0, to_at = s >= 0 ? 0 : -s;
  if (keep > 0) {
    Desc t = *r, f = view_of(src, src->rank);
    for (int k = 0; k < src->rank; k++) f.dim[k] = src->dim[k];
    t.dim[dim].extent = f.dim[dim].extent = keep;
    copy(&t, out + to_at * r->dim[dim].stride, &f,
         (const char *)src->base + from_at * src->dim[dim].stride);
  }
  ptrdiff_t rest = n - keep, rest_at = s >= 0 ? keep : 0;
  if (rest <= 0) return;
  Desc t = *r;
  t.dim[dim].extent = rest;
  char *tb = out + rest_at * r->dim[dim].stride;
  if (circular) {                                /* the first s (or last -s) come round */
    Desc f = view_of(src, src->rank);
    for (int k = 0; k < src->rank; k++) f.dim[k] = src->dim[k];
    f.dim[dim].extent = rest;
    copy(&t, tb, &f, (const char *)src->base + (s >= 0 ? 0 : keep) * src->dim[dim].stride);
  } else {
    copy(&t, tb, fill, fillbase);                /* a scalar: the same element everywhere */
  }
}

void _FortranACshift(Desc *r, const Desc *src, const Desc *shift, int dim, const char *file,
                     int line);
void _FortranACshiftVector(Desc *r, const Desc *src, int64_t shift, const char *file, int line);
void _FortranAEoshift(Desc *r, const Desc *src, const Desc *shift, const Desc *boundary,
                      int dim, const char *file, int line);
void _FortranAEoshiftVector(Desc *r, const Desc *src, int64_t shift, const Desc *boundary,
                            const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Cshift_other(Desc *r, const Desc *src,
                                                               const Desc *shift, int dim,
                                                               const char *file, int line) {
  _FortranACshift(r, src, shift, dim, file, line);
}
__attribute__((noinline)) void __enzyme_cc_fortran_CshiftVector_other(Desc *r, const Desc *src,
                                                                     int64_t shift,
                                                                     const char *file,
                                                                     int line) {
  _FortranACshiftVector(r, src, shift, file, line);
}
__attribute__((noinline)) void __enzyme_cc_fortran_Eoshift_other(
    Desc *r, const Desc *src, const Desc *shift, const Desc *boundary, int dim,
    const char *file, int line) {
  _FortranAEoshift(r, src, shift, boundary, dim, file, line);
}
__attribute__((noinline)) void __enzyme_cc_fortran_EoshiftVector_other(
    Desc *r, const Desc *src, int64_t shift, const Desc *boundary, const char *file, int line) {
  _FortranAEoshiftVector(r, src, shift, boundary, file, line);
}
STOP_DERIVATIVE(Cshift)
STOP_DERIVATIVE(Eoshift)
void __enzyme_cc_fortran_Cshift_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                    const Desc *shift, const Desc *dshift, int dim,
                                    const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)dshift, (void)dim, (void)dfile;
  Cshift_stops(file, line);
}
void __enzyme_cc_fortran_Cshift_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                    const Desc *shift, const Desc *dshift, int dim,
                                    const char *file, const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)dshift, (void)dim, (void)file,
      (void)dfile, (void)line;
}
void __enzyme_cc_fortran_CshiftVector_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                          int64_t shift, const char *file, const char *dfile,
                                          int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)dfile;
  Cshift_stops(file, line);
}
void __enzyme_cc_fortran_CshiftVector_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                          int64_t shift, const char *file, const char *dfile,
                                          int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)file, (void)dfile, (void)line;
}
void __enzyme_cc_fortran_Eoshift_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                     const Desc *shift, const Desc *dshift, const Desc *b,
                                     const Desc *db, int dim, const char *file,
                                     const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)dshift, (void)b, (void)db,
      (void)dim, (void)dfile;
  Eoshift_stops(file, line);
}
void __enzyme_cc_fortran_Eoshift_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                     const Desc *shift, const Desc *dshift, const Desc *b,
                                     const Desc *db, int dim, const char *file,
                                     const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)dshift, (void)b, (void)db,
      (void)dim, (void)file, (void)dfile, (void)line;
}
void __enzyme_cc_fortran_EoshiftVector_fwd(Desc *r, Desc *dr, const Desc *src,
                                           const Desc *dsrc, int64_t shift, const Desc *b,
                                           const Desc *db, const char *file, const char *dfile,
                                           int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)b, (void)db, (void)dfile;
  Eoshift_stops(file, line);
}
void __enzyme_cc_fortran_EoshiftVector_rev(Desc *r, Desc *dr, const Desc *src,
                                           const Desc *dsrc, int64_t shift, const Desc *b,
                                           const Desc *db, const char *file, const char *dfile,
                                           int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)shift, (void)b, (void)db, (void)file,
      (void)dfile, (void)line;
}

static char *result_like(Desc *r, const Desc *src) {
  ptrdiff_t ext[15];
  for (int k = 0; k < src->rank; k++) ext[k] = src->dim[k].extent;
  return allocate_result(r, src, src->rank, ext);
}

void __enzyme_cc_fortran_CshiftVector(Desc *r, const Desc *src, int64_t shift, const char *file,
                                      int line) {
  if (!plain(src) || src->rank != 1 || r->base) {
    __enzyme_cc_fortran_CshiftVector_other(r, src, shift, file, line);
    return;
  }
  shift_along(r, result_like(r, src), src, 0, shift, 1, NULL, NULL);
}

void __enzyme_cc_fortran_Cshift(Desc *r, const Desc *src, const Desc *shift, int dim,
                                const char *file, int line) {
  if (!plain(src) || shift->rank != 0 || dim < 1 || dim > src->rank || r->base) {
    __enzyme_cc_fortran_Cshift_other(r, src, shift, dim, file, line);
    return;
  }
  shift_along(r, result_like(r, src), src, dim - 1, int_at(shift, 0), 1, NULL, NULL);
}

/* EOSHIFT's fill: BOUNDARY (a scalar of the source's type) or a zero of that type */
static int fill_of(const Desc *src, const Desc *boundary, Desc *fill, const char **base) {
  static const double zeros[4] = {0, 0, 0, 0};
  if (boundary && (boundary->rank != 0 || boundary->type != src->type ||
                   boundary->elem_len != src->elem_len))
    return 0;
  if (!boundary && src->elem_len > sizeof zeros) return 0;
  *fill = view_of(src, 0);
  *base = boundary ? (const char *)boundary->base : (const char *)zeros;
  return 1;
}

void __enzyme_cc_fortran_EoshiftVector(Desc *r, const Desc *src, int64_t shift,
                                       const Desc *boundary, const char *file, int line) {
  Desc fill;
  const char *fb;
  if (!plain(src) || src->rank != 1 || r->base || !fill_of(src, boundary, &fill, &fb)) {
    __enzyme_cc_fortran_EoshiftVector_other(r, src, shift, boundary, file, line);
    return;
  }
  shift_along(r, result_like(r, src), src, 0, shift, 0, &fill, fb);
}

void __enzyme_cc_fortran_Eoshift(Desc *r, const Desc *src, const Desc *shift,
                                 const Desc *boundary, int dim, const char *file, int line) {
  Desc fill;
  const char *fb;
  if (!plain(src) || shift->rank != 0 || dim < 1 || dim > src->rank || r->base ||
      !fill_of(src, boundary, &fill, &fb)) {
    __enzyme_cc_fortran_Eoshift_other(r, src, shift, boundary, dim, file, line);
    return;
  }
  shift_along(r, result_like(r, src), src, dim - 1, int_at(shift, 0), 0, &fill, fb);
}

void _FortranASpread(Desc *r, const Desc *src, int dim, int64_t ncopies, const char *file,
                     int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Spread_other(Desc *r, const Desc *src,
                                                               int dim, int64_t ncopies,
                                                               const char *file, int line) {
  _FortranASpread(r, src, dim, ncopies, file, line);
}
STOP_DERIVATIVE(Spread)
void __enzyme_cc_fortran_Spread_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                    int dim, int64_t ncopies, const char *file,
                                    const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)dim, (void)ncopies, (void)dfile;
  Spread_stops(file, line);
}
void __enzyme_cc_fortran_Spread_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                    int dim, int64_t ncopies, const char *file,
                                    const char *dfile, int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)dim, (void)ncopies, (void)file, (void)dfile,
      (void)line;
}

/* SPREAD: the source seen through a view with a zero-stride dimension inserted at DIM */
void __enzyme_cc_fortran_Spread(Desc *r, const Desc *src, int dim, int64_t ncopies,
                                const char *file, int line) {
  int rank = src->rank + 1;
  if (!plain(src) || dim < 1 || dim > rank || rank > 15 || r->base) {
    __enzyme_cc_fortran_Spread_other(r, src, dim, ncopies, file, line);
    return;
  }
  ptrdiff_t ext[15];
  Desc v = view_of(src, rank);
  for (int k = 0, j = 0; k < rank; k++) {
    if (k == dim - 1) {
      ext[k] = ncopies > 0 ? (ptrdiff_t)ncopies : 0;
      v.dim[k].lower = 1;
      v.dim[k].extent = ext[k];
      v.dim[k].stride = 0;
    } else {
      v.dim[k] = src->dim[j++];
      ext[k] = v.dim[k].extent;
    }
  }
  char *out = allocate_result(r, src, rank, ext);
  copy(r, out, &v, src->base);
}

void _FortranAPack(Desc *r, const Desc *src, const Desc *mask, const Desc *vector,
                   const char *file, int line);
void _FortranAUnpack(Desc *r, const Desc *vector, const Desc *mask, const Desc *field,
                     const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_Pack_other(Desc *r, const Desc *src,
                                                             const Desc *mask,
                                                             const Desc *vector,
                                                             const char *file, int line) {
  _FortranAPack(r, src, mask, vector, file, line);
}
__attribute__((noinline)) void __enzyme_cc_fortran_Unpack_other(Desc *r, const Desc *vector,
                                                               const Desc *mask,
                                                               const Desc *field,
                                                               const char *file, int line) {
  _FortranAUnpack(r, vector, mask, field, file, line);
}
STOP_DERIVATIVE(Pack)
STOP_DERIVATIVE(Unpack)
void __enzyme_cc_fortran_Pack_fwd(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                  const Desc *mask, const Desc *dmask, const Desc *vector,
                                  const Desc *dvector, const char *file, const char *dfile,
                                  int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)mask, (void)dmask, (void)vector,
      (void)dvector, (void)dfile;
  Pack_stops(file, line);
}
void __enzyme_cc_fortran_Pack_rev(Desc *r, Desc *dr, const Desc *src, const Desc *dsrc,
                                  const Desc *mask, const Desc *dmask, const Desc *vector,
                                  const Desc *dvector, const char *file, const char *dfile,
                                  int line) {
  (void)r, (void)dr, (void)src, (void)dsrc, (void)mask, (void)dmask, (void)vector,
      (void)dvector, (void)file, (void)dfile, (void)line;
}
void __enzyme_cc_fortran_Unpack_fwd(Desc *r, Desc *dr, const Desc *vector, const Desc *dvector,
                                    const Desc *mask, const Desc *dmask, const Desc *field,
                                    const Desc *dfield, const char *file, const char *dfile,
                                    int line) {
  (void)r, (void)dr, (void)vector, (void)dvector, (void)mask, (void)dmask, (void)field,
      (void)dfield, (void)dfile;
  Unpack_stops(file, line);
}
void __enzyme_cc_fortran_Unpack_rev(Desc *r, Desc *dr, const Desc *vector, const Desc *dvector,
                                    const Desc *mask, const Desc *dmask, const Desc *field,
                                    const Desc *dfield, const char *file, const char *dfile,
                                    int line) {
  (void)r, (void)dr, (void)vector, (void)dvector, (void)mask, (void)dmask, (void)field,
      (void)dfield, (void)file, (void)dfile, (void)line;
}

/* one element of `like`'s type from b to a (a typed copy AD sees) */
static void move_one(const Desc *like, char *a, const char *b) {
  Desc one = view_of(like, 0);
  copy(&one, a, &one, b);
}

static int same_type(const Desc *a, const Desc *b) {
  return a->type == b->type && a->elem_len == b->elem_len;
}

/* PACK: the elements of SOURCE where MASK is true, in array element order, then the rest of
   VECTOR */
void __enzyme_cc_fortran_Pack(Desc *r, const Desc *src, const Desc *mask, const Desc *vector,
                              const char *file, int line) {
  size_t n = elements(src), count = 0;
  int ok = plain(src) && !r->base && (mask->rank == 0 || mask->rank == src->rank) &&
           (!vector || (vector->rank == 1 && same_type(vector, src)));
  for (size_t i = 0; ok && i < n; i++)
    count += !masked_out(mask, mask->rank ? i : 0);
  size_t total = vector ? elements(vector) : count;
  if (!ok || total < count) {                    /* flang reports a short VECTOR */
    __enzyme_cc_fortran_Pack_other(r, src, mask, vector, file, line);
    return;
  }
  ptrdiff_t ext[1] = {(ptrdiff_t)total};
  char *out = allocate_result(r, src, 1, ext);
  size_t len = src->elem_len, j = 0;
  for (size_t i = 0; i < n; i++)
    if (!masked_out(mask, mask->rank ? i : 0))
      move_one(src, out + j++ * len, (const char *)src->base + offset_of(src, i));
  for (; j < total; j++)
    move_one(src, out + j * len, (const char *)vector->base + offset_of(vector, j));
}

/* UNPACK: MASK's shape; VECTOR's elements in order where MASK is true, FIELD (a scalar or an
   array of that shape) elsewhere */
void __enzyme_cc_fortran_Unpack(Desc *r, const Desc *vector, const Desc *mask, const Desc *field,
                                const char *file, int line) {
  size_t n = elements(mask), count = 0;
  int ok = plain(vector) && vector->rank == 1 && !r->base && mask->rank >= 1 &&
           same_type(field, vector) && (field->rank == 0 || field->rank == mask->rank);
  for (size_t i = 0; ok && i < n; i++) count += !masked_out(mask, i);
  if (!ok || count > elements(vector)) {         /* flang reports a short VECTOR */
    __enzyme_cc_fortran_Unpack_other(r, vector, mask, field, file, line);
    return;
  }
  ptrdiff_t ext[15];
  for (int k = 0; k < mask->rank; k++) ext[k] = mask->dim[k].extent;
  char *out = allocate_result(r, vector, mask->rank, ext);
  size_t len = vector->elem_len, j = 0;
  for (size_t i = 0; i < n; i++) {
    const char *from = !masked_out(mask, i)
                           ? (const char *)vector->base + offset_of(vector, j++)
                           : (const char *)field->base + (field->rank ? offset_of(field, i) : 0);
    move_one(vector, out + i * len, from);
  }
}

REGISTER(Transpose)
REGISTER(Reshape)
REGISTER(Cshift)
REGISTER(CshiftVector)
REGISTER(Eoshift)
REGISTER(EoshiftVector)
REGISTER(Spread)
REGISTER(Pack)
REGISTER(Unpack)
