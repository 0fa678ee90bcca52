/* enzyme-cc's versions of flang's runtime entries for derived types with allocatable
   components: ALLOCATE of an array of them (`_FortranAAllocatableAllocate`), DEALLOCATE
   (`_FortranAAllocatableDeallocate`), the end of their lifetime (`_FortranADestroy`), their
   default initialization (`_FortranAInitialize`), and MOVE_ALLOC of any allocatable
   (`_FortranAMoveAlloc`). Linked into a program's bitcode before AD in
   place of flang's (rules/fortran.py lists them). Flang's own entries have no bitcode, so AD
   could not see the memory they allocate and free; here the allocations and frees are calls to
   malloc and free that AD differentiates like any other (a shadow allocation beside each, the
   frees deferred to the end of the reverse sweep).

   The walk over a type's components reads flang's type description (the derived type
   `__fortran_type_info` describes; a pointer to it is in the descriptor's addendum). Types with
   final procedures, allocators other than the default one and polymorphic deallocation go to
   flang's entries, whose registered derivatives stop with a message when the derivative
   reaches them. */
#include <stdint.h>

#include "fortran_desc.h"
#include "fortran_typeinfo.h"

/* the type description of d's elements (or NULL): constant data, reached through a function
   registered inactive so that AD forms no shadow of it */
__attribute__((noinline)) const TypeInfo *__enzyme_cc_fortran_type_of(const Desc *d) {
  return type_description(d);
}

/* whether anything below t needs finalization or a non-default allocator's free (then flang's
   own entries are called) */
static int finalizes(const TypeInfo *t) { return t && !t->no_finalization_needed; }

/* whether the object at a, of type t, has a final procedure to run: its type's, or a
   component's, an allocated polymorphic component's by its dynamic type. flang marks every type
   with a CLASS component as possibly needing finalization (an extension may have a final
   procedure), which alone sent the destruction of such objects to flang's runtime. */
enum { FIRST_FINAL = 7 };  /* flang's special bindings from ElementalFinal on are final ones */
static int has_finals(const char *a, const TypeInfo *t, int depth);

/* whether an element of d, taken as of type t, has a final procedure to run */
static int elements_have_finals(const Desc *d, const TypeInfo *t, int depth) {
  for (size_t j = 0, n = elements(d); j < n; j++)
    if (has_finals((const char *)d->base + offset_of(d, j), t, depth)) return 1;
  return 0;
}

static int has_finals(const char *a, const TypeInfo *t, int depth) {
  if (!t || t->no_finalization_needed) return 0;
  if (depth > 32 || ((uint32_t)t->special_bitset >> FIRST_FINAL) != 0) return 1;
  size_t nc = components(t);
  for (size_t i = 0; i < nc; i++) {
    const Component *c = component(t, i);
    const TypeInfo *ct = c->category == CAT_DERIVED ? c->derived.h.base : NULL;
    if (c->genre == ALLOCATABLE_GENRE || c->genre == AUTOMATIC) {
      const Desc *d = (const Desc *)(a + c->offset);
      const TypeInfo *dt = __enzyme_cc_fortran_type_of(d);   /* the dynamic type, if any */
      if (!dt) dt = ct;
      if (d->base && dt && elements_have_finals(d, dt, depth + 1)) return 1;
    } else if (c->genre == DATA && ct) {
      for (size_t j = 0, n = data_elements(c); j < n; j++)
        if (has_finals(a + c->offset + (ptrdiff_t)j * ct->size_in_bytes, ct, depth + 1)) return 1;
    }
  }
  return 0;
}

/* finalizes(t), looking at the elements of d */
static int finalized(const Desc *d, const TypeInfo *t) {
  return finalizes(t) && (!d->base || elements_have_finals(d, t, 0));
}

/* ---- destruction: free every allocated allocatable component, depth first ------------------ */
static int destroy_object(char *a, const TypeInfo *t);

static int destroy_elements(const Desc *d, const TypeInfo *t) {
  size_t n = elements(d);
  for (size_t i = 0; i < n; i++)
    if (!destroy_object((char *)d->base + offset_of(d, i), t)) return 0;
  return 1;
}

/* 0 where a component needs flang's runtime (another allocator) */
static int destroy_object(char *a, const TypeInfo *t) {
  if (!t || t->no_destruction_needed) return 1;
  size_t nc = components(t);
  for (size_t i = 0; i < nc; i++) {
    const Component *c = component(t, i);
    const TypeInfo *ct = c->category == CAT_DERIVED ? c->derived.h.base : NULL;
    if (c->genre == ALLOCATABLE_GENRE || c->genre == AUTOMATIC) {
      Desc *d = (Desc *)(a + c->offset);
      if (!d->base) continue;
      if (allocator_of(d) != 0) return 0;
      const TypeInfo *dt = __enzyme_cc_fortran_type_of(d);   /* the dynamic type, if any */
      if (!dt) dt = ct;
      if (dt && !destroy_elements(d, dt)) return 0;
      free(d->base);
      d->base = NULL;
    } else if (c->genre == DATA && ct && !ct->no_destruction_needed) {
      size_t n = data_elements(c);
      for (size_t j = 0; j < n; j++)
        if (!destroy_object(a + c->offset + (ptrdiff_t)j * ct->size_in_bytes, ct)) return 0;
    }
  }
  return 1;
}

/* ---- default initialization: the float parts of it, as typed stores AD sees --------------- */
/* a default value (constant data: read through a function registered inactive, so that no
   shadow of the type description is ever formed) */
__attribute__((noinline)) double __enzyme_cc_fortran_default_double(const void *p, size_t j) {
  return ((const double *)p)[j];
}
__attribute__((noinline)) float __enzyme_cc_fortran_default_float(const void *p, size_t j) {
  return ((const float *)p)[j];
}

static void init_floats(char *a, const TypeInfo *t) {
  if (!t || t->no_initialization_needed) return;
  size_t nc = components(t);
  for (size_t i = 0; i < nc; i++) {
    const Component *c = component(t, i);
    if (c->genre != DATA) continue;
    size_t n = data_elements(c);
    char *p = a + c->offset;
    if (c->initialization && (c->category == CAT_REAL || c->category == CAT_COMPLEX)) {
      size_t parts = c->category == CAT_COMPLEX ? 2 * n : n;
      if (c->kind == 8)
        for (size_t j = 0; j < parts; j++)
          ((double *)p)[j] = __enzyme_cc_fortran_default_double(c->initialization, j);
      else if (c->kind == 4)
        for (size_t j = 0; j < parts; j++)
          ((float *)p)[j] = __enzyme_cc_fortran_default_float(c->initialization, j);
    } else if (!c->initialization && c->category == CAT_DERIVED) {
      const TypeInfo *ct = c->derived.h.base;
      for (size_t j = 0; ct && j < n; j++) init_floats(p + (ptrdiff_t)j * ct->size_in_bytes, ct);
    }
  }
}

void _FortranAInitialize(const Desc *d, const char *file, int line);

/* flang's initialization (component descriptors, integers, characters, pointers) of memory
   whose float parts init_floats has just written: nothing there carries a derivative */
__attribute__((noinline)) void __enzyme_cc_fortran_initialize_rest(const Desc *d,
                                                                  const char *file, int line) {
  _FortranAInitialize(d, file, line);
}

void __enzyme_cc_fortran_Initialize(const Desc *d, const char *file, int line) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(d);
  if (t && !t->no_initialization_needed)
    for (size_t i = 0, n = elements(d); i < n; i++)
      init_floats((char *)d->base + offset_of(d, i), t);
  __enzyme_cc_fortran_initialize_rest(d, file, line);
}

/* AssignTemporary: flang's assignment into a temporary it made (a structure constructor's
   value, `p = pt(x=x(1:2), m=2d0)` at -O0): the default initialization of an allocated target
   whose type has one, then the assignment, reallocating as Assign does. A polymorphic target
   whose dynamic type is not the source's goes to flang's entry (fortran_runtime.c). */
void __enzyme_cc_fortran_Assign(Desc *to, const Desc *from, const char *file, int line);
void __enzyme_cc_fortran_assign_temporary_other(Desc *to, const Desc *from, const char *file,
                                                int line);
void __enzyme_cc_fortran_AssignTemporary(Desc *to, const Desc *from, const char *file, int line) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(to), *f = __enzyme_cc_fortran_type_of(from);
  if (t && f && t != f) {
    __enzyme_cc_fortran_assign_temporary_other(to, from, file, line);
    return;
  }
  if (t && !t->no_initialization_needed && to->base) __enzyme_cc_fortran_Initialize(to, file, line);
  __enzyme_cc_fortran_Assign(to, from, file, line);
}

/* integer, logical and character data: no derivative (registered inactive below) */
__attribute__((noinline)) void __enzyme_cc_fortran_copy_raw(char *p, const char *q, size_t n) {
  memcpy(p, q, n);
}

/* ---- intrinsic assignment of derived types: a deep copy (F2018 10.2.1.3) -------------------- */
void __enzyme_cc_fortran_Assign(Desc *to, const Desc *from, const char *file, int line);
static int assign_object(char *a, const char *b, const TypeInfo *t, const char *file, int line);

/* a fresh allocation of d with from's shape (its lower bounds too), or with its own where from
   is a scalar, default-initialized. (Never `from->rank ? from : d` as the shape's source: AD's
   activity analysis would take the two descriptors of such a select for one object.) */
static void allocate_as(Desc *d, const Desc *from, const TypeInfo *t, const char *file,
                        int line) {
  ptrdiff_t stride = (ptrdiff_t)d->elem_len;
  int rank = from->rank ? from->rank : d->rank;
  for (int k = 0; k < rank; k++) {
    if (from->rank) {
      d->dim[k].lower = from->dim[k].lower;
      d->dim[k].extent = from->dim[k].extent;
    }
    d->dim[k].stride = stride;
    stride *= d->dim[k].extent > 0 ? d->dim[k].extent : 0;
  }
  size_t bytes = (size_t)stride;     /* the elements' bytes */
  d->base = malloc(bytes ? bytes : 1);
  if (t && !t->no_initialization_needed) __enzyme_cc_fortran_Initialize(d, file, line);
}

static int same_shape(const Desc *a, const Desc *b) {
  if (a->rank != b->rank) return 0;
  for (int k = 0; k < a->rank; k++)
    if (a->dim[k].extent != b->dim[k].extent) return 0;
  return 1;
}

/* an allocatable component `td = fd` (both descriptors inside their objects) */
static int assign_allocatable(Desc *td, const Desc *fd, const TypeInfo *ct, const char *file,
                              int line) {
  if (allocator_of(td) != 0 || allocator_of(fd) != 0) return 0;
  if (td->base && (!fd->base || !same_shape(td, fd))) {      /* deallocated, or reshaped */
    if (ct && !destroy_elements(td, ct)) return 0;
    free(td->base);
    td->base = NULL;
  }
  if (!fd->base) return 1;
  if (!ct) {                                   /* intrinsic: the intrinsic assignment's path */
    __enzyme_cc_fortran_Assign(td, fd, file, line);
    return 1;
  }
  if (!td->base) allocate_as(td, fd, ct, file, line);
  for (size_t i = 0, n = elements(fd); i < n; i++)
    if (!assign_object((char *)td->base + offset_of(td, i),
                       (const char *)fd->base + offset_of(fd, i), ct, file, line))
      return 0;
  return 1;
}

/* a pointer component: the association is copied (address, bounds, type) */
static void associate(Desc *td, const Desc *fd) {
  td->base = fd->base;
  td->elem_len = fd->elem_len;
  td->version = fd->version;
  td->rank = fd->rank;
  td->type = fd->type;
  td->attribute = fd->attribute;
  for (int k = 0; k < fd->rank; k++) td->dim[k] = fd->dim[k];
}

/* one element `a = b` of type t; 0 where flang's runtime must do it */
static int assign_object(char *a, const char *b, const TypeInfo *t, const char *file, int line) {
  if (!t->no_defined_assignment || !t->no_finalization_needed ||
      (t->procptr.h.base && t->procptr.dim[0].extent > 0))
    return 0;
  for (size_t i = 0, nc = components(t); i < nc; i++) {
    const Component *c = component(t, i);
    const TypeInfo *ct = c->category == CAT_DERIVED ? c->derived.h.base : NULL;
    char *p = a + c->offset;
    const char *q = b + c->offset;
    if (c->genre == ALLOCATABLE_GENRE || c->genre == AUTOMATIC) {
      if (!assign_allocatable((Desc *)p, (const Desc *)q, ct, file, line)) return 0;
    } else if (c->genre == POINTER) {
      associate((Desc *)p, (const Desc *)q);
    } else if (c->genre == DATA && ct) {
      for (size_t j = 0, n = data_elements(c); j < n; j++)
        if (!assign_object(p + (ptrdiff_t)j * ct->size_in_bytes,
                           q + (ptrdiff_t)j * ct->size_in_bytes, ct, file, line))
          return 0;
    } else if (c->genre == DATA) {             /* typed copies: AD sees the float ones */
      size_t n = data_elements(c);
      if (c->category == CAT_REAL || c->category == CAT_COMPLEX) {
        size_t parts = c->category == CAT_COMPLEX ? 2 * n : n;
        if (c->kind == 8) {
          for (size_t j = 0; j < parts; j++) ((double *)p)[j] = ((const double *)q)[j];
          continue;
        }
        if (c->kind == 4) {
          for (size_t j = 0; j < parts; j++) ((float *)p)[j] = ((const float *)q)[j];
          continue;
        }
        return 0;
      }
      size_t bytes = c->category == CAT_CHARACTER
                         ? (size_t)c->kind * (size_t)c->character_len.value * n
                         : (size_t)c->kind * n;
      __enzyme_cc_fortran_copy_raw(p, q, bytes);
    }
  }
  return 1;
}

/* `to = from` for derived types: 1 when done here, 0 for flang's runtime (defined assignment,
   final procedures, procedure pointer components, other allocators, overlapping operands) */
int __enzyme_cc_fortran_assign_derived(Desc *to, const Desc *from, const char *file, int line) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(to);
  if (!t || __enzyme_cc_fortran_type_of(from) != t || allocator_of(to) != 0 ||
      (from->rank && from->rank != to->rank) || !from->base || !t->no_finalization_needed)
    return 0;
  if (to->base) {
    const char *flo, *fhi, *tlo, *thi;
    extent_of(from, from->base, &flo, &fhi);
    extent_of(to, to->base, &tlo, &thi);
    if (flo < thi && tlo < fhi) return 0;
  }
  if (to->attribute == ALLOCATABLE && (!to->base || (from->rank && !same_shape(to, from)))) {
    if (!from->rank && !to->base && to->rank) return 0;   /* flang reports it */
    if (to->base) {
      if (!destroy_elements(to, t)) return 0;
      free(to->base);
      to->base = NULL;
    }
    allocate_as(to, from, t, file, line);
  }
  if (!to->base) return 0;
  for (size_t i = 0, n = elements(to); i < n; i++)
    if (!assign_object((char *)to->base + offset_of(to, i),
                       (const char *)from->base + (from->rank ? offset_of(from, i) : 0), t,
                       file, line))
      return 0;
  return 1;
}

/* flang's own entries, for what this file does not do (fortran_fallback.c) */
void __enzyme_cc_fortran_Destroy_other(const Desc *d);
int __enzyme_cc_fortran_AllocatableAllocate_other(Desc *d, int64_t *async, _Bool has_stat,
                                                  const Desc *errmsg, const char *file, int line,
                                                  void *memcpy_fn);
int __enzyme_cc_fortran_PointerAllocate_other(Desc *d, _Bool has_stat, const Desc *errmsg,
                                              const char *file, int line, void *memcpy_fn);
int __enzyme_cc_fortran_AllocatableAllocateSource_other(Desc *d, const Desc *src,
                                                        _Bool has_stat, const Desc *errmsg,
                                                        const char *file, int line);
int __enzyme_cc_fortran_PointerAllocateSource_other(Desc *d, const Desc *src, _Bool has_stat,
                                                    const Desc *errmsg, const char *file,
                                                    int line);
int __enzyme_cc_fortran_AllocatableDeallocate_other(Desc *d, _Bool has_stat, const Desc *errmsg,
                                                    const char *file, int line);
int __enzyme_cc_fortran_PointerDeallocate_other(Desc *d, _Bool has_stat, const Desc *errmsg,
                                                const char *file, int line);
int32_t __enzyme_cc_fortran_MoveAlloc_other(Desc *to, Desc *from, const void *derived,
                                            _Bool has_stat, const Desc *errmsg,
                                            const char *file, int line);
void __enzyme_cc_fortran_assign_other(Desc *to, const Desc *from, const char *file, int line);

/* ---- the entries ------------------------------------------------------------------------- */
void __enzyme_cc_fortran_Destroy(const Desc *d) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(d);
  if (!t || t->no_destruction_needed) {
    if (finalized(d, t)) __enzyme_cc_fortran_Destroy_other(d);
    return;
  }
  if (finalized(d, t) || !destroy_elements(d, t)) __enzyme_cc_fortran_Destroy_other(d);
}

/* the end of a temporary's lifetime (a structure constructor's value): its allocatable
   components freed, no final procedure run */
void __enzyme_cc_fortran_DestroyWithoutFinalization_other(const Desc *d);
void __enzyme_cc_fortran_DestroyWithoutFinalization(const Desc *d) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(d);
  if (t && !t->no_destruction_needed && !destroy_elements(d, t))
    __enzyme_cc_fortran_DestroyWithoutFinalization_other(d);
}

/* ALLOCATE: the default allocator's malloc, byte strides from the extents (F2018 9.7.1), then
   the default initialization of derived-type elements; 0 where flang's runtime must do it */
static int allocate_here(Desc *d, const char *file, int line) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(d);
  int t_ok = (d->type >= 1 && d->type <= 39) || t;
  if (allocator_of(d) != 0 || !t_ok || d->elem_len == 0) return 0;
  size_t bytes = elements(d) * d->elem_len;
  char *p = malloc(bytes ? bytes : 1);
  if (!p) return 0;
  ptrdiff_t stride = (ptrdiff_t)d->elem_len;
  for (int k = 0; k < d->rank; k++) {
    d->dim[k].stride = stride;
    stride *= d->dim[k].extent > 0 ? d->dim[k].extent : 0;
  }
  d->base = p;
  if (t && !t->no_initialization_needed) __enzyme_cc_fortran_Initialize(d, file, line);
  return 1;
}

int __enzyme_cc_fortran_AllocatableAllocate(Desc *d, int64_t *async, _Bool has_stat,
                                            const Desc *errmsg, const char *file, int line,
                                            void *memcpy_fn) {
  if (d->base || !allocate_here(d, file, line))
    return __enzyme_cc_fortran_AllocatableAllocate_other(d, async, has_stat, errmsg, file, line,
                                                         memcpy_fn);
  return 0;
}

/* a POINTER need not be disassociated first (its old target stays allocated) */
int __enzyme_cc_fortran_PointerAllocate(Desc *d, _Bool has_stat, const Desc *errmsg,
                                        const char *file, int line, void *memcpy_fn) {
  if (!allocate_here(d, file, line))
    return __enzyme_cc_fortran_PointerAllocate_other(d, has_stat, errmsg, file, line,
                                                     memcpy_fn);
  return 0;
}

/* ALLOCATE(..., SOURCE=): the allocation, then the intrinsic assignment of SOURCE to it */
static int fill_from(Desc *d, const Desc *src, const char *file, int line) {
  if (__enzyme_cc_fortran_type_of(d))
    return __enzyme_cc_fortran_assign_derived(d, src, file, line);
  __enzyme_cc_fortran_Assign(d, src, file, line);
  return 1;
}

int __enzyme_cc_fortran_AllocatableAllocateSource(Desc *d, const Desc *src, _Bool has_stat,
                                                  const Desc *errmsg, const char *file,
                                                  int line) {
  if (d->base || d->type != src->type || !allocate_here(d, file, line))
    return __enzyme_cc_fortran_AllocatableAllocateSource_other(d, src, has_stat, errmsg, file,
                                                               line);
  if (!fill_from(d, src, file, line)) __enzyme_cc_fortran_assign_other(d, src, file, line);
  return 0;
}

int __enzyme_cc_fortran_PointerAllocateSource(Desc *d, const Desc *src, _Bool has_stat,
                                              const Desc *errmsg, const char *file, int line) {
  if (d->type != src->type || !allocate_here(d, file, line))
    return __enzyme_cc_fortran_PointerAllocateSource_other(d, src, has_stat, errmsg, file,
                                                           line);
  if (!fill_from(d, src, file, line)) __enzyme_cc_fortran_assign_other(d, src, file, line);
  return 0;
}

/* DEALLOCATE: the components first (F2018 9.7.3.2), then the object; 0 where flang's runtime
   must do it */
static int deallocate_here(Desc *d) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(d);
  if (!d->base || allocator_of(d) != 0 || finalized(d, t) || (t && !destroy_elements(d, t)))
    return 0;
  free(d->base);
  d->base = NULL;
  return 1;
}

int __enzyme_cc_fortran_AllocatableDeallocate(Desc *d, _Bool has_stat, const Desc *errmsg,
                                              const char *file, int line) {
  if (!deallocate_here(d))
    return __enzyme_cc_fortran_AllocatableDeallocate_other(d, has_stat, errmsg, file, line);
  return 0;
}

/* DEALLOCATE of a CLASS object: the deallocation, then its dynamic type back to the declared
   one (in the addendum; CFI_type_other for an unlimited one), as flang's runtime does */
int __enzyme_cc_fortran_AllocatableDeallocatePolymorphic(Desc *d, const TypeInfo *declared,
                                                         _Bool has_stat, const Desc *errmsg,
                                                         const char *file, int line) {
  int stat = __enzyme_cc_fortran_AllocatableDeallocate(d, has_stat, errmsg, file, line);
  if (stat == 0) {
    if (d->extra & HAS_ADDENDUM)
      *(const TypeInfo **)((char *)d + 24 + d->rank * sizeof(Dim)) = declared;
    d->type = declared ? T_DERIVED : -1;
  }
  return stat;
}

int __enzyme_cc_fortran_PointerDeallocate(Desc *d, _Bool has_stat, const Desc *errmsg,
                                          const char *file, int line) {
  if (!deallocate_here(d))
    return __enzyme_cc_fortran_PointerDeallocate_other(d, has_stat, errmsg, file, line);
  return 0;
}

/* MOVE_ALLOC(FROM, TO): TO's old allocation is deallocated, then FROM's moves to TO (its
   address, element length and bounds) and FROM is left unallocated */
int32_t __enzyme_cc_fortran_MoveAlloc(Desc *to, Desc *from, const void *derived, _Bool has_stat,
                                      const Desc *errmsg, const char *file, int line) {
  const TypeInfo *t = __enzyme_cc_fortran_type_of(to);
  if (derived || to == from || to->rank != from->rank || to->type != from->type ||
      allocator_of(to) != 0 || allocator_of(from) != 0 || finalizes(t) ||
      __enzyme_cc_fortran_type_of(from) != t)
    return __enzyme_cc_fortran_MoveAlloc_other(to, from, derived, has_stat, errmsg, file, line);
  if (to->base) {
    if (t && !destroy_elements(to, t))
      return __enzyme_cc_fortran_MoveAlloc_other(to, from, derived, has_stat, errmsg, file,
                                                 line);
    free(to->base);
  }
  to->base = from->base;
  to->elem_len = from->elem_len;
  for (int k = 0; k < from->rank; k++) to->dim[k] = from->dim[k];
  from->base = NULL;
  return 0;
}

void *__enzyme_inactivefn_fortran_derived[5] = {
    (void *)__enzyme_cc_fortran_initialize_rest, (void *)__enzyme_cc_fortran_copy_raw,
    (void *)__enzyme_cc_fortran_type_of, (void *)__enzyme_cc_fortran_default_double,
    (void *)__enzyme_cc_fortran_default_float};
