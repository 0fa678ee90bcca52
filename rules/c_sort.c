/* qsort's derivatives, registered as custom ones (Enzyme's __enzyme_register_gradient and
   __enzyme_register_derivative conventions, enzyme_cc/ad/api/registrations.py): linked into a
   program whose differentiated code calls qsort (rules/c_sort.py).

   A sort moves whole elements: the shadow's elements (adjoints, tangents, shadow pointers)
   move with them. The forward sweep sorts an index array with the program's comparator (a
   stable merge sort, as glibc's qsort is where it can allocate), applies that order to the
   array and to its shadow, and keeps the order as the tape; the reverse sweep moves each
   element's adjoint back to where the element came from. */
#include <stdlib.h>
#include <string.h>

typedef int (*ecc_cmp)(const void *, const void *);
typedef int (*ecc_cmp_r)(const void *, const void *, void *);
void qsort_r(void *, size_t, size_t, ecc_cmp_r, void *);   /* (GNU's, declared without _GNU_SOURCE) */

/* the comparator: qsort's, or qsort_r's with its argument */
typedef struct { ecc_cmp cmp; ecc_cmp_r cmp_r; void *arg; } ecc_order;

static int ecc_compare(const ecc_order *o, const void *a, const void *b) {
  return o->cmp ? o->cmp(a, b) : o->cmp_r(a, b, o->arg);
}

static void ecc_merge_sort(size_t *idx, size_t *tmp, size_t n, const char *base, size_t size,
                           const ecc_order *cmp) {
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi)   /* (ties keep their order: the left run first) */
        tmp[k++] = ecc_compare(cmp, base + idx[b] * size, base + idx[a] * size) < 0 ? idx[b++]
                                                                                   : idx[a++];
      while (a < mid) tmp[k++] = idx[a++];
      while (b < hi) tmp[k++] = idx[b++];
    }
    memcpy(idx, tmp, n * sizeof(size_t));
  }
}

static void *ecc_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) abort();
  return p;
}

/* The order of the sorted elements: idx[k] is the position before the sort of the element
   that ends at position k. */
static size_t *ecc_sorted_order(const void *base, size_t n, size_t size, const ecc_order *cmp) {
  size_t *idx = ecc_alloc(n * sizeof(size_t)), *tmp = ecc_alloc(n * sizeof(size_t));
  for (size_t k = 0; k < n; k++) idx[k] = k;
  ecc_merge_sort(idx, tmp, n, base, size, cmp);
  free(tmp);
  return idx;
}

/* arr[k] = arr[idx[k]] (forward), or arr[idx[k]] = arr[k] (back), for every k. */
static void ecc_permute(void *arr, size_t n, size_t size, const size_t *idx, int back) {
  char *copy = ecc_alloc(n * size), *a = arr;
  memcpy(copy, a, n * size);
  for (size_t k = 0; k < n; k++) {
    if (back) memcpy(a + idx[k] * size, copy + k * size, size);
    else memcpy(a + k * size, copy + idx[k] * size, size);
  }
  free(copy);
}

/* the forward sweep: sorts the array and its shadow alike; the order is the tape */
static void *ecc_sort_aug(void *base, void *dbase, size_t n, size_t size, const ecc_order *o) {
  size_t *idx = ecc_sorted_order(base, n, size, o);
  ecc_permute(base, n, size, idx, 0);
  if (dbase) ecc_permute(dbase, n, size, idx, 0);
  return idx;
}

/* the reverse: each element's adjoint goes back to where the element came from */
static void ecc_sort_rev(void *dbase, size_t n, size_t size, void *tape) {
  if (dbase) ecc_permute(dbase, n, size, tape, 1);
  free(tape);
}

void *__enzyme_cc_qsort_aug(void *base, void *dbase, size_t n, size_t size, ecc_cmp cmp,
                            void *dcmp) {
  ecc_order o = {cmp, 0, 0};
  (void)dcmp;
  return ecc_sort_aug(base, dbase, n, size, &o);
}

void __enzyme_cc_qsort_rev(void *base, void *dbase, size_t n, size_t size, ecc_cmp cmp,
                           void *dcmp, void *tape) {
  (void)base, (void)cmp, (void)dcmp;
  ecc_sort_rev(dbase, n, size, tape);
}

void __enzyme_cc_qsort_fwd(void *base, void *dbase, size_t n, size_t size, ecc_cmp cmp,
                           void *dcmp) {
  free(__enzyme_cc_qsort_aug(base, dbase, n, size, cmp, dcmp));
}

void *__enzyme_cc_qsort_r_aug(void *base, void *dbase, size_t n, size_t size, ecc_cmp_r cmp,
                              void *dcmp, void *arg, void *darg) {
  ecc_order o = {0, cmp, arg};
  (void)dcmp, (void)darg;
  return ecc_sort_aug(base, dbase, n, size, &o);
}

void __enzyme_cc_qsort_r_rev(void *base, void *dbase, size_t n, size_t size, ecc_cmp_r cmp,
                             void *dcmp, void *arg, void *darg, void *tape) {
  (void)base, (void)cmp, (void)dcmp, (void)arg, (void)darg;
  ecc_sort_rev(dbase, n, size, tape);
}

void __enzyme_cc_qsort_r_fwd(void *base, void *dbase, size_t n, size_t size, ecc_cmp_r cmp,
                             void *dcmp, void *arg, void *darg) {
  free(__enzyme_cc_qsort_r_aug(base, dbase, n, size, cmp, dcmp, arg, darg));
}

/* vector forward mode (enzyme_width): the array sorted once, its order returned; then each
   lane's shadow reordered the same way (the caller frees the order) */
void *__enzyme_cc_sort_order(void *base, size_t n, size_t size, ecc_cmp cmp, ecc_cmp_r cmp_r,
                             void *arg) {
  ecc_order o = {cmp, cmp_r, arg};
  return ecc_sort_aug(base, 0, n, size, &o);
}

void __enzyme_cc_sort_apply(void *dbase, size_t n, size_t size, void *order) {
  if (dbase) ecc_permute(dbase, n, size, order, 0);
}

/* (kept through the pre-AD optimization: the derivatives call them after it) */
void *__enzyme_cc_sort_lanes[2] = {(void *)__enzyme_cc_sort_order,
                                   (void *)__enzyme_cc_sort_apply};

void *__enzyme_register_gradient_qsort[3] = {(void *)qsort, (void *)__enzyme_cc_qsort_aug,
                                             (void *)__enzyme_cc_qsort_rev};
void *__enzyme_register_derivative_qsort[2] = {(void *)qsort, (void *)__enzyme_cc_qsort_fwd};
void *__enzyme_register_gradient_qsort_r[3] = {(void *)qsort_r, (void *)__enzyme_cc_qsort_r_aug,
                                               (void *)__enzyme_cc_qsort_r_rev};
void *__enzyme_register_derivative_qsort_r[2] = {(void *)qsort_r,
                                                 (void *)__enzyme_cc_qsort_r_fwd};
