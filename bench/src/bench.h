/* Common driver of the benchmark binaries (C and C++).
 *
 * A benchmark fills a bench_t (gradient buffer, a primal, a gradient per variant, a central
 * finite-difference estimate of one gradient entry) and calls bench_main. Command line:
 *
 *   --variant V     primal | enzyme | fd | adolc | hand: check (unless --check 0), then time
 *   --selfcheck     compute every available AD gradient variant, compare each with finite
 *                   differences (--check entries) and with each other (all entries);
 *                   exit status 1 on any mismatch
 *   --reps R        timed repetitions (default 5); the harness takes the median
 *   --min-time S    each repetition repeats the call until it lasts >= S seconds (default 0.02)
 *   --check M       entries compared with finite differences (default 24; 0 = no check)
 *   --tol T         relative tolerance of the check (default 1e-4)
 *   --max-call S    if the first (warm-up) call takes longer than S seconds, report it as the
 *                   only timing ("reps": 1) instead of repeating
 *
 * Output: one line "RESULT {json}" per variant (times are seconds per call).
 */
#ifndef BENCH_H
#define BENCH_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name;           /* benchmark */
  char input[256];            /* input description */
  int ngrad;                  /* length of the gradient vector */
  double *grad;               /* gradient output of every variant */
  const char *variants;       /* available gradient variants, comma separated */
  void (*primal)(void);       /* one evaluation of the function */
  int (*gradient)(const char *variant); /* fills grad; nonzero if the variant is unknown */
  double (*fd_entry)(int i);  /* central difference estimate of grad[i], step bench_fd_step */
  double (*value)(void);      /* a scalar summary of the primal's output (objective, sum) */
} bench_t;

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* step of the central difference for a value x: ~ cbrt(machine epsilon) for the "fd" variant;
   the check uses two larger steps and Richardson extrapolation (error O(h^4)) */
static double bench_fd_rel = 6e-6;
static double bench_fd_step(double x) { return bench_fd_rel * (fabs(x) > 1 ? fabs(x) : 1); }

static double bench_fd_reference(double (*fd_entry)(int), int i) {
  double saved = bench_fd_rel;
  bench_fd_rel = 1e-4;
  double d1 = fd_entry(i);
  bench_fd_rel = 2e-4;
  double d2 = fd_entry(i);
  bench_fd_rel = saved;
  return (4 * d1 - d2) / 3;
}

static long bench_maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* the full gradient by central differences (the "fd" variant) */
static void bench_fd_gradient(bench_t *b) {
  for (int i = 0; i < b->ngrad; i++) b->grad[i] = b->fd_entry(i);
}

static int bench_has_variant(const bench_t *b, const char *v) {
  size_t n = strlen(v);
  const char *p = b->variants;
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && strncmp(p, v, n) == 0) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

static int bench_run_gradient(bench_t *b, const char *v) {
  if (strcmp(v, "fd") == 0) { bench_fd_gradient(b); return 0; }
  if (strcmp(v, "primal") == 0) { b->primal(); return 0; }
  return b->gradient(v);
}

/* deterministic spread of m indices over [0, n) */
static int bench_check_index(int k, int m, int n) {
  if (m >= n) return k;
  if (k == m - 1) return n - 1;
  long lo = (long)k * n / m, hi = (long)(k + 1) * n / m;
  long span = hi - lo;
  return (int)(lo + (span > 1 ? (k * 7919L) % span : 0));
}

typedef struct {
  int checked, worst;
  double max_err, got, want;
  int ok;
} bench_check_t;

/* compare grad (a gradient already computed) with finite differences on up to m entries */
static bench_check_t bench_check(bench_t *b, const double *g, int m, double tol) {
  bench_check_t c = {0, -1, 0.0, 0.0, 0.0, 1};
  if (m > b->ngrad) m = b->ngrad;
  double *ref = (double *)malloc(sizeof(double) * (m > 0 ? m : 1));
  double scale = 0;
  for (int k = 0; k < m; k++) {
    ref[k] = bench_fd_reference(b->fd_entry, bench_check_index(k, m, b->ngrad));
    if (fabs(ref[k]) > scale) scale = fabs(ref[k]);
  }
  for (int k = 0; k < m; k++) {
    int i = bench_check_index(k, m, b->ngrad);
    double den = fabs(ref[k]) > 1e-3 * scale ? fabs(ref[k]) : 1e-3 * scale;
    if (den < 1e-12) den = 1e-12;
    double e = fabs(g[i] - ref[k]) / den;
    if (!(e <= c.max_err)) {   /* also catches NaN */
      c.max_err = e; c.worst = i; c.got = g[i]; c.want = ref[k];
    }
    if (!(e <= tol)) c.ok = 0;
  }
  c.checked = m;
  free(ref);
  return c;
}

static void bench_json_double(const char *key, double v) {
  if (isfinite(v)) printf("\"%s\": %.9g", key, v);
  else printf("\"%s\": \"%s\"", key, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int bench_selfcheck(bench_t *b, int m, double tol) {
  char list[256];
  const char *names[16];
  double *grads[16];
  int nv = 0, bad = 0;
  double value = b->value ? b->value() : NAN;
  snprintf(list, sizeof list, "%s", b->variants);
  for (char *tok = strtok(list, ","); tok && nv < 16; tok = strtok(NULL, ",")) {
    if (bench_run_gradient(b, tok) != 0) {
      printf("SELFCHECK %s %s: unknown variant\n", b->name, tok);
      bad = 1;
      continue;
    }
    double after = b->value ? b->value() : NAN;
    if (isfinite(value) && !(fabs(after - value) <= 1e-12 * fabs(value))) {
      printf("SELFCHECK %s %s: MISMATCH: the gradient changed the primal's inputs (function "
             "value %.17g before, %.17g after)\n", b->name, tok, value, after);
      printf("SELFCHECK %s: FAILED\n", b->name);
      return 1;
    }
    names[nv] = tok;
    grads[nv] = (double *)malloc(sizeof(double) * b->ngrad);
    memcpy(grads[nv], b->grad, sizeof(double) * b->ngrad);
    bench_check_t c = bench_check(b, grads[nv], m, tol);
    printf("SELFCHECK %s %s vs finite differences on %d entries: %s (max rel err %.3g",
           b->name, tok, c.checked, c.ok ? "ok" : "MISMATCH", c.max_err);
    if (!c.ok) printf(" at [%d]: got %.10g, want %.10g", c.worst, c.got, c.want);
    printf(")\n");
    if (!c.ok) bad = 1;
    nv++;
  }
  /* every pair of AD variants, on every entry */
  for (int a = 0; a < nv; a++)
    for (int c = a + 1; c < nv; c++) {
      double scale = 0, worst = 0;
      int wi = -1;
      for (int i = 0; i < b->ngrad; i++)
        if (fabs(grads[a][i]) > scale) scale = fabs(grads[a][i]);
      for (int i = 0; i < b->ngrad; i++) {
        double den = fabs(grads[a][i]) > 1e-6 * scale ? fabs(grads[a][i]) : 1e-6 * scale;
        if (den < 1e-300) den = 1e-300;
        double e = fabs(grads[a][i] - grads[c][i]) / den;
        if (!(e <= worst)) { worst = e; wi = i; }
      }
      int ok = worst <= 1e-8;
      printf("SELFCHECK %s %s vs %s on all %d entries: %s (max rel err %.3g", b->name, names[a],
             names[c], b->ngrad, ok ? "ok" : "MISMATCH", worst);
      if (!ok && wi >= 0) printf(" at [%d]: %.12g vs %.12g", wi, grads[a][wi], grads[c][wi]);
      printf(")\n");
      if (!ok) bad = 1;
    }
  for (int a = 0; a < nv; a++) free(grads[a]);
  printf("SELFCHECK %s: %s\n", b->name, bad ? "FAILED" : "passed");
  return bad;
}

static int bench_main(int argc, char **argv, bench_t *b) {
  const char *variant = NULL;
  int reps = 5, check = 24, selfcheck = 0;
  double min_time = 0.02, tol = 1e-4, max_call = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--variant") && i + 1 < argc) variant = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check") && i + 1 < argc) check = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) min_time = atof(argv[++i]);
    else if (!strcmp(argv[i], "--tol") && i + 1 < argc) tol = atof(argv[++i]);
    else if (!strcmp(argv[i], "--max-call") && i + 1 < argc) max_call = atof(argv[++i]);
    else if (!strcmp(argv[i], "--selfcheck")) selfcheck = 1;
    else if (!strcmp(argv[i], "--list")) { printf("fd,%s\n", b->variants); return 0; }
  }
  if (selfcheck) return bench_selfcheck(b, check > 0 ? check : 24, tol);
  if (!variant) {
    fprintf(stderr, "usage: %s ARGS --variant primal|fd|%s [--reps R] [--check M] | --selfcheck\n",
            argv[0], b->variants);
    return 2;
  }
  if (strcmp(variant, "primal") && strcmp(variant, "fd") && !bench_has_variant(b, variant)) {
    printf("RESULT {\"bench\": \"%s\", \"variant\": \"%s\", \"error\": \"not built\"}\n", b->name,
           variant);
    return 3;
  }
  /* the primal's value: the harness compares it across binaries (a Ref binary must compute
     the same function) */
  double value = b->value ? b->value() : NAN;
  /* first call: warm-up, gradient for the check, and the estimate of one call's time */
  double t0 = bench_now();
  if (bench_run_gradient(b, variant) != 0) return 3;
  double first = bench_now() - t0;
  /* a gradient must leave the primal's inputs alone: recompute the value after it */
  double value_after = b->value ? b->value() : NAN;
  int clobbered = isfinite(value) && !(fabs(value_after - value) <= 1e-12 * fabs(value));
  bench_check_t c = {0, -1, 0, 0, 0, 1};
  int checked = 0;
  if (check > 0 && strcmp(variant, "primal") && strcmp(variant, "fd")) {
    c = bench_check(b, b->grad, check, tol);
    checked = 1;
  }
  int iters = first > 0 && first < min_time ? (int)ceil(min_time / first) : 1;
  if (iters > 1000000) iters = 1000000;
  if (reps < 1) reps = 1;
  int single = max_call > 0 && first > max_call;
  if (single) reps = 1;
  double *times = (double *)malloc(sizeof(double) * reps);
  if (single) times[0] = first;
  for (int r = 0; r < reps && !single; r++) {
    double s = bench_now();
    for (int k = 0; k < iters; k++) bench_run_gradient(b, variant);
    times[r] = (bench_now() - s) / iters;
  }
  double *sorted = (double *)malloc(sizeof(double) * reps);
  memcpy(sorted, times, sizeof(double) * reps);
  qsort(sorted, reps, sizeof(double), bench_cmp_double);
  double median = reps % 2 ? sorted[reps / 2] : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);
  printf("RESULT {\"bench\": \"%s\", \"input\": \"%s\", \"variant\": \"%s\", \"ngrad\": %d, ",
         b->name, b->input, variant, b->ngrad);
  if (checked) {
    printf("\"check\": {\"status\": \"%s\", \"entries\": %d, ", c.ok ? "ok" : "MISMATCH", c.checked);
    bench_json_double("max_rel_err", c.max_err);
    if (!c.ok) {
      printf(", \"index\": %d, ", c.worst);
      bench_json_double("got", c.got);
      printf(", ");
      bench_json_double("want", c.want);
    }
    printf("}, ");
  } else {
    printf("\"check\": {\"status\": \"%s\"}, ", strcmp(variant, "fd") ? "none" : "reference");
  }
  printf("\"iters\": %d, \"reps\": %d, ", iters, reps);
  if (isfinite(value)) printf("\"value\": %.17g, ", value);
  if (clobbered) printf("\"value_after\": %.17g, ", value_after);
  bench_json_double("median", median);
  printf(", \"times\": [");
  for (int r = 0; r < reps; r++) printf("%s%.9g", r ? ", " : "", times[r]);
  printf("], \"maxrss_kb\": %ld}\n", bench_maxrss_kb());
  fflush(stdout);
  free(times);
  free(sorted);
  return (checked && !c.ok) || clobbered ? 1 : 0;
}

#ifdef __cplusplus
}
#endif

/* Enzyme's interface (only in binaries linked by enzyme-cc) */
#ifndef BENCH_NO_ENZYME
#ifdef __cplusplus
extern "C" {
#endif
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed, enzyme_out;
void __enzyme_autodiff(void *, ...);
#ifdef __cplusplus
}
#endif
#endif

#endif
