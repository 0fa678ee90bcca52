/* Records of a pointer and a double returned by value ({ ptr, double } in registers) from
   functions kept as calls: a pointer into the argument beside a sum, a fresh block beside a
   value (the caller frees it), one of two such records chosen by a branch, records kept in an
   array and read back, and a list built by a recursive function returning its head and a
   running sum. The pointer's shadow travels with the record (refused before: "the shadow of
   such a pointer cannot be returned yet"). */
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { double *at; double sum; } View;
typedef struct { double *block; double scale; } Owned;
typedef struct Cell { double v; struct Cell *next; } Cell;
typedef struct { Cell *head; double total; } List;

__attribute__((noinline)) static View view(double *x, int k, int n) {
  View r = {x + k, 0};
  for (int i = 0; i < n; i++) r.sum += x[i] * x[i];
  return r;
}

__attribute__((noinline)) static Owned owned(const double *x, int n) {
  Owned o = {malloc(n * sizeof(double)), sin(x[0])};
  for (int i = 0; i < n; i++) o.block[i] = x[i] * x[(i + 1) % n];
  return o;
}

__attribute__((noinline)) static List build(const double *x, int n) {
  if (n == 0) return (List){0, 0};
  List rest = build(x + 1, n - 1);
  Cell *c = malloc(sizeof *c);
  c->v = x[0] * x[0];
  c->next = rest.head;
  return (List){c, rest.total + c->v * x[0]};
}

double use_view(double *x, int n) {
  View r = view(x, 1, n);
  return r.sum * r.at[0] + r.at[1] * 3.0;
}

double use_owned(const double *x, int n) {
  Owned o = owned(x, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += o.block[i] * o.scale;
  free(o.block);
  return s;
}

double use_chosen(double *x, int n) {
  View r = x[0] > 0 ? view(x, 2, n) : view(x, 3, n - 1);
  return r.at[0] * r.sum;
}

double use_kept(double *x, int n) {
  View kept[2];
  for (int k = 0; k < 2; k++) kept[k] = view(x, k, n - k);
  double s = 0;
  for (int k = 0; k < 2; k++) s += kept[k].at[1] * kept[1 - k].sum;
  return s;
}

double use_list(const double *x, int n) {
  List l = build(x, n);
  double s = l.total;
  for (Cell *c = l.head; c;) {
    Cell *next = c->next;
    s += c->v * 0.5;
    free(c);
    c = next;
  }
  return s;
}

typedef double (*Fn)(double *, int);

static void grad_check(const char *name, Fn f, double *x, int n) {
  double dx[8] = {0}, v[8], vdx = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double xp[8], xm[8];
    for (int j = 0; j < n; j++) xp[j] = xm[j] = x[j];
    xp[i] += 1e-6;
    xm[i] -= 1e-6;
    char buf[64];
    snprintf(buf, sizeof buf, "%s[%d]", name, i);
    check(buf, dx[i], (f(xp, n) - f(xm, n)) / 2e-6);
    v[i] = rnd(i);
    vdx += v[i] * dx[i];
  }
  char buf[64];
  snprintf(buf, sizeof buf, "dot_%s", name);
  check(buf, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n), vdx);
}

int main(void) {
  double x[5] = {0.5, -1, 2, 3.5, 1.5}, y[5] = {-0.5, -1, 2, 3.5, 1.5};
  grad_check("use_view", use_view, x, 5);
  grad_check("use_owned", (Fn)use_owned, x, 5);
  grad_check("use_chosen", use_chosen, x, 5);
  grad_check("use_chosen_neg", use_chosen, y, 5);
  grad_check("use_kept", use_kept, x, 5);
  grad_check("use_list", (Fn)use_list, x, 5);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
