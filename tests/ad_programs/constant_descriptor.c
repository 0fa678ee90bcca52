/* Constant "type descriptors" holding doubles, referenced from records that carry derivatives:
   GSL's robust-fit workspace keeps `w->type = T` (T a `static const` descriptor with its tuning
   constant), and a record may choose its descriptor, `w.type = x > 0 ? &A : &B`. The
   descriptor's address needs a shadow where the record has one: a zeroed scratch (its
   constants carry no derivative). Before, the allocator's store of the descriptor was refused
   ("a pointer to double data without a shadow ... is stored into memory that has one"), and
   the chosen descriptor got a null shadow: the derivative crashed reading through it. GSL
   hands its descriptors out through exported pointers that nothing writes
   (`gsl_multifit_robust_bisquare = &bisquare_type`): read as their initializer's address, whose
   shadow is known (refused before, as the first). Reverse mode against central differences,
   forward mode against reverse. */
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
#define N 3

typedef struct { const char *name; double tune; int order; } Kind;
static const Kind Bisquare = {"bisquare", 4.685, 2}, Huber = {"huber", 1.345, 1};
const Kind *kind_huber = &Huber;      /* a library's exported descriptor */

typedef struct { const Kind *kind; double *r; size_t n; } Work;
/* (external, as a library's are: called with the descriptor's address, not specialized to it) */

__attribute__((noinline)) Work *work_alloc(const Kind *k, size_t n) {
  Work *w = malloc(sizeof *w);
  w->kind = k;
  w->r = calloc(n, sizeof(double));
  w->n = n;
  return w;
}
__attribute__((noinline)) double weigh(const Work *w) {
  double s = 0;
  for (size_t i = 0; i < w->n; i++) {
    double u = w->r[i] / w->kind->tune;
    s += w->kind->order == 2 ? u * u * (1 - u * u / 3) : fabs(u) - 0.5 * u * u;
  }
  return s;
}

/* the workspace allocated with a fixed descriptor */
static double robust(const double *x) {
  Work *w = work_alloc(&Bisquare, N);
  for (int i = 0; i < N; i++) w->r[i] = x[i] * x[(i + 1) % N] - 0.3;
  double s = weigh(w);
  free(w->r);
  free(w);
  return s;
}

/* the workspace allocated with the exported descriptor */
static double exported(const double *x) {
  Work *w = work_alloc(kind_huber, N);
  for (int i = 0; i < N; i++) w->r[i] = x[i] + 0.5 * x[(i + 1) % N];
  double s = weigh(w);
  free(w->r);
  free(w);
  return s;
}

/* a record on the stack choosing its descriptor */
static double chosen(const double *x) {
  double r[N];
  for (int i = 0; i < N; i++) r[i] = sin(x[i]) + 0.2 * x[(i + 2) % N];
  Work w = {x[0] > 0 ? &Bisquare : &Huber, r, N};
  return weigh(&w) + x[1] * w.kind->tune;
}

static void run(const char *name, double (*f)(const double *), double *p) {
  double dp[N] = {0}, t[N], dot = 0, hh = 1e-6;
  if (f == robust) __enzyme_autodiff((void *)robust, enzyme_dup, p, dp);
  else if (f == exported) __enzyme_autodiff((void *)exported, enzyme_dup, p, dp);
  else __enzyme_autodiff((void *)chosen, enzyme_dup, p, dp);
  for (int i = 0; i < N; i++) {
    double keep = p[i];
    p[i] = keep + hh;
    double up = f(p);
    p[i] = keep - hh;
    double down = f(p);
    p[i] = keep;
    char label[40];
    snprintf(label, sizeof label, "%s_dp[%d]", name, i);
    check(label, dp[i], (up - down) / (2 * hh));
    t[i] = cos(1.0 + i);
    dot += t[i] * dp[i];
  }
  char label[40];
  snprintf(label, sizeof label, "%s_fwd", name);
  double tan = f == robust     ? __enzyme_fwddiff((void *)robust, enzyme_dup, p, t)
               : f == exported ? __enzyme_fwddiff((void *)exported, enzyme_dup, p, t)
                               : __enzyme_fwddiff((void *)chosen, enzyme_dup, p, t);
  check(label, tan, dot);
}

int main(void) {
  double a[N] = {0.7, 1.3, -0.4};
  run("robust", robust, a);
  run("exported", exported, a);
  double b[N] = {0.6, -0.9, 1.1}, c[N] = {-0.6, 0.9, 1.1};
  run("chosen_bisquare", chosen, b);
  run("chosen_huber", chosen, c);
  return failed != 0;
}
