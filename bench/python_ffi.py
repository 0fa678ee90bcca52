"""Overhead of calling enzyme-cc code from Python (not a test): per-call time of a trivial function
through ctypes, the numpy front end, the torch op and a JAX op, jitted and eager (and the same
function in torch / jax), and the gradient time of a real kernel (a 1-D Brusselator integrated with explicit
Euler) through each framework against calling its C derivative directly (ctypes, prebuilt
buffers).

    python bench/python_ffi.py [--n 4096] [--steps 200] [--cpu-time]
    python bench/python_ffi.py --cpp-extension     # the torch op against a C++ extension op

--cpu-time times the trivial calls with time.thread_time (the calling thread's CPU time), which
leaves out the time a loaded machine keeps the thread waiting for a core; the gradient rows stay
wall time (XLA and torch's autograd engine may run work on other threads).
"""
import argparse
import ctypes
import statistics
import time
import timeit

import numpy as np

from enzyme_cc import ffi
from enzyme_cc.ffi import In, Int, Out, Ret, Signature

TRIVIAL = Signature("twice", [In("x", (1,)), Out("y", (1,))])
BRUSS = Signature("bruss", [In("p", (3,)), In("u0", ("n",)), In("v0", ("n",)), Int("n"),
                            Int("steps")], ret=Ret("loss"))
SRC = r"""
#include <stdlib.h>
#include <string.h>
void twice(const double *x, double *y) { y[0] = 2.0 * x[0]; }
/* u' = a + u^2 v - (b+1) u + alpha u_xx,  v' = b u - u^2 v + alpha v_xx  (periodic, explicit Euler) */
double bruss(const double *p, const double *u0, const double *v0, int n, int steps) {
  double a = p[0], b = p[1], alpha = p[2], dt = 1e-3;
  double *u = malloc(n * sizeof(double)), *v = malloc(n * sizeof(double));
  double *un = malloc(n * sizeof(double)), *vn = malloc(n * sizeof(double));
  memcpy(u, u0, n * sizeof(double)); memcpy(v, v0, n * sizeof(double));
  for (int t = 0; t < steps; t++) {
    for (int i = 0; i < n; i++) {
      int l = i ? i - 1 : n - 1, r = i + 1 < n ? i + 1 : 0;
      double uuv = u[i] * u[i] * v[i];
      un[i] = u[i] + dt * (a + uuv - (b + 1) * u[i] + alpha * (u[l] - 2 * u[i] + u[r]));
      vn[i] = v[i] + dt * (b * u[i] - uuv + alpha * (v[l] - 2 * v[i] + v[r]));
    }
    double *s = u; u = un; un = s; s = v; v = vn; vn = s;
  }
  double loss = 0;
  for (int i = 0; i < n; i++) loss += u[i] * u[i] + v[i] * v[i];
  free(u); free(v); free(un); free(vn);
  return loss;
}
"""


TIMER = time.perf_counter


def best(fn, number, timer=None):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5, timer=timer or TIMER)) / number


def medians(fns, reps):
    """Median wall and calling-thread CPU time of one call of each function (torch's CPU
    autograd engine and the C entries run on the calling thread, so its CPU time leaves out
    waiting for a core), the functions taking turns so that a load change hits them alike."""
    times = [([], []) for _ in fns]
    for fn in fns:
        fn()
    for _ in range(reps):
        for fn, (wall, cpu) in zip(fns, times):
            w, c = time.perf_counter(), time.thread_time()
            fn()
            cpu.append(time.thread_time() - c)
            wall.append(time.perf_counter() - w)
    return [(statistics.median(w), statistics.median(c)) for w, c in times]


CPP_SINX = r"""
#include <torch/extension.h>
#include <cmath>
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
struct SinX : public torch::autograd::Function<SinX> {
  static torch::Tensor forward(AutogradContext *ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    auto y = torch::empty_like(x);
    const double *xp = x.data_ptr<double>();
    double *yp = y.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); i++) yp[i] = std::sin(xp[i]) * xp[i];
    return y;
  }
  static variable_list backward(AutogradContext *ctx, variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    auto gc = g[0].contiguous();
    auto dx = torch::empty_like(x);
    const double *xp = x.data_ptr<double>(), *gp = gc.data_ptr<double>();
    double *dp = dx.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); i++)
      dp[i] = gp[i] * (std::cos(xp[i]) * xp[i] + std::sin(xp[i]));
    return {dx};
  }
};
torch::Tensor sinx(torch::Tensor x) { return SinX::apply(x); }
"""
SINX_C = "#include <math.h>\nvoid sinx(const double *x, double *y, int n) {\n" \
         "  for (int i = 0; i < n; i++) y[i] = sin(x[i]) * x[i];\n}\n"


def cpp_extension_comparison():
    """forward + backward of sum(sin(x) * x) (issue 25's per-step overhead): the enzyme_cc torch
    op against a hand-written C++ autograd::Function (torch.utils.cpp_extension) and a Python
    autograd.Function over torch's own ops, at n = 16 and 4096; medians of 9 interleaved
    batches, each the best of 3 x 300 calls."""
    import torch
    from torch.utils.cpp_extension import load_inline
    import enzyme_cc.torch as et
    ext = load_inline("enzyme_cc_bench_sinx", cpp_sources=CPP_SINX, functions=["sinx"],
                      extra_cflags=["-O2"])
    op = et.op(Signature("sinx", [In("x", ("n",)), Out("y", ("n",)), Int("n")]), source=SINX_C)

    class TorchOps(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x) * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * (torch.cos(x) * x + torch.sin(x))
    for n in (16, 4096):
        x = torch.rand(n, dtype=torch.float64, requires_grad=True)
        fns = {"enzyme_cc torch op": lambda: op(x).sum().backward(),
               "cpp_extension autograd::Function": lambda: ext.sinx(x).sum().backward(),
               "Python autograd.Function, torch ops": lambda: TorchOps.apply(x).sum().backward()}
        assert torch.allclose(op(x), ext.sinx(x))
        times = {k: [] for k in fns}
        for f in fns.values():
            f()
        for _ in range(9):
            for k, f in fns.items():
                times[k].append(min(timeit.repeat(f, number=300, repeat=3)) / 300)
        base = statistics.median(times["cpp_extension autograd::Function"])
        for k, v in times.items():
            m = statistics.median(v)
            print(f"n={n:5d} {k:38s} {m * 1e6:8.1f} us  {m / base:5.2f}x cpp_extension")


def main():
    global TIMER
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--reps", type=int, default=21, help="calls per median (large kernel)")
    ap.add_argument("--cpp-extension", action="store_true",
                    help="also the torch op against a C++ autograd::Function built with "
                         "torch.utils.cpp_extension (needs ninja and a C++ compiler: CXX)")
    args = ap.parse_args()
    if args.cpp_extension:
        cpp_extension_comparison()
        return
    if args.cpu_time:
        TIMER = time.thread_time
    lib = ffi.build([TRIVIAL, BRUSS], source=SRC)
    rows = []

    # ---- per-call overhead of a trivial function ------------------------------------------------
    tw = lib.twice
    x, y = np.ones(1), np.empty(1)
    entry, ints = tw.entry["primal"], (ctypes.c_int64 * 1)(0)
    ptrs = (ctypes.c_void_p * 2)(x.ctypes.data, y.ctypes.data)
    st = (ctypes.c_int64 * 2)(1, 1)
    rows.append(("trivial", "ctypes, prebuilt arguments", best(lambda: entry(1, ints, ptrs, st), 20000)))
    rows.append(("trivial", "enzyme_cc.ffi numpy call", best(lambda: tw(x), 5000)))
    import torch
    import enzyme_cc.torch as et
    top, tx = et.op(tw), torch.ones(1, dtype=torch.float64)
    rows.append(("trivial", "enzyme_cc.torch op", best(lambda: top(tx), 5000)))
    with torch.no_grad():
        rows.append(("trivial", "enzyme_cc.torch op, no_grad", best(lambda: top(tx), 5000)))
    txg = tx.clone().requires_grad_()
    rows.append(("trivial", "enzyme_cc.torch op, requires_grad", best(lambda: top(txg), 5000)))
    rows.append(("trivial", "enzyme_cc.torch op, forward+backward",
                 best(lambda: top(txg).backward(), 2000)))
    rows.append(("trivial", "torch (2 * x), forward+backward",
                 best(lambda: (2 * txg).backward(), 2000)))
    rows.append(("trivial", "torch.Tensor (2 * x)", best(lambda: 2 * tx, 20000)))
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import enzyme_cc.jax as ej
    jop, jx = ej.op(tw), jnp.ones(1)
    f = jax.jit(jop)
    rows.append(("trivial", "enzyme_cc.jax op, jit", best(lambda: f(jx).block_until_ready(), 5000)))
    g = jax.jit(lambda x: 2 * x)
    rows.append(("trivial", "jax.numpy (2 * x), jit", best(lambda: g(jx).block_until_ready(), 5000)))
    ident = jax.jit(lambda x: x)
    rows.append(("trivial", "jax.jit(lambda x: x)", best(lambda: ident(jx).block_until_ready(),
                                                         5000)))
    # eager (no jit around the call): the op against an eager jax.numpy operation
    rows.append(("trivial", "enzyme_cc.jax op, eager", best(lambda: jop(jx).block_until_ready(),
                                                            2000)))
    rows.append(("trivial", "jax.numpy (2 * x), eager", best(lambda: (2 * jx).block_until_ready(),
                                                             2000)))
    # the same three interleaved: medians of batches of 1000 calls (JAX's own dispatch floor)
    jax_rows = [("enzyme_cc.jax op, jit", lambda: f(jx).block_until_ready()),
                ("jax.numpy (2 * x), jit", lambda: g(jx).block_until_ready()),
                ("jax.jit(lambda x: x)", lambda: ident(jx).block_until_ready())]
    jax_med = medians([(lambda fn=fn: [fn() for _ in range(1000)]) for _, fn in jax_rows], 15)

    # ---- gradient of a real kernel -------------------------------------------------------------
    TIMER = time.perf_counter
    n, steps = args.n, args.steps
    br = lib.bruss
    rng = np.random.default_rng(0)
    p, u0, v0 = np.array([1.0, 3.0, 0.5]), 1 + 0.1 * rng.random(n), 3 + 0.1 * rng.random(n)
    ct, gp, gu, gv = np.ones(()), np.empty(3), np.empty(n), np.empty(n)
    prep = br.prepare("vjp", [p.shape, u0.shape, v0.shape, ct.shape], (("steps", steps),))
    vjp = br.entry["vjp"]
    ints = (ctypes.c_int64 * 2)(*prep.ints)
    ptrs = (ctypes.c_void_p * 7)(*[a.ctypes.data for a in (p, u0, v0, ct, gp, gu, gv)])
    st = (ctypes.c_int64 * 7)(*prep.strides)
    reps = 5
    rows.append((f"bruss n={n} steps={steps}", "primal, ctypes",
                 best(lambda: br(p, u0, v0, steps=steps), reps)))
    direct = best(lambda: vjp(1, ints, ptrs, st), reps)
    rows.append((f"bruss n={n} steps={steps}", "gradient: C derivative (ctypes, prebuilt)", direct))
    tb = et.op(br)
    tp, tu, tv = (torch.tensor(a, requires_grad=True) for a in (p, u0, v0))

    def torch_grad():
        return torch.autograd.grad(tb(tp, tu, tv, steps=steps), (tp, tu, tv))
    rows.append((f"bruss n={n} steps={steps}", "gradient: enzyme_cc.torch", best(torch_grad, reps)))
    jb = ej.op(br)
    jg = jax.jit(jax.grad(lambda p, u, v: jb(p, u, v, steps=steps), argnums=(0, 1, 2)))
    jp, ju, jv = jnp.asarray(p), jnp.asarray(u0), jnp.asarray(v0)
    rows.append((f"bruss n={n} steps={steps}", "gradient: enzyme_cc.jax, jit(grad)",
                 best(lambda: jax.block_until_ready(jg(jp, ju, jv)), reps)))
    np.testing.assert_allclose(np.asarray(jg(jp, ju, jv)[1]), torch_grad()[1].numpy(), rtol=1e-12)

    # ---- the same gradient, medians of wall and thread CPU time: torch's split mode (forward:
    # augmented forward keeping the tape; backward: reverse on it) against the combined path it
    # replaced (forward: primal; backward: the VJP entry, which runs the primal sweep again) and
    # the direct C calls
    from enzyme_cc.torch import _Consts
    aug = br.prepare_split([p.shape, u0.shape, v0.shape], (("steps", steps),))
    res = [np.zeros(sh, dt) for sh, dt in aug.results]
    tape = np.zeros(max(aug.tape_bytes, 1), np.uint8)
    sptrs = [a.ctypes.data for a in (p, u0, v0, *res, tape)]

    def split_direct():
        aug.run(sptrs)
        res[4][...] = 1.0           # the output's shadow (results: loss, dp, du, dv, dloss)
        aug.reverse.run(sptrs)

    def torch_combined():
        out = tb._base_apply["primal"](_Consts(aug.ints, (), 3), tp, tu, tv)[0]
        return torch.autograd.grad(out, (tp, tu, tv))
    np.testing.assert_allclose(torch_combined()[1].numpy(), torch_grad()[1].numpy(), rtol=1e-12)
    split_direct()
    np.testing.assert_allclose(res[2], torch_grad()[1].numpy(), rtol=1e-12)
    big = [("C: VJP entry (ctypes, prebuilt)", lambda: vjp(1, ints, ptrs, st)),
           ("C: primal + VJP entry", lambda: (br(p, u0, v0, steps=steps), vjp(1, ints, ptrs, st))),
           ("C: augmented forward + reverse (split)", split_direct),
           ("torch forward+backward, split (default)", torch_grad),
           ("torch forward+backward, combined (before)", torch_combined)]
    med = [(what, *m) for (what, _), m in zip(big, medians([f for _, f in big], args.reps))]
    ref_w, ref_c = med[0][1], med[0][2]
    # a recorded forward that is never differentiated, against the primal: measured apart (the
    # op's calls after a dropped tape run the primal alone, until a backward; taking turns with
    # the gradient rows would switch it every call)
    def fwd_only():
        tb(tp, tu, tv, steps=steps)

    def fwd_no_grad():
        with torch.no_grad():
            tb(tp, tu, tv, steps=steps)
    fwd = [("C: primal (ctypes)", lambda: br(p, u0, v0, steps=steps)),
           ("torch forward, no_grad", fwd_no_grad),
           ("torch forward, requires_grad, no backward", fwd_only)]
    fmed = [(what, *m) for (what, _), m in zip(fwd, medians([f for _, f in fwd], args.reps))]

    width = max(len(r[1]) for r in rows)
    for case, what, t in rows:
        rel = f"  {t / direct:5.3f}x direct" if what.startswith("gradient") else ""
        print(f"{case:26s} {what:{width}s} {t * 1e6:12.2f} us{rel}")
    print(f"\nbruss n={n} steps={steps}, medians of {args.reps} calls (wall, calling thread CPU; "
          "ratios to the C VJP entry)")
    for what, w, c in med:
        print(f"  {what:42s} {w * 1e3:9.3f} ms {w / ref_w:6.3f}x   {c * 1e3:9.3f} ms "
              f"{c / ref_c:6.3f}x")
    print("  (ratios to the C primal)")
    for what, w, c in fmed:
        print(f"  {what:42s} {w * 1e3:9.3f} ms {w / fmed[0][1]:6.3f}x   {c * 1e3:9.3f} ms "
              f"{c / fmed[0][2]:6.3f}x")
    print("\ntrivial jitted JAX calls, medians of 15 interleaved batches of 1000 (wall, calling "
          "thread CPU)")
    for (what, _), (w, c) in zip(jax_rows, jax_med):
        print(f"  {what:42s} {w * 1e3:9.3f} us           {c * 1e3:9.3f} us")


if __name__ == "__main__":
    main()
