/* A file-scope pointer to a heap array of records that hold pointers (miniAMR's `blocks`): the
   program builds the shadow tree itself and stores it as the global's shadow,
   `*(blk **)__enzyme_shadow(&blocks, 1, 0) = dblocks`. The derivative's entry replaced it with a
   zeroed block of the same size, whose records' pointers are null: a crash in the derivative.
   The program's own shadow is now kept; one it did not set is still made (zeroed) at each
   entry. Reverse mode, twice (the second after a new tree), against the analytic gradient;
   forward mode with the tree holding a direction, against the gradient along it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_shadow(void *, int, int);

typedef struct { int n; double *a; } blk;
blk *blocks;
int nblocks = 3, len = 4;

__attribute__((noinline)) double energy(void) {
  double s = 0;
  for (int b = 0; b < nblocks; b++)
    for (int i = 0; i < blocks[b].n; i++) s += blocks[b].a[i] * blocks[b].a[i] * (b + 1);
  return s;
}

static blk *shadow_tree(void) {
  blk *d = malloc(nblocks * sizeof(blk));
  for (int b = 0; b < nblocks; b++) d[b] = (blk){len, calloc(len, sizeof(double))};
  return d;
}

int main(void) {
  blocks = malloc(nblocks * sizeof(blk));
  for (int b = 0; b < nblocks; b++) {
    blocks[b] = (blk){len, malloc(len * sizeof(double))};
    for (int i = 0; i < len; i++) blocks[b].a[i] = 0.5 * b + 0.25 * i + 1;
  }
  for (int round = 0; round < 2; round++) {
    blk *d = shadow_tree();
    *(blk **)__enzyme_shadow(&blocks, 1, 0) = d;
    __enzyme_autodiff((void *)energy);
    char name[48];
    for (int b = 0; b < nblocks; b++)
      for (int i = 0; i < len; i++) {
        snprintf(name, sizeof name, "round%d_da[%d][%d]", round, b, i);
        check(name, d[b].a[i], 2.0 * blocks[b].a[i] * (b + 1));
      }
  }
  blk *t = shadow_tree();
  double along = 0;
  for (int b = 0; b < nblocks; b++)
    for (int i = 0; i < len; i++) {
      t[b].a[i] = 1.0 / (1 + b + i);
      along += 2.0 * blocks[b].a[i] * (b + 1) * t[b].a[i];
    }
  *(blk **)__enzyme_shadow(&blocks, 1, 0) = t;
  check("fwd_along", __enzyme_fwddiff((void *)energy), along);
  return failed != 0;
}
