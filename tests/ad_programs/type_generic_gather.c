// A type-generic gather-scatter kernel (Nek5000's jl gs_gather): one function for every data
// type, switching on a type tag. The gradient's calls pass doubles, so the integer arm never
// runs there; the program also uses the kernel on integers, outside the derivative. (jl's
// gs_gather narrows indices with a 32-bit mask: no float's field, so no bit trick.)
#include <stdio.h>
#include <math.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
typedef enum { GS_DOUBLE, GS_FLOAT, GS_INT, GS_LONG } gs_dom;
__attribute__((noinline)) void gs_gather(void *out, const void *in, const int *map, int n,
                                         gs_dom dom) {
  switch (dom) {
  case GS_DOUBLE:
    for (int i = 0; i < n; i++) ((double *)out)[map[i]] += ((const double *)in)[i];
    break;
  case GS_FLOAT:
    for (int i = 0; i < n; i++) ((float *)out)[map[i]] += ((const float *)in)[i];
    break;
  case GS_INT:
    for (int i = 0; i < n; i++) ((int *)out)[map[i]] += ((const int *)in)[i];
    break;
  case GS_LONG:      /* (the low 32 bits: a mask of 2^32 - 1, an integer narrowing) */
    for (int i = 0; i < n; i++) ((long *)out)[map[i]] += (unsigned)((const long *)in)[i];
    break;
  }
}
static const int map[6] = {0, 1, 1, 2, 0, 2};
double energy(const double *u) {
  double local[6], node[3] = {0, 0, 0};
  for (int i = 0; i < 6; i++) local[i] = u[i] * u[i];
  gs_gather(node, local, map, 6, GS_DOUBLE);
  return node[0] * node[1] + sin(node[2]);
}
int main(void) {
  int counts[3] = {0, 0, 0}, ones[6] = {1, 1, 1, 1, 1, 1};
  gs_gather(counts, ones, map, 6, GS_INT);
  double u[6] = {0.3, -0.5, 0.8, 1.1, -0.2, 0.6}, du[6] = {0}, h = 1e-6;
  __enzyme_autodiff((void *)energy, enzyme_dup, u, du);
  for (int i = 0; i < 6; i++) {
    double t[6] = {0}, s = u[i];
    t[i] = 1;
    u[i] = s + h; double fp = energy(u);
    u[i] = s - h; double fm = energy(u);
    u[i] = s;
    double fwd = __enzyme_fwddiff((void *)energy, enzyme_dup, u, t);
    printf("CHECK rev_%d %.9g %.9g\n", i, du[i], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, (fp - fm) / (2 * h));
  }
  printf("CHECK counts %d 2\n", counts[0] + counts[1] + counts[2] - 4);
  return 0;
}
