/* A `restrict` kernel inlined inside a time loop that swaps its input and output each step
   (a 1-D diffusion with a cubic source). Within one call the kernel's stores miss its input,
   but the next step writes the array this step read: the scoped no-alias metadata the inlining
   leaves holds for one execution of the call only, so the reverse must keep (not re-read) the
   values the next steps overwrite. Checked against central differences. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 16, STEPS = 5 };

static void step(int n, double *restrict out, const double *restrict in) {
  out[0] = in[0];
  out[n - 1] = in[n - 1];
  for (int i = 1; i < n - 1; i++)
    out[i] = in[i] + 0.2 * (in[i - 1] - 2 * in[i] + in[i + 1]) - 0.05 * in[i] * in[i] * in[i];
}

double evolve(double *u, double *v, int steps) {
  for (int t = 0; t < steps; t++) {
    step(N, v, u);
    double *w = u; u = v; v = w;
  }
  double s = 0;
  for (int i = 0; i < N; i++) s += sin(1.0 + i) * u[i] * u[i];
  return s;
}

int main(void) {
  double u0[N], u[N], v[N], du[N], dv[N];
  for (int i = 0; i < N; i++) u0[i] = 0.5 + 0.4 * sin(0.9 * i);
  memcpy(u, u0, sizeof u);
  memset(v, 0, sizeof v); memset(du, 0, sizeof du); memset(dv, 0, sizeof dv);
  __enzyme_autodiff((void *)evolve, enzyme_dup, u, du, enzyme_dup, v, dv, enzyme_const, STEPS);
  double t[N], tv[N] = {0}, jt = 0;
  for (int i = 0; i < N; i++) { t[i] = sin(2.0 + 3.0 * i); jt += du[i] * t[i]; }
  memcpy(u, u0, sizeof u);
  check("forward_dot", __enzyme_fwddiff((void *)evolve, enzyme_dup, u, t, enzyme_dup, v, tv,
                                        enzyme_const, STEPS), jt);
  char name[32];
  for (int k = 0; k < N; k += 3) {
    double h = 1e-6, p[N], m[N], w[N];
    memcpy(p, u0, sizeof p); memcpy(m, u0, sizeof m);
    p[k] += h; m[k] -= h;
    double fp = evolve(p, w, STEPS), fm = evolve(m, w, STEPS);
    snprintf(name, sizeof name, "du[%d]", k);
    check(name, du[k], (fp - fm) / (2 * h));
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
