#include <stdio.h>
#include <stdlib.h>
void __enzyme_augmentfwd(void*, ...);
void __enzyme_reverse(void*, ...);
size_t __enzyme_augmentsize(void*, ...);
int enzyme_dup, enzyme_const, enzyme_tape, enzyme_allocated, enzyme_nofree;

/* a heap temporary: the reverse frees it (and its shadow), so after an enzyme_nofree reverse
   the tape is spent: a second reverse stops with an error instead of reading freed memory */
void heap(const double *x, double *y, int n) {
  double *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * x[i];
  free(t);
  *y = s;
}

int main(int argc, char **argv) {
  double x[3] = {1, 2, 3}, dx[3] = {0}, y, dy = 1;
  size_t size = __enzyme_augmentsize((void*)heap, enzyme_dup, enzyme_dup, enzyme_const);
  void *tape = malloc(size);
  __enzyme_augmentfwd((void*)heap, enzyme_allocated, size, enzyme_tape, tape, x, dx, &y, &dy,
                      enzyme_const, 3);
  __enzyme_reverse((void*)heap, enzyme_allocated, size, enzyme_tape, tape, enzyme_nofree,
                   x, dx, &y, &dy, enzyme_const, 3);
  printf("heap dx (nofree reverse): %g %g %g | 3 12 27\n", dx[0], dx[1], dx[2]);
  if (argc > 1) {                                    /* a second reverse: a clear error */
    dy = 1;
    __enzyme_reverse((void*)heap, enzyme_allocated, size, enzyme_tape, tape, x, dx, &y, &dy,
                     enzyme_const, 3);
    printf("second reverse ran\n");
  }
  free(tape);
  return !(dx[0] == 3 && dx[1] == 12 && dx[2] == 27);
}
