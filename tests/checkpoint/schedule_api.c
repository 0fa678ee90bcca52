/* Enzyme's schedule-only entry points (__enzyme_ckpt_schedule_*): a caller keeping its own
 * snapshots drives the adjoint of x_{k+1} = x_k + h sin(x_k) + 0.01 k, loss x_n^2, by the
 * actions alone (the step's adjoint is written out here). For every schedule, budget (0: the
 * default) and step count: the gradient equals the fully stored adjoint's (1e-12) and central
 * differences, every step is differentiated once and in reverse order from the right state,
 * restores only read slots stored with the state they name, and slots stay below _slots(h).
 * Prints CHECK name got expected; exits 1 on a mismatch. */
#define ENZYME_CHECKPOINT_RUNTIME
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>

static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failed += !ok;
}

static double step(double x, int64_t k) { return x + 0.3 * sin(x) + 0.01 * (double)k; }
static double dstep(double x) { return 1 + 0.3 * cos(x); }

static double run(double x, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    x = step(x, k);
  return x * x;
}

/* the adjoint with every state stored */
static double stored(double x, int64_t n) {
  double xs[200], xb;
  for (int64_t k = 0; k < n; k++) {
    xs[k] = x;
    x = step(x, k);
  }
  xb = 2 * x;
  for (int64_t k = n - 1; k >= 0; k--)
    xb *= dstep(xs[k]);
  return xb;
}

/* the adjoint driven by the schedule; -1 on a protocol violation */
static double scheduled(double x0, int64_t n, int64_t mode, int64_t budget, int64_t *bad) {
  double slot_x[256], x = x0, xb = 0;
  int64_t slot_at[256], at = 0, next_rev = n - 1, flag;
  void *h = __enzyme_ckpt_schedule_begin(mode, budget, n);
  int64_t nslots = __enzyme_ckpt_schedule_slots(h);
  *bad = nslots > 256 || (mode % 2 == 0 && budget > 0 && nslots > budget);   /* binomial ones */
  for (int64_t k = 0; k < 256; k++)
    slot_at[k] = -1;
  if (n == 0)
    xb = 2 * x;
  while ((flag = __enzyme_ckpt_schedule_next(h)) != ENZYME_CKPT_DONE) {
    int64_t it = __enzyme_ckpt_schedule_iteration(h), from = __enzyme_ckpt_schedule_start(h);
    int64_t s = __enzyme_ckpt_schedule_slot(h);
    if (flag == ENZYME_CKPT_STORE) {
      *bad |= s < 0 || s >= nslots || at != it;
      slot_x[s] = x;
      slot_at[s] = it;
    } else if (flag == ENZYME_CKPT_RESTORE) {
      *bad |= s < 0 || s >= nslots || slot_at[s] != it;
      x = slot_x[s];
      at = it;
    } else if (flag == ENZYME_CKPT_FORWARD) {
      *bad |= at != from || it > n;
      for (int64_t k = from; k < it; k++)
        x = step(x, k);
      at = it;
    } else if (flag == ENZYME_CKPT_FIRSTUTURN || flag == ENZYME_CKPT_UTURN) {
      *bad |= at != it - 1 || it - 1 != next_rev || (flag == ENZYME_CKPT_FIRSTUTURN) != (it == n);
      if (flag == ENZYME_CKPT_FIRSTUTURN)
        xb = 2 * step(x, it - 1);          /* the seed: d(x_n^2)/dx_n */
      xb *= dstep(x);
      next_rev--;
      at = -1;                             /* the state is not known after a u-turn */
    } else {
      *bad = 1;
      break;
    }
  }
  *bad |= next_rev != -1;
  __enzyme_ckpt_schedule_end(h);
  return xb;
}

int main(void) {
  int64_t steps[] = {0, 1, 2, 7, 30, 100};
  int64_t budgets[] = {0, 1, 2, 3, 5};
  const char *modes[] = {"", "periodic", "revolve", "store_all", "binomial"};
  char name[96];
  for (int64_t m = 1; m <= 4; m++)
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 5; b++) {
        int64_t n = steps[a], bad;
        double got = scheduled(0.4, n, m, budgets[b], &bad);
        snprintf(name, sizeof name, "%s_n%lld_b%lld", modes[m], (long long)n,
                 (long long)budgets[b]);
        check(name, got, stored(0.4, n), 1e-12);
        snprintf(name, sizeof name, "%s_n%lld_b%lld_fd", modes[m], (long long)n,
                 (long long)budgets[b]);
        check(name, got, (run(0.4 + 1e-6, n) - run(0.4 - 1e-6, n)) / 2e-6, 1e-6);
        snprintf(name, sizeof name, "%s_n%lld_b%lld_protocol", modes[m], (long long)n,
                 (long long)budgets[b]);
        check(name, (double)bad, 0, 0);
      }
  return failed != 0;
}
