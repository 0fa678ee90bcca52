/* Flang's derived-type description (`__fortran_type_info`'s DerivedType and Component, as
   flang-22 lays them out) and the walks over a type's components that enzyme-cc's C runtimes
   share (fortran_derived.c, fortran_shadow.c). */
#ifndef ENZYME_CC_FORTRAN_TYPEINFO_H
#define ENZYME_CC_FORTRAN_TYPEINFO_H
#include <stdint.h>

#include "fortran_desc.h"

enum { T_DERIVED = 42, HAS_ADDENDUM = 1 };
enum { DATA = 1, POINTER = 2, ALLOCATABLE_GENRE = 3, AUTOMATIC = 4 };          /* genres */
enum { CAT_REAL = 2, CAT_COMPLEX = 3, CAT_CHARACTER = 4, CAT_DERIVED = 6 };     /* categories */

/* the pointer components of the type description, as descriptors */
typedef struct {
  void *base;
  size_t elem_len;
  int version;
  unsigned char rank, type, attribute, extra;
} Head;
typedef struct { Head h; Dim dim[1]; void *type; int64_t len[1]; } Ptr1;
typedef struct { Head h; Dim dim[2]; void *type; int64_t len[1]; } Ptr2;
typedef struct { Head h; void *type; int64_t len[1]; } Ptr0;
typedef struct { Head h; Dim dim[1]; } Ptr1Intrinsic;
typedef struct { int8_t genre; int8_t pad[7]; int64_t value; } Value;

typedef struct TypeInfo {
  Ptr1 binding;
  Head name;
  int64_t size_in_bytes;
  Ptr0 uninstantiated;
  Ptr1Intrinsic kind_parameter, len_parameter_kind;
  Ptr1 component, procptr, special;
  int32_t special_bitset;
  int8_t has_parent, no_initialization_needed, no_destruction_needed, no_finalization_needed,
      no_defined_assignment, pad[3];
} TypeInfo;

typedef struct {
  Head name;
  int8_t genre, category, kind, rank, pad[4];
  int64_t offset;
  Value character_len;
  Ptr0 derived;
  Ptr1 len_value;
  Ptr2 bounds;
  const void *initialization;
} Component;

_Static_assert(sizeof(TypeInfo) == 440, "flang's type description changed");
_Static_assert(sizeof(Component) == 256, "flang's component description changed");

/* the type description of d's elements (or NULL), from the descriptor's addendum */
static inline const TypeInfo *type_description(const Desc *d) {
  if (d->type != T_DERIVED || !(d->extra & HAS_ADDENDUM)) return NULL;
  return *(const TypeInfo *const *)((const char *)d + 24 + d->rank * sizeof(Dim));
}

static inline size_t components(const TypeInfo *t) {
  return t->component.h.base && t->component.dim[0].extent > 0
             ? (size_t)t->component.dim[0].extent : 0;
}

static inline const Component *component(const TypeInfo *t, size_t i) {
  return (const Component *)((const char *)t->component.h.base +
                             (ptrdiff_t)i * t->component.dim[0].stride);
}

/* the elements of a DATA component (1 for a scalar; explicit bounds otherwise) */
static inline size_t data_elements(const Component *c) {
  size_t n = 1;
  for (int k = 0; k < c->rank; k++) {
    const char *b = (const char *)c->bounds.h.base;
    const Value *lo = (const Value *)(b + k * c->bounds.dim[1].stride);
    const Value *hi = (const Value *)(b + c->bounds.dim[0].stride + k * c->bounds.dim[1].stride);
    int64_t e = hi->value - lo->value + 1;
    n *= e > 0 ? (size_t)e : 0;
  }
  return n;
}

static inline int allocator_of(const Desc *d) { return (d->extra >> 1) & 7; }

#endif
