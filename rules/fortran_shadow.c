/* The shadow of a Fortran module variable's allocatable array of a derived type whose elements
   hold allocatable components of their own (TeaLeaf's `chunk%tiles(:)`, CloverLeaf's
   `chunks(:)`, each with allocatable fields). Made at each derivative's entry from the primal's
   allocation tree as it is then (ad/api/shared_globals.py `entry_function`), and freed at the
   next one: the same shapes and lower bounds, each allocated array a buffer of its own, REAL and
   COMPLEX data zero (a derivative starts from zero there, as for a C global), integer, logical
   and character data copied (they have no derivative), POINTER components null (a derivative
   through one faults rather than writing into primal memory). Linked in after AD (not
   differentiated); only malloc'd here, so free() undoes it, also after a derivative's own
   shadow ALLOCATE or DEALLOCATE (fortran_derived.c) changed a part. */
#include <stdint.h>

#include "fortran_desc.h"
#include "fortran_typeinfo.h"

enum { MAX_DEPTH = 32 };

static void mirror_array(Desc *sd, const Desc *d, const TypeInfo *t, int depth);

/* the object at s, a byte copy of the primal's at a of type t, made its shadow */
static void mirror_object(char *s, const char *a, const TypeInfo *t, int depth) {
  size_t nc = components(t);
  for (size_t i = 0; i < nc; i++) {
    const Component *c = component(t, i);
    const TypeInfo *ct = c->category == CAT_DERIVED ? c->derived.h.base : NULL;
    char *sc = s + c->offset;
    const char *ac = a + c->offset;
    if (c->genre == ALLOCATABLE_GENRE || c->genre == AUTOMATIC) {
      Desc *sd = (Desc *)sc;
      const Desc *d = (const Desc *)ac;
      sd->base = NULL;
      if (d->base) {
        const TypeInfo *dt = type_description(d);      /* the dynamic type, if any */
        mirror_array(sd, d, dt ? dt : ct, depth + 1);
      }
    } else if (c->genre == POINTER) {
      ((Desc *)sc)->base = NULL;
    } else if (c->genre == DATA && (c->category == CAT_REAL || c->category == CAT_COMPLEX)) {
      size_t bytes = (size_t)c->kind * (c->category == CAT_COMPLEX ? 2 : 1);
      memset(sc, 0, bytes * data_elements(c));
    } else if (c->genre == DATA && ct) {
      for (size_t j = 0, n = data_elements(c); j < n; j++) {
        ptrdiff_t at = (ptrdiff_t)j * ct->size_in_bytes;
        mirror_object(sc + at, ac + at, ct, depth + 1);
      }
    }
  }
}

/* sd, a copy of the allocated descriptor d, gets a contiguous buffer of its own: zeros for
   intrinsic data, the elements' shadows for derived-type data (type t) */
static void mirror_array(Desc *sd, const Desc *d, const TypeInfo *t, int depth) {
  size_t n = elements(d), len = d->elem_len;
  char *b = calloc(n * len ? n * len : 1, 1);
  ptrdiff_t stride = (ptrdiff_t)len;
  for (int k = 0; k < sd->rank; k++) {
    sd->dim[k].stride = stride;
    stride *= sd->dim[k].extent > 0 ? sd->dim[k].extent : 0;
  }
  sd->base = b;
  if (!t || depth > MAX_DEPTH) return;
  for (size_t i = 0; i < n; i++) {
    const char *a = (const char *)d->base + offset_of(d, i);
    memcpy(b + i * len, a, len);
    mirror_object(b + i * len, a, t, depth);
  }
}

static void free_elements(Desc *sd, const TypeInfo *t, int depth);

static void free_object(char *s, const TypeInfo *t, int depth) {
  size_t nc = components(t);
  for (size_t i = 0; i < nc; i++) {
    const Component *c = component(t, i);
    const TypeInfo *ct = c->category == CAT_DERIVED ? c->derived.h.base : NULL;
    if (c->genre == ALLOCATABLE_GENRE || c->genre == AUTOMATIC) {
      Desc *sd = (Desc *)(s + c->offset);
      if (!sd->base) continue;
      const TypeInfo *dt = type_description(sd);
      free_elements(sd, dt ? dt : ct, depth + 1);
      free(sd->base);
      sd->base = NULL;
    } else if (c->genre == DATA && ct) {
      for (size_t j = 0, n = data_elements(c); j < n; j++)
        free_object(s + c->offset + (ptrdiff_t)j * ct->size_in_bytes, ct, depth + 1);
    }
  }
}

static void free_elements(Desc *sd, const TypeInfo *t, int depth) {
  if (!t || depth > MAX_DEPTH) return;
  for (size_t i = 0, n = elements(sd); i < n; i++)
    free_object((char *)sd->base + offset_of(sd, i), t, depth);
}

/* sd (desc_bytes long, zeroed by the caller) becomes the shadow of the primal's d, where d is
   allocated (or associated by ALLOCATE) */
void __enzyme_cc_fortran_shadow_tree(Desc *sd, const Desc *d, size_t desc_bytes) {
  if (!d->base || (d->attribute != ALLOCATABLE && d->attribute != 1)) return;
  memcpy(sd, d, desc_bytes);
  mirror_array(sd, d, type_description(d), 0);
}

/* what the last entry (and the derivative since) left in sd, freed */
void __enzyme_cc_fortran_shadow_tree_free(Desc *sd) {
  if (!sd->base) return;
  free_elements(sd, type_description(sd), 0);
  free(sd->base);
  sd->base = NULL;
}
