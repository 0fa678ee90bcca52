/* An element loop in the style of a hydrodynamics code's hourglass control: per element and
   component, four mode sums of the eight corner velocities (signs G), then a force on each
   corner made of the modes, scaled by a coefficient that depends on the input. The velocities
   are the caller's memory, overwritten by the node update after the loop, so the reverse cannot
   re-read them; it needs the coefficient and the mode combinations, which are made of the four
   modes: it tapes the modes (4 doubles per element and component) rather than the velocities
   they come from (8), a minimum cut between what it cannot recompute and what it needs
   (ad/plan/tape_cut.py). Central differences and the dot-product test check the gradient. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

enum { NE = 40, NN = 64, STEPS = 3 };
static int conn[8 * NE];
static const double G[4][8] = {{1, 1, -1, -1, -1, -1, 1, 1}, {1, -1, 1, -1, -1, 1, -1, 1},
                               {1, -1, -1, 1, 1, -1, -1, 1}, {-1, 1, 1, -1, 1, -1, -1, 1}};

/* u: 2 * NN velocities (updated in place), w: NE weights; the sum of squares at the end */
__attribute__((noinline)) void run(double *u, const double *w, double *out) {
  double f[2 * NN];
  for (int step = 0; step < STEPS; step++) {
    memset(f, 0, sizeof f);
    for (int e = 0; e < NE; e++) {
      double coef = 0.05 * w[e] * w[e] + 0.01 * step;
      for (int d = 0; d < 2; d++) {
        double hm[4];
        for (int k = 0; k < 4; k++) {
          hm[k] = 0;
          for (int c = 0; c < 8; c++) hm[k] += G[k][c] * u[d * NN + conn[8 * e + c]];
        }
        for (int c = 0; c < 8; c++)
          f[d * NN + conn[8 * e + c]] -= coef * (G[0][c] * hm[0] + G[1][c] * hm[1] +
                                                G[2][c] * hm[2] + G[3][c] * hm[3]);
      }
    }
    for (int i = 0; i < 2 * NN; i++) u[i] += 0.1 * f[i] + 0.01 * sin(u[i]);
  }
  double s = 0;
  for (int i = 0; i < 2 * NN; i++) s += u[i] * u[i];
  *out = s;
}

static double objective(const double *u0, const double *w) {
  double u[2 * NN], s;
  memcpy(u, u0, sizeof u);
  run(u, w, &s);
  return s;
}

/* every step-th entry of g, the gradient w.r.t. array a (u0 or w itself), against central
   differences of the objective */
static void fd_checks(const char *what, double *a, int n, int step, const double *g,
                      const double *u0, const double *w) {
  char name[32];
  for (int i = 0; i < n; i += step) {
    double h = 1e-6, ai = a[i];
    a[i] = ai + h;
    double fp = objective(u0, w);
    a[i] = ai - h;
    double fm = objective(u0, w);
    a[i] = ai;
    snprintf(name, sizeof name, "%s[%d]", what, i);
    check(name, g[i], (fp - fm) / (2 * h), 1e-6);
  }
}

int main(void) {
  for (int e = 0; e < NE; e++)
    for (int c = 0; c < 8; c++) conn[8 * e + c] = (3 * e + 5 * c + (c > 3)) % NN;
  double u0[2 * NN], w[NE], du[2 * NN] = {0}, dw[NE] = {0};
  for (int i = 0; i < 2 * NN; i++) u0[i] = 0.3 * sin(1.7 * i + 0.2);
  for (int e = 0; e < NE; e++) w[e] = 1.0 + 0.5 * cos(0.9 * e);
  double u[2 * NN], s = 0, ds = 1;
  memcpy(u, u0, sizeof u);
  __enzyme_autodiff((void *)run, enzyme_dup, u, du, enzyme_dup, w, dw, enzyme_dup, &s, &ds);
  check("value", s, objective(u0, w), 1e-12);
  fd_checks("du", u0, 2 * NN, 9, du, u0, w);
  fd_checks("dw", w, NE, 7, dw, u0, w);
  double t[2 * NN], tw[NE], jt = 0, te = 0;   /* forward mode: <J t, 1> == <t, J^T 1> */
  for (int i = 0; i < 2 * NN; i++) { t[i] = sin(2.0 + 3.0 * i); jt += du[i] * t[i]; }
  for (int e = 0; e < NE; e++) { tw[e] = cos(1.0 + e); jt += dw[e] * tw[e]; }
  memcpy(u, u0, sizeof u);
  __enzyme_fwddiff((void *)run, enzyme_dup, u, t, enzyme_dup, w, tw, enzyme_dup, &s, &te);
  check("forward_dot", te, jt, 1e-9);
  return failed != 0;
}
