/* enzyme-cc's Fortran intrinsic assignment and array reductions, linked into a program's bitcode
   before AD in place of flang's runtime entries `_FortranAAssign`, `_FortranASumReal8`, ...
   (rules/fortran.py, which lists them). flang calls that entry for an
   assignment to an allocatable (`z = y`, reallocating z to y's shape) and for some array copies;
   the runtime has no bitcode, so AD could not see through it. This file does the same work for
   arrays and scalars of the intrinsic numeric and logical types in code AD differentiates like
   any other: typed loops over the two descriptors, the allocation by malloc (its shadow by the
   allocation rules); derived types by fortran_derived.c's deep copy. Everything else
   (characters, kind conversions, other allocators, derived types with defined assignment or
   final procedures) goes to flang's own `_FortranAAssign` through
   `__enzyme_cc_fortran_assign_other`, whose registered derivatives stop with a message when the
   data carries floats. */
#include "fortran_desc.h"

void _FortranAAssign(Desc *to, const Desc *from, const char *file, int line);

/* integers and logicals hold no derivative (registered inactive below) */
__attribute__((noinline)) void __enzyme_cc_fortran_copy_bytes(const Desc *to, char *tb,
                                                              const Desc *from, const char *fb) {
  EACH_ELEMENT(to, from, memcpy(tb + to_off, fb + from_off, to->elem_len))
}

static int handled(const Desc *to, const Desc *from) {
  int t = to->type;
  if (!intrinsic_type(t) || from->type != t || from->elem_len != to->elem_len || to->elem_len == 0)
    return 0;
  if (from->rank && from->rank != to->rank)
    return 0;
  if (to->attribute == ALLOCATABLE && ((to->extra >> 1) & 7) != 0)
    return 0;                     /* another allocator (a device's): flang's runtime allocates */
  if (!to->base && !(to->attribute == ALLOCATABLE && (from->rank || !to->rank)))
    return 0;                     /* an unallocated target of a scalar: flang reports it */
  return 1;
}

__attribute__((noinline)) void __enzyme_cc_fortran_assign_other(Desc *to, const Desc *from, const char *file, int line) {
  _FortranAAssign(to, from, file, line);
}

int __enzyme_cc_fortran_assign_derived(Desc *to, const Desc *from, const char *file, int line);

/* `to = from` without the derived-type path: called where the type of either is known not to
   be a derived type (rules/fortran.py intrinsic_assignments), so that AD does not see the deep
   copy's pointer components as a path from the source's memory into the target's */
void __enzyme_cc_fortran_AssignIntrinsic(Desc *to, const Desc *from, const char *file, int line) {
  if (!handled(to, from)) {
    __enzyme_cc_fortran_assign_other(to, from, file, line);
    return;
  }
  size_t len = to->elem_len;
  int fresh = 0;
  if (to->attribute == ALLOCATABLE) {
    fresh = !to->base || (from->rank && to->rank != from->rank);
    for (int k = 0; k < from->rank && !fresh; k++)
      fresh = to->dim[k].extent != from->dim[k].extent;
  }
  char *old = to->base, *tb = old;
  if (fresh) {              /* reallocation: F2018 10.2.1.3, the new bounds are the source's */
    size_t n = elements(from);
    tb = malloc(n * len ? n * len : 1);
    to->rank = from->rank;
    ptrdiff_t stride = (ptrdiff_t)len;
    for (int k = 0; k < from->rank; k++) {
      to->dim[k].lower = from->dim[k].lower;
      to->dim[k].extent = from->dim[k].extent;
      to->dim[k].stride = stride;
      stride *= from->dim[k].extent > 0 ? from->dim[k].extent : 0;
    }
  }
  const char *flo, *fhi, *tlo, *thi;
  extent_of(from, from->base, &flo, &fhi);
  extent_of(to, tb, &tlo, &thi);
  if (!fresh && elements(to) && flo < thi && tlo < fhi) {
    /* the source overlaps the target (`a = a(n:1:-1)`): through a contiguous copy (only the
       fields the copies read are set: a descriptor has room for its own rank only) */
    Desc t;
    t.elem_len = len;
    t.type = from->type;
    t.rank = from->rank;
    ptrdiff_t stride = (ptrdiff_t)len;
    for (int k = 0; k < t.rank; k++) {
      t.dim[k].extent = from->dim[k].extent;
      t.dim[k].stride = stride;
      stride *= t.dim[k].extent;
    }
    size_t n = elements(from);
    char *buf = malloc(n * len ? n * len : 1);
    copy(&t, buf, from, from->base);
    copy(to, tb, &t, buf);
    free(buf);
  } else {
    copy(to, tb, from, from->base);
  }
  if (fresh) {
    if (old) free(old);
    to->base = tb;
  }
}

void __enzyme_cc_fortran_Assign(Desc *to, const Desc *from, const char *file, int line) {
  if (to->type == 42 && from->type == 42 && __enzyme_cc_fortran_assign_derived(to, from, file,
                                                                              line))
    return;                       /* a derived type: fortran_derived.c's deep copy */
  __enzyme_cc_fortran_AssignIntrinsic(to, from, file, line);
}

/* ---- the fallback's derivatives: stop where float data would need one ---------------------- */
static void refuse(const Desc *to, const Desc *from, const char *file, int line) {
  if (!carries_float(to) && !carries_float(from)) return;
  fprintf(stderr, "enzyme-cc: the derivative reached a Fortran assignment at %s:%d that it cannot "
          "differentiate (a derived type, a kind conversion or another allocator: flang's "
          "runtime does it without bitcode); assign the components or convert the kinds in "
          "separate statements\n", file ? file : "?", line);
  abort();
}

void __enzyme_cc_fortran_assign_other_fwd(Desc *to, Desc *dto, const Desc *from,
                                          const Desc *dfrom, const char *file,
                                          const char *dfile, int line) {
  (void)dto, (void)dfrom, (void)dfile;
  refuse(to, from, file, line);
  _FortranAAssign(to, from, file, line);
}

void __enzyme_cc_fortran_assign_other_aug(Desc *to, Desc *dto, const Desc *from,
                                          const Desc *dfrom, const char *file,
                                          const char *dfile, int line) {
  __enzyme_cc_fortran_assign_other_fwd(to, dto, from, dfrom, file, dfile, line);
}

void __enzyme_cc_fortran_assign_other_rev(Desc *to, Desc *dto, const Desc *from,
                                          const Desc *dfrom, const char *file,
                                          const char *dfile, int line) {
  (void)to, (void)dto, (void)from, (void)dfrom, (void)file, (void)dfile, (void)line;
}

/* AssignTemporary of a polymorphic target (fortran_derived.c): flang's, as the fallback above */
void _FortranAAssignTemporary(Desc *to, const Desc *from, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_assign_temporary_other(
    Desc *to, const Desc *from, const char *file, int line) {
  _FortranAAssignTemporary(to, from, file, line);
}
void __enzyme_cc_fortran_assign_temporary_other_fwd(Desc *to, Desc *dto, const Desc *from,
                                                    const Desc *dfrom, const char *file,
                                                    const char *dfile, int line) {
  (void)dto, (void)dfrom, (void)dfile;
  refuse(to, from, file, line);
  _FortranAAssignTemporary(to, from, file, line);
}
void __enzyme_cc_fortran_assign_temporary_other_aug(Desc *to, Desc *dto, const Desc *from,
                                                    const Desc *dfrom, const char *file,
                                                    const char *dfile, int line) {
  __enzyme_cc_fortran_assign_temporary_other_fwd(to, dto, from, dfrom, file, dfile, line);
}

/* ---- reductions (an unoptimized build keeps SUM, PRODUCT, MAXVAL, MINVAL, DOT_PRODUCT and
   MATMUL as runtime calls; -O2 inlines them) ------------------------------------------------- */
/* DIM= of a rank-1 array is the whole array (flang calls the Dim entries for higher ranks) */
#define REDUCE(name, T, init, step)                                                          \
  T __enzyme_cc_fortran_##name(const Desc *x, const char *file, int line, int dim,           \
                               const Desc *mask) {                                           \
    (void)file, (void)line, (void)dim;                                                       \
    T acc = (init);                                                                          \
    size_t n = elements(x);                                                                  \
    if (!mask && contiguous(x)) {                                                            \
      for (size_t i = 0; i < n; i++) {                                                       \
        T v = ((const T *)x->base)[i];                                                       \
        step;                                                                                \
      }                                                                                      \
      return acc;                                                                            \
    }                                                                                        \
    for (size_t i = 0; i < n; i++) {                                                         \
      if (masked_out(mask, i)) continue;                                                     \
      T v = *(const T *)((const char *)x->base + offset_of(x, i));                           \
      step;                                                                                  \
    }                                                                                        \
    return acc;                                                                              \
  }
REDUCE(SumReal8, double, 0.0, acc += v)
REDUCE(SumReal4, float, 0.0f, acc += v)
REDUCE(ProductReal8, double, 1.0, acc *= v)
REDUCE(ProductReal4, float, 1.0f, acc *= v)
REDUCE(MaxvalReal8, double, -DBL_MAX, if (v > acc) acc = v)
REDUCE(MaxvalReal4, float, -FLT_MAX, if (v > acc) acc = v)
REDUCE(MinvalReal8, double, DBL_MAX, if (v < acc) acc = v)
REDUCE(MinvalReal4, float, FLT_MAX, if (v < acc) acc = v)

/* NORM2 of a whole array (DIM= of a higher rank goes to fortran_dim.c): the scaled one-pass sum
   of squares, which neither overflows nor underflows where the norm does not. As code, AD
   tapes or re-reads the elements like any loop's (a rule reading the array in the reverse sweep
   saw its last contents when NORM2 ran in a loop over a reused array or a moving section); the
   scale's derivative cancels (d/dscale of scale * sqrt(sum (v / scale)^2) is 0). */
#define NORM2(name, T, SQRT)                                                                 \
  T __enzyme_cc_fortran_##name(const Desc *x, const char *file, int line, int dim) {         \
    (void)file, (void)line, (void)dim;                                                       \
    T scale = 0, ssq = 1;                                                                    \
    size_t n = elements(x);                                                                  \
    for (size_t i = 0; i < n; i++) {                                                         \
      T v = *(const T *)((const char *)x->base + offset_of(x, i));                           \
      T a = v < 0 ? -v : v;                                                                  \
      if (a == 0) continue;                                                                  \
      if (scale < a) {                                                                       \
        T q = scale / a;                                                                     \
        ssq = 1 + ssq * q * q;                                                               \
        scale = a;                                                                           \
      } else {                                                                               \
        T q = a / scale;                                                                     \
        ssq += q * q;                                                                        \
      }                                                                                      \
    }                                                                                        \
    return scale == 0 ? 0 : scale * SQRT(ssq);                                               \
  }
NORM2(Norm2_8, double, __builtin_sqrt)
NORM2(Norm2_4, float, __builtin_sqrtf)

/* COMPLEX SUM and PRODUCT: the result through a pointer, (re, im) pairs */
#define CREDUCE(name, T, init_re, step)                                                      \
  void __enzyme_cc_fortran_##name(T *res, const Desc *x, const char *file, int line, int dim, \
                                  const Desc *mask) {                                        \
    (void)file, (void)line, (void)dim;                                                       \
    T re = (init_re), im = 0;                                                                \
    for (size_t i = 0, n = elements(x); i < n; i++) {                                        \
      if (masked_out(mask, i)) continue;                                                     \
      const T *v = (const T *)((const char *)x->base + offset_of(x, i));                     \
      step;                                                                                  \
    }                                                                                        \
    res[0] = re;                                                                             \
    res[1] = im;                                                                             \
  }
CREDUCE(CppSumComplex8, double, 0.0, re += v[0]; im += v[1])
CREDUCE(CppSumComplex4, float, 0.0f, re += v[0]; im += v[1])
CREDUCE(CppProductComplex8, double, 1.0, double a = re * v[0] - im * v[1]; im = re * v[1] + im * v[0];
        re = a)
CREDUCE(CppProductComplex4, float, 1.0f, float a = re * v[0] - im * v[1]; im = re * v[1] + im * v[0];
        re = a)

static void refuse_call(const char *what, const char *file, int line) {
  fprintf(stderr, "enzyme-cc: the derivative reached %s at %s:%d with arguments of mixed kinds, "
          "which it cannot differentiate; convert them to one kind first\n", what,
          file ? file : "?", line);
  abort();
}

double _FortranADotProductReal8(const Desc *, const Desc *, const char *, int);
float _FortranADotProductReal4(const Desc *, const Desc *, const char *, int);
void _FortranAMatmulReal8Real8(Desc *, const Desc *, const Desc *, const char *, int);
void _FortranAMatmulReal4Real4(Desc *, const Desc *, const Desc *, const char *, int);

/* flang's entries for the kinds not handled here, with derivatives (forward, and reverse's
   augmented forward) that stop with a message */
#define DPARAMS (const Desc *x, const Desc *dx, const Desc *y, const Desc *dy, const char *file, \
                 const char *dfile, int line)
#define OTHER_DOT(T, entry)                                                                  \
  __attribute__((noinline)) T __enzyme_cc_fortran_##entry##_other(                          \
      const Desc *x, const Desc *y, const char *file, int line) {                            \
    return _FortranA##entry(x, y, file, line);                                               \
  }                                                                                          \
  T __enzyme_cc_fortran_##entry##_fwd DPARAMS {                                              \
    (void)x, (void)dx, (void)y, (void)dy, (void)dfile;                                       \
    refuse_call(#entry, file, line);                                                         \
    return 0;                                                                                \
  }                                                                                          \
  void __enzyme_cc_fortran_##entry##_rev(const Desc *x, const Desc *dx, const Desc *y,      \
                                         const Desc *dy, const char *file,                   \
                                         const char *dfile, int line, T d) {                 \
    (void)x, (void)dx, (void)y, (void)dy, (void)file, (void)dfile, (void)line, (void)d;      \
  }                                                                                          \
  REGISTER(entry)
#define OTHER_MATMUL(entry)                                                                  \
  __attribute__((noinline)) void __enzyme_cc_fortran_##entry##_other(                       \
      Desc *r, const Desc *x, const Desc *y, const char *file, int line) {                   \
    _FortranA##entry(r, x, y, file, line);                                                   \
  }                                                                                          \
  void __enzyme_cc_fortran_##entry##_fwd(Desc *r, Desc *dr, const Desc *x, const Desc *dx,  \
                                         const Desc *y, const Desc *dy, const char *file,    \
                                         const char *dfile, int line) {                      \
    (void)r, (void)dr, (void)x, (void)dx, (void)y, (void)dy, (void)dfile;                    \
    refuse_call(#entry, file, line);                                                         \
  }                                                                                          \
  void __enzyme_cc_fortran_##entry##_rev(Desc *r, Desc *dr, const Desc *x, const Desc *dx,  \
                                         const Desc *y, const Desc *dy, const char *file,    \
                                         const char *dfile, int line) {                      \
    (void)r, (void)dr, (void)x, (void)dx, (void)y, (void)dy, (void)file, (void)dfile,        \
        (void)line;                                                                          \
  }                                                                                          \
  REGISTER(entry)
OTHER_DOT(double, DotProductReal8)
OTHER_DOT(float, DotProductReal4)
OTHER_MATMUL(MatmulReal8Real8)
OTHER_MATMUL(MatmulReal4Real4)

#define DOT(name, T, code)                                                                   \
  T __enzyme_cc_fortran_##name(const Desc *x, const Desc *y, const char *file, int line) {  \
    if (x->type != (code) || y->type != (code) || x->rank != 1 || y->rank != 1)             \
      return __enzyme_cc_fortran_##name##_other(x, y, file, line);                           \
    T acc = 0;                                                                               \
    const char *a = x->base, *b = y->base;                                                   \
    for (ptrdiff_t i = 0; i < x->dim[0].extent; i++)                                        \
      acc += *(const T *)(a + i * x->dim[0].stride) * *(const T *)(b + i * y->dim[0].stride);\
    return acc;                                                                              \
  }
DOT(DotProductReal8, double, T_DOUBLE)
DOT(DotProductReal4, float, T_FLOAT)

/* COMPLEX DOT_PRODUCT(x, y) = SUM(CONJG(x) * y), both of one kind (else flang's entry) */
void _FortranACppDotProductComplex8(double *, const Desc *, const Desc *, const char *, int);
void _FortranACppDotProductComplex4(float *, const Desc *, const Desc *, const char *, int);
#define CDOT(entry, T, code)                                                                 \
  __attribute__((noinline)) void __enzyme_cc_fortran_##entry##_other(                       \
      T *res, const Desc *x, const Desc *y, const char *file, int line) {                    \
    _FortranA##entry(res, x, y, file, line);                                                 \
  }                                                                                          \
  void __enzyme_cc_fortran_##entry##_fwd(T *res, T *dres, const Desc *x, const Desc *dx,    \
                                         const Desc *y, const Desc *dy, const char *file,    \
                                         const char *dfile, int line) {                      \
    (void)res, (void)dres, (void)x, (void)dx, (void)y, (void)dy, (void)dfile;                \
    refuse_call(#entry, file, line);                                                         \
  }                                                                                          \
  void __enzyme_cc_fortran_##entry##_rev(T *res, T *dres, const Desc *x, const Desc *dx,    \
                                         const Desc *y, const Desc *dy, const char *file,    \
                                         const char *dfile, int line) {                      \
    (void)res, (void)dres, (void)x, (void)dx, (void)y, (void)dy, (void)file, (void)dfile,    \
        (void)line;                                                                          \
  }                                                                                          \
  REGISTER(entry)                                                                            \
  void __enzyme_cc_fortran_##entry(T *res, const Desc *x, const Desc *y, const char *file,  \
                                   int line) {                                               \
    if (x->type != (code) || y->type != (code) || x->rank != 1 || y->rank != 1) {           \
      __enzyme_cc_fortran_##entry##_other(res, x, y, file, line);                            \
      return;                                                                                \
    }                                                                                        \
    T re = 0, im = 0;                                                                        \
    for (ptrdiff_t i = 0; i < x->dim[0].extent; i++) {                                       \
      const T *a = (const T *)((const char *)x->base + i * x->dim[0].stride);                \
      const T *b = (const T *)((const char *)y->base + i * y->dim[0].stride);                \
      re += a[0] * b[0] + a[1] * b[1];                                                       \
      im += a[0] * b[1] - a[1] * b[0];                                                       \
    }                                                                                        \
    res[0] = re;                                                                             \
    res[1] = im;                                                                             \
  }
CDOT(CppDotProductComplex8, double, T_CDOUBLE)
CDOT(CppDotProductComplex4, float, T_CFLOAT)

/* MATMUL: (m x k)(k x n), (m x k)(k), (k)(k x n); the result descriptor comes unallocated */
#define MATMUL(name, T, code)                                                                \
  void __enzyme_cc_fortran_##name(Desc *r, const Desc *x, const Desc *y, const char *file,  \
                                  int line) {                                                \
    if (x->type != (code) || y->type != (code) || r->base || x->rank + y->rank < 3 ||       \
        x->rank > 2 || y->rank > 2) {                                                        \
      __enzyme_cc_fortran_##name##_other(r, x, y, file, line);                               \
      return;                                                                                \
    }                                                                                        \
    ptrdiff_t m = x->rank == 2 ? x->dim[0].extent : 1, k = x->dim[x->rank - 1].extent;      \
    ptrdiff_t n = y->rank == 2 ? y->dim[1].extent : 1;                                       \
    ptrdiff_t xs0 = x->rank == 2 ? x->dim[0].stride : 0, xs1 = x->dim[x->rank - 1].stride;  \
    ptrdiff_t ys0 = y->dim[0].stride, ys1 = y->rank == 2 ? y->dim[1].stride : 0;            \
    T *out = malloc((size_t)(m * n) * sizeof(T) + 1);                                        \
    for (ptrdiff_t j = 0; j < n; j++)                                                        \
      for (ptrdiff_t i = 0; i < m; i++) {                                                    \
        T acc = 0;                                                                           \
        for (ptrdiff_t l = 0; l < k; l++)                                                    \
          acc += *(const T *)((const char *)x->base + i * xs0 + l * xs1) *                   \
                 *(const T *)((const char *)y->base + l * ys0 + j * ys1);                    \
        out[i + j * m] = acc;                                                                \
      }                                                                                      \
    r->base = out;                                                                           \
    r->elem_len = sizeof(T);                                                                 \
    r->type = (code);                                                                        \
    r->rank = (unsigned char)(x->rank + y->rank - 2);                                        \
    ptrdiff_t ext[2] = {x->rank == 2 ? m : n, n};                                            \
    ptrdiff_t stride = sizeof(T);                                                            \
    for (int d = 0; d < r->rank; d++) {                                                      \
      r->dim[d].lower = 1;                                                                   \
      r->dim[d].extent = ext[d];                                                             \
      r->dim[d].stride = stride;                                                             \
      stride *= ext[d];                                                                      \
    }                                                                                        \
  }
MATMUL(MatmulReal8Real8, double, T_DOUBLE)
MATMUL(MatmulReal4Real4, float, T_FLOAT)

void *__enzyme_register_derivative_fortran_assign[2] = {
    (void *)__enzyme_cc_fortran_assign_other, (void *)__enzyme_cc_fortran_assign_other_fwd};
void *__enzyme_register_gradient_fortran_assign[3] = {
    (void *)__enzyme_cc_fortran_assign_other, (void *)__enzyme_cc_fortran_assign_other_aug,
    (void *)__enzyme_cc_fortran_assign_other_rev};
void *__enzyme_register_derivative_fortran_assign_temporary[2] = {
    (void *)__enzyme_cc_fortran_assign_temporary_other,
    (void *)__enzyme_cc_fortran_assign_temporary_other_fwd};
void *__enzyme_register_gradient_fortran_assign_temporary[3] = {
    (void *)__enzyme_cc_fortran_assign_temporary_other,
    (void *)__enzyme_cc_fortran_assign_temporary_other_aug,
    (void *)__enzyme_cc_fortran_assign_other_rev};
void *__enzyme_inactivefn_fortran_copy[1] = {(void *)__enzyme_cc_fortran_copy_bytes};

/* ---- copy-in/copy-out of a non-contiguous actual argument (`call f(a(1, :))` to an
   explicit-shape or assumed-size dummy): flang calls these when _FortranAIsContiguous says no */
void _FortranACopyInAssign(Desc *temp, const Desc *var, const char *file, int line);
void _FortranACopyOutAssign(Desc *var, Desc *temp, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_copy_in_other(Desc *temp, const Desc *var,
                                                                 const char *file, int line) {
  _FortranACopyInAssign(temp, var, file, line);
}
__attribute__((noinline)) void __enzyme_cc_fortran_copy_out_other(Desc *var, Desc *temp,
                                                                  const char *file, int line) {
  _FortranACopyOutAssign(var, temp, file, line);
}

static int copied_here(const Desc *d) {
  return intrinsic_type(d->type) && d->elem_len > 0 && !(d->extra & 1);
}

void __enzyme_cc_fortran_CopyInAssign(Desc *temp, const Desc *var, const char *file, int line) {
  if (!copied_here(var)) {
    __enzyme_cc_fortran_copy_in_other(temp, var, file, line);
    return;
  }
  ptrdiff_t ext[15];
  for (int k = 0; k < var->rank; k++) ext[k] = var->dim[k].extent;
  temp->version = var->version;
  temp->attribute = ALLOCATABLE;
  temp->extra = 0;
  char *b = allocate_result(temp, var, var->rank, ext);
  for (int k = 0; k < var->rank; k++) temp->dim[k].lower = var->dim[k].lower;
  copy(temp, b, var, var->base);
}

void __enzyme_cc_fortran_CopyOutAssign(Desc *var, Desc *temp, const char *file, int line) {
  if (!copied_here(temp)) {
    __enzyme_cc_fortran_copy_out_other(var, temp, file, line);
    return;
  }
  if (var) copy(var, var->base, temp, temp->base);
  free(temp->base);
  temp->base = NULL;
}

static void refuse_copy(const Desc *d, const char *file, int line) {
  if (!carries_float(d)) return;
  fprintf(stderr, "enzyme-cc: the derivative reached the copy-in or copy-out of a non-contiguous "
          "argument of derived or character type at %s:%d, which it cannot differentiate; pass "
          "a contiguous array instead\n", file ? file : "?", line);
  abort();
}
void __enzyme_cc_fortran_copy_in_fwd(Desc *temp, Desc *dtemp, const Desc *var, const Desc *dvar,
                                     const char *file, const char *dfile, int line) {
  (void)dtemp, (void)dvar, (void)dfile;
  refuse_copy(var, file, line);
  _FortranACopyInAssign(temp, var, file, line);
}
void __enzyme_cc_fortran_copy_in_rev(Desc *temp, Desc *dtemp, const Desc *var, const Desc *dvar,
                                     const char *file, const char *dfile, int line) {
  (void)temp, (void)dtemp, (void)var, (void)dvar, (void)file, (void)dfile, (void)line;
}
void __enzyme_cc_fortran_copy_out_fwd(Desc *var, Desc *dvar, Desc *temp, Desc *dtemp,
                                      const char *file, const char *dfile, int line) {
  (void)dvar, (void)dtemp, (void)dfile;
  refuse_copy(temp, file, line);
  _FortranACopyOutAssign(var, temp, file, line);
}
void __enzyme_cc_fortran_copy_out_rev(Desc *var, Desc *dvar, Desc *temp, Desc *dtemp,
                                      const char *file, const char *dfile, int line) {
  (void)var, (void)dvar, (void)temp, (void)dtemp, (void)file, (void)dfile, (void)line;
}
REGISTER(copy_in)
REGISTER(copy_out)

/* ---- RANDOM_NUMBER: the harvest is overwritten by values without a derivative. flang's entry
   fills a scratch array (registered inactive) that typed stores copy into the harvest, so AD
   zeroes the harvest's tangents and adjoints like any store of a constant. */
void _FortranARandomNumber(const Desc *harvest, const char *file, int line);
__attribute__((noinline)) void __enzyme_cc_fortran_random_fill(const Desc *harvest,
                                                               const char *file, int line) {
  _FortranARandomNumber(harvest, file, line);
}
void *__enzyme_inactivefn_fortran_random[1] = {(void *)__enzyme_cc_fortran_random_fill};

void __enzyme_cc_fortran_RandomNumber(const Desc *h, const char *file, int line) {
  if (h->type != T_DOUBLE && h->type != T_FLOAT) {
    __enzyme_cc_fortran_random_fill(h, file, line);
    return;
  }
  Desc t;                       /* (h has room for its own rank only: no struct copy) */
  t.elem_len = h->elem_len;
  t.version = h->version;
  t.rank = h->rank;
  t.type = h->type;
  t.extra = 0;
  ptrdiff_t stride = (ptrdiff_t)h->elem_len;
  for (int k = 0; k < h->rank; k++) {
    t.dim[k] = h->dim[k];
    t.dim[k].stride = stride;
    stride *= h->dim[k].extent > 0 ? h->dim[k].extent : 0;
  }
  size_t bytes = elements(h) * h->elem_len;
  t.base = malloc(bytes ? bytes : 1);
  t.attribute = 0;
  __enzyme_cc_fortran_random_fill(&t, file, line);
  copy(h, h->base, &t, t.base);
  free(t.base);
}
