/*
 * enzyme-cc's <enzyme/checkpoint.h>: Enzyme's checkpointed time loops.
 *
 *   __enzyme_checkpoint_for((void *)step, start, n, enzyme_scheme, &scheme, &config,
 *                           [enzyme_checkpoint_region, ptr, bytes,]... args...);
 *
 * is `for (int64_t i = start; i < start + n; i++) step(i, args...);` and
 *
 *   __enzyme_checkpoint_while((void *)step, enzyme_scheme, &scheme, &config, [regions]..., args...);
 *
 * is `int64_t i = 0; while (step(i++, args...));`. In the primal both are the plain loop. In
 * reverse mode the link step replaces the taped loop by a driver (the functions at the end of
 * this file): it asks the scheme for actions (Revolve's protocol, with Checkpointing.jl's flag
 * values), copies the snapshot (the marked regions plus every mutable global the step may touch)
 * into and out of the scheme's slots, recomputes forward from the nearest snapshot, and
 * differentiates one step at a time (forward and reverse together), so no tape outlives a step.
 * The step's pointer arguments keep their shadows across steps; the snapshot holds primal memory
 * only. Whatever else the step writes must be in a region: the driver cannot restore it.
 *
 * Actions (steps are counted from 0; step j runs with i = start + j):
 *   STORE (iteration c, cpnum k)          the state is the one before step c: keep it in slot k
 *   FORWARD (startiteration a, iteration b) run steps a..b-1 without taping
 *   FIRSTUTURN (iteration b)              the state is before step b-1, the last one: the
 *                                         forward sweep keeps it in slot -2, runs that step and
 *                                         returns; the reverse sweep starts by differentiating it
 *   UTURN (iteration b)                   the state is before step b-1: differentiate that step
 *   RESTORE (iteration c, cpnum k)        load slot k, the state before step c
 *   DONE                                  finished (the first action when n = 0)
 * Slot -1 holds the state the reverse sweep starts from; it is loaded back at the end, so the
 * primal memory is left as the forward pass left it.
 *
 * Schemes here (`enzyme_scheme, &EnzymeCkptRevolve, &config`):
 *   EnzymeCkptRevolve   Griewank's binomial schedule with config.snapshots slots: the minimal
 *                       number of recomputed steps for that many snapshots. enzyme-cc: with
 *                       config.snapshots <= 0 and config.budget_bytes > 0 the number of slots is
 *                       what fits in budget_bytes (at least one).
 *   EnzymeCkptBinomial  Enzyme-MLIR's binomial schedule with config.snapshots slots (default:
 *                       floor(sqrt(n)), at least 2; enzyme-cc: or budget_bytes as Revolve's)
 *   EnzymeCkptPeriodic  config.snapshots segments; the segment being reversed stores every step
 *                       (<= 0: segments of floor(sqrt(n)) steps)
 *   EnzymeCkptStoreAll  a snapshot before every step; also for __enzyme_checkpoint_while
 * Snapshots live in memory, or, past config.mem_budget bytes of slots, in files under
 * config.spill_dir. Device memory (a region with addrspace != 0) is not supported.
 */
#ifndef ENZYME_CHECKPOINT_H
#define ENZYME_CHECKPOINT_H

#include "checkpoint_schedule.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__clang__)
/* the schemes and the driver are runtime code, never differentiated themselves */
#define ENZYME_CKPT_FN __attribute__((annotate("enzyme_inactive")))
#else
#define ENZYME_CKPT_FN
#endif

#define ENZYME_CKPT_ABI_VERSION 1

/* The action flags and schedule tags are in <enzyme/checkpoint_schedule.h>. */

typedef struct EnzymeCkptAction {
  int32_t flag;
  int64_t iteration;
  int64_t startiteration;
  int64_t cpnum;
} EnzymeCkptAction;

typedef struct EnzymeCkptRegion {
  void *ptr;
  uint64_t bytes;
  uint32_t addrspace;
  uint32_t flags;
} EnzymeCkptRegion;

typedef struct EnzymeCheckpointScheme {
  uint32_t version;
  /* nsteps = -1: a while loop. snapshot_bytes: the bytes of all regions. */
  void *(*init)(void *data, int64_t nsteps, uint64_t snapshot_bytes);
  void (*next_action)(void *state, EnzymeCkptAction *out);
  void (*store)(void *state, int64_t slot, int64_t step, const EnzymeCkptRegion *regions,
                uint64_t nregions);
  void (*restore)(void *state, int64_t slot, int64_t step, const EnzymeCkptRegion *regions,
                  uint64_t nregions);
  void (*set_nsteps)(void *state, int64_t nsteps);
  void (*finalize)(void *state);
  /* Optional: copy the state itself. env holds the step's arguments after i, each followed by
   * its shadow if it has one, laid out as a C struct of those members. */
  void (*save_state)(void *state, int64_t slot, int64_t step, void *env);
  void (*load_state)(void *state, int64_t slot, int64_t step, void *env);
  /* Optional; enzyme-cc never calls it (save_state/load_state get the whole env). */
  void (*set_paths)(void *state, const int64_t *paths, uint64_t len);
} EnzymeCheckpointScheme;

extern int enzyme_scheme;
extern int enzyme_checkpoint_region;

/* nothrow: C++ calls them with `call`, not `invoke` (the link step replaces them) */
__attribute__((nothrow)) void __enzyme_checkpoint_for(void *step, int64_t start, int64_t n, ...);
__attribute__((nothrow)) void __enzyme_checkpoint_while(void *step, ...);

typedef struct EnzymeCkptStats {
  int64_t forward_steps; /* steps run without taping */
  int64_t taped_steps;   /* steps differentiated (each exactly once) */
  int64_t stores;
  int64_t restores;
  int64_t max_slots; /* slots holding a snapshot, at most */
  uint64_t max_bytes;
} EnzymeCkptStats;

typedef struct EnzymeCkptConfig {
  int64_t snapshots;      /* Revolve: slots; Periodic: segments */
  int verbose;            /* 1: a summary on stderr; 2: every action too */
  const char *spill_dir;  /* NULL: snapshots in memory */
  uint64_t mem_budget;    /* with spill_dir: slots starting past this many bytes go to files */
  EnzymeCkptStats *stats; /* filled in when the schedule completes */
  uint64_t budget_bytes;  /* enzyme-cc: Revolve's slots from a memory budget (snapshots <= 0) */
} EnzymeCkptConfig;

/* enzyme.toml's [checkpoint] budget_bytes: defined by the link step when the key is set */
extern const uint64_t __enzyme_cc_ckpt_default_budget __attribute__((weak));

/* ---- snapshot slots (slot -2 and -1 are the driver's, kept at index 0 and 1) ---- */

typedef struct enzyme_ckpt_slots {
  const EnzymeCkptConfig *config;
  uint64_t bytes;
  int64_t cap;
  unsigned char *held; /* per index: 0 empty, 1 in memory, 2 in a file */
  void **mem;
  int64_t used;
  EnzymeCkptStats stats;
} enzyme_ckpt_slots;

static inline ENZYME_CKPT_FN void enzyme_ckpt_die(const char *why) {
  fprintf(stderr, "enzyme checkpoint: %s\n", why);
  abort();
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_file(const enzyme_ckpt_slots *s, int64_t idx,
                                                   char *buf, size_t len) {
  snprintf(buf, len, "%s/enzyme-cc-ckpt-%p-%lld", s->config->spill_dir, (const void *)s,
           (long long)idx);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_put(enzyme_ckpt_slots *s, int64_t slot,
                                                  const EnzymeCkptRegion *r, uint64_t nr) {
  int64_t idx = slot + 2;
  uint64_t k, off = 0;
  int to_file;
  if (idx < 0)
    enzyme_ckpt_die("store into a slot below -2");
  if (idx >= s->cap) {
    int64_t cap = s->cap ? s->cap : 8;
    while (cap <= idx)
      cap *= 2;
    s->held = (unsigned char *)realloc(s->held, (size_t)cap);
    s->mem = (void **)realloc(s->mem, (size_t)cap * sizeof(void *));
    memset(s->held + s->cap, 0, (size_t)(cap - s->cap));
    memset(s->mem + s->cap, 0, (size_t)(cap - s->cap) * sizeof(void *));
    s->cap = cap;
  }
  for (k = 0; k < nr; k++)
    if (r[k].addrspace)
      enzyme_ckpt_die("snapshots of device memory (addrspace != 0) are not supported");
  to_file = s->config->spill_dir && (uint64_t)idx * s->bytes >= s->config->mem_budget;
  if (slot >= 0) {
    s->stats.stores++;
    if (!s->held[idx] && ++s->used > s->stats.max_slots) {
      s->stats.max_slots = s->used;
      s->stats.max_bytes = (uint64_t)s->used * s->bytes;
    }
  }
  if (to_file) {
    char path[4096];
    FILE *f;
    enzyme_ckpt_file(s, idx, path, sizeof path);
    f = fopen(path, "wb");
    if (!f)
      enzyme_ckpt_die("cannot write a snapshot file under config.spill_dir");
    for (k = 0; k < nr; k++)
      if (fwrite(r[k].ptr, 1, r[k].bytes, f) != r[k].bytes)
        enzyme_ckpt_die("short write of a snapshot file");
    fclose(f);
    s->held[idx] = 2;
    return;
  }
  if (!s->mem[idx])
    s->mem[idx] = malloc(s->bytes ? s->bytes : 1);
  for (k = 0; k < nr; k++) {
    memcpy((char *)s->mem[idx] + off, r[k].ptr, r[k].bytes);
    off += r[k].bytes;
  }
  s->held[idx] = 1;
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_get(enzyme_ckpt_slots *s, int64_t slot,
                                                  const EnzymeCkptRegion *r, uint64_t nr) {
  int64_t idx = slot + 2;
  uint64_t k, off = 0;
  if (idx < 0 || idx >= s->cap || !s->held[idx])
    enzyme_ckpt_die("restore of a slot that holds no snapshot");
  if (slot >= 0)
    s->stats.restores++;
  if (s->held[idx] == 2) {
    char path[4096];
    FILE *f;
    enzyme_ckpt_file(s, idx, path, sizeof path);
    f = fopen(path, "rb");
    if (!f)
      enzyme_ckpt_die("cannot read a snapshot file");
    for (k = 0; k < nr; k++)
      if (fread(r[k].ptr, 1, r[k].bytes, f) != r[k].bytes)
        enzyme_ckpt_die("short read of a snapshot file");
    fclose(f);
    return;
  }
  for (k = 0; k < nr; k++) {
    memcpy(r[k].ptr, (char *)s->mem[idx] + off, r[k].bytes);
    off += r[k].bytes;
  }
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_note(enzyme_ckpt_slots *s,
                                                   const EnzymeCkptAction *a) {
  static const char *names[] = {"none",       "store", "restore", "forward",
                                "firstuturn", "uturn", "error",   "done"};
  if (a->flag == ENZYME_CKPT_FORWARD)
    s->stats.forward_steps += a->iteration - a->startiteration;
  if (a->flag == ENZYME_CKPT_FIRSTUTURN || a->flag == ENZYME_CKPT_UTURN)
    s->stats.taped_steps++;
  if (s->config->verbose > 1)
    fprintf(stderr, "action %s %lld %lld %lld\n", names[a->flag & 7], (long long)a->iteration,
            (long long)a->startiteration, (long long)a->cpnum);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_close(enzyme_ckpt_slots *s) {
  int64_t k;
  if (s->config->verbose > 0)
    fprintf(stderr,
            "enzyme checkpoint: %lld forward steps, %lld taped steps, %lld stores, %lld "
            "restores, %lld slots (%llu bytes)\n",
            (long long)s->stats.forward_steps, (long long)s->stats.taped_steps,
            (long long)s->stats.stores, (long long)s->stats.restores,
            (long long)s->stats.max_slots, (unsigned long long)s->stats.max_bytes);
  if (s->config->stats)
    *s->config->stats = s->stats;
  for (k = 0; k < s->cap; k++) {
    if (s->held[k] == 2) {
      char path[4096];
      enzyme_ckpt_file(s, k, path, sizeof path);
      remove(path);
    }
    free(s->mem[k]);
  }
  free(s->held);
  free(s->mem);
}

/* ---- Revolve ----
 * A stack of snapshots (slot k holds the k-th, at step pos[k]); `fine` steps are still to be
 * reversed, the state is before step `cur` (-1: unknown, after a u-turn). From a snapshot at
 * cur with l = fine - cur steps and c slots counting the one at cur, advance by m steps and
 * store, where m lies in the window that keeps the total recomputation minimal: for the least t
 * with beta(c, t) = C(c + t, t) >= l, max(beta(c, t-2), l - beta(c-1, t)) <= m <=
 * min(beta(c, t-1), l - beta(c-1, t-1)) (checked against exhaustive search for c <= 8, l <= 400).
 */
typedef struct enzyme_ckpt_revolve {
  enzyme_ckpt_slots slots;
  int64_t nslots, fine, cur, depth, turned;
  int64_t *pos;
} enzyme_ckpt_revolve;

static inline ENZYME_CKPT_FN int64_t enzyme_ckpt_advance(int64_t l, int64_t c) {
  int64_t t = 0, b = 1, bt1, bt2, bc1t, bc1t1, lo, hi; /* b = beta(c, t) */
  if (c <= 1)
    return l - 1;
  while (b < l) {
    t++;
    b = b * (c + t) / t;
  }
  bt1 = b * t / (c + t);                      /* beta(c, t-1) */
  bt2 = t >= 2 ? bt1 * (t - 1) / (c + t - 1) : 0; /* beta(c, t-2) */
  bc1t = b * c / (c + t);                     /* beta(c-1, t) */
  bc1t1 = t >= 1 ? bc1t * t / (c - 1 + t) : 0; /* beta(c-1, t-1) */
  lo = bt2 > l - bc1t ? bt2 : l - bc1t;
  hi = bt1 < l - bc1t1 ? bt1 : l - bc1t1;
  if (hi > l - 1)
    hi = l - 1;
  if (lo < 1)
    lo = 1;
  return lo <= hi ? lo : hi;
}

/* config.snapshots, or with none the slots of `bytes` each that fit in config.budget_bytes or
 * else enzyme.toml's [checkpoint] budget_bytes; <= 0 when neither is given. */
static inline ENZYME_CKPT_FN int64_t enzyme_ckpt_config_slots(const EnzymeCkptConfig *config,
                                                              int64_t n, uint64_t bytes) {
  int64_t k = config->snapshots;
  uint64_t budget = config->budget_bytes;
  if (k <= 0 && budget == 0 && &__enzyme_cc_ckpt_default_budget)
    budget = __enzyme_cc_ckpt_default_budget;
  if (k <= 0 && budget > 0)
    k = bytes ? (int64_t)(budget / bytes) : n;
  return k;
}

static inline ENZYME_CKPT_FN void *enzyme_ckpt_revolve_init(void *data, int64_t n,
                                                            uint64_t bytes) {
  const EnzymeCkptConfig *config = (const EnzymeCkptConfig *)data;
  enzyme_ckpt_revolve *r;
  int64_t k = enzyme_ckpt_config_slots(config, n, bytes);
  if (n < 0)
    enzyme_ckpt_die("Revolve needs the number of steps (use EnzymeCkptStoreAll for a while loop)");
  if (k > n)
    k = n;
  if (k < 1)
    k = 1;
  r = (enzyme_ckpt_revolve *)calloc(1, sizeof *r);
  r->slots.config = config;
  r->slots.bytes = bytes;
  r->nslots = k;
  r->fine = n;
  r->cur = 0;
  r->pos = (int64_t *)calloc((size_t)k, sizeof(int64_t));
  return r;
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_revolve_next(void *state, EnzymeCkptAction *a) {
  enzyme_ckpt_revolve *r = (enzyme_ckpt_revolve *)state;
  a->startiteration = r->cur;
  a->cpnum = r->depth - 1;
  if (r->fine == 0) {
    a->flag = ENZYME_CKPT_DONE;
    a->iteration = 0;
  } else if (r->cur == r->fine - 1) {
    a->flag = r->turned ? ENZYME_CKPT_UTURN : ENZYME_CKPT_FIRSTUTURN;
    a->iteration = r->fine;
    r->turned = 1;
    r->fine--;
    r->cur = -1;
    if (r->depth && r->pos[r->depth - 1] == r->fine)
      r->depth--; /* that snapshot has served its last step */
  } else if (r->depth == 0 || (r->cur != r->pos[r->depth - 1] && r->depth < r->nslots &&
                               r->cur >= 0)) {
    /* the state at cur is not kept yet and a slot is free (at the start: always) */
    a->flag = ENZYME_CKPT_STORE;
    a->iteration = r->cur;
    a->cpnum = r->depth;
    r->pos[r->depth++] = r->cur;
  } else if (r->cur != r->pos[r->depth - 1]) {
    a->flag = ENZYME_CKPT_RESTORE;
    a->cpnum = r->depth - 1;
    a->iteration = a->startiteration = r->cur = r->pos[r->depth - 1];
  } else {
    int64_t m = enzyme_ckpt_advance(r->fine - r->cur, r->nslots - r->depth + 1);
    a->flag = ENZYME_CKPT_FORWARD;
    a->iteration = r->cur = r->cur + m;
  }
  enzyme_ckpt_note(&r->slots, a);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_revolve_store(void *state, int64_t slot,
                                                            int64_t step,
                                                            const EnzymeCkptRegion *rg,
                                                            uint64_t nr) {
  (void)step;
  enzyme_ckpt_put(&((enzyme_ckpt_revolve *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_revolve_restore(void *state, int64_t slot,
                                                              int64_t step,
                                                              const EnzymeCkptRegion *rg,
                                                              uint64_t nr) {
  (void)step;
  enzyme_ckpt_get(&((enzyme_ckpt_revolve *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_revolve_finalize(void *state) {
  enzyme_ckpt_revolve *r = (enzyme_ckpt_revolve *)state;
  enzyme_ckpt_close(&r->slots);
  free(r->pos);
  free(r);
}

static const EnzymeCheckpointScheme EnzymeCkptRevolve = {
    ENZYME_CKPT_ABI_VERSION,     enzyme_ckpt_revolve_init,     enzyme_ckpt_revolve_next,
    enzyme_ckpt_revolve_store,   enzyme_ckpt_revolve_restore,  NULL,
    enzyme_ckpt_revolve_finalize, NULL,                        NULL,
    NULL};

/* ---- Enzyme-MLIR's binomial schedule (EnzymeCkptBinomial, schedule 4) ----
 * A stack of config.snapshots slots (the default of enzyme_ckpt_binomial_slots without one).
 * Placing slots from position q towards `cur`: the slot k at q advances
 * enzyme_ckpt_binomial_progress(cur - q, slots left) steps. The forward sweep places every
 * slot from step 0 towards n (the advances sum to n), running up to step n-1 only: the driver's
 * first turn runs the last step. To reverse step cur-1 (cur = n down to 1) it restores the top
 * slot and places slots from it towards cur, never running past cur-1; those placed become the
 * stack, and a top slot at cur-1 itself is popped. Reversing step n-1 replays the forward
 * sweep's last advance once more, as Enzyme-MLIR's reverse pass does. */
enum { ENZYME_CKPT_B_SWEEP, ENZYME_CKPT_B_RESTORE, ENZYME_CKPT_B_PLACE };

typedef struct enzyme_ckpt_binomial {
  enzyme_ckpt_slots slots;
  int64_t nslots, phase, turned;
  int64_t cur;  /* the step being reversed is cur-1 */
  int64_t sp;   /* slots on the stack */
  int64_t q;    /* the position placing has reached (the state is min(q, cur-1)) */
  int64_t next; /* the slot to place next */
  int64_t to;   /* q's next position: > q while an advance is pending */
  int64_t top;  /* the restored slot, which already holds its position */
  int64_t *pos; /* per slot: the step whose state it holds */
} enzyme_ckpt_binomial;

static inline ENZYME_CKPT_FN void *enzyme_ckpt_binomial_init(void *data, int64_t n,
                                                             uint64_t bytes) {
  const EnzymeCkptConfig *config = (const EnzymeCkptConfig *)data;
  enzyme_ckpt_binomial *b;
  if (n < 0)
    enzyme_ckpt_die("the binomial schedule needs the number of steps (use EnzymeCkptStoreAll "
                    "for a while loop)");
  b = (enzyme_ckpt_binomial *)calloc(1, sizeof *b);
  b->slots.config = config;
  b->slots.bytes = bytes;
  b->nslots = enzyme_ckpt_binomial_slots(n, enzyme_ckpt_config_slots(config, n, bytes));
  b->cur = n;
  b->top = -1;
  b->pos = (int64_t *)calloc((size_t)b->nslots, sizeof(int64_t));
  return b;
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_binomial_next(void *state, EnzymeCkptAction *a) {
  enzyme_ckpt_binomial *b = (enzyme_ckpt_binomial *)state;
  for (;;) {
    a->cpnum = -1;
    if (b->to > b->q) { /* the pending advance, stopping short of step cur-1 */
      int64_t from = b->q, upto = b->to < b->cur ? b->to : b->cur - 1;
      b->q = b->to;
      if (upto > from) {
        a->flag = ENZYME_CKPT_FORWARD;
        a->startiteration = from;
        a->iteration = upto;
        break;
      }
      continue;
    }
    a->startiteration = a->iteration = b->q;
    if (b->phase == ENZYME_CKPT_B_SWEEP ? b->next < b->nslots && b->q < b->cur
        : b->phase == ENZYME_CKPT_B_PLACE && b->q + 1 < b->cur) {
      int64_t k = b->next++, left = b->nslots - k, rem = b->cur - b->q;
      b->pos[k] = b->q;
      b->to = b->q + enzyme_ckpt_binomial_progress(rem, left < rem ? left : rem);
      if (k == b->top)
        continue;
      a->flag = ENZYME_CKPT_STORE;
      a->cpnum = k;
      break;
    }
    if (b->phase != ENZYME_CKPT_B_PLACE && b->cur == 0) {
      a->flag = ENZYME_CKPT_DONE;
      a->startiteration = a->iteration = 0;
      break;
    }
    if (b->phase != ENZYME_CKPT_B_PLACE) { /* the sweep is done, or a step was reversed */
      if (b->phase == ENZYME_CKPT_B_SWEEP)
        b->sp = b->next;
      b->top = b->next = b->sp - 1;
      b->q = b->to = b->pos[b->top];
      b->phase = ENZYME_CKPT_B_PLACE;
      a->flag = ENZYME_CKPT_RESTORE;
      a->cpnum = b->top;
      a->startiteration = a->iteration = b->q;
      break;
    }
    b->sp = b->next; /* the top slot is popped when it held cur-1 itself */
    a->flag = b->turned ? ENZYME_CKPT_UTURN : ENZYME_CKPT_FIRSTUTURN;
    a->startiteration = b->cur - 1;
    a->iteration = b->cur--;
    b->turned = 1;
    b->phase = ENZYME_CKPT_B_RESTORE;
    break;
  }
  enzyme_ckpt_note(&b->slots, a);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_binomial_store(void *state, int64_t slot,
                                                             int64_t step,
                                                             const EnzymeCkptRegion *rg,
                                                             uint64_t nr) {
  (void)step;
  enzyme_ckpt_put(&((enzyme_ckpt_binomial *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_binomial_restore(void *state, int64_t slot,
                                                               int64_t step,
                                                               const EnzymeCkptRegion *rg,
                                                               uint64_t nr) {
  (void)step;
  enzyme_ckpt_get(&((enzyme_ckpt_binomial *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_binomial_finalize(void *state) {
  enzyme_ckpt_binomial *b = (enzyme_ckpt_binomial *)state;
  enzyme_ckpt_close(&b->slots);
  free(b->pos);
  free(b);
}

static const EnzymeCheckpointScheme EnzymeCkptBinomial = {
    ENZYME_CKPT_ABI_VERSION,       enzyme_ckpt_binomial_init,    enzyme_ckpt_binomial_next,
    enzyme_ckpt_binomial_store,    enzyme_ckpt_binomial_restore, NULL,
    enzyme_ckpt_binomial_finalize, NULL,                         NULL,
    NULL};

/* ---- Periodic and store-all ----
 * Segments of ceil(n / K) steps (enzyme_ckpt_periodic_split: floor(sqrt(n)) for K <= 0). The
 * forward sweep stores the start of every segment but the last (slot k) and runs through it. A
 * segment [s, e) is reversed from its start: store the state before each of its steps but the
 * last (slots K..; its start stays in slot k), run to e - 1, u-turn, then restore and u-turn
 * backwards. A while loop (store-all only) stores before
 * every step until set_nsteps, then reverses that one segment. */
enum { ENZYME_CKPT_P_STARTS, ENZYME_CKPT_P_DOWN, ENZYME_CKPT_P_BACK, ENZYME_CKPT_P_ONLINE,
       ENZYME_CKPT_P_ENDED };

typedef struct enzyme_ckpt_periodic {
  enzyme_ckpt_slots slots;
  int64_t n, seglen, nseg, phase, seg;
  int64_t j;      /* STARTS/DOWN/ONLINE: the state is before step j; BACK: next step to reverse */
  int64_t stored; /* DOWN/STARTS/ONLINE: the state at j is kept; BACK: the state at j is loaded */
  int64_t turned;
} enzyme_ckpt_periodic;

static inline ENZYME_CKPT_FN int64_t enzyme_ckpt_seg_slot(const enzyme_ckpt_periodic *p,
                                                          int64_t j) {
  int64_t s = p->seg * p->seglen;
  return j == s && p->seg < p->nseg - 1 ? p->seg : p->nseg + (j - s);
}

static inline ENZYME_CKPT_FN void *enzyme_ckpt_periodic_make(void *data, int64_t n,
                                                             uint64_t bytes, int64_t k) {
  enzyme_ckpt_periodic *p = (enzyme_ckpt_periodic *)calloc(1, sizeof *p);
  p->slots.config = (const EnzymeCkptConfig *)data;
  p->slots.bytes = bytes;
  if (n < 0) {
    if (k != 1)
      enzyme_ckpt_die("periodic checkpointing needs the number of steps (use EnzymeCkptStoreAll "
                      "for a while loop)");
    p->phase = ENZYME_CKPT_P_ONLINE;
    p->nseg = 1;
    return p;
  }
  {
    /* Enzyme-MLIR's segments: ceil(n / k) steps each, floor(sqrt(n)) for k <= 0 */
    EnzymeCkptPeriodicSplit split = enzyme_ckpt_periodic_split(n, k);
    p->n = n;
    p->seglen = split.inner;
    p->nseg = enzyme_ckpt_periodic_segments(split);
  }
  p->phase = p->nseg > 1 ? ENZYME_CKPT_P_STARTS : ENZYME_CKPT_P_DOWN;
  return p;
}

static inline ENZYME_CKPT_FN void *enzyme_ckpt_periodic_init(void *data, int64_t n,
                                                             uint64_t bytes) {
  return enzyme_ckpt_periodic_make(data, n, bytes, ((const EnzymeCkptConfig *)data)->snapshots);
}

static inline ENZYME_CKPT_FN void *enzyme_ckpt_store_all_init(void *data, int64_t n,
                                                              uint64_t bytes) {
  return enzyme_ckpt_periodic_make(data, n, bytes, 1);
}

/* A while loop ended after n steps: the state before step j is in slot 1 + j, the slots of a
 * single segment. Go back to the last step and reverse from there. */
static inline ENZYME_CKPT_FN void enzyme_ckpt_store_all_set_nsteps(void *state, int64_t n) {
  enzyme_ckpt_periodic *p = (enzyme_ckpt_periodic *)state;
  p->n = p->seglen = n;
  p->nseg = 1;
  p->seg = 0;
  p->phase = ENZYME_CKPT_P_ENDED;
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_periodic_next(void *state, EnzymeCkptAction *a) {
  enzyme_ckpt_periodic *p = (enzyme_ckpt_periodic *)state;
  int64_t s = p->seg * p->seglen, e = s + p->seglen;
  if (e > p->n)
    e = p->n;
  a->cpnum = -1;
  a->startiteration = a->iteration = p->j;
  if (p->nseg == 0) {
    a->flag = ENZYME_CKPT_DONE;
  } else if (p->phase == ENZYME_CKPT_P_ONLINE) {
    if (!p->stored) {
      a->flag = ENZYME_CKPT_STORE;
      a->cpnum = 1 + p->j;
    } else {
      a->flag = ENZYME_CKPT_FORWARD;
      a->iteration = ++p->j;
    }
    p->stored = !p->stored;
  } else if (p->phase == ENZYME_CKPT_P_ENDED) {
    a->flag = ENZYME_CKPT_RESTORE;
    a->startiteration = a->iteration = p->j = p->n - 1;
    a->cpnum = enzyme_ckpt_seg_slot(p, p->j);
    p->phase = ENZYME_CKPT_P_DOWN;
    p->stored = 1;
  } else if (p->phase == ENZYME_CKPT_P_STARTS) {
    if (!p->stored) {
      a->flag = ENZYME_CKPT_STORE;
      a->cpnum = p->seg;
      p->stored = 1;
    } else {
      a->flag = ENZYME_CKPT_FORWARD;
      a->iteration = p->j = e;
      p->stored = 0;
      if (++p->seg == p->nseg - 1)
        p->phase = ENZYME_CKPT_P_DOWN;
    }
  } else if (p->phase == ENZYME_CKPT_P_DOWN) {
    if (p->j == e - 1) {
      a->flag = p->turned ? ENZYME_CKPT_UTURN : ENZYME_CKPT_FIRSTUTURN;
      a->iteration = e;
      p->turned = 1;
      p->phase = ENZYME_CKPT_P_BACK;
      p->j = e - 2;
      p->stored = 0;
    } else if (!p->stored) {
      a->flag = ENZYME_CKPT_STORE;
      a->cpnum = enzyme_ckpt_seg_slot(p, p->j);
      p->stored = 1;
    } else {
      a->flag = ENZYME_CKPT_FORWARD;
      a->iteration = ++p->j;
      p->stored = 0;
    }
  } else if (p->j >= s) { /* BACK */
    if (!p->stored) {
      a->flag = ENZYME_CKPT_RESTORE;
      a->cpnum = enzyme_ckpt_seg_slot(p, p->j);
      p->stored = 1;
    } else {
      a->flag = ENZYME_CKPT_UTURN;
      a->iteration = p->j + 1;
      p->j--;
      p->stored = 0;
    }
  } else if (p->seg > 0) { /* the previous segment, from its start in slot seg */
    p->seg--;
    a->flag = ENZYME_CKPT_RESTORE;
    a->startiteration = a->iteration = p->j = p->seg * p->seglen;
    a->cpnum = p->seg;
    p->phase = ENZYME_CKPT_P_DOWN;
    p->stored = 1;
  } else {
    a->flag = ENZYME_CKPT_DONE;
    p->nseg = 0;
  }
  enzyme_ckpt_note(&p->slots, a);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_periodic_store(void *state, int64_t slot,
                                                             int64_t step,
                                                             const EnzymeCkptRegion *rg,
                                                             uint64_t nr) {
  (void)step;
  enzyme_ckpt_put(&((enzyme_ckpt_periodic *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_periodic_restore(void *state, int64_t slot,
                                                               int64_t step,
                                                               const EnzymeCkptRegion *rg,
                                                               uint64_t nr) {
  (void)step;
  enzyme_ckpt_get(&((enzyme_ckpt_periodic *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_periodic_finalize(void *state) {
  enzyme_ckpt_periodic *p = (enzyme_ckpt_periodic *)state;
  enzyme_ckpt_close(&p->slots);
  free(p);
}

static const EnzymeCheckpointScheme EnzymeCkptPeriodic = {
    ENZYME_CKPT_ABI_VERSION,      enzyme_ckpt_periodic_init,    enzyme_ckpt_periodic_next,
    enzyme_ckpt_periodic_store,   enzyme_ckpt_periodic_restore, NULL,
    enzyme_ckpt_periodic_finalize, NULL,                        NULL,
    NULL};

static const EnzymeCheckpointScheme EnzymeCkptStoreAll = {
    ENZYME_CKPT_ABI_VERSION,      enzyme_ckpt_store_all_init,   enzyme_ckpt_periodic_next,
    enzyme_ckpt_periodic_store,   enzyme_ckpt_periodic_restore, enzyme_ckpt_store_all_set_nsteps,
    enzyme_ckpt_periodic_finalize, NULL,                        NULL,
    NULL};

/* ---- Tapenade's binomial scheduler (adBinomial.c of Tapenade's ADFirstAidKit) ----
 * With ENZYME_CKPT_ADBINOMIAL defined, EnzymeCkptADBinomial runs the schedule Tapenade's
 * $AD BINOMIAL-CKP directive would, config.snapshots slots (at most 97), for comparisons with a
 * Tapenade adjoint. adBinomial.c is not part of enzyme-cc (nor of Enzyme): link Tapenade's. Its
 * sessions live on a static stack: loops using it may nest but not interleave. Its actions
 * count steps from 1: ADVANCE s runs step s, PUSHSNAP s saves the state after s steps,
 * LOOKSNAP / POPSNAP restore the newest snapshot (POPSNAP drops it), (FIRST)TURN s
 * differentiates step s. */
#ifdef ENZYME_CKPT_ADBINOMIAL
extern void adBinomial_init(int length, int nbSnap, int firstStep);
extern int adBinomial_next(int *action, int *step);

typedef struct enzyme_ckpt_adbinomial {
  enzyme_ckpt_slots slots;
  int64_t depth, done;
  int64_t at[128]; /* per snapshot on the stack: the steps done before it */
} enzyme_ckpt_adbinomial;

static inline ENZYME_CKPT_FN void *enzyme_ckpt_adbinomial_init(void *data, int64_t n,
                                                               uint64_t bytes) {
  const EnzymeCkptConfig *config = (const EnzymeCkptConfig *)data;
  enzyme_ckpt_adbinomial *b;
  int64_t k = config->snapshots < 1 ? 1 : config->snapshots;
  if (n < 0)
    enzyme_ckpt_die("adBinomial needs the number of steps");
  if (k > 97)
    enzyme_ckpt_die("adBinomial allows at most 97 snapshots");
  if (n > 2147483647)
    enzyme_ckpt_die("adBinomial counts steps in an int");
  b = (enzyme_ckpt_adbinomial *)calloc(1, sizeof *b);
  b->slots.config = config;
  b->slots.bytes = bytes;
  b->done = n == 0;
  if (n)
    adBinomial_init((int)n, (int)k, 1);
  return b;
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_adbinomial_next(void *state, EnzymeCkptAction *a) {
  enzyme_ckpt_adbinomial *b = (enzyme_ckpt_adbinomial *)state;
  int action = 0, step = 0;
  if (b->done || !adBinomial_next(&action, &step)) {
    b->done = 1;
    a->flag = ENZYME_CKPT_DONE;
  } else if (action == 1) {                     /* PUSHSNAP */
    if (b->depth == 128)
      enzyme_ckpt_die("adBinomial: too many snapshots");
    a->flag = ENZYME_CKPT_STORE;
    a->iteration = a->startiteration = step;
    a->cpnum = b->depth;
    b->at[b->depth++] = step;
  } else if (action == 2 || action == 3) {      /* LOOKSNAP, POPSNAP */
    if (b->depth == 0)
      enzyme_ckpt_die("adBinomial restored a snapshot it never pushed");
    a->flag = ENZYME_CKPT_RESTORE;
    a->cpnum = b->depth - 1;
    a->iteration = a->startiteration = b->at[b->depth - 1];
    b->depth -= action == 3;
  } else if (action == 4) {                     /* ADVANCE */
    a->flag = ENZYME_CKPT_FORWARD;
    a->startiteration = step - 1;
    a->iteration = step;
  } else if (action == 5 || action == 6) {      /* FIRSTTURN, TURN */
    a->flag = action == 5 ? ENZYME_CKPT_FIRSTUTURN : ENZYME_CKPT_UTURN;
    a->startiteration = step - 1;
    a->iteration = step;
  } else {
    enzyme_ckpt_die("adBinomial returned an unknown action");
  }
  enzyme_ckpt_note(&b->slots, a);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_adbinomial_store(void *state, int64_t slot,
                                                               int64_t step,
                                                               const EnzymeCkptRegion *rg,
                                                               uint64_t nr) {
  (void)step;
  enzyme_ckpt_put(&((enzyme_ckpt_adbinomial *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_adbinomial_restore(void *state, int64_t slot,
                                                                 int64_t step,
                                                                 const EnzymeCkptRegion *rg,
                                                                 uint64_t nr) {
  (void)step;
  enzyme_ckpt_get(&((enzyme_ckpt_adbinomial *)state)->slots, slot, rg, nr);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_adbinomial_finalize(void *state) {
  enzyme_ckpt_adbinomial *b = (enzyme_ckpt_adbinomial *)state;
  enzyme_ckpt_close(&b->slots);
  free(b);
}

static const EnzymeCheckpointScheme EnzymeCkptADBinomial = {
    ENZYME_CKPT_ABI_VERSION,        enzyme_ckpt_adbinomial_init,    enzyme_ckpt_adbinomial_next,
    enzyme_ckpt_adbinomial_store,   enzyme_ckpt_adbinomial_restore, NULL,
    enzyme_ckpt_adbinomial_finalize, NULL,                          NULL,
    NULL};
#endif /* ENZYME_CKPT_ADBINOMIAL */

/* ---- loops annotated for checkpointing (Enzyme's loop attributes) ----
 * [[enzyme::checkpoint("revolve", 4)]] / [[enzyme_checkpointing_enable(...)]] /
 * `#pragma enzyme checkpoint(...)` on a for loop: the link step outlines the loop into a
 * __enzyme_checkpoint_for whose scheme and config come from these two (weak: one file of the
 * program including this header is enough). Schedules are Enzyme's tags: 1 periodic ("regular"),
 * 2 revolve, 3 store_all, 4 binomial (EnzymeCkptBinomial, Enzyme-MLIR's schedule), as in
 * <enzyme/checkpoint_schedule.h>. A budget of all ones or 0 asks for the default: sqrt(n) slots
 * (at least 2) for the binomial ones, segments of sqrt(n) steps for periodic. */
/* `__enzyme_ptr_size_hint(ptr, bytes[, space])` before an annotated loop gives the extent of
 * memory it writes through a pointer it did not allocate (the call is removed at link time).
 * Not declared here, as in Enzyme: programs declare it with the arguments they pass. */

__attribute__((weak, used)) ENZYME_CKPT_FN const EnzymeCheckpointScheme *
__enzyme_checkpoint_builtin(int64_t mode) {
  if (mode == ENZYME_CKPT_SCHEDULE_PERIODIC)
    return &EnzymeCkptPeriodic;
  if (mode == ENZYME_CKPT_SCHEDULE_STORE_ALL)
    return &EnzymeCkptStoreAll;
  if (mode == ENZYME_CKPT_SCHEDULE_BINOMIAL)
    return &EnzymeCkptBinomial;
  return &EnzymeCkptRevolve;
}

__attribute__((weak, used)) ENZYME_CKPT_FN void
__enzyme_cc_ckpt_loop_config(EnzymeCkptConfig *c, int64_t mode, int64_t budget, int64_t n) {
  int64_t len;
  memset(c, 0, sizeof *c);
  if (budget > 0) {
    c->snapshots = budget;
  } else if (mode != ENZYME_CKPT_SCHEDULE_PERIODIC && &__enzyme_cc_ckpt_default_budget &&
             __enzyme_cc_ckpt_default_budget) {
    return;                  /* Revolve takes the slots that fit in the enzyme.toml budget */
  } else if (mode == ENZYME_CKPT_SCHEDULE_PERIODIC) {
    len = enzyme_ckpt_isqrt(n);
    len = len < 1 ? 1 : len;
    c->snapshots = (n + len - 1) / len;
  } else {
    c->snapshots = enzyme_ckpt_isqrt(n);
    if (c->snapshots < 2)
      c->snapshots = 2;
  }
  if (c->snapshots < 1)
    c->snapshots = 1;
}

/* ---- a schedule without a driver (Enzyme's schedule-only entry points) ----
 * For a caller that keeps its snapshots itself and needs only the actions:
 *
 *   void *h = __enzyme_ckpt_schedule_begin(mode, budget, nsteps);
 *   while (__enzyme_ckpt_schedule_next(h) != ENZYME_CKPT_DONE)
 *     ... _iteration(h), _start(h), _slot(h) ...
 *   __enzyme_ckpt_schedule_end(h);
 *
 * mode is a schedule tag above (binomial runs EnzymeCkptBinomial); budget is config.snapshots,
 * when not positive an annotated loop's default (periodic: segments of floor(sqrt(nsteps))
 * steps; binomial, revolve: floor(sqrt(nsteps)) slots, at least 2). STORE asks the caller to
 * save the state before step _iteration into slot _slot, RESTORE to load it back, FORWARD to run
 * steps _start to _iteration - 1, FIRSTUTURN / UTURN to differentiate step _iteration - 1 from
 * the current state.
 * Slots are 0 to __enzyme_ckpt_schedule_slots(h) - 1. The definitions are compiled where
 * ENZYME_CHECKPOINT_RUNTIME is defined (weak: several files may). ENZYME_CKPT_VERBOSE=1 in the
 * environment prints a summary at the end, 2 also every action. */
void *__enzyme_ckpt_schedule_begin(int64_t mode, int64_t budget, int64_t nsteps);
int32_t __enzyme_ckpt_schedule_next(void *h);
int32_t __enzyme_ckpt_schedule_flag(void *h);
int64_t __enzyme_ckpt_schedule_iteration(void *h);
int64_t __enzyme_ckpt_schedule_start(void *h);
int64_t __enzyme_ckpt_schedule_slot(void *h);
int64_t __enzyme_ckpt_schedule_slots(void *h);
void __enzyme_ckpt_schedule_end(void *h);

#ifdef ENZYME_CHECKPOINT_RUNTIME
typedef struct enzyme_ckpt_schedule {
  const EnzymeCheckpointScheme *scheme;
  void *state;
  EnzymeCkptConfig config;
  EnzymeCkptStats stats;
  EnzymeCkptAction action;
  int64_t slots;
} enzyme_ckpt_schedule;

__attribute__((weak)) ENZYME_CKPT_FN void *
__enzyme_ckpt_schedule_begin(int64_t mode, int64_t budget, int64_t nsteps) {
  enzyme_ckpt_schedule *h;
  const char *verbose = getenv("ENZYME_CKPT_VERBOSE");
  EnzymeCkptAction a;
  void *dry;
  if (nsteps < 0)
    enzyme_ckpt_die("a schedule needs the number of steps");
  if (mode < ENZYME_CKPT_SCHEDULE_PERIODIC || mode > ENZYME_CKPT_SCHEDULE_BINOMIAL)
    enzyme_ckpt_die("unknown schedule (1 periodic, 2 revolve, 3 store_all, 4 binomial)");
  /* an annotated loop's default: the periodic scheme takes segments of floor(sqrt(n)) steps
   * itself; Revolve (1 slot without a count) is given the binomial default */
  if (budget < 1)
    budget = mode == ENZYME_CKPT_SCHEDULE_PERIODIC ? 0 : enzyme_ckpt_binomial_slots(nsteps, 0);
  h = (enzyme_ckpt_schedule *)calloc(1, sizeof *h);
  h->scheme = __enzyme_checkpoint_builtin(mode);
  h->config.snapshots = budget;
  /* the slots the scheme names: a dry run of the same schedule, quietly */
  dry = h->scheme->init(&h->config, nsteps, 0);
  do {
    memset(&a, 0, sizeof a);
    h->scheme->next_action(dry, &a);
    if ((a.flag == ENZYME_CKPT_STORE || a.flag == ENZYME_CKPT_RESTORE) && a.cpnum + 1 > h->slots)
      h->slots = a.cpnum + 1;
  } while (a.flag != ENZYME_CKPT_DONE && a.flag != ENZYME_CKPT_ERROR &&
           a.flag != ENZYME_CKPT_NONE);
  h->scheme->finalize(dry);
  h->config.verbose = verbose ? atoi(verbose) : 0;
  h->config.stats = &h->stats;
  h->state = h->scheme->init(&h->config, nsteps, 0);
  return h;
}

__attribute__((weak)) ENZYME_CKPT_FN int32_t __enzyme_ckpt_schedule_next(void *p) {
  enzyme_ckpt_schedule *h = (enzyme_ckpt_schedule *)p;
  memset(&h->action, 0, sizeof h->action);
  h->scheme->next_action(h->state, &h->action);
  if (h->action.flag == ENZYME_CKPT_ERROR || h->action.flag == ENZYME_CKPT_NONE)
    enzyme_ckpt_die("the scheme returned no action");
  if ((h->action.flag == ENZYME_CKPT_STORE || h->action.flag == ENZYME_CKPT_RESTORE) &&
      (h->action.cpnum < 0 || h->action.cpnum >= h->slots))
    enzyme_ckpt_die("the scheme named a slot out of range");
  return h->action.flag;
}

__attribute__((weak)) ENZYME_CKPT_FN int32_t __enzyme_ckpt_schedule_flag(void *p) {
  return ((enzyme_ckpt_schedule *)p)->action.flag;
}
__attribute__((weak)) ENZYME_CKPT_FN int64_t __enzyme_ckpt_schedule_iteration(void *p) {
  return ((enzyme_ckpt_schedule *)p)->action.iteration;
}
__attribute__((weak)) ENZYME_CKPT_FN int64_t __enzyme_ckpt_schedule_start(void *p) {
  return ((enzyme_ckpt_schedule *)p)->action.startiteration;
}
__attribute__((weak)) ENZYME_CKPT_FN int64_t __enzyme_ckpt_schedule_slot(void *p) {
  return ((enzyme_ckpt_schedule *)p)->action.cpnum;
}
__attribute__((weak)) ENZYME_CKPT_FN int64_t __enzyme_ckpt_schedule_slots(void *p) {
  return ((enzyme_ckpt_schedule *)p)->slots;
}

__attribute__((weak)) ENZYME_CKPT_FN void __enzyme_ckpt_schedule_end(void *p) {
  enzyme_ckpt_schedule *h = (enzyme_ckpt_schedule *)p;
  h->scheme->finalize(h->state);
  free(h);
}
#endif /* ENZYME_CHECKPOINT_RUNTIME */

/* ---- the driver enzyme-cc's link step calls (weak: every file including this has it) ----
 * The generated code fills one __enzyme_cc_ckpt_run: advance(env, a, b) runs steps a..b-1
 * untaped and returns -1, or j + 1 when a while loop's step j returned false; uturn(env, j)
 * differentiates step j from the current state. */
typedef struct __enzyme_cc_ckpt_run {
  const EnzymeCheckpointScheme *scheme;
  void *data;
  void *state;
  EnzymeCkptRegion *regions;
  uint64_t nregions;
  void *env;
  int64_t (*advance)(void *env, int64_t from, int64_t to);
  void (*uturn)(void *env, int64_t step);
  int64_t nsteps; /* -1: a while loop whose length is not known yet */
  int64_t finished;
  /* a run reversed more than once (reverse vector mode: once per lane): the regions before the
   * loop, nsteps as given, and whether a reverse sweep has run */
  void *initial;
  int64_t nsteps0;
  int64_t reversed;
} __enzyme_cc_ckpt_run;

static inline ENZYME_CKPT_FN void enzyme_ckpt_save_(__enzyme_cc_ckpt_run *r, int64_t slot,
                                                    int64_t step) {
  if (r->scheme->save_state)
    r->scheme->save_state(r->state, slot, step, r->env);
  else
    r->scheme->store(r->state, slot, step, r->regions, r->nregions);
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_load(__enzyme_cc_ckpt_run *r, int64_t slot,
                                                   int64_t step) {
  if (r->scheme->load_state)
    r->scheme->load_state(r->state, slot, step, r->env);
  else
    r->scheme->restore(r->state, slot, step, r->regions, r->nregions);
}

/* FORWARD a..b; a while loop that ends on the way tells the scheme its length */
static inline ENZYME_CKPT_FN void enzyme_ckpt_run_steps(__enzyme_cc_ckpt_run *r, int64_t a,
                                                        int64_t b) {
  int64_t got = r->advance(r->env, a, b);
  (void)b;
  if (r->nsteps < 0 && got >= 0) {
    r->nsteps = got;
    if (!r->scheme->set_nsteps)
      enzyme_ckpt_die("the scheme cannot drive a while loop (no set_nsteps)");
    r->scheme->set_nsteps(r->state, got);
  }
}

__attribute__((weak, used)) void __enzyme_cc_ckpt_forward(__enzyme_cc_ckpt_run *r) {
  EnzymeCkptAction a;
  uint64_t bytes = 0, k;
  if (r->scheme->version != ENZYME_CKPT_ABI_VERSION)
    enzyme_ckpt_die("the scheme has another ABI version");
  for (k = 0; k < r->nregions; k++)
    bytes += r->regions[k].bytes;
  r->state = r->scheme->init(r->data, r->nsteps, bytes);
  for (;;) {
    memset(&a, 0, sizeof a);
    r->scheme->next_action(r->state, &a);
    switch (a.flag) {
    case ENZYME_CKPT_STORE:
      enzyme_ckpt_save_(r, a.cpnum, a.iteration);
      break;
    case ENZYME_CKPT_RESTORE:
      enzyme_ckpt_load(r, a.cpnum, a.iteration);
      break;
    case ENZYME_CKPT_FORWARD:
      enzyme_ckpt_run_steps(r, a.startiteration, a.iteration);
      break;
    case ENZYME_CKPT_FIRSTUTURN:
      enzyme_ckpt_save_(r, -2, a.iteration - 1);
      r->advance(r->env, a.iteration - 1, a.iteration);
      if (r->nsteps < 0)
        r->nsteps = a.iteration;
      return;
    case ENZYME_CKPT_DONE:
      r->finished = 1;
      return;
    default:
      enzyme_ckpt_die("the scheme asked for a reverse step before its first turn");
    }
  }
}

static inline ENZYME_CKPT_FN void enzyme_ckpt_reverse_run(__enzyme_cc_ckpt_run *r) {
  EnzymeCkptAction a;
  if (!r->finished) {
    enzyme_ckpt_save_(r, -1, r->nsteps);
    enzyme_ckpt_load(r, -2, r->nsteps - 1);
    r->uturn(r->env, r->nsteps - 1);
    for (;;) {
      memset(&a, 0, sizeof a);
      r->scheme->next_action(r->state, &a);
      if (a.flag == ENZYME_CKPT_DONE)
        break;
      switch (a.flag) {
      case ENZYME_CKPT_STORE:
        enzyme_ckpt_save_(r, a.cpnum, a.iteration);
        break;
      case ENZYME_CKPT_RESTORE:
        enzyme_ckpt_load(r, a.cpnum, a.iteration);
        break;
      case ENZYME_CKPT_FORWARD:
        r->advance(r->env, a.startiteration, a.iteration);
        break;
      case ENZYME_CKPT_UTURN:
        r->uturn(r->env, a.iteration - 1);
        break;
      default:
        enzyme_ckpt_die("the scheme returned an action the reverse sweep cannot take");
      }
    }
    enzyme_ckpt_load(r, -1, r->nsteps);
  }
  r->scheme->finalize(r->state);
}

__attribute__((weak, used)) void __enzyme_cc_ckpt_reverse(__enzyme_cc_ckpt_run *r) {
  enzyme_ckpt_reverse_run(r);
  free(r->regions);
}

/* The regions' bytes into buf (to = 1) or back (to = 0); buf NULL: a new buffer. */
static inline ENZYME_CKPT_FN void *enzyme_ckpt_copy_regions(__enzyme_cc_ckpt_run *r, void *buf,
                                                            int to) {
  uint64_t k, off = 0, bytes = 0;
  for (k = 0; k < r->nregions; k++)
    bytes += r->regions[k].bytes;
  if (!buf)
    buf = malloc(bytes ? bytes : 1);
  for (k = 0; k < r->nregions; k++) {
    if (to)
      memcpy((char *)buf + off, r->regions[k].ptr, r->regions[k].bytes);
    else
      memcpy(r->regions[k].ptr, (char *)buf + off, r->regions[k].bytes);
    off += r->regions[k].bytes;
  }
  return buf;
}

/* A run that may be reversed more than once (reverse vector mode runs the reverse sweep once per
 * lane on one forward sweep): the forward sweep also keeps the regions as they were before the
 * loop. The schedule's own slots are consumed by a reverse sweep, so each further one runs the
 * whole schedule again from that state (the memory after it is put back as it was). */
__attribute__((weak, used)) void __enzyme_cc_ckpt_forward_again(__enzyme_cc_ckpt_run *r) {
  /* a scheme copying the state itself may keep more than the regions: no second sweep then */
  r->initial = r->scheme->save_state ? NULL : enzyme_ckpt_copy_regions(r, NULL, 1);
  r->nsteps0 = r->nsteps;
  r->reversed = 0;
  __enzyme_cc_ckpt_forward(r);
}

__attribute__((weak, used)) void __enzyme_cc_ckpt_reverse_again(__enzyme_cc_ckpt_run *r) {
  void *now;
  if (!r->reversed) {
    r->reversed = 1;
    enzyme_ckpt_reverse_run(r);
    return;
  }
  if (!r->initial)
    enzyme_ckpt_die("a scheme with its own save_state cannot be rerun for a second reverse sweep "
                    "(reverse vector mode: enzyme_width in __enzyme_autodiff; enzyme_nofree): "
                    "use one seed per call");
  now = enzyme_ckpt_copy_regions(r, NULL, 1);
  enzyme_ckpt_copy_regions(r, r->initial, 0);
  r->nsteps = r->nsteps0;
  r->finished = 0;
  __enzyme_cc_ckpt_forward(r);
  enzyme_ckpt_reverse_run(r);
  enzyme_ckpt_copy_regions(r, now, 0);
  free(now);
}

/* Forward mode over a checkpointed loop's gradient (checkpoint_tangent.py): the regions' tangents
 * are regions of their own, which a scheme copying the state itself (save_state) would miss. */
static inline ENZYME_CKPT_FN void enzyme_ckpt_tangent_ok(__enzyme_cc_ckpt_run *r) {
  if (r->scheme->save_state)
    enzyme_ckpt_die("a scheme with its own save_state cannot keep the tangents of forward mode "
                    "over a checkpointed loop's gradient: use a scheme without it");
}

__attribute__((weak, used)) void __enzyme_cc_ckpt_forward_tangent(__enzyme_cc_ckpt_run *r) {
  enzyme_ckpt_tangent_ok(r);
  __enzyme_cc_ckpt_forward(r);
}

__attribute__((weak, used)) void __enzyme_cc_ckpt_forward_tangent_again(__enzyme_cc_ckpt_run *r) {
  enzyme_ckpt_tangent_ok(r);
  __enzyme_cc_ckpt_forward_again(r);
}

/* Generated code's consistency checks (a derivative of a derivative, checkpoint_tangent.py). */
__attribute__((weak, used)) void __enzyme_cc_ckpt_fail(const char *why) { enzyme_ckpt_die(why); }

/* The run's memory, when its tape is freed (the deferred frees call it with NULL too). */
__attribute__((weak, used)) void __enzyme_cc_ckpt_release(__enzyme_cc_ckpt_run *r) {
  if (!r)
    return;
  free(r->regions);
  free(r->initial);
  free(r->env);
  free(r);
}

#ifdef __cplusplus
}
#endif

#endif /* ENZYME_CHECKPOINT_H */
