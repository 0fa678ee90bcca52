/* __enzyme_checkpoint_for and __enzyme_checkpoint_while: for every scheme, step count (0, 1, a
 * prime, counts that are not a multiple of the segment length) and snapshot count, the
 * checkpointed gradient must equal the plain taped loop's, and central finite differences; the
 * state after the gradient must be the plain loop's; every step is taped once; Revolve keeps at
 * most `snapshots` slots and its recomputation matches the optimal count; a memory budget in
 * bytes picks the number of Revolve slots. Forward mode through the same call is checked against
 * reverse mode (dot-product test). Prints CHECK name got expected; exits 1 on a mismatch. */
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>

#define N 5
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;

static double drift[N]; /* a mutable global the step writes: the snapshot must hold it */
static int failures;

static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failures += !ok;
}

__attribute__((noinline)) static void step(int64_t i, double *u, double c) {
  double t[N];
  for (int k = 0; k < N; k++)
    t[k] = u[k] + c * sin(u[(k + 1) % N]) - 0.05 * u[k] * u[k] + 0.01 * (double)i +
           0.1 * drift[k];
  for (int k = 0; k < N; k++) {
    u[k] = t[k];
    drift[k] = 0.5 * drift[k] + 0.1 * cos(t[k]);
  }
}

/* a while-loop step: goes on while the first entry is below the limit */
__attribute__((noinline)) static int grow(int64_t i, double *u, const double *limit) {
  for (int k = 0; k < N; k++)
    u[k] = u[k] * 1.05 + 0.02 * sin(u[(k + 1) % N] + 0.1 * (double)i);
  return u[0] < *limit;
}

static double loss(const double *u) {
  double s = 0;
  for (int k = 0; k < N; k++)
    s += u[k] * u[k] * (k + 1) + drift[k];
  return s;
}

double plain(double *u, double c, int64_t n) {
  for (int k = 0; k < N; k++) drift[k] = 0;
  for (int64_t i = 0; i < n; i++) step(i, u, c);
  return loss(u);
}

double ckpt(double *u, double c, int64_t n, const EnzymeCheckpointScheme *s, EnzymeCkptConfig *cfg) {
  for (int k = 0; k < N; k++) drift[k] = 0;
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, s, cfg, enzyme_checkpoint_region, u,
                          (int64_t)(N * sizeof(double)), u, c);
  return loss(u);
}

double plain_while(double *u, const double *limit) {
  int64_t i = 0;
  while (grow(i++, u, limit))
    ;
  return loss(u);
}

double ckpt_while(double *u, const double *limit, EnzymeCkptConfig *cfg) {
  __enzyme_checkpoint_while((void *)grow, enzyme_scheme, &EnzymeCkptStoreAll, cfg,
                            enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u, limit);
  return loss(u);
}

static void init(double *u) {
  for (int k = 0; k < N; k++) u[k] = 0.2 + 0.1 * k;
}

/* forward steps of an optimal binomial schedule: the least over the first advance m */
static int64_t optimal(int64_t l, int64_t s) {
  static int64_t memo[64][8];
  if (l <= 1) return 0;
  if (s <= 1) return l * (l - 1) / 2;
  if (l < 64 && s < 8 && memo[l][s]) return memo[l][s] - 1;
  int64_t best = -1;
  for (int64_t m = 1; m < l; m++) {
    int64_t c = m + optimal(m, s) + optimal(l - m, s - 1);
    if (best < 0 || c < best) best = c;
  }
  if (l < 64 && s < 8) memo[l][s] = best + 1;
  return best;
}

int main(void) {
  const EnzymeCheckpointScheme *schemes[] = {&EnzymeCkptRevolve, &EnzymeCkptPeriodic,
                                             &EnzymeCkptStoreAll};
  const char *names[] = {"revolve", "periodic", "store_all"};
  int64_t steps[] = {0, 1, 2, 7, 13, 30};
  int64_t snaps[] = {1, 2, 3, 5};
  char name[128];
  const double c0 = 0.3;
  for (unsigned a = 0; a < sizeof steps / sizeof *steps; a++) {
    int64_t n = steps[a];
    double u[N], du[N] = {0}, up[N], um[N];
    init(u);
    double dc = __enzyme_autodiff((void *)plain, enzyme_dup, u, du, c0, enzyme_const, n);
    double after[N];
    for (int k = 0; k < N; k++) after[k] = u[k];
    /* central finite differences of the plain loop */
    const double h = 1e-6;
    for (int k = 0; k < N; k += 2) {
      init(up); init(um); up[k] += h; um[k] -= h;
      double fd = (plain(up, c0, n) - plain(um, c0, n)) / (2 * h);
      snprintf(name, sizeof name, "fd_du%d_n%lld", k, (long long)n);
      check(name, du[k], fd, 1e-6);
    }
    init(up); init(um);
    snprintf(name, sizeof name, "fd_dc_n%lld", (long long)n);
    check(name, dc, (plain(up, c0 + h, n) - plain(um, c0 - h, n)) / (2 * h), 1e-6);
    for (int s = 0; s < 3; s++)
      for (unsigned b = 0; b < sizeof snaps / sizeof *snaps; b++) {
        double v[N], dv[N] = {0};
        EnzymeCkptStats st;
        EnzymeCkptConfig cfg = {snaps[b], 0, NULL, 0, &st};
        memset(&st, 0, sizeof st);
        init(v);
        double dc2 = __enzyme_autodiff((void *)ckpt, enzyme_dup, v, dv, c0, enzyme_const, n,
                                       enzyme_const, schemes[s], enzyme_const, &cfg);
        snprintf(name, sizeof name, "%s_n%lld_k%lld_dc", names[s], (long long)n, (long long)snaps[b]);
        check(name, dc2, dc, 1e-12);
        for (int k = 0; k < N; k++) {
          snprintf(name, sizeof name, "%s_n%lld_k%lld_du%d", names[s], (long long)n,
                   (long long)snaps[b], k);
          check(name, dv[k], du[k], 1e-12);
          snprintf(name, sizeof name, "%s_n%lld_k%lld_state%d", names[s], (long long)n,
                   (long long)snaps[b], k);
          check(name, v[k], after[k], 0);
        }
        snprintf(name, sizeof name, "%s_n%lld_k%lld_taped", names[s], (long long)n, (long long)snaps[b]);
        check(name, (double)st.taped_steps, (double)n, 0);
        if (s == 0) {
          int64_t k = snaps[b] < n ? snaps[b] : n;
          snprintf(name, sizeof name, "revolve_n%lld_k%lld_slots_within", (long long)n, (long long)snaps[b]);
          check(name, (double)(st.max_slots <= snaps[b]), 1, 0);
          snprintf(name, sizeof name, "revolve_n%lld_k%lld_forward", (long long)n, (long long)snaps[b]);
          check(name, (double)st.forward_steps, (double)optimal(n, k < 1 ? 1 : k), 0);
        }
      }
    /* a memory budget in bytes instead of a slot count: 3 snapshots of the region and `drift` */
    {
      double v[N], dv[N] = {0};
      EnzymeCkptStats st;
      EnzymeCkptConfig cfg = {0, 0, NULL, 0, &st, 3 * 2 * N * sizeof(double) + 7};
      memset(&st, 0, sizeof st);
      init(v);
      double dc2 = __enzyme_autodiff((void *)ckpt, enzyme_dup, v, dv, c0, enzyme_const, n,
                                     enzyme_const, &EnzymeCkptRevolve, enzyme_const, &cfg);
      snprintf(name, sizeof name, "budget_n%lld_dc", (long long)n);
      check(name, dc2, dc, 1e-12);
      snprintf(name, sizeof name, "budget_n%lld_du0", (long long)n);
      check(name, dv[0], du[0], 1e-12);
      snprintf(name, sizeof name, "budget_n%lld_bytes_within", (long long)n);
      check(name, (double)(st.max_bytes <= cfg.budget_bytes), 1, 0);
    }
    /* forward mode through the checkpoint call: <J v, g> = <v, J^T g> (the tangent of u is
     * written back into tv, so the dot product is taken first) */
    {
      double v[N], tv[N];
      EnzymeCkptConfig cfg = {2, 0, NULL, 0, NULL};
      init(v);
      double dot = 0.7 * dc;
      for (int k = 0; k < N; k++) {
        tv[k] = 0.3 - 0.1 * k;
        dot += tv[k] * du[k];
      }
      double jv = __enzyme_fwddiff((void *)ckpt, enzyme_dup, v, tv, c0, 0.7, enzyme_const, n,
                                   enzyme_const, &EnzymeCkptRevolve, enzyme_const, &cfg);
      snprintf(name, sizeof name, "forward_dot_n%lld", (long long)n);
      check(name, jv, dot, 1e-10);
    }
  }
  /* while loops: the number of steps is known only when the loop ends */
  double limits[] = {0.1, 0.25, 0.6, 2.0};
  for (unsigned l = 0; l < 4; l++) {
    double u[N], du[N] = {0}, v[N], dv[N] = {0}, up[N], um[N];
    EnzymeCkptStats st;
    EnzymeCkptConfig cfg = {1, 0, NULL, 0, &st};
    memset(&st, 0, sizeof st);
    init(u); init(v);
    __enzyme_autodiff((void *)plain_while, enzyme_dup, u, du, enzyme_const, &limits[l]);
    __enzyme_autodiff((void *)ckpt_while, enzyme_dup, v, dv, enzyme_const, &limits[l],
                      enzyme_const, &cfg);
    for (int k = 0; k < N; k++) {
      snprintf(name, sizeof name, "while_l%u_du%d", l, k);
      check(name, dv[k], du[k], 1e-12);
      snprintf(name, sizeof name, "while_l%u_state%d", l, k);
      check(name, v[k], u[k], 0);
    }
    init(up); init(um); up[1] += 1e-6; um[1] -= 1e-6;
    snprintf(name, sizeof name, "while_l%u_fd", l);
    check(name, dv[1], (plain_while(up, &limits[l]) - plain_while(um, &limits[l])) / 2e-6, 1e-5);
    snprintf(name, sizeof name, "while_l%u_taped", l);
    check(name, (double)(st.taped_steps >= 1), 1, 0);
  }
  printf("%d failures\n", failures);
  return failures != 0;
}
