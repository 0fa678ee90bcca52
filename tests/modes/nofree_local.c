/* enzyme_nofree on a function whose local array keeps a shadow after optimization (handed to a
   non-inlined callee): the tape is reversed twice, and the second reverse must find the local's
   shadow as the forward sweep made it (the first reverse used to free it: a read after free). */
#include <stdio.h>
int enzyme_dup, enzyme_const, enzyme_nofree;
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);

__attribute__((noinline)) static void sq(double *t, int n) {
  for (int i = 0; i < n; i++) t[i] = t[i] * t[i] + 1;
}
static void f(const double *x, double *y, int n) {
  double t[3];
  for (int i = 0; i < 3; i++) t[i] = x[i];
  sq(t, n);
  y[0] = t[0] * t[1] + t[2];
}

int main(void) {
  double x[3] = {0.5, 1.5, -2}, y, dy = 1, dx[3] = {0};
  void *tape = __enzyme_augmentfwd((void *)f, enzyme_dup, x, dx, enzyme_dup, &y, &dy,
                                   enzyme_const, 3);
  __enzyme_reverse((void *)f, enzyme_dup, x, dx, enzyme_dup, &y, &dy, enzyme_const, 3,
                   enzyme_nofree, tape);
  /* y = (x0^2+1)(x1^2+1) + x2^2+1 */
  double g0 = 2 * 0.5 * (1.5 * 1.5 + 1), g1 = 2 * 1.5 * (0.25 + 1), g2 = 2 * -2.0;
  printf("first reverse dx: %.15g %.15g %.15g | %.15g %.15g %.15g\n", dx[0], dx[1], dx[2], g0,
         g1, g2);
  dy = 0.5;                            /* a second reverse of the same tape, another seed */
  __enzyme_reverse((void *)f, enzyme_dup, x, dx, enzyme_dup, &y, &dy, enzyme_const, 3, tape);
  printf("second reverse dx: %.15g %.15g %.15g | %.15g %.15g %.15g\n", dx[0], dx[1], dx[2],
         1.5 * g0, 1.5 * g1, 1.5 * g2);
  printf("primal y: %.15g | %.15g\n", y, (0.25 + 1) * (1.5 * 1.5 + 1) + 4 + 1);
  return 0;
}
