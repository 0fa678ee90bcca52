/* flang's own runtime entries for what fortran_derived.c does not do (types with final
   procedures, other allocators, polymorphic MOVE_ALLOC, ...), each behind a wrapper of ours
   whose registered derivatives stop with a message when the derivative reaches it: flang's
   runtime has no bitcode, so the memory it allocates and frees would have no shadow. */
#include <stdint.h>

#include "fortran_desc.h"

enum { T_DERIVED = 42 };

void _FortranADestroy(const Desc *d);
int _FortranAAllocatableAllocate(Desc *d, int64_t *async, _Bool has_stat, const Desc *errmsg,
                                 const char *file, int line, void *memcpy_fn);
int _FortranAAllocatableDeallocate(Desc *d, _Bool has_stat, const Desc *errmsg,
                                   const char *file, int line);

static void stops(const char *what, const char *file, int line) {
  char where[512] = "";
  if (file) snprintf(where, sizeof where, " at %s:%d", file, line);   /* (finalization: none) */
  fprintf(stderr, "enzyme-cc: the derivative reached %s%s of a derived type with final "
          "procedures or another allocator, which it cannot differentiate; hint: keep such "
          "objects out of the differentiated code (create and finalize them outside it, and "
          "pass their data as arguments)\n", what, where);
  abort();
}

__attribute__((noinline)) void __enzyme_cc_fortran_Destroy_other(const Desc *d) {
  _FortranADestroy(d);
}
void __enzyme_cc_fortran_Destroy_fwd(const Desc *d, const Desc *dd) {
  (void)d, (void)dd;
  stops("the finalization of an object", NULL, 0);
}
void __enzyme_cc_fortran_Destroy_rev(const Desc *d, const Desc *dd) { (void)d, (void)dd; }

void _FortranADestroyWithoutFinalization(const Desc *d);
__attribute__((noinline)) void __enzyme_cc_fortran_DestroyWithoutFinalization_other(
    const Desc *d) {
  _FortranADestroyWithoutFinalization(d);
}
void __enzyme_cc_fortran_DestroyWithoutFinalization_fwd(const Desc *d, const Desc *dd) {
  (void)d, (void)dd;
  stops("the destruction of an object", NULL, 0);
}
void __enzyme_cc_fortran_DestroyWithoutFinalization_rev(const Desc *d, const Desc *dd) {
  (void)d, (void)dd;
}

__attribute__((noinline)) int __enzyme_cc_fortran_AllocatableAllocate_other(
    Desc *d, int64_t *async, _Bool has_stat, const Desc *errmsg, const char *file, int line,
    void *memcpy_fn) {
  return _FortranAAllocatableAllocate(d, async, has_stat, errmsg, file, line, memcpy_fn);
}
int __enzyme_cc_fortran_AllocatableAllocate_fwd(Desc *d, Desc *dd, int64_t *async,
                                                int64_t *dasync, _Bool has_stat,
                                                const Desc *errmsg, const Desc *derrmsg,
                                                const char *file, const char *dfile, int line,
                                                void *memcpy_fn, void *dmemcpy_fn) {
  (void)dd, (void)dasync, (void)derrmsg, (void)dfile, (void)dmemcpy_fn;
  int t = d->type;
  if ((t >= 25 && t <= 38) || t == T_DERIVED) stops("an ALLOCATE", file, line);
  return _FortranAAllocatableAllocate(d, async, has_stat, errmsg, file, line, memcpy_fn);
}
void __enzyme_cc_fortran_AllocatableAllocate_rev(Desc *d, Desc *dd, int64_t *async,
                                                 int64_t *dasync, _Bool has_stat,
                                                 const Desc *errmsg, const Desc *derrmsg,
                                                 const char *file, const char *dfile, int line,
                                                 void *memcpy_fn, void *dmemcpy_fn) {
  (void)d, (void)dd, (void)async, (void)dasync, (void)has_stat, (void)errmsg, (void)derrmsg,
      (void)file, (void)dfile, (void)line, (void)memcpy_fn, (void)dmemcpy_fn;
}

__attribute__((noinline)) int __enzyme_cc_fortran_AllocatableDeallocate_other(
    Desc *d, _Bool has_stat, const Desc *errmsg, const char *file, int line) {
  return _FortranAAllocatableDeallocate(d, has_stat, errmsg, file, line);
}
int __enzyme_cc_fortran_AllocatableDeallocate_fwd(Desc *d, Desc *dd, _Bool has_stat,
                                                  const Desc *errmsg, const Desc *derrmsg,
                                                  const char *file, const char *dfile,
                                                  int line) {
  (void)d, (void)dd, (void)has_stat, (void)errmsg, (void)derrmsg, (void)dfile;
  stops("a DEALLOCATE", file, line);
  return 0;
}
int __enzyme_cc_fortran_AllocatableDeallocate_rev(Desc *d, Desc *dd, _Bool has_stat,
                                                  const Desc *errmsg, const Desc *derrmsg,
                                                  const char *file, const char *dfile,
                                                  int line) {
  (void)d, (void)dd, (void)has_stat, (void)errmsg, (void)derrmsg, (void)file, (void)dfile,
      (void)line;
  return 0;
}

int32_t _FortranAMoveAlloc(Desc *to, Desc *from, const void *derived, _Bool has_stat,
                           const Desc *errmsg, const char *file, int line);
__attribute__((noinline)) int32_t __enzyme_cc_fortran_MoveAlloc_other(
    Desc *to, Desc *from, const void *derived, _Bool has_stat, const Desc *errmsg,
    const char *file, int line) {
  return _FortranAMoveAlloc(to, from, derived, has_stat, errmsg, file, line);
}
int32_t __enzyme_cc_fortran_MoveAlloc_fwd(Desc *to, Desc *dto, Desc *from, Desc *dfrom,
                                          const void *derived, const void *dderived,
                                          _Bool has_stat, const Desc *errmsg,
                                          const Desc *derrmsg, const char *file,
                                          const char *dfile, int line) {
  (void)to, (void)dto, (void)from, (void)dfrom, (void)derived, (void)dderived, (void)has_stat,
      (void)errmsg, (void)derrmsg, (void)dfile;
  stops("a MOVE_ALLOC", file, line);
  return 0;
}
int32_t __enzyme_cc_fortran_MoveAlloc_rev(Desc *to, Desc *dto, Desc *from, Desc *dfrom,
                                          const void *derived, const void *dderived,
                                          _Bool has_stat, const Desc *errmsg,
                                          const Desc *derrmsg, const char *file,
                                          const char *dfile, int line) {
  (void)to, (void)dto, (void)from, (void)dfrom, (void)derived, (void)dderived, (void)has_stat,
      (void)errmsg, (void)derrmsg, (void)file, (void)dfile, (void)line;
  return 0;
}

int _FortranAPointerAllocate(Desc *d, _Bool has_stat, const Desc *errmsg, const char *file,
                             int line, void *memcpy_fn);
__attribute__((noinline)) int __enzyme_cc_fortran_PointerAllocate_other(
    Desc *d, _Bool has_stat, const Desc *errmsg, const char *file, int line, void *memcpy_fn) {
  return _FortranAPointerAllocate(d, has_stat, errmsg, file, line, memcpy_fn);
}
int __enzyme_cc_fortran_PointerAllocate_fwd(Desc *d, Desc *dd, _Bool has_stat,
                                            const Desc *errmsg, const Desc *derrmsg,
                                            const char *file, const char *dfile, int line,
                                            void *memcpy_fn, void *dmemcpy_fn) {
  (void)dd, (void)derrmsg, (void)dfile, (void)dmemcpy_fn;
  int t = d->type;
  if ((t >= 25 && t <= 38) || t == T_DERIVED) stops("an ALLOCATE", file, line);
  return _FortranAPointerAllocate(d, has_stat, errmsg, file, line, memcpy_fn);
}
int __enzyme_cc_fortran_PointerAllocate_rev(Desc *d, Desc *dd, _Bool has_stat,
                                            const Desc *errmsg, const Desc *derrmsg,
                                            const char *file, const char *dfile, int line,
                                            void *memcpy_fn, void *dmemcpy_fn) {
  (void)d, (void)dd, (void)has_stat, (void)errmsg, (void)derrmsg, (void)file, (void)dfile,
      (void)line, (void)memcpy_fn, (void)dmemcpy_fn;
  return 0;
}

int _FortranAPointerDeallocate(Desc *d, _Bool has_stat, const Desc *errmsg, const char *file,
                               int line);
__attribute__((noinline)) int __enzyme_cc_fortran_PointerDeallocate_other(
    Desc *d, _Bool has_stat, const Desc *errmsg, const char *file, int line) {
  return _FortranAPointerDeallocate(d, has_stat, errmsg, file, line);
}
int __enzyme_cc_fortran_PointerDeallocate_fwd(Desc *d, Desc *dd, _Bool has_stat,
                                              const Desc *errmsg, const Desc *derrmsg,
                                              const char *file, const char *dfile, int line) {
  (void)d, (void)dd, (void)has_stat, (void)errmsg, (void)derrmsg, (void)dfile;
  stops("a DEALLOCATE", file, line);
  return 0;
}
int __enzyme_cc_fortran_PointerDeallocate_rev(Desc *d, Desc *dd, _Bool has_stat,
                                              const Desc *errmsg, const Desc *derrmsg,
                                              const char *file, const char *dfile, int line) {
  (void)d, (void)dd, (void)has_stat, (void)errmsg, (void)derrmsg, (void)file, (void)dfile,
      (void)line;
  return 0;
}

/* ALLOCATE(..., SOURCE=) */
#define ALLOCATE_SOURCE(entry)                                                                \
  int _FortranA##entry(Desc *d, const Desc *src, _Bool has_stat, const Desc *errmsg,          \
                       const char *file, int line);                                           \
  __attribute__((noinline)) int __enzyme_cc_fortran_##entry##_other(                          \
      Desc *d, const Desc *src, _Bool has_stat, const Desc *errmsg, const char *file,        \
      int line) {                                                                             \
    return _FortranA##entry(d, src, has_stat, errmsg, file, line);                            \
  }                                                                                           \
  int __enzyme_cc_fortran_##entry##_fwd(Desc *d, Desc *dd, const Desc *src, const Desc *dsrc, \
                                        _Bool has_stat, const Desc *errmsg,                   \
                                        const Desc *derrmsg, const char *file,                \
                                        const char *dfile, int line) {                        \
    (void)dd, (void)dsrc, (void)derrmsg, (void)dfile;                                         \
    int t = d->type;                                                                          \
    if ((t >= 25 && t <= 38) || t == T_DERIVED) stops("an ALLOCATE with SOURCE=", file, line);\
    return _FortranA##entry(d, src, has_stat, errmsg, file, line);                            \
  }                                                                                           \
  int __enzyme_cc_fortran_##entry##_rev(Desc *d, Desc *dd, const Desc *src, const Desc *dsrc, \
                                        _Bool has_stat, const Desc *errmsg,                   \
                                        const Desc *derrmsg, const char *file,                \
                                        const char *dfile, int line) {                        \
    (void)d, (void)dd, (void)src, (void)dsrc, (void)has_stat, (void)errmsg, (void)derrmsg,    \
        (void)file, (void)dfile, (void)line;                                                  \
    return 0;                                                                                 \
  }
ALLOCATE_SOURCE(AllocatableAllocateSource)
ALLOCATE_SOURCE(PointerAllocateSource)

REGISTER(Destroy)
REGISTER(DestroyWithoutFinalization)
REGISTER(AllocatableAllocate)
REGISTER(AllocatableDeallocate)
REGISTER(MoveAlloc)
REGISTER(PointerAllocate)
REGISTER(PointerDeallocate)
REGISTER(AllocatableAllocateSource)
REGISTER(PointerAllocateSource)
