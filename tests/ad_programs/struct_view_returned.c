/* A library's vector type and its views (GSL's gsl_vector and gsl_vector_subvector, used by
   gsl_linalg_SV_decomp's Householder steps): a work vector allocated inside the differentiated
   function (a header struct and a data block), a view of it returned by value (the data pointer
   read from the vector and stored into the returned struct), and a callee writing active values
   through the view. The vector's data pointer needs a shadow because the view it went into is
   written with active data (refused before: "a pointer to double data without a shadow is
   stored into memory that has one"). A view of an input passed as constant is only read: it
   needs no shadow of that input. Reverse mode against central finite differences, forward mode
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
#define N 4

typedef struct { size_t size, stride; double *data; void *block; int owner; } vec;
typedef struct { vec vector; } vec_view;

__attribute__((noinline)) static vec *vec_alloc(size_t n) {
  vec *v = malloc(sizeof *v);
  v->data = calloc(n, sizeof(double));
  v->size = n;
  v->stride = 1;
  v->block = 0;
  v->owner = 1;
  return v;
}
__attribute__((noinline)) static void vec_free(vec *v) {
  free(v->data);
  free(v);
}
__attribute__((noinline)) static vec_view subvector(const vec *v, size_t off, size_t n) {
  vec_view r = {{0, 0, 0, 0, 0}};
  r.vector.data = v->data + off * v->stride;
  r.vector.size = n;
  r.vector.stride = v->stride;
  r.vector.block = v->block;
  return r;
}
/* work = tau * x, then x -= work .* x (a Householder-like update through the view) */
__attribute__((noinline)) static void apply(double tau, vec *x, vec *work) {
  for (size_t i = 0; i < work->size; i++) work->data[i * work->stride] = tau * x->data[i * x->stride];
  for (size_t i = 0; i < work->size; i++)
    x->data[i * x->stride] -= work->data[i * work->stride] * x->data[i * x->stride];
}
/* sum of w's entries read through a view of w (a constant input) */
__attribute__((noinline)) static double weight_sum(const vec *w, size_t n) {
  vec_view v = subvector(w, 1, n);
  double s = 0;
  for (size_t i = 0; i < v.vector.size; i++) s += v.vector.data[i] * (1.0 + i);
  return s;
}

static double weights[N + 1] = {0.5, 1.0, -0.25, 2.0, 0.75};

static double f(const double *p) {
  vec *tmp = vec_alloc(N);
  double xs[N];
  for (int i = 0; i < N; i++) xs[i] = p[N + i];
  vec xv = {N, 1, xs, 0, 0};
  for (size_t j = 0; j < 3; j++) {
    vec_view w = subvector(tmp, 0, N - j);
    apply(sin(p[j]), &xv, &w.vector);
  }
  vec wv = {N + 1, 1, weights, 0, 0};
  double r = weight_sum(&wv, N) * p[3];
  for (int i = 0; i < N; i++) r += (i + 1) * xs[i] * xs[i];
  vec_free(tmp);
  return r;
}

int main(void) {
  double p[2 * N] = {0.3, -0.2, 0.5, 0.1, 1.0, 2.0, -1.5, 0.7}, dp[2 * N] = {0}, t[2 * N];
  double dot = 0, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
  for (int i = 0; i < 2 * N; i++) {
    double keep = p[i];
    p[i] = keep + h;
    double up = f(p);
    p[i] = keep - h;
    double down = f(p);
    p[i] = keep;
    char name[32];
    snprintf(name, sizeof name, "dp[%d]", i);
    check(name, dp[i], (up - down) / (2 * h));
    t[i] = cos(1.0 + i);
    dot += t[i] * dp[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, p, t), dot);
  return failed != 0;
}
