/* EnzymeCkptADBinomial (Tapenade's adBinomial.c driving the checkpointed loop): for each step
 * count and snapshot count the gradient equals the taped loop's (1e-12), every step is taped
 * once and at most `snapshots` slots hold a snapshot. Built with -DENZYME_CKPT_ADBINOMIAL and
 * Tapenade's adBinomial.c. Prints CHECK name got expected; exits 1 on a mismatch. */
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>
#define N 3
double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
static int failed;

static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failed += !ok;
}
static void step(int64_t i, double *u) {
  double t0 = u[0];
  u[0] = u[0] + 0.2 * sin(u[1]) + 0.01 * (double)i;
  u[1] = u[1] + 0.2 * cos(u[2]) * t0;
  u[2] = u[2] - 0.1 * u[0] * u[1];
}
static double loss(const double *u) { return u[0] * u[0] + u[1] * u[2]; }
double ckpt(double *u, int64_t n, EnzymeCkptConfig *cfg) {
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, &EnzymeCkptADBinomial, cfg,
                          enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u);
  return loss(u);
}
double plain(double *u, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    step(i, u);
  return loss(u);
}
int main(void) {
  int64_t steps[] = {0, 1, 2, 7, 30}, snaps[] = {1, 2, 3, 5};
  char name[64];
  for (int a = 0; a < 5; a++)
    for (int b = 0; b < 4; b++) {
      EnzymeCkptStats st = {0};
      EnzymeCkptConfig cfg = {snaps[b], 0, NULL, 0, &st, 0};
      double u[N] = {0.3, 0.5, 0.7}, du[N] = {0}, v[N] = {0.3, 0.5, 0.7}, dv[N] = {0};
      int64_t n = steps[a];
      __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const, &cfg);
      __enzyme_autodiff((void *)plain, enzyme_dup, v, dv, enzyme_const, n);
      for (int k = 0; k < N; k++) {
        snprintf(name, sizeof name, "n%lld_s%lld_du%d", (long long)n, (long long)snaps[b], k);
        check(name, du[k], dv[k], 1e-12);
        snprintf(name, sizeof name, "n%lld_s%lld_u%d", (long long)n, (long long)snaps[b], k);
        check(name, u[k], v[k], 0);
      }
      snprintf(name, sizeof name, "n%lld_s%lld_taped", (long long)n, (long long)snaps[b]);
      check(name, (double)st.taped_steps, (double)n, 0);
      snprintf(name, sizeof name, "n%lld_s%lld_slots_ok", (long long)n, (long long)snaps[b]);
      check(name, (double)(st.max_slots <= snaps[b]), 1, 0);
    }
  return failed != 0;
}
