/* A molecular dynamics force loop (in the style of CoMD's Lennard-Jones kernel): per pair of
   atoms within the cutoff, the distance from positions read through a struct of pointers, the
   pair energy added to both atoms' per-atom energies and the force to both atoms' forces. The
   stores to f and U may overwrite r as far as the compiler knows, so the reverse cannot re-read
   the positions: it keeps the three differences (the values it needs) rather than the six
   positions they come from. The gradient of the energy is minus the forces the kernel
   computes, and matches central differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-7 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

enum { N = 27 };
typedef struct { double (*r)[3], (*f)[3], *U; int n; double cut2, eps; } Atoms;

__attribute__((noinline)) static void forces(Atoms *a, double *energy) {
  double e = 0;
  for (int i = 0; i < a->n; i++) {
    a->U[i] = 0;
    for (int m = 0; m < 3; m++) a->f[i][m] = 0;
  }
  for (int i = 0; i < a->n; i++)
    for (int j = i + 1; j < a->n; j++) {
      double dr[3], r2 = 0;
      for (int m = 0; m < 3; m++) {
        dr[m] = a->r[i][m] - a->r[j][m];
        r2 += dr[m] * dr[m];
      }
      if (r2 > a->cut2) continue;
      double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2;
      double pair = ir6 * (ir6 - 1.0);
      a->U[i] += 0.5 * pair;
      a->U[j] += 0.5 * pair;
      e += pair;
      double fr = -a->eps * ir6 * ir2 * (12.0 * ir6 - 6.0);
      for (int m = 0; m < 3; m++) {
        a->f[i][m] -= dr[m] * fr;
        a->f[j][m] += dr[m] * fr;
      }
    }
  *energy = a->eps * e;
}

/* positions in, the potential energy out (through the kernel's state) */
void energy_of(const double *x, Atoms *a, double *energy) {
  for (int i = 0; i < a->n; i++)
    for (int m = 0; m < 3; m++) a->r[i][m] = x[3 * i + m];
  forces(a, energy);
}

static Atoms *make(void) {
  Atoms *a = calloc(1, sizeof *a);
  a->r = calloc(N, sizeof *a->r);
  a->f = calloc(N, sizeof *a->f);
  a->U = calloc(N, sizeof *a->U);
  a->n = N;
  a->cut2 = 2.6 * 2.6;
  a->eps = 4.0;
  return a;
}

int main(void) {
  double x[3 * N], dx[3 * N] = {0};
  for (int i = 0; i < N; i++)       /* a 3x3x3 lattice, spacing 1.2, jittered */
    for (int m = 0; m < 3; m++)
      x[3 * i + m] = 1.2 * ((m == 0 ? i : m == 1 ? i / 3 : i / 9) % 3) + 0.05 * sin(3.0 * i + m);
  Atoms *a = make(), *da = make();
  da->n = N; da->cut2 = 0; da->eps = 0;   /* the shadow's scalars: seeds of nothing */
  double e = 0, de = 1;
  __enzyme_autodiff((void *)energy_of, enzyme_dup, x, dx, enzyme_dup, a, da, enzyme_dup, &e, &de);
  double f[3 * N], e0;
  energy_of(x, a, &e0);
  memcpy(f, a->f, sizeof f);
  double t[3 * N], jt = 0, te = 0;
  for (int i = 0; i < 3 * N; i++) { t[i] = sin(2.0 + 3.0 * i); jt += dx[i] * t[i]; }
  Atoms *ta = make();
  ta->cut2 = 0; ta->eps = 0;
  __enzyme_fwddiff((void *)energy_of, enzyme_dup, x, t, enzyme_dup, a, ta, enzyme_dup, &e, &te);
  check("forward_dot", te, jt);
  char name[32];
  for (int k = 0; k < 3 * N; k += 4) {
    snprintf(name, sizeof name, "dx[%d]=-f", k);
    check(name, dx[k], -f[k]);
  }
  for (int k = 1; k < 3 * N; k += 7) {
    double h = 1e-6, ep, em, save = x[k];
    x[k] = save + h; energy_of(x, a, &ep);
    x[k] = save - h; energy_of(x, a, &em);
    x[k] = save;
    snprintf(name, sizeof name, "dx[%d]_fd", k);
    check(name, dx[k], (ep - em) / (2 * h));
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
