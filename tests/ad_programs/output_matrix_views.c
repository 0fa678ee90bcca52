/* A library routine in the style of GSL's gsl_linalg_LU_invert writing its result into a
   matrix the caller has just allocated and not written: it copies its input into the output
   row by row through row views (small records returned by value that hold a pointer read
   from the matrix record), then updates the output in place through views again. The
   output's record gets its shadow only because a callee, two calls down, stores a pointer
   read from it into a view it writes active data through; refused before ("a pointer to
   double data without a shadow ... read from the memory of argument 2 of 'row_view'").
   The gradient of a weighted sum of the result, against central differences; forward mode
   against reverse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { size_t rows, cols, stride; double *data; } matrix;
typedef struct { size_t size, stride; double *data; } vector;
typedef struct { vector v; } vector_view;

__attribute__((noinline)) matrix *matrix_alloc(size_t rows, size_t cols) {
  matrix *m = malloc(sizeof *m);
  if (m == NULL) return NULL;
  m->data = malloc(rows * cols * sizeof(double));
  if (m->data == NULL) {
    free(m);
    return NULL;
  }
  m->rows = rows;
  m->cols = cols;
  m->stride = cols;
  return m;
}
__attribute__((noinline)) void matrix_free(matrix *m) {
  free(m->data);
  free(m);
}
__attribute__((noinline)) vector_view row_view(matrix *m, size_t i) {
  vector_view r = {{m->cols, 1, m->data + i * m->stride}};
  return r;
}
__attribute__((noinline)) void vector_copy(vector *dst, const vector *src) {
  for (size_t k = 0; k < src->size; k++) dst->data[k * dst->stride] = src->data[k * src->stride];
}
__attribute__((noinline)) void matrix_copy(matrix *dst, const matrix *src) {
  for (size_t i = 0; i < src->rows; i++) {
    vector_view s = row_view((matrix *)src, i), d = row_view(dst, i);
    vector_copy(&d.v, &s.v);
  }
}
/* in place: each row scaled by its diagonal entry, then made cumulative */
__attribute__((noinline)) static void transform_rows(matrix *m) {
  for (size_t i = 0; i < m->rows; i++) {
    vector_view r = row_view(m, i);
    double d = r.v.data[i * r.v.stride];
    for (size_t k = 1; k < r.v.size; k++) r.v.data[k] += r.v.data[k - 1] * d;
  }
}
__attribute__((noinline)) void transform(const matrix *a, matrix *out) {
  matrix_copy(out, a);
  transform_rows(out);
}

double loss(const double *data, const double *p) {
  enum { N = 4 };
  matrix *a = matrix_alloc(N, N), *b = matrix_alloc(N, N);
  for (size_t i = 0; i < N * N; i++) a->data[i] = p[i % 3] * data[i % 5] + 0.1 * (double)i;
  transform(a, b);                      /* b: allocated, not yet written */
  double r = 0;
  for (size_t i = 0; i < N * N; i++) r += (double)(i + 1) * b->data[i];
  matrix_free(a);
  matrix_free(b);
  return r;
}

int main(void) {
  double data[5] = {1.5, 0.4, -0.7, 0.9, 1.2}, p[3] = {0.8, -0.3, 1.1}, dp[3] = {0};
  __enzyme_autodiff((void *)loss, enzyme_const, data, enzyme_dup, p, dp);
  for (int i = 0; i < 3; i++) {
    double h = 1e-6, s = p[i];
    p[i] = s + h;
    double a = loss(data, p);
    p[i] = s - h;
    double b = loss(data, p);
    p[i] = s;
    char name[32];
    snprintf(name, sizeof name, "dloss/dp%d", i);
    check(name, dp[i], (a - b) / (2 * h));
  }
  double dir[3] = {0.3, -1.1, 0.7};
  double tangent = __enzyme_fwddiff((void *)loss, enzyme_const, data, enzyme_dup, p, dir);
  check("forward_vs_reverse", tangent, dp[0] * dir[0] + dp[1] * dir[1] + dp[2] * dir[2]);
  return failed;
}
