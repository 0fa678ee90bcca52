/* <enzyme/checkpoint_schedule.h> and the binomial schedule (EnzymeCkptBinomial, schedule 4).
 *
 * The arithmetic: floor(sqrt(n)) against its definition, enzyme_ckpt_binomial_progress at values
 * worked out by hand from its definition (the midpoint of Griewank's window [n - beta(s-1, t),
 * beta(s, t-1)], t least with beta(s, t) = C(s+t, t) >= n, clamped to [1, n-1], capped at
 * n - (s-1)), the advances of s slots summing to n, the schedule names, the periodic split.
 * The schemes, driven action by action on a model of the driver (the step the state is at, the
 * step each slot holds): every step reversed once, last first, from the state before it; the
 * binomial scheme within min(budget, n) slots; the periodic scheme storing the starts of
 * enzyme_ckpt_periodic_split's segments. Prints "sched binomial n b forward slots" for the test's
 * own model of the schedule. Then gradients: a loop through __enzyme_checkpoint_for with
 * EnzymeCkptBinomial and a loop annotated enzyme_checkpoint("binomial", b) against the plain taped
 * loop and central differences, forward mode against reverse mode.
 * Prints CHECK name got expected; exits 1 on a mismatch. */
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
void __enzyme_ptr_size_hint(void *, long); /* declared by the program, as in Enzyme */

static int failures;

static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failures += !ok;
}

static void check_i(const char *name, int64_t got, int64_t want) {
  check(name, (double)got, (double)want, 0);
}

/* ---- the arithmetic ---- */

static void arithmetic(void) {
  char name[96];
  int bad = 0;
  for (int64_t n = 0; n <= 200000; n++) {
    int64_t r = enzyme_ckpt_isqrt(n);
    bad += r * r > n || (r + 1) * (r + 1) <= n;
  }
  check_i("isqrt_0_to_200000", bad, 0);
  check_i("isqrt_neg", enzyme_ckpt_isqrt(-5), 0);
  check_i("isqrt_int64_max", enzyme_ckpt_isqrt(INT64_MAX), 3037000499LL);
  check_i("isqrt_2pow62", enzyme_ckpt_isqrt((int64_t)1 << 62), (int64_t)1 << 31);

  /* by hand: bp(10,3): beta(3,2) = 10 >= 10, window [10 - beta(2,2), beta(3,1)] = [4, 4] */
  check_i("bp_10_3", enzyme_ckpt_binomial_progress(10, 3), 4);
  /* beta(2,2) = 6 >= 5: [5 - beta(1,2), beta(2,1)] = [2, 3], midpoint 2 */
  check_i("bp_5_2", enzyme_ckpt_binomial_progress(5, 2), 2);
  /* beta(2,5) = 21 >= 20: [20 - 6, 15], midpoint 14 */
  check_i("bp_20_2", enzyme_ckpt_binomial_progress(20, 2), 14);
  /* beta(4,5) = 126 >= 100: [100 - beta(3,5) = 44, beta(4,4) = 70], midpoint 57 */
  check_i("bp_100_4", enzyme_ckpt_binomial_progress(100, 4), 57);
  /* beta(3,1) = 4 >= 3: [3 - 3 -> 1, 1], and the cap 3 - 2 = 1 */
  check_i("bp_3_3", enzyme_ckpt_binomial_progress(3, 3), 1);
  check_i("bp_1_5", enzyme_ckpt_binomial_progress(1, 5), 1);
  check_i("bp_7_1", enzyme_ckpt_binomial_progress(7, 1), 7);
  check_i("bp_0_3", enzyme_ckpt_binomial_progress(0, 3), 0);
  /* beta(5,39) = C(44,5) = 1086008 >= 10^6 > C(43,5) = 962598: [10^6 - C(43,4) = 876590,
   * 962598], midpoint 919594 */
  check_i("bp_1e6_5", enzyme_ckpt_binomial_progress(1000000, 5), 919594);
  /* beta(2,t) = C(t+2, 2) >= 10^12 first at t = 1414213: [10^12 - (t+1), C(t+1, 2)] */
  check_i("bp_1e12_2", enzyme_ckpt_binomial_progress(1000000000000LL, 2), 999999248788LL);

  /* the advances of a stack of s slots, each at least one step, sum to n */
  bad = 0;
  for (int64_t n = 1; n <= 300; n++)
    for (int64_t s = 1; s <= n && s <= 24; s++) {
      int64_t q = 0;
      for (int64_t k = 0; k < s; k++) {
        int64_t m = enzyme_ckpt_binomial_progress(n - q, s - k);
        bad += m < 1 || q + m > n - (s - k - 1);
        q += m;
      }
      bad += q != n;
    }
  check_i("bp_advances_sum_to_n", bad, 0);

  check_i("slots_default_100", enzyme_ckpt_binomial_slots(100, 0), 10);
  check_i("slots_default_3", enzyme_ckpt_binomial_slots(3, -1), 2);
  check_i("slots_capped", enzyme_ckpt_binomial_slots(4, 9), 4);
  check_i("slots_n0", enzyme_ckpt_binomial_slots(0, 3), 1);

  {
    static const struct { const char *s; size_t len; int64_t want; } names[] = {
        {"binomial", 8, ENZYME_CKPT_SCHEDULE_BINOMIAL},
        {"revolve", 7, ENZYME_CKPT_SCHEDULE_REVOLVE},
        {"periodic", 8, ENZYME_CKPT_SCHEDULE_PERIODIC},
        {"regular", 7, ENZYME_CKPT_SCHEDULE_PERIODIC},
        {"store_all", 9, ENZYME_CKPT_SCHEDULE_STORE_ALL}, {"none", 4, ENZYME_CKPT_SCHEDULE_NONE},
        {"binomial\")", 8, ENZYME_CKPT_SCHEDULE_BINOMIAL}, /* the rest of an annotation */
        {"binomia", 7, -1}, {"binomials", 9, -1}, {"Revolve", 7, -1}, {"", 0, -1},
        {"store", 5, -1}, {"nonea", 5, -1}};
    for (unsigned k = 0; k < sizeof names / sizeof *names; k++) {
      snprintf(name, sizeof name, "name_%u", k);
      check_i(name, enzyme_ckpt_schedule_from_name(names[k].s, names[k].len), names[k].want);
    }
  }

  {
    EnzymeCkptPeriodicSplit s = enzyme_ckpt_periodic_split(10, 3);
    check_i("split_10_3", s.inner * 100 + s.outer * 10 + s.trailing, 422);
    s = enzyme_ckpt_periodic_split(10, 0); /* floor(sqrt(10)) = 3 steps a segment */
    check_i("split_10_0", s.inner * 100 + s.outer * 10 + s.trailing, 331);
    s = enzyme_ckpt_periodic_split(9, 0);
    check_i("split_9_0", s.inner * 100 + s.outer * 10 + s.trailing, 330);
    s = enzyme_ckpt_periodic_split(5, 8);
    check_i("split_5_8", s.inner * 100 + s.outer * 10 + s.trailing, 150);
    s = enzyme_ckpt_periodic_split(0, 3);
    check_i("split_0_segments", enzyme_ckpt_periodic_segments(s), 0);
    bad = 0;
    for (int64_t n = 1; n <= 100; n++)
      for (int64_t b = -1; b <= 12; b++) {
        int64_t k, total = 0, segs;
        s = enzyme_ckpt_periodic_split(n, b);
        segs = enzyme_ckpt_periodic_segments(s);
        for (k = 0; k < segs; k++) {
          bad += enzyme_ckpt_periodic_start(s, k) != total;
          total += enzyme_ckpt_periodic_length(s, k);
        }
        bad += total != n || (b > 0 && segs > b);
      }
    check_i("split_segments_cover_n", bad, 0);
  }
}

/* ---- the schemes on a model of the driver ---- */

/* Replays a scheme's actions; returns the number of errors. *forward: the steps run forward,
 * *slots: slots used at most, starts: the steps stored before the first turn. */
static int replay(const EnzymeCheckpointScheme *vt, int64_t n, int64_t budget, int64_t *forward,
                  int64_t *slots, int64_t *starts, int64_t *nstarts) {
  EnzymeCkptConfig cfg = {budget, 0, NULL, 0, NULL, 0};
  void *st = vt->init(&cfg, n, 8);
  EnzymeCkptAction a;
  int64_t state = 0, next = n, held[64], used = 0, turned = 0, bad = 0, guard = 0;
  for (int k = 0; k < 64; k++)
    held[k] = -1;
  *forward = *slots = *nstarts = 0;
  for (;;) {
    vt->next_action(st, &a);
    if (a.flag == ENZYME_CKPT_DONE || ++guard > 100000)
      break;
    if ((a.flag == ENZYME_CKPT_STORE || a.flag == ENZYME_CKPT_RESTORE) &&
        (a.cpnum < 0 || a.cpnum >= 64)) {
      bad++;
      break;
    }
    switch (a.flag) {
    case ENZYME_CKPT_STORE:
      bad += a.iteration != state;
      if (held[a.cpnum] < 0 && ++used > *slots)
        *slots = used;
      held[a.cpnum] = state;
      if (!turned)
        starts[(*nstarts)++ & 63] = state;
      break;
    case ENZYME_CKPT_RESTORE:
      bad += held[a.cpnum] < 0 || a.iteration != held[a.cpnum];
      state = held[a.cpnum];
      break;
    case ENZYME_CKPT_FORWARD:
      bad += a.startiteration != state || a.iteration <= state || a.iteration >= next;
      *forward += a.iteration - a.startiteration;
      state = a.iteration;
      break;
    case ENZYME_CKPT_FIRSTUTURN:
    case ENZYME_CKPT_UTURN:
      bad += a.iteration != next || state != next - 1 ||
             (a.flag == ENZYME_CKPT_FIRSTUTURN) != !turned;
      turned = 1;
      next--;
      /* a slot holding a step not before the next one to reverse is free again */
      for (int k = 0; k < 64; k++)
        if (held[k] >= next) {
          held[k] = -1;
          used--;
        }
      break;
    default:
      bad++;
    }
  }
  vt->finalize(st);
  return (int)(bad + (next != 0) + (guard > 100000));
}

static void schemes(void) {
  char name[96];
  int64_t fwd, slots, starts[64], nstarts;
  int bad_b = 0, bad_slots = 0, bad_p = 0, bad_seg = 0;
  for (int64_t n = 0; n <= 60; n++)
    for (int64_t b = 1; b <= 9; b++) {
      bad_b += replay(&EnzymeCkptBinomial, n, b, &fwd, &slots, starts, &nstarts);
      bad_slots += slots > (b < n ? b : n);
      if (n)
        printf("sched binomial %lld %lld %lld %lld\n", (long long)n, (long long)b,
               (long long)fwd, (long long)slots);
    }
  for (int64_t n = 0; n <= 60; n++)
    for (int64_t b = 0; b <= 9; b++) {
      EnzymeCkptPeriodicSplit s = enzyme_ckpt_periodic_split(n, b);
      int64_t segs = enzyme_ckpt_periodic_segments(s);
      bad_p += replay(&EnzymeCkptPeriodic, n, b, &fwd, &slots, starts, &nstarts);
      /* the forward sweep keeps every segment's start but the last one's, which it reverses
       * storing each of its steps (the first one too when it is the only segment) */
      for (int64_t k = 0; k + 1 < segs; k++)
        bad_seg += k >= nstarts || starts[k] != enzyme_ckpt_periodic_start(s, k);
    }
  check_i("binomial_reverses_each_step_once", bad_b, 0);
  check_i("binomial_within_budget", bad_slots, 0);
  check_i("periodic_reverses_each_step_once", bad_p, 0);
  check_i("periodic_stores_split_starts", bad_seg, 0);
  check("builtin_4_is_binomial",
        __enzyme_checkpoint_builtin(ENZYME_CKPT_SCHEDULE_BINOMIAL) == &EnzymeCkptBinomial, 1, 0);
  snprintf(name, sizeof name, "builtin_2_is_revolve");
  check(name, __enzyme_checkpoint_builtin(ENZYME_CKPT_SCHEDULE_REVOLVE) == &EnzymeCkptRevolve, 1,
        0);
}

/* ---- gradients ---- */

#define N 3
static double side; /* a global the step writes: the driver's snapshots hold it */

__attribute__((noinline)) static void step(int64_t i, double *u, double c) {
  double t[N];
  for (int k = 0; k < N; k++)
    t[k] = u[k] + c * sin(u[(k + 1) % N]) + 0.02 * (double)i * u[k] - 0.1 * side;
  for (int k = 0; k < N; k++)
    u[k] = t[k];
  side = 0.8 * side + 0.1 * cos(u[0]);
}

static double loss(const double *u) {
  double s = side;
  for (int k = 0; k < N; k++)
    s += (k + 1) * u[k] * u[k];
  return s;
}

double plain(double *u, double c, int64_t n) {
  side = 0.25;
  for (int64_t i = 0; i < n; i++)
    step(i, u, c);
  return loss(u);
}

double ckpt(double *u, double c, int64_t n, EnzymeCkptConfig *cfg) {
  side = 0.25;
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, &EnzymeCkptBinomial, cfg,
                          enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u, c);
  return loss(u);
}

/* the loop annotation: schedule 4 with a budget of 3, and with the default budget */
#define ANNOTATED(NAME, ATTR)                                                                 \
  __attribute__((noinline)) double NAME(double *u, double c, int64_t n) {                     \
    side = 0.25;                                                                              \
    __enzyme_ptr_size_hint(u, N * sizeof(double));                                            \
    ATTR for (int64_t i = 0; i < n; i++) step(i, u, c);                                       \
    return loss(u);                                                                           \
  }
ANNOTATED(annotated3, __attribute__((enzyme_checkpoint("binomial", 3))))
ANNOTATED(annotated, __attribute__((enzyme_checkpoint("binomial"))))

static void init(double *u) {
  for (int k = 0; k < N; k++)
    u[k] = 0.3 + 0.2 * k;
}

/* Enzyme's calls name the function itself: one call per annotated function. */
static void annotated_check(int f, int64_t n, double dc, const double *du) {
  const double c0 = 0.4;
  double v[N], dv[N] = {0}, tv[N], w[N], dot = 0.7 * dc, dc2, jv;
  char name[96];
  init(v);
  init(w);
  for (int k = 0; k < N; k++) {
    tv[k] = 0.5 - 0.2 * k;
    dot += tv[k] * du[k];
  }
  if (f == 0) {
    dc2 = __enzyme_autodiff((void *)annotated3, enzyme_dup, v, dv, c0, enzyme_const, n);
    jv = __enzyme_fwddiff((void *)annotated3, enzyme_dup, w, tv, c0, 0.7, enzyme_const, n);
  } else {
    dc2 = __enzyme_autodiff((void *)annotated, enzyme_dup, v, dv, c0, enzyme_const, n);
    jv = __enzyme_fwddiff((void *)annotated, enzyme_dup, w, tv, c0, 0.7, enzyme_const, n);
  }
  snprintf(name, sizeof name, "annotated%d_n%lld_dc", f, (long long)n);
  check(name, dc2, dc, 1e-12);
  for (int k = 0; k < N; k++) {
    snprintf(name, sizeof name, "annotated%d_n%lld_du%d", f, (long long)n, k);
    check(name, dv[k], du[k], 1e-12);
  }
  /* forward mode: <J t, 1> = <t, J^T 1>, t = (tangent of u, 0.7 for c) */
  snprintf(name, sizeof name, "annotated%d_n%lld_forward_dot", f, (long long)n);
  check(name, jv, dot, 1e-10);
}

static void gradients(void) {
  static const int64_t steps[] = {0, 1, 2, 5, 11, 24};
  static const int64_t budgets[] = {0, 1, 2, 3, 9};
  const double c0 = 0.4, h = 1e-6;
  char name[96];
  for (unsigned a = 0; a < sizeof steps / sizeof *steps; a++) {
    int64_t n = steps[a];
    double u[N], du[N] = {0}, after[N], up[N], um[N];
    init(u);
    double dc = __enzyme_autodiff((void *)plain, enzyme_dup, u, du, c0, enzyme_const, n);
    for (int k = 0; k < N; k++)
      after[k] = u[k];
    for (int k = 0; k < N; k++) {
      init(up);
      init(um);
      up[k] += h;
      um[k] -= h;
      snprintf(name, sizeof name, "fd_du%d_n%lld", k, (long long)n);
      check(name, du[k], (plain(up, c0, n) - plain(um, c0, n)) / (2 * h), 1e-6);
    }
    init(up);
    init(um);
    snprintf(name, sizeof name, "fd_dc_n%lld", (long long)n);
    check(name, dc, (plain(up, c0 + h, n) - plain(um, c0 - h, n)) / (2 * h), 1e-6);
    for (unsigned b = 0; b < sizeof budgets / sizeof *budgets; b++) {
      double v[N], dv[N] = {0};
      EnzymeCkptStats st;
      EnzymeCkptConfig cfg = {budgets[b], 0, NULL, 0, &st, 0};
      int64_t cap = enzyme_ckpt_binomial_slots(n, budgets[b]);
      memset(&st, 0, sizeof st);
      init(v);
      double dc2 =
          __enzyme_autodiff((void *)ckpt, enzyme_dup, v, dv, c0, enzyme_const, n, enzyme_const,
                            &cfg);
      snprintf(name, sizeof name, "binomial_n%lld_b%lld_dc", (long long)n, (long long)budgets[b]);
      check(name, dc2, dc, 1e-12);
      for (int k = 0; k < N; k++) {
        snprintf(name, sizeof name, "binomial_n%lld_b%lld_du%d", (long long)n,
                 (long long)budgets[b], k);
        check(name, dv[k], du[k], 1e-12);
        snprintf(name, sizeof name, "binomial_n%lld_b%lld_state%d", (long long)n,
                 (long long)budgets[b], k);
        check(name, v[k], after[k], 0);
      }
      snprintf(name, sizeof name, "binomial_n%lld_b%lld_taped", (long long)n,
               (long long)budgets[b]);
      check_i(name, st.taped_steps, n);
      snprintf(name, sizeof name, "binomial_n%lld_b%lld_slots_within", (long long)n,
               (long long)budgets[b]);
      check_i(name, st.max_slots <= cap, 1);
    }
    annotated_check(0, n, dc, du);
    annotated_check(1, n, dc, du);
  }
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  arithmetic();
  schemes();
  gradients();
  return failures != 0;
}
