/* Structs the differentiated function takes by value (larger than 16 bytes: passed in memory),
   given to the marker by value as C passes them (XSBench's `Inputs` and `SimulationData`):
   enzyme_const for one with floats, enzyme_dup for one of pointers and integers whose shadow
   copy carries the shadow arrays; the function writes into its own copy, which the caller's
   must not see. (These were refused: "pass its address".) A dup struct with floats stays
   refused: their derivative would be added into the shadow's copy and lost. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double k, c; int n; long pad[2]; } Params;       /* 40 bytes, floats */
typedef struct { double *x; const int *idx; long len, pad1, pad2; } Data;   /* no floats */

__attribute__((noinline)) static double term(const Params *p, const Data *d, int i) {
  return p->k * d->x[d->idx[i]] * d->x[i] + p->c * sin(d->x[i]);
}

double energy(Params p, Data d) {
  double s = 0;
  for (int i = 0; i < p.n; i++) s += term(&p, &d, i);
  p.k = -1;             /* the function's own copy */
  d.x = 0;
  return s;
}

double energy_at(const Params *p, const Data *d) { return energy(*p, *d); }

int main(void) {
  double x[4] = {0.5, 1.0, 1.5, 2.0}, dx[4] = {0};
  int idx[4] = {3, 2, 1, 0};
  Params p = {2.0, 0.25, 4, {0, 0}};
  Data d = {x, idx, 4, 0, 0}, dd = {dx, idx, 4, 0, 0};
  __enzyme_autodiff((void *)energy, enzyme_const, p, enzyme_dup, d, dd);
  /* d/dx_i of sum_j k x_idx(j) x_j + c sin(x_j): k (x_idx(i) + x_idx^-1(i)) + c cos(x_i);
     idx reverses, so both partners are x_{3-i} */
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], 2 * p.k * x[3 - i] + p.c * cos(x[i]));
  }
  check("caller_copy_kept", p.k, 2.0);
  /* forward mode through a wrapper taking them by address (a struct of more than 8 bytes
     given by value to __enzyme_fwddiff is a compile error): the tangent along tx is tx . dx */
  double tx[4] = {1, 0.5, 0, -1};
  Data td = {tx, idx, 4, 0, 0};
  double t = __enzyme_fwddiff((void *)energy_at, enzyme_const, &p, enzyme_dup, &d, &td);
  check("tangent", t, tx[0] * dx[0] + tx[1] * dx[1] + tx[2] * dx[2] + tx[3] * dx[3]);
  return failed != 0;
}
