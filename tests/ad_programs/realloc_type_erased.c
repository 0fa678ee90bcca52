/* A type-erased growable array (`void *data` and an element size, as Rust's RawVec or a C
   library's generic vector): the realloc in `grow` sees no typed access to the block, so the
   type of what it moves is unknown there. Its reverse moves the kept bytes' adjoints back to
   the old block's shadow whatever their type (plain doubles); so does the reverse of a memcpy
   into a fresh block whose source is freed right after it (records of a double, an int and a
   pointer). Reverse mode against central differences, forward against reverse. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
typedef struct { void *data; size_t len, cap, elem; } Vec;
__attribute__((noinline)) static void grow(Vec *v) {
  size_t cap = v->cap ? 2 * v->cap : 1;
  if (v->elem > 8) {        /* by hand: a fresh block, the old one copied and freed */
    void *fresh = malloc(cap * v->elem);
    if (v->len) memcpy(fresh, v->data, v->len * v->elem);
    free(v->data);
    v->data = fresh;
  } else {
    v->data = realloc(v->data, cap * v->elem);
  }
  v->cap = cap;
}
__attribute__((noinline)) static void *slot(Vec *v) {
  if (v->len == v->cap) grow(v);
  return (char *)v->data + v->len++ * v->elem;
}
typedef struct { double w; int k; double *p; } Rec;
double f(const double *x, int n) {
  Vec a = {0, 0, 0, sizeof(double)}, b = {0, 0, 0, sizeof(Rec)};
  for (int i = 0; i < n; i++) {
    *(double *)slot(&a) = x[i] * x[i];
    Rec *r = slot(&b); r->w = sin(x[i]); r->k = i; r->p = (double *)&x[i];
  }
  double s = 0;
  for (int i = 0; i < n; i++) {
    Rec *r = (Rec *)b.data + i;
    s += ((double *)a.data)[i] * (i + 1) + r->w * *r->p * r->k;
  }
  free(a.data); free(b.data);
  return s;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int main(void) {
  double x[7] = {0.3, -0.2, 1.1, 0.7, -1.4, 0.25, 2.0}, dx[7] = {0}, v[7] = {1, 0.5, -1, 2, 0.3, -0.7, 0.1};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 7);
  double jv = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, 7), dot = 0;
  int bad = 0;
  for (int i = 0; i < 7; i++) {
    double h = 1e-6, s = x[i], fp, fm;
    x[i] = s + h; fp = f(x, 7); x[i] = s - h; fm = f(x, 7); x[i] = s;
    double fd = (fp - fm) / (2 * h);
    printf("CHECK dx[%d] %.10g %.10g\n", i, dx[i], fd);
    bad += fabs(dx[i] - fd) > 1e-6 * (1 + fabs(fd));
    dot += v[i] * dx[i];
  }
  printf("CHECK tangent %.10g %.10g\n", jv, dot);
  bad += fabs(jv - dot) > 1e-9 * (1 + fabs(dot));
  return bad;
}
