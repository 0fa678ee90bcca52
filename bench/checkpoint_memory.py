"""Peak memory and time of a checkpointed time loop against the fully taped loop (not a test).

    python bench/checkpoint_memory.py [--steps 1000,10000,100000] [--snaps 10]

Builds one program with enzyme-cc -O2 and runs each variant in its own process (the peak RSS of
a process, ru_maxrss, only grows): the plain taped loop, Revolve with --snaps slots, periodic
with --snaps segments, and Revolve from a memory budget in bytes. The state is 64 doubles and a
step does some nonlinear work on them, so the full tape grows with the step count while the
checkpointed one is bounded by the snapshots plus one step's tape. Also prints the
recomputation factor (steps run in all / steps) of each schedule. The last variant is the plain
loop with `__attribute__((enzyme_checkpoint("revolve", 10)))` (its config is the link step's: no
statistics, so its factor and snapshot columns are not measured)."""
import argparse
import os
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <enzyme/checkpoint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#define N 64
void __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
__attribute__((noinline)) static void step(int64_t i, double *u) {
  double t[N];
  for (int k = 0; k < N; k++)
    t[k] = u[k] + 1e-3 * (sin(u[(k + 1) % N]) - u[k] * u[k] * 0.1) + 1e-6 * (double)(i % 7);
  memcpy(u, t, sizeof t);
}
static double loss(double *u) { double s = 0; for (int k = 0; k < N; k++) s += u[k] * u[k]; return s; }
double plain(double *u, int64_t n) { for (int64_t i = 0; i < n; i++) step(i, u); return loss(u); }
double ckpt(double *u, int64_t n, const EnzymeCheckpointScheme *s, EnzymeCkptConfig *c) {
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, s, c, enzyme_checkpoint_region, u,
                          (int64_t)sizeof(double) * N, u);
  return loss(u);
}
/* the plain loop annotated (Enzyme's loop attribute): the link step outlines it */
double annotated(double *u, int64_t n) {
  __enzyme_ptr_size_hint(u, (int64_t)sizeof(double) * N);
  __attribute__((enzyme_checkpoint("revolve", 10))) for (int64_t i = 0; i < n; i++) step(i, u);
  return loss(u);
}
int main(int argc, char **argv) {
  int64_t n = atoll(argv[1]), snaps = atoll(argv[3]);
  double u[N], du[N] = {0};
  for (int k = 0; k < N; k++) u[k] = 0.5 + 0.01 * k;
  EnzymeCkptStats st; memset(&st, 0, sizeof st);
  EnzymeCkptConfig cfg = {snaps, 0, NULL, 0, &st, 0};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  switch (argv[2][0]) {
  case 't': __enzyme_autodiff((void *)plain, enzyme_dup, u, du, enzyme_const, n); break;
  case 'r': __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const, &EnzymeCkptRevolve, enzyme_const, &cfg); break;
  case 'p': __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const, &EnzymeCkptPeriodic, enzyme_const, &cfg); break;
  case 'a': __enzyme_autodiff((void *)annotated, enzyme_dup, u, du, enzyme_const, n); break;
  case 'b': cfg.snapshots = 0; cfg.budget_bytes = (uint64_t)snaps;
            __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const, &EnzymeCkptRevolve, enzyme_const, &cfg); break;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  struct rusage ru; getrusage(RUSAGE_SELF, &ru);
  double steps_run = st.taped_steps ? (double)(st.forward_steps + 2 * st.taped_steps) / n : 2.0;
  printf("%ld %.6f %.3f %lld %.9g\n", ru.ru_maxrss, (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec),
         steps_run, (long long)st.max_bytes, du[0]);
  return 0;
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", default="1000,10000,100000")
    ap.add_argument("--snaps", type=int, default=10)
    ap.add_argument("--budget", type=int, default=64 * 8 * 20, help="bytes for the budget variant")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    cc = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "enzyme-cc")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "ckpt.c"), os.path.join(tmp, "ckpt")
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run([cc, "-O2", src, "-lm", "-o", exe], check=True, cwd=here)
        base = subprocess.run([exe, "1", "t", "1"], capture_output=True, text=True, check=True)
        rss0 = int(base.stdout.split()[0])
        variants = [("taped", "t", 0), (f"revolve {args.snaps}", "r", args.snaps),
                    (f"periodic {args.snaps}", "p", args.snaps),
                    (f"budget {args.budget} B", "b", args.budget),
                    ("attribute rev 10", "a", 10)]
        print(f"{'steps':>7}  {'variant':<16} {'peak RSS (KiB)':>14} {'above base':>10} "
              f"{'time (s)':>9} {'steps run/step':>14} {'snapshot B':>10}  du[0]")
        for n in [int(s) for s in args.steps.split(",")]:
            for name, code, snaps in variants:
                r = subprocess.run([exe, str(n), code, str(snaps)], capture_output=True, text=True,
                                   check=True)
                rss, t, factor, slots, d0 = r.stdout.split()
                print(f"{n:>7}  {name:<16} {int(rss):>14} {int(rss) - rss0:>10} {float(t):>9.4f} "
                      f"{float(factor):>14.2f} {slots:>10}  {d0}")
        print(f"(base: peak RSS of one taped step, {rss0} KiB; 'steps run/step' counts every "
              "primal execution of a step, the taped one included; the taped loop runs each twice)")


if __name__ == "__main__":
    main()
