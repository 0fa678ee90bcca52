/* Rust's default global allocator (std's System allocator on Unix, behind the `__rdl_*` entry
   points that the allocator shim `__rust_alloc` & co. call), written for enzyme-cc from the
   documented contract of GlobalAlloc and glibc's functions: blocks come from malloc, calloc,
   realloc and posix_memalign, so AD reads them as allocations it knows (shadow blocks beside
   them, realloc's moving the adjoints). std defines these functions in one large object; with
   ours the link step need not differentiate or compile all of std for them
   (rules/rust_alloc.py). Blocks are freed with free(), as std's own: either side may free a
   block the other allocated. */
#include <stdlib.h>
#include <string.h>

/* malloc's alignment guarantee on x86-64 glibc */
#define MALLOC_ALIGN 16

static int plain(size_t size, size_t align) { return align <= MALLOC_ALIGN && align <= size; }

static void *aligned(size_t size, size_t align) {
  void *p = NULL;
  if (align < sizeof(void *))
    align = sizeof(void *);            /* posix_memalign's smallest alignment */
  return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

void *__enzyme_cc_rust_rdl_alloc(size_t size, size_t align) {
  return plain(size, align) ? malloc(size) : aligned(size, align);
}

void *__enzyme_cc_rust_rdl_alloc_zeroed(size_t size, size_t align) {
  if (plain(size, align))
    return calloc(size, 1);
  void *p = aligned(size, align);
  if (p)
    memset(p, 0, size);
  return p;
}

void __enzyme_cc_rust_rdl_dealloc(void *p, size_t size, size_t align) {
  (void)size;
  (void)align;
  free(p);
}

void *__enzyme_cc_rust_rdl_realloc(void *p, size_t old_size, size_t align, size_t new_size) {
  if (plain(new_size, align))
    return realloc(p, new_size);
  void *q = aligned(new_size, align);  /* over-aligned: a new block, the bytes that fit, free */
  if (q) {
    memcpy(q, p, old_size < new_size ? old_size : new_size);
    free(p);
  }
  return q;
}
