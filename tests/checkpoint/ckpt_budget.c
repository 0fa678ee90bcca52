/* enzyme.toml's [checkpoint] budget_bytes: a Revolve config without a count (snapshots 0,
 * budget_bytes 0) keeps the slots that fit in the file's budget. The gradient equals the taped
 * loop's whatever the slots. Prints the slots used, then CHECK lines. */
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>
#define N 8
double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;

static void step(int64_t i, double *u) {
  for (int k = 0; k < N; k++)
    u[k] = u[k] + 0.1 * sin(u[(k + 1) % N]) + 0.001 * (double)i;
}
static double loss(const double *u) {
  double s = 0;
  for (int k = 0; k < N; k++)
    s += u[k] * u[k];
  return s;
}
double ckpt(double *u, int64_t n, EnzymeCkptConfig *cfg) {
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, &EnzymeCkptRevolve, cfg,
                          enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u);
  return loss(u);
}
double plain(double *u, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    step(i, u);
  return loss(u);
}
int main(void) {
  EnzymeCkptStats st = {0};
  EnzymeCkptConfig cfg = {0, 0, NULL, 0, &st, 0};
  double u[N], du[N] = {0}, v[N], dv[N] = {0};
  int bad = 0;
  for (int k = 0; k < N; k++)
    u[k] = v[k] = 0.1 * k;
  __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, (int64_t)50, enzyme_const, &cfg);
  __enzyme_autodiff((void *)plain, enzyme_dup, v, dv, enzyme_const, (int64_t)50);
  printf("slots %lld\n", (long long)st.max_slots);
  for (int k = 0; k < N; k++) {
    int ok = fabs(du[k] - dv[k]) <= 1e-12 * (1 + fabs(dv[k]));
    printf("CHECK du%d %.17g %.17g%s\n", k, du[k], dv[k], ok ? "" : "  MISMATCH");
    bad += !ok;
  }
  return bad != 0;
}
