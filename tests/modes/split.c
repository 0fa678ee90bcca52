#include <stdio.h>
#include <math.h>
#include <stdlib.h>
void* __enzyme_augmentfwd(void*, ...);
typedef struct { void* tape; double primal; } Aug;
Aug __enzyme_augmentfwd2(void*, ...) __asm__("__enzyme_augmentfwd");
double __enzyme_reverse(void*, ...);
double __enzyme_autodiff(void*, ...);
int enzyme_const, enzyme_dup, enzyme_tape, enzyme_nocache;
/* two active floats: the reverse returns their adjoints as a struct */
typedef struct { double dx, dy; } Pair;
Pair __enzyme_reverse_pair(void*, ...) __asm__("__enzyme_reverse");
double h(double x, double y) { return x * x * y; }
double f(const double *x, int n) { double s = 0; for (int i=0;i<n;i++) s += sin(x[i]) * x[i]; return s; }
void g(double *x, int n) { for (int i=0;i<n;i++) x[i] = x[i]*x[i]; }
int main() {
  double x[3] = {0.3, 0.5, 0.7}, dx[3] = {0}, dx2[3] = {0};
  Aug a = __enzyme_augmentfwd2((void*)f, x, dx, enzyme_const, 3);
  printf("primal %f\n", a.primal);
  __enzyme_reverse((void*)f, x, dx, enzyme_const, 3, 1.0, a.tape);
  __enzyme_autodiff((void*)f, x, dx2, enzyme_const, 3);
  for (int i=0;i<3;i++) printf("%f | %f\n", dx[i], dx2[i]);
  double y[2] = {1.5, 2.0}, dy[2] = {1, 1};
  void *t = __enzyme_augmentfwd((void*)g, y, dy, enzyme_const, 2);
  printf("y %f %f\n", y[0], y[1]);
  __enzyme_reverse((void*)g, y, dy, enzyme_const, 2, enzyme_tape, t);
  printf("%f %f | 3 4\n", dy[0], dy[1]);
  /* enzyme_nocache (Enzyme: the argument is unchanged between the two halves, no need to
     cache it) before a duplicated and a constant argument: a hint, the same derivative */
  double z[3] = {0.3, 0.5, 0.7}, dz[3] = {0};
  Aug az = __enzyme_augmentfwd2((void*)f, enzyme_nocache, z, dz, enzyme_nocache, enzyme_const, 3);
  __enzyme_reverse((void*)f, enzyme_nocache, z, dz, enzyme_nocache, enzyme_const, 3, 1.0, az.tape);
  for (int i=0;i<3;i++) printf("nocache %f | %f\n", dz[i], sin(z[i]) + z[i] * cos(z[i]));
  void *th = __enzyme_augmentfwd((void*)h, 3.0, 2.0);
  Pair p = __enzyme_reverse_pair((void*)h, 3.0, 2.0, 1.0, th);
  printf("%f %f | 12 9\n", p.dx, p.dy);
}
