/* A library's lookup of precomputed coefficients (GSL's Gauss-Legendre tables in
   gsl_integration_glfixed_table_alloc): a pointer to an entry of a static table of records
   whose fields point to static weight arrays for the sizes it has, a table computed into
   malloc'd memory for the others; the caller weights its active values with them. The
   returned pointer joins the heap block and the address of a table entry, a constant
   expression in a phi: it needs the shadow of that entry (the same expression over the
   table's shadow; refused before: "no shadow for 'getelementptr (..., @tables, i64 16)'").
   Both sides are run. Reverse mode against central finite differences, forward mode against
   reverse. */
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
#define N 5

typedef struct { int n; double *w; double *nodes; } rule;
static double w2[2] = {1.0, 1.0}, x2[2] = {-0.5773502691896257, 0.5773502691896257};
static double w3[3] = {0.5555555555555556, 0.8888888888888888, 0.5555555555555556};
static double x3[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};
static rule tables[2] = {{2, w2, x2}, {3, w3, x3}};

__attribute__((noinline)) static rule *rule_alloc(int n) {
  for (int i = 0; i < 2; i++)
    if (tables[i].n == n) return &tables[i];
  rule *r = malloc(sizeof *r);                      /* midpoint rule for the other sizes */
  r->n = n;
  r->w = malloc(n * sizeof(double));
  r->nodes = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    r->w[i] = 2.0 / n;
    r->nodes[i] = -1.0 + (2.0 * i + 1.0) / n;
  }
  return r;
}

static void rule_free(rule *r) {
  if (r >= tables && r < tables + 2) return;
  free(r->w);
  free(r->nodes);
  free(r);
}

static int points = 3;

/* integral over [-1, 1] of sum_k p[k] exp(p[k] t) sin(t + k), by the rule of `points` nodes */
static double f(const double *p) {
  rule *r = rule_alloc(points);
  double s = 0;
  for (int i = 0; i < r->n; i++)
    for (int k = 0; k < N; k++) s += r->w[i] * p[k] * exp(p[k] * r->nodes[i]) * sin(r->nodes[i] + k);
  rule_free(r);
  return s;
}

static void run(const char *side) {
  double p[N] = {0.3, -0.7, 1.1, 0.2, -0.4}, dp[N] = {0}, t[N], dot = 0, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, p, dp);
  for (int i = 0; i < N; i++) {
    double keep = p[i];
    p[i] = keep + h;
    double up = f(p);
    p[i] = keep - h;
    double down = f(p);
    p[i] = keep;
    char name[32];
    snprintf(name, sizeof name, "%s_dp[%d]", side, i);
    check(name, dp[i], (up - down) / (2 * h));
    t[i] = cos(1.0 + i);
    dot += t[i] * dp[i];
  }
  char name[32];
  snprintf(name, sizeof name, "%s_fwd", side);
  check(name, __enzyme_fwddiff((void *)f, enzyme_dup, p, t), dot);
}

int main(void) {
  run("table");
  points = 4;
  run("heap");
  return failed != 0;
}
