/* Drives the schemes of <enzyme/checkpoint.h> with a fake step whose state is its position:
 * every step must be reversed exactly once, in reverse order, from the right state, and the
 * state restored at the end. Prints "n snaps scheme forward_steps max_slots" per case. */
#include <enzyme/checkpoint.h>

typedef struct { int64_t pos, next, n, stop, bad; } Sim;

static int64_t sim_advance(void *env, int64_t a, int64_t b) {
  Sim *s = (Sim *)env;
  if (s->pos != a) s->bad++;
  for (int64_t j = a; j < b; j++) {
    s->pos = j + 1;
    if (s->stop && j + 1 == s->stop) return j + 1;   /* a while loop ends after step j */
  }
  return -1;
}

static void sim_uturn(void *env, int64_t j) {
  Sim *s = (Sim *)env;
  if (s->pos != j || j != s->next) s->bad++;
  s->next--;
  s->pos = j + 1;
}

static int run(const EnzymeCheckpointScheme *sc, int64_t n, int64_t snaps, int64_t stop,
               const char *name) {
  Sim s = {0, n - 1, n, stop, 0};
  EnzymeCkptStats st;
  EnzymeCkptConfig cfg = {snaps, 0, NULL, 0, &st, 0};
  __enzyme_cc_ckpt_run r;
  memset(&r, 0, sizeof r);
  memset(&st, 0, sizeof st);
  r.scheme = sc;
  r.data = &cfg;
  r.regions = (EnzymeCkptRegion *)calloc(1, sizeof(EnzymeCkptRegion));
  r.regions[0].ptr = &s.pos;
  r.regions[0].bytes = sizeof s.pos;
  r.nregions = 1;
  r.env = &s;
  r.advance = sim_advance;
  r.uturn = sim_uturn;
  r.nsteps = stop ? -1 : n;
  __enzyme_cc_ckpt_forward(&r);
  int64_t total = stop ? stop : n;
  if (s.pos != total) s.bad++;
  s.pos = 12345;                              /* the code after the loop may change it */
  if (stop) s.next = stop - 1;
  __enzyme_cc_ckpt_reverse(&r);
  if (s.pos != 12345 || s.next != -1 || st.taped_steps != total) s.bad++;
  printf("%lld %lld %s %lld %lld %s\n", (long long)total, (long long)snaps, name,
         (long long)st.forward_steps, (long long)st.max_slots, s.bad ? "BAD" : "ok");
  return s.bad != 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int64_t ns[] = {0, 1, 2, 3, 7, 10, 13, 64, 100, 257};
  int64_t ks[] = {1, 2, 3, 5, 8};
  int bad = 0;
  for (unsigned a = 0; a < sizeof ns / sizeof *ns; a++)
    for (unsigned b = 0; b < sizeof ks / sizeof *ks; b++) {
      bad += run(&EnzymeCkptRevolve, ns[a], ks[b], 0, "revolve");
      bad += run(&EnzymeCkptBinomial, ns[a], ks[b], 0, "binomial");
      bad += run(&EnzymeCkptPeriodic, ns[a], ks[b], 0, "periodic");
      bad += run(&EnzymeCkptStoreAll, ns[a], ks[b], 0, "store_all");
    }
  for (int64_t stop = 1; stop < 9; stop++)
    bad += run(&EnzymeCkptStoreAll, 0, 1, stop, "while");
  return bad != 0;
}
