#include <stdio.h>
#include <stdlib.h>
#include <math.h>
static int live;
void *pool_alloc(int tag, size_t n) { live++; return malloc(n); }
void pool_free(void *p) { live--; free(p); }
void* __enzyme_allocation_like[4] = {(void*)pool_alloc, (void*)1, (void*)"", (void*)pool_free};
double __enzyme_autodiff(void*, ...);
double f(const double *x, int n) { double *t = pool_alloc(7, n * sizeof(double)); for (int i = 0; i < n; i++) t[i] = sin(x[i]); double s = 0; for (int i = 0; i < n; i++) s += t[i] * x[i]; pool_free(t); return s; }
int enzyme_const;
int main() { double x[3] = {0.1, 0.7, 1.3}, dx[3] = {0}; __enzyme_autodiff((void*)f, x, dx, enzyme_const, 3);
  for (int i = 0; i < 3; i++) printf("%f | %f\n", dx[i], cos(x[i]) * x[i] + sin(x[i])); printf("live %d | 0\n", live); }
