/* bsearch with a body, linked into a module that calls the C library's (rules/c_search.py):
   glibc's <stdlib.h> defines it inline only when not optimizing for size, so at -Os/-Oz the
   call had no code to differentiate. Linked as an available_externally body, as glibc's: the
   derivative and the inliner use it, other calls still go to the C library. */
#include <stddef.h>

typedef int (*ecc_search_cmp)(const void *, const void *);

void *bsearch(const void *key, const void *base, size_t n, size_t size, ecc_search_cmp cmp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const void *at = (const char *)base + mid * size;
    int c = cmp(key, at);
    if (c == 0)
      return (void *)at;
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}
