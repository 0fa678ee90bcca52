/*
 * enzyme-cc's <enzyme/checkpoint_schedule.h>: the arithmetic of Enzyme's checkpointing
 * schedules, with no dependencies (no libc calls), so that a loop annotation's schedule and
 * budget mean the same to the schemes of <enzyme/checkpoint.h>, the link step and a program.
 *
 * A budget counts the checkpoints kept through a loop's reverse sweep: the slots of a binomial
 * schedule, the segments of a periodic one. A budget <= 0 asks for the default: floor(sqrt(n))
 * slots (at least 2) for the binomial schedules, segments of floor(sqrt(n)) steps for the
 * periodic one.
 */
#ifndef ENZYME_CHECKPOINT_SCHEDULE_H
#define ENZYME_CHECKPOINT_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

/* Schedule tags: __enzyme_set_checkpointing(tag, budget), the loop annotations,
 * __enzyme_checkpoint_builtin(tag) and __enzyme_ckpt_schedule_begin. */
enum {
  ENZYME_CKPT_SCHEDULE_NONE = 0,
  ENZYME_CKPT_SCHEDULE_PERIODIC = 1,  /* segment starts kept, a segment replayed to reverse it */
  ENZYME_CKPT_SCHEDULE_REVOLVE = 2,   /* Griewank's binomial schedule, least recomputation */
  ENZYME_CKPT_SCHEDULE_STORE_ALL = 3, /* the state before every step */
  ENZYME_CKPT_SCHEDULE_BINOMIAL = 4   /* Enzyme-MLIR's: a stack of slots placed by
                                         enzyme_ckpt_binomial_progress */
};

/* A scheme's actions (Checkpointing.jl's flag values); see <enzyme/checkpoint.h>. */
enum {
  ENZYME_CKPT_NONE = 0,
  ENZYME_CKPT_STORE = 1,
  ENZYME_CKPT_RESTORE = 2,
  ENZYME_CKPT_FORWARD = 3,
  ENZYME_CKPT_FIRSTUTURN = 4,
  ENZYME_CKPT_UTURN = 5,
  ENZYME_CKPT_ERROR = 6,
  ENZYME_CKPT_DONE = 7
};

/* The tag of a schedule's name as the frontends spell it: "none", "periodic" (also "regular"),
 * "revolve", "store_all", "binomial"; -1 otherwise. `name` has `len` characters (no terminator
 * needed): a name must match all of them and nothing more. */
static inline int64_t enzyme_ckpt_schedule_from_name(const char *name, size_t len) {
  static const char *const names[] = {"none",      "periodic", "revolve",
                                      "store_all", "binomial", "regular"};
  static const int64_t tags[] = {ENZYME_CKPT_SCHEDULE_NONE,      ENZYME_CKPT_SCHEDULE_PERIODIC,
                                 ENZYME_CKPT_SCHEDULE_REVOLVE,   ENZYME_CKPT_SCHEDULE_STORE_ALL,
                                 ENZYME_CKPT_SCHEDULE_BINOMIAL,  ENZYME_CKPT_SCHEDULE_PERIODIC};
  size_t i, k;
  for (i = 0; i < sizeof names / sizeof *names; i++) {
    const char *s = names[i];
    for (k = 0; k < len && s[k] && s[k] == name[k]; k++)
      ;
    if (k == len && !s[k])
      return tags[i];
  }
  return -1;
}

/* floor(sqrt(n)) (0 for n <= 0): Newton's iteration from above, which decreases to it. */
static inline int64_t enzyme_ckpt_isqrt(int64_t n) {
  int64_t x, y;
  if (n <= 0)
    return 0;
  x = n;
  y = x / 2 + x % 2;
  while (y < x) {
    x = y;
    y = (x + n / x) / 2;
  }
  return x;
}

/* The advance from a slot with n steps still to reverse and s slots to place (this one
 * included). With Griewank's beta(s, t) = C(s + t, t), the most steps s slots reverse with t
 * repetitions, and t the least with beta(s, t) >= n, the advances that keep the repetitions
 * minimal form the window [n - beta(s-1, t), beta(s, t-1)]; this is its midpoint after
 * clamping the window to [1, n-1], capped so that each of the other s-1 slots keeps a step.
 * One slot advances all n, so the advances of a stack of s <= n slots sum to n. */
static inline int64_t enzyme_ckpt_binomial_progress(int64_t n, int64_t s) {
  int64_t t = 0, beta = 1, prev = 0, lo, hi, mid; /* beta = beta(s, t), prev = beta(s, t-1) */
  if (n <= 0)
    return 0;
  if (n == 1 || s <= 1)
    return n;
  while (beta < n) {
    t++;
    prev = beta;
    if (beta > INT64_MAX / (s + t)) { /* beta(s, t) is past any n this far from overflow */
      beta = INT64_MAX;
      break;
    }
    beta = beta * (s + t) / t; /* C(s+t, t) = C(s+t-1, t-1) (s+t)/t, exact */
  }
  lo = n - (beta - prev); /* Pascal: beta(s-1, t) = beta(s, t) - beta(s, t-1) */
  hi = prev;
  if (lo < 1)
    lo = 1;
  if (hi > n - 1)
    hi = n - 1;
  mid = (lo + hi) / 2; /* both in [1, n-1] */
  if (mid > n - (s - 1))
    mid = n - (s - 1);
  return mid < 1 ? 1 : mid;
}

/* The slots of a binomial schedule of n steps with `budget`: the default for budget <= 0,
 * never more than the steps, at least one. */
static inline int64_t enzyme_ckpt_binomial_slots(int64_t n, int64_t budget) {
  if (budget <= 0) {
    budget = enzyme_ckpt_isqrt(n);
    budget = budget < 2 ? 2 : budget;
  }
  if (budget > n)
    budget = n;
  return budget < 1 ? 1 : budget;
}

/* A periodic schedule of n steps: `outer` segments of `inner` steps, then one of `trailing`
 * steps if they do not divide n. inner = ceil(n / budget), so there are at most `budget`
 * segments; floor(sqrt(n)) for budget <= 0. */
typedef struct EnzymeCkptPeriodicSplit {
  int64_t inner;
  int64_t outer;
  int64_t trailing;
} EnzymeCkptPeriodicSplit;

static inline EnzymeCkptPeriodicSplit enzyme_ckpt_periodic_split(int64_t n, int64_t budget) {
  EnzymeCkptPeriodicSplit s = {1, 0, 0};
  if (n <= 0)
    return s;
  s.inner = budget > 0 ? n / budget + (n % budget != 0) : enzyme_ckpt_isqrt(n);
  if (s.inner < 1)
    s.inner = 1;
  s.outer = n / s.inner;
  s.trailing = n % s.inner;
  return s;
}

/* Segments in all, the trailing one included. */
static inline int64_t enzyme_ckpt_periodic_segments(EnzymeCkptPeriodicSplit s) {
  return s.outer + (s.trailing != 0);
}

/* The first step of segment k. */
static inline int64_t enzyme_ckpt_periodic_start(EnzymeCkptPeriodicSplit s, int64_t k) {
  return k * s.inner;
}

/* The steps of segment k. */
static inline int64_t enzyme_ckpt_periodic_length(EnzymeCkptPeriodicSplit s, int64_t k) {
  return k < s.outer ? s.inner : s.trailing;
}

#endif /* ENZYME_CHECKPOINT_SCHEDULE_H */
