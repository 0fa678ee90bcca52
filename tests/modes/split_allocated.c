/* Split mode with a caller-allocated tape (__enzyme_augmentsize, enzyme_allocated, enzyme_tape)
   and enzyme_nofree (the tape survives the reverse, which can then run again). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
size_t __enzyme_augmentsize(void*, ...);
void __enzyme_augmentfwd(void*, ...);
void *__enzyme_augmentfwd_p(void*, ...) __asm__("__enzyme_augmentfwd");
void __enzyme_reverse(void*, ...);
void __enzyme_autodiff(void*, ...);
int enzyme_dup, enzyme_const, enzyme_tape, enzyme_allocated, enzyme_nofree;

void square(double *x, double *y) { *y = *x * *x; }

/* a loop: the tape holds one value per iteration */
void chain(const double *x, double *y, int n) {
  double v = *x;
  for (int i = 0; i < n; i++) v = v * 1.2 + sin(v) * 0.3;
  *y = v;
}

int main(void) {
  double x = 3.0, dx = 0.0, y, dy = 1.0;
  size_t size = __enzyme_augmentsize((void*)square, enzyme_dup, enzyme_dup);
  void *tape = malloc(size);
  __enzyme_augmentfwd((void*)square, enzyme_allocated, size, enzyme_tape, tape, &x, &dx, &y, &dy);
  printf("square primal: %f | 9\n", y);
  __enzyme_reverse((void*)square, enzyme_allocated, size, enzyme_tape, tape, &x, &dx, &y, &dy);
  printf("square dx: %f | 6\n", dx);
  free(tape);

  /* the reference: combined mode */
  double c = 0.7, dc = 0, cy, dcy = 1;
  __enzyme_autodiff((void*)chain, &c, &dc, &cy, &dcy, enzyme_const, 6);

  size_t csize = __enzyme_augmentsize((void*)chain, enzyme_dup, enzyme_dup, enzyme_const);
  char buf[64];
  if (csize > sizeof buf) { printf("tape size %zu too big\n", csize); return 1; }
  double s = 0.7, ds = 0, sy, dsy = 1;
  __enzyme_augmentfwd((void*)chain, enzyme_allocated, csize, enzyme_tape, buf, &s, &ds, &sy, &dsy,
                      enzyme_const, 6);
  printf("chain primal: %.12g | %.12g\n", sy, cy);
  /* reverse twice from the same tape: enzyme_nofree keeps it; then once more, freeing it */
  __enzyme_reverse((void*)chain, enzyme_allocated, csize, enzyme_tape, buf, enzyme_nofree,
                   &s, &ds, &sy, &dsy, enzyme_const, 6);
  printf("chain ds: %.12g | %.12g\n", ds, dc);
  ds = 0; dsy = 1;
  __enzyme_reverse((void*)chain, enzyme_allocated, csize, enzyme_tape, buf, &s, &ds, &sy, &dsy,
                   enzyme_const, 6);
  printf("chain ds again: %.12g | %.12g\n", ds, dc);

  /* default (Enzyme-allocated) tape, reversed with enzyme_nofree then freed by a second reverse */
  double t = 0.7, dt = 0, ty, dty = 1;
  void *tp = __enzyme_augmentfwd_p((void*)chain, &t, &dt, &ty, &dty, enzyme_const, 6);
  __enzyme_reverse((void*)chain, &t, &dt, &ty, &dty, enzyme_const, 6, enzyme_nofree, enzyme_tape, tp);
  printf("chain dt: %.12g | %.12g\n", dt, dc);
  dt = 0; dty = 1;
  __enzyme_reverse((void*)chain, &t, &dt, &ty, &dty, enzyme_const, 6, enzyme_tape, tp);
  printf("chain dt again: %.12g | %.12g\n", dt, dc);
  return 0;
}
