"""Seeded random C programs for an oracle test of the AD core (tests/test_random_programs.py).

`generate(seed, omp=False) -> str` returns a self-contained C program, the same text for the same
seed, that defines `double f(...)` from constructs simulation codes use, randomly combined:

- an array `S s[NS]` of structs with mixed fields (double, int, float, a `double *p` into a
  separate array `P` that several structs share, a `double v[2]`, a nested struct), read through
  copies by value (`S t = s[i];`), by assignment, by memcpy, through a pointer or directly;
  local copies of the whole array (memcpy or a loop of assignments) with swaps through a
  temporary; struct arguments and results by value; in-place updates of the inputs (fields,
  whole structs, swaps of elements, writes through the pointer field);
- clamps (`if (u < lo) u = lo;`, `fmax`/`fmin`, ternaries), fabs, sqrt and log of positive
  arguments, exp of bounded ones, sin/cos/tanh/atan/pow, divisions by denominators >= 1;
- loops with early exits on integer conditions (never on a float), nested loops, an iteration
  counted in a `while (1)` loop;
- a table of function pointers indexed by an integer, a recursive helper with an integer depth
  (and one that walks the struct array), a buffer grown with realloc;
- one main loop over the structs in which iteration i writes only `out[i]` and adds to `acc`:
  with `omp=True` the same program carries `#pragma omp parallel for reduction(+:acc)` on it;
- global state, as simulation codes keep their work arrays: the main loop also writes `gw[i]` of
  a static global array, which functions kept as calls then read, rescale or sum into a global
  accumulator through pointer parameters (`gread(gw, n)`, `gscale(gw, ...)`, `gadd(&gacc, ...)`;
  drawn from a random stream of its own, so a seed's other constructs stay the same);
- tagged values (`struct { int tag; union { double d; long i; } u; }`, as interpreters keep
  them): after the main loop, an array of them, each a double or an integer by its tag, stepped
  in place by a function that switches on the tag (the double arm computes, the integer arm
  does integer arithmetic on the same bytes), optionally passed through one that takes and
  returns a value by value (in integer registers), and summed by tag (a stream of its own too).

Every expression carries a bound on its magnitude, so that sqrt/log arguments stay >= 0.5,
denominators >= 1 and exp arguments <= 3; a value that could grow past LIMIT is squashed.
Kinks (clamps, fabs, fmin/fmax, ternaries) are kept away from the evaluation point at run time:
the program also defines `f_probe`, the same body with each kink going through a function that
records how near its operands are to the kink, and shifts its inputs (`reset(attempt)`) until
every kink is at least 1e-3 away. Central differences are then accurate to ~1e-8.

The program's main() checks, for L = f(...) + <w, out> over every double input (struct fields,
`P`, the active scalars):
- the reverse-mode gradient (`__enzyme_autodiff`, enzyme_dup on `s` and `out`, active doubles
  returned) against central finite differences (h = 1e-6 and h/2, Richardson-extrapolated;
  tolerance 1e-5 * (1 + |fd|));
- the primal memory after the reverse call and after the forward call against a plain call;
- `__enzyme_fwddiff` along a deterministic direction against <gradient, direction>;
- a second reverse call gives the identical gradient.
It prints `CHECK name got expected` lines, `GRAD name value` and `FWD value` lines (compared by
the test between the OpenMP and serial builds), `RESULT ok` and exits 0, or `RESULT fail` and 1.

Run `python tests/random_programs/generator.py SEED [--omp] > p.c` to write one program;
build it with `enzyme-cc -O2 p.c -lm -o p` (`-fopenmp` for --omp) and run `./p`.
`--without=struct_heap,nudge` (names in FEATURES) leaves constructs out, to tell which one a
failure needs (the result is another random program, not the seed's minus some lines).
"""
import math
import random
import sys

LIMIT = 8.0          # the magnitude bound kept on every expression
NOPS = 3             # entries of the function-pointer table
FIELDS_DOUBLE = ("x", "v[0]", "v[1]", "in.a")   # the double fields of S that are inputs


def _num(c: float) -> str:
    s = f"{c:.3f}"
    return f"({s})" if c < 0 else s


class _Rng:
    """random.Random with the few draws the generator needs."""

    def __init__(self, key: str):
        self.r = random.Random(key)

    def coin(self, p=0.5):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(list(seq))

    def const(self, lo, hi, signed=True):
        c = self.r.uniform(lo, hi)
        return -c if signed and self.coin() else c

    def int(self, lo, hi):
        return self.r.randint(lo, hi)

    def shuffle(self, seq):
        seq = list(seq)
        self.r.shuffle(seq)
        return seq


class _Exprs:
    """Random expressions over atoms (text, bound); `probe` renders kinks through the pk_*
    recorders. The draws do not depend on `probe`, so both renderings have the same structure."""

    def __init__(self, rng: _Rng, probe: bool):
        self.g = rng
        self.probe = probe

    def squash(self, e):
        t, b = e
        if b <= LIMIT:
            return e
        k = self.g.int(0, 2)
        if k == 0:
            return (f"sin({t})", 1.0)
        if k == 1 or b / 8 > LIMIT:
            return (f"tanh(0.300 * {t})", 1.0)
        return (f"(0.125 * {t})", b / 8)

    def fabs(self, t):
        return f"pk_fabs({t})" if self.probe else f"fabs({t})"

    def fminmax(self, which, a, b):
        return f"pk_{which}({a}, {b})" if self.probe else f"{which}({a}, {b})"

    def gt(self, a, b):
        return f"pk_gt({a}, {b})" if self.probe else f"{a} > {b}"

    def lt(self, a, b):
        return f"pk_lt({a}, {b})" if self.probe else f"{a} < {b}"

    def expr(self, atoms, depth, kinks=True):
        g = self.g
        if depth <= 0 or g.coin(0.2):
            if g.coin(0.12):
                c = g.const(0.3, 1.5)
                return (_num(c), abs(c))
            return self.squash(g.pick(atoms))
        kinds = ["add", "add", "sub", "mul", "mul", "scale", "sin", "cos", "tanh", "exp", "sqrt",
                 "log", "div", "pow", "atan"]
        if kinks:
            kinds += ["fabs", "fmax", "fmin", "select"]
        k = g.pick(kinds)
        a, ab = self.expr(atoms, depth - 1, kinks)
        if k in ("add", "sub", "mul", "div", "fmax", "fmin", "select"):
            b, bb = self.expr(atoms, depth - 1, kinks)
        if k == "add":
            e = (f"({a} + {b})", ab + bb)
        elif k == "sub":
            e = (f"({a} - {b})", ab + bb)
        elif k == "mul":
            e = (f"({a} * {b})", ab * bb)
        elif k == "scale":
            c = g.const(0.2, 1.8)
            e = (f"({_num(c)} * {a})", abs(c) * ab)
        elif k in ("sin", "cos", "tanh"):
            e = (f"{k}({a})", 1.0)
        elif k == "atan":
            e = (f"atan({a})", 1.6)
        elif k == "exp":
            if ab <= 3:
                c = g.const(0.1, 1.0)
                e = (f"exp({_num(c)} * {a})", 2.72 ** (abs(c) * ab))
            else:
                e = (f"exp(sin({a}))", 2.72)
        elif k == "sqrt":
            c = ab + g.const(0.5, 1.5, signed=False)
            e = (f"sqrt({c:.3f} + {a})", (c + ab) ** 0.5)
        elif k == "log":
            c = ab + g.const(0.5, 1.5, signed=False)
            e = (f"log({c:.3f} + {a})", max(0.7, abs(math.log(c + ab))))
        elif k == "pow":
            c = ab + g.const(0.5, 1.5, signed=False)
            p = g.pick(("1.5", "2.5", "0.5", "3.0"))
            e = (f"pow({c:.3f} + {a}, {p})", (c + ab) ** float(p))
        elif k == "div":
            c = bb + g.const(1.0, 2.0, signed=False)
            e = (f"({a} / ({c:.3f} + {b}))", ab)
        elif k == "fabs":
            e = (self.fabs(a), ab)
        elif k in ("fmax", "fmin"):
            e = (self.fminmax(k, a, b), max(ab, bb))
        else:   # select: a ternary on a float comparison
            c = g.const(0.0, 0.5 * ab)
            d, db = self.expr(atoms, depth - 1, kinks)
            e = (f"({self.gt(a, _num(c))} ? {b} : {d})", max(bb, db))
        return self.squash(e)


class _Layout:
    """What f and main share: the struct types, f's parameters, the helpers, input values."""

    def __init__(self, seed: int):
        g = self.g = _Rng(f"layout-{seed}")
        self.ns = g.int(3, 6)
        self.np = self.ns + 2
        self.nact = g.int(1, 3)
        self.act = ["dt", "kappa", "gam"][: self.nact]
        self.const_double = g.coin(0.3)          # a double passed with enzyme_const
        params = [("S", "s"), ("out", "out"), ("int", "n"), ("int", "mode")]
        params += [("act", a) for a in self.act]
        if self.const_double:
            params.append(("cdouble", "damp"))
        self.params = g.shuffle(params)
        self.explicit = g.coin(0.5)               # markers written out where they are defaults
        self.mode = g.int(0, 5)
        self.s_fields = g.shuffle(["double x;", "int id;", "float w;", "double *p;",
                                   "double v[2];", "Inner in;"])
        self.inner_fields = g.shuffle(["double a;", "int k;"])
        self.ids = [g.int(0, 4) for _ in range(self.ns)]
        self.ks = [g.int(0, 3) for _ in range(self.ns)]
        self.pidx = [g.int(0, self.np - 2) for _ in range(self.ns)]
        self.weights = [g.const(0.3, 1.2) for _ in range(self.ns)]
        self.phase = [g.const(0.0, 3.0, signed=False) for _ in range(8)]
        # helpers: smooth bodies (no kinks) over their argument of bound LIMIT
        ex = _Exprs(g, probe=False)
        self.ops = []
        self.op_bound = 0.0
        for _ in range(NOPS):
            t, b = ex.expr([("x", LIMIT)], 3, kinks=False)
            t, b = ex.squash((t, b)) if b > LIMIT else (t, b)
            self.ops.append(t)
            self.op_bound = max(self.op_bound, b)
        self.rec_c1 = g.const(0.2, 0.6)
        self.rec_c2 = g.const(0.1, 0.4)
        self.rec_base = ex.expr([("x", LIMIT)], 2, kinks=False)
        self.rec_base = ex.squash(self.rec_base) if self.rec_base[1] > LIMIT else self.rec_base
        self.recs_c = g.const(0.2, 0.7)
        fa = [("s[k].x", 1.0), ("s[k].v[0]", 1.0), ("s[k].v[1]", 1.0), ("s[k].in.a", 1.5),
              ("s[k].p[0]", 1.0), ("(double)s[k].w", 1.5)]
        self.recs_body = ex.expr(fa, 2, kinks=False)
        self.recs_body = ex.squash(self.recs_body) if self.recs_body[1] > LIMIT else self.recs_body
        self.nudge_c = g.const(0.2, 0.8)
        tg = _Rng(f"tag-{seed}")            # tagged values: a stream of their own
        self.tagged = tg.coin(0.35)
        self.tag_shift, self.tag_rounds, self.tag_by_value = tg.int(0, 2), tg.int(1, 2), tg.coin()
        self.tag_c = [tg.const(0.2, 0.6, signed=False) for _ in range(3)]
        self.sops = []
        self.sop_bound = 0.0
        sa = [("y", LIMIT), ("t->x", 1.0), ("t->v[1]", 1.0), ("t->in.a", 1.5), ("t->p[1]", 1.0)]
        for _ in range(NOPS):
            e = ex.expr(sa, 3, kinks=False)
            e = ex.squash(e) if e[1] > LIMIT else e
            self.sops.append(e[0])
            self.sop_bound = max(self.sop_bound, e[1])


class _Body:
    """f's body. Reseeded for each rendering, so f and f_probe (and the OpenMP variant) differ
    only in the text of kinks and of the pragma."""

    def __init__(self, seed: int, lay: _Layout, probe: bool, omp: bool, without=frozenset()):
        self.g = _Rng(f"body-{seed}")
        self.without = without
        self.x = _Exprs(self.g, probe)
        self.lay = lay
        self.omp = omp and not probe
        self.lines = []
        self.uid = 0
        self.scalars = [(a, 1.2) for a in lay.act]
        if lay.const_double:
            self.scalars.append(("damp", 1.2))
        self.loc = None          # name of a local copy of the struct array, if any
        self.buf = None          # (name, length) of a live heap buffer, if any
        self.deferred_free = []
        self.uses = set()        # helpers used: ops, rec, recs, nudge, gwork
        # global work array: its own stream, so that the other constructs of a seed stay put
        self.tagged = lay.tagged and "tagged" not in without
        gg = _Rng(f"glob-{seed}")
        self.gw = "global_work" not in without and gg.coin(0.35)
        self.gw_post = [gg.int(0, 2) for _ in range(gg.int(1, 2))]
        self.gw_c = [gg.const(0.2, 0.8) for _ in range(3)]

    # -- helpers ---------------------------------------------------------------------------
    def emit(self, line, ind=1):
        self.lines.append("  " * ind + line)

    def name(self, base):
        self.uid += 1
        return f"{base}{self.uid}"

    @staticmethod
    def fields(pre, ptr_ok=True):
        out = [(f"{pre}x", 1.0), (f"{pre}v[0]", 1.0), (f"{pre}v[1]", 1.0), (f"{pre}in.a", 1.5),
               (f"(double){pre}w", 1.5)]
        if ptr_ok:
            out += [(f"{pre}p[0]", 1.0), (f"{pre}p[1]", 1.0)]
        return out

    @staticmethod
    def loose(atoms):
        """Fields of a modified copy: bounded by LIMIT only."""
        return [(t, LIMIT) for t, _ in atoms]

    def clamp(self, var, bound, ind):
        """A clamp of `var` (a double local) with thresholds inside its range."""
        g, x = self.g, self.x
        lo = g.const(0.0, 0.15 * bound)
        hi = lo + g.const(0.1, 0.3 * bound + 0.2, signed=False)
        k = g.int(0, 4)
        if k == 0:
            self.emit(f"if ({x.lt(var, _num(lo))}) {var} = {_num(lo)};", ind)
        elif k == 1:
            self.emit(f"{var} = {x.fminmax('fmax', var, _num(lo))};", ind)
        elif k == 2:
            self.emit(f"{var} = {x.gt(var, _num(hi))} ? {_num(hi)} : {var};", ind)
        elif k == 3:
            self.emit(f"if ({x.gt(var, _num(hi))}) {var} = {_num(hi)};", ind)
            self.emit(f"else if ({x.lt(var, _num(lo))}) {var} = {_num(lo)};", ind)
        else:
            self.emit(f"{var} = {x.fminmax('fmin', x.fminmax('fmax', var, _num(lo)), _num(hi))};",
                      ind)

    def use_scalar(self, q, bound):
        """A new local: added to acc, and an atom of what follows."""
        self.emit(f"acc += {_num(self.g.const(0.1, 0.6))} * {q};")
        self.scalars.append((q, bound))

    def squash_stmt(self, var, bound, ind):
        if bound <= LIMIT:
            return bound
        if self.g.coin() and bound / 8 <= LIMIT:
            self.emit(f"{var} = 0.125 * {var};", ind)
            return bound / 8
        self.emit(f"{var} = sin({var});", ind)
        return 1.0

    # -- blocks before the main loop -------------------------------------------------------
    def blk_local_copy(self):
        lay, g, x = self.lay, self.g, self.x
        loc = self.name("loc")
        self.emit(f"S {loc}[{lay.ns}];")
        k = g.int(0, 2)
        if k == 0:
            self.emit(f"memcpy({loc}, s, sizeof {loc});")
        elif k == 1:
            self.emit(f"memcpy({loc}, s, n * sizeof(S));")
        else:
            self.emit(f"for (int k = 0; k < n; k++) {loc}[k] = s[k];")
        a, b = g.int(0, lay.ns - 1), g.int(0, lay.ns - 1)
        tmp = self.name("tmp")
        self.emit(f"{{ S {tmp} = {loc}[{a}]; {loc}[{a}] = {loc}[{b}]; {loc}[{b}] = {tmp}; }}")
        c = g.int(0, lay.ns - 1)
        e = x.expr(self.fields(f"{loc}[{c}].") + self.scalars, 2)
        self.emit(f"{loc}[{c}].x = {e[0]};")
        if g.coin():
            e2 = x.expr(self.fields(f"{loc}[{c}].", ptr_ok=False) + self.scalars, 1)
            self.emit(f"{loc}[{c}].v[1] = 0.5 * {loc}[{c}].v[1] + 0.5 * {e2[0]};")
        if g.coin():   # a struct assignment between two elements of the copy
            self.emit(f"{loc}[{g.int(0, lay.ns - 1)}] = {loc}[{g.int(0, lay.ns - 1)}];")
        self.emit("for (int k = 0; k < n; k++) {")
        fa = self.loose(self.fields(f"{loc}[k].")) + self.scalars
        e3 = x.expr(fa, 2)
        self.emit(f"acc += {_num(g.const(0.2, 1.0))} * {e3[0]};", 2)
        self.emit("}")
        if g.coin(0.7):
            self.loc = loc

    def blk_realloc(self):
        lay, g, x = self.lay, self.g, self.x
        buf, m = self.name("buf"), g.int(2, 4)
        self.emit(f"double *{buf} = (double *)malloc({m} * sizeof(double));")
        e = x.expr(self.fields("s[k % n].") + self.scalars, 2)
        self.emit(f"for (int k = 0; k < {m}; k++) {buf}[k] = {e[0]};")
        self.emit(f"{buf} = (double *)realloc({buf}, {2 * m} * sizeof(double));")
        e2 = x.expr([(f"{buf}[k - {m}]", e[1])] + self.scalars, 2)
        self.emit(f"for (int k = {m}; k < {2 * m}; k++) {buf}[k] = {e2[0]};")
        c = g.const(0.2, 1.0)
        if g.coin():
            self.emit(f"for (int k = 0; k < {2 * m}; k++) acc += {_num(c)} * {buf}[k];")
        else:
            self.emit(f"for (int k = 1; k < {2 * m}; k++) acc += {_num(c)} * {buf}[k] * {buf}[k - 1];")
        if g.coin(0.6):
            self.buf = (buf, 2 * m, max(e[1], e2[1]))
            self.deferred_free.append(buf)
        else:
            self.emit(f"free({buf});")

    def blk_early_exit(self):
        lay, g, x = self.lay, self.g, self.x
        k = g.int(0, 3)
        if k <= 1:
            self.emit("for (int k = 0; k < n; k++) {")
            if k == 0:
                self.emit(f"if (s[k].id == {g.pick(lay.ids)}) break;", 2)
            else:
                self.emit(f"if (s[k].in.k > {g.int(1, 3)}) continue;", 2)
                self.emit(f"if (k >= {g.int(1, lay.ns)}) break;", 2)
            e = x.expr(self.fields("s[k].") + self.scalars, 2)
            self.emit(f"acc += {_num(g.const(0.2, 1.0))} * {e[0]};", 2)
            self.emit("}")
        elif k == 2:   # pairs, inner loop broken off by an integer gap
            self.emit("for (int k = 0; k < n; k++) {")
            self.emit("for (int j = k + 1; j < n; j++) {", 2)
            self.emit(f"if (j - k > {g.int(1, 3)}) break;", 3)
            d = self.name("d")
            self.emit(f"double {d} = s[j].x - s[k].x + {_num(g.const(0.0, 0.5))} * s[j].p[0];", 3)
            self.emit(f"acc += {_num(g.const(0.2, 1.0))} / (1.0 + {d} * {d});", 3)
            self.emit("}", 2)
            self.emit("}")
        else:          # a counted while (1) iteration with an integer exit
            z, it = self.name("z"), self.name("it")
            e = x.expr(self.scalars + [("s[0].x", 1.0), ("s[n - 1].v[0]", 1.0)], 2)
            self.emit(f"double {z} = {e[0]};")
            self.emit(f"int {it} = 0;")
            self.emit("while (1) {")
            e2 = x.expr(self.scalars + [(z, LIMIT)], 1, kinks=False)
            self.emit(f"{z} = 0.5 * {z} + {_num(g.const(0.2, 0.9))} * sin({z} + {e2[0]});", 2)
            self.emit(f"if (++{it} >= {g.int(2, 5)}) break;", 2)
            self.emit("}")
            self.use_scalar(z, LIMIT)

    def blk_recursion(self):
        g, x = self.g, self.x
        if g.coin():
            self.uses.add("rec")
            q = self.name("q")
            e = x.expr(self.scalars + [("s[0].in.a", 1.5), ("s[n - 1].x", 1.0)], 2)
            self.emit(f"double {q} = rec({e[0]}, {g.int(1, 4)});")
            self.use_scalar(q, abs(self.lay.rec_c1) + abs(self.lay.rec_c2) * LIMIT
                            + self.lay.rec_base[1])
        else:
            self.uses.add("recs")
            self.emit(f"acc += {_num(g.const(0.2, 1.0))} * recs(s, n - 1);")

    def blk_fnptr(self):
        g, x = self.g, self.x
        self.uses.add("ops")
        q = self.name("q")
        e = x.expr(self.scalars + [("s[1].x", 1.0), ("s[0].p[1]", 1.0)], 2)
        if g.coin():
            self.emit(f"double {q} = ops[(mode + {g.int(0, 2)}) % {NOPS}]({e[0]});")
        else:
            fp = self.name("fp")
            self.emit(f"double (*{fp})(double) = ops[(s[{g.int(0, self.lay.ns - 1)}].id + mode) "
                      f"% {NOPS}];")
            self.emit(f"double {q} = {fp}({e[0]}) + 0.5 * {fp}({_num(g.const(0.1, 1.0))});")
        self.use_scalar(q, 2 * self.lay.op_bound)

    def blk_clamped_scalar(self):
        g, x = self.g, self.x
        q = self.name("q")
        e = x.expr(self.scalars + self.fields(f"s[{g.int(0, self.lay.ns - 1)}]."), 3)
        self.emit(f"double {q} = {e[0]};")
        self.clamp(q, e[1], 1)
        self.use_scalar(q, e[1])

    def blk_struct_heap(self):
        """A heap array of structs (pointer fields included) grown with realloc."""
        lay, g, x = self.lay, self.g, self.x
        sb = self.name("sb")
        a, b = g.int(0, lay.ns - 1), g.int(0, lay.ns - 1)
        self.emit(f"S *{sb} = (S *)malloc(2 * sizeof(S));")
        if g.coin():
            self.emit(f"{sb}[0] = s[{a}];")
            self.emit(f"{sb}[1] = s[{b}];")
        else:
            self.emit(f"memcpy({sb}, &s[{a}], sizeof(S));")
            self.emit(f"memcpy(&{sb}[1], &s[{b}], sizeof(S));")
        self.emit(f"{sb} = (S *)realloc({sb}, 4 * sizeof(S));")
        if g.coin():
            self.emit(f"memcpy(&{sb}[2], {sb}, 2 * sizeof(S));")
        else:
            self.emit(f"for (int k = 2; k < 4; k++) {sb}[k] = {sb}[3 - k];")
        e = x.expr(self.fields(f"{sb}[3].") + self.scalars, 2)
        self.emit(f"{sb}[3].x = {e[0]};")
        self.emit(f"{sb}[{g.int(0, 2)}].in.a *= {_num(g.const(0.5, 1.2))};")
        e2 = x.expr(self.loose(self.fields(f"{sb}[k].")) + self.scalars, 2)
        self.emit(f"for (int k = 0; k < 4; k++) acc += {_num(g.const(0.2, 0.8))} * {e2[0]};")
        self.emit(f"free({sb});")

    def blk_nudge_copy(self):
        """Elements of a local copy replaced by a function of them taking and returning S."""
        lay, g, x = self.lay, self.g, self.x
        self.uses.add("nudge")
        loc = self.name("loc")
        self.emit(f"S {loc}[{lay.ns}];")
        self.emit(f"for (int k = 0; k < n; k++) {{")
        self.emit(f"{loc}[k] = s[k];", 2)
        e = x.expr(self.scalars + self.fields("s[k]."), 1)
        self.emit(f"{loc}[k] = nudge({loc}[k], {e[0]});", 2)
        self.emit("}")
        e2 = x.expr(self.loose(self.fields(f"{loc}[k].")) + self.scalars, 2)
        self.emit(f"for (int k = 0; k < n; k++) acc += {_num(g.const(0.2, 0.8))} * {e2[0]};")
        if g.coin(0.5):
            self.loc = loc

    def blk_in_place(self):
        lay, g, x = self.lay, self.g, self.x
        k = g.int(0, 3)
        if k == 0:
            fld = g.pick(("x", "v[0]", "v[1]", "in.a"))
            e = x.expr(self.fields("s[k].") + self.scalars, 2)
            # 0.7 * |old| + 0.3 keeps each field within its bound
            self.emit(f"for (int k = 0; k < n; k++) s[k].{fld} = 0.7 * s[k].{fld} + "
                      f"{_num(g.const(0.05, 0.3))} * tanh({e[0]});")
        elif k == 1:   # through the pointer field (entries of P shared by several structs)
            e = x.expr(self.fields("s[k].", ptr_ok=False) + self.scalars, 2, kinks=False)
            self.emit(f"for (int k = 0; k < n; k++) s[k].p[0] = 0.9 * s[k].p[0] + "
                      f"0.1 * tanh({e[0]});")
        elif k == 2:   # swap two input structs through a temporary
            tmp = self.name("tmp")
            a, b = g.int(0, lay.ns - 1), g.int(0, lay.ns - 1)
            self.emit(f"{{ S {tmp} = s[{a}]; s[{a}] = s[{b}]; s[{b}] = {tmp}; }}")
        else:          # overwrite an input struct by another, then nudge a field of it
            a, b = g.int(0, lay.ns - 1), g.int(0, lay.ns - 1)
            self.emit(f"s[{a}] = s[{b}];")
            c = g.const(0.1, 0.5, signed=False)
            self.emit(f"s[{a}].v[0] = {1 - c:.3f} * s[{a}].v[0] + {c:.3f} * s[{a}].x;")

    # -- the main loop ---------------------------------------------------------------------
    def main_loop(self):
        lay, g, x = self.lay, self.g, self.x
        if self.omp:
            self.emit("#pragma omp parallel for reduction(+:acc)")
        self.emit("for (int i = 0; i < n; i++) {")
        form = g.int(0, 4)
        if form == 0:
            self.emit("S t = s[i];", 2)
            pre = "t."
        elif form == 1:
            self.emit("S t;", 2)
            self.emit("t = s[i];", 2)
            pre = "t."
        elif form == 2:
            self.emit("S t;", 2)
            self.emit("memcpy(&t, &s[i], sizeof t);", 2)
            pre = "t."
        elif form == 3:
            self.emit("const S *t = &s[i];", 2)
            pre = "t->"
        else:
            pre = "s[i]."
        atoms = self.fields(pre) + self.scalars
        if self.loc:
            atoms += self.loose(self.fields(f"{self.loc}[i].")[:3])
        if self.buf:
            atoms.append((f"{self.buf[0]}[i % {self.buf[1]}]", self.buf[2]))
        if pre == "t." and "nudge" not in self.without and g.coin(0.3):   # S by value
            self.uses.add("nudge")
            e = x.expr(self.scalars, 1)
            self.emit(f"S t2 = nudge(t, {e[0]});", 2)
            atoms += self.loose(self.fields("t2.", ptr_ok=False)[:3])
        e = x.expr(atoms, 3)
        self.emit(f"double u = {e[0]};", 2)
        bound = e[1]
        if g.coin(0.6):
            self.clamp("u", bound, 2)
        k = g.int(0, 3)
        if k == 0:     # a short inner loop over the small array
            e2 = x.expr(self.scalars + [(f"{pre}v[j]", 1.0)], 2)
            c = g.const(0.2, 0.8)
            self.emit(f"for (int j = 0; j < 2; j++) u += {_num(c)} * {pre}v[j] * {e2[0]};", 2)
            bound += 2 * abs(c) * e2[1]
        elif k == 1:   # neighbours, up to an integer condition
            c = g.const(0.1, 0.5)
            self.emit("for (int j = 0; j < n; j++) {", 2)
            if g.coin():
                self.emit("if (j == i) break;", 3)
            else:
                self.emit(f"if (s[j].id == {g.pick(lay.ids)}) break;", 3)
            e2 = x.expr(self.fields("s[j].") + self.scalars, 2)
            self.emit(f"u += {_num(c)} * {e2[0]};", 3)
            self.emit("}", 2)
            bound += lay.ns * abs(c) * e2[1]
        bound = self.squash_stmt("u", bound, 2)
        if "fnptr" not in self.without and g.coin(0.4):
            self.uses.add("ops")
            self.emit(f"u = ops[({pre}id + mode) % {NOPS}](u);", 2)
            bound = lay.op_bound
        if "sops" not in self.without and g.coin(0.3):
            self.uses.add("sops")
            c = g.const(0.2, 0.6)
            ref = {"t.": "&t", "t->": "t", "s[i].": "&s[i]"}[pre]
            self.emit(f"u += {_num(c)} * sops[({pre}in.k + i) % {NOPS}]({ref}, u);", 2)
            bound += abs(c) * lay.sop_bound
        if "recursion" not in self.without and g.coin(0.3):
            bound = self.squash_stmt("u", bound, 2)   # rec's argument stays within LIMIT
            self.uses.add("rec")
            c = g.const(0.2, 0.6)
            self.emit(f"u += {_num(c)} * rec(u, {pre}in.k % 3 + 1);", 2)
            bound += abs(c) * (abs(lay.rec_c1) + abs(lay.rec_c2) * LIMIT + lay.rec_base[1])
        bound = self.squash_stmt("u", bound, 2)
        self.emit("out[i] = u;", 2)
        if self.gw:                 # |gw[i]| <= 1
            self.uses.add("gwork")
            self.emit("gw[i] = 0.5 * tanh(u) + 0.25 * sin(u * u);", 2)
        e3 = x.expr(atoms + [("u", bound)], 2)
        self.emit(f"acc += {e3[0]};", 2)
        self.emit("}")
        return bound

    # -- blocks after the main loop --------------------------------------------------------
    def post_read_out(self, bound):
        g, x = self.g, self.x
        k = g.int(0, 2)
        c = _num(g.const(0.2, 0.8))
        if k == 0:
            self.emit(f"for (int k = 0; k + 1 < n; k++) acc += {c} * out[k] * out[k + 1];")
        elif k == 1:
            mx = self.name("mx")
            self.emit(f"double {mx} = out[0];")
            if g.coin():
                self.emit(f"for (int k = 1; k < n; k++) {mx} = {x.fminmax('fmax', mx, 'out[k]')};")
            else:
                self.emit(f"for (int k = 1; k < n; k++) if ({x.gt('out[k]', mx)}) {mx} = out[k];")
            self.emit(f"acc += {c} * {mx};")
        else:
            self.emit(f"for (int k = 0; k < n; k++) out[k] = {c} * out[k] + tanh(out[k]);")

    def global_work(self):
        """What functions kept as calls do with the global work array after the main loop."""
        c0, c1, c2 = (_num(c) for c in self.gw_c)
        for k in self.gw_post:
            if k == 0:      # read through a pointer parameter (two addresses: no constant)
                self.emit(f"acc += {c0} * (gread(gw, n) + gread(gw + 1, n - 1));")
            elif k == 1:    # rewritten through one, then read here
                self.emit(f"gscale(gw, n, {c1});")
                self.emit(f"for (int k = 0; k < n; k++) acc += {c2} * gw[k] * gw[(k + 2) % n];")
            else:           # summed into a global accumulator by address
                self.emit("gacc = 0.0;")
                self.emit("for (int k = 0; k < n; k++) gadd(&gacc, gw[k]);")
                self.emit(f"acc += {c0} * gacc;")

    def tagged_values(self):
        """Tagged values made from `out`, stepped by tag in place (and by value), summed by tag:
        |d| stays <= 1, the integers small."""
        lay = self.lay
        self.uses.add("tagged")
        self.emit("Tv tv[NS];")
        self.emit("for (int k = 0; k < n; k++) {")
        self.emit(f"tv[k].tag = (k + {lay.tag_shift}) % 3;", 2)
        self.emit("if (tv[k].tag == 0) tv[k].u.d = sin(out[k]); else tv[k].u.i = k + 3;", 2)
        self.emit("}")
        self.emit(f"for (int r = 0; r < {lay.tag_rounds}; r++)")
        self.emit(f"for (int k = 0; k < n; k++) tstep(&tv[k], {lay.act[0]});", 2)
        if lay.tag_by_value:
            self.emit("for (int k = 0; k < n; k++) tv[k] = ttwice(tv[k]);")
        self.emit(f"for (int k = 0; k < n; k++) acc += {_num(lay.tag_c[0])} * (tv[k].tag == 0 ? "
                  f"tv[k].u.d : tv[k].tag == 1 ? 1e-3 * (double)tv[k].u.i : 0.5);")

    def render(self):
        lay, g = self.lay, self.g
        self.emit("double acc = 0.0;")
        pre = [self.blk_local_copy, self.blk_realloc, self.blk_early_exit, self.blk_recursion,
               self.blk_fnptr, self.blk_clamped_scalar, self.blk_in_place, self.blk_struct_heap,
               self.blk_nudge_copy]
        pre = [b for b in pre if b.__name__[4:].removesuffix("_copy") not in self.without]
        for _ in range(g.int(1, 5)):
            g.pick(pre)()
        bound = self.main_loop()
        if self.gw:
            self.global_work()
        if self.tagged:
            self.tagged_values()
        for _ in range(g.int(0, 3)):
            if g.coin(0.5):
                self.post_read_out(bound)
            else:
                post = [self.blk_early_exit, self.blk_recursion, self.blk_in_place]
                post = [b for b in post if b.__name__[4:] not in self.without]
                if post:
                    g.pick(post)()
        for b in self.deferred_free:
            self.emit(f"free({b});")
        if lay.const_double and g.coin(0.7):
            self.emit("acc *= 1.0 + 0.1 * damp;")
        self.emit("return acc;")
        return self.lines


def _signature(lay: _Layout, name: str) -> str:
    ps = []
    for kind, nm in lay.params:
        ps.append({"S": "S *s", "out": "double *out", "int": f"int {nm}", "act": f"double {nm}",
                   "cdouble": f"double {nm}"}[kind])
    return f"double {name}({', '.join(ps)})"


def _helpers(lay: _Layout, uses) -> list:
    out = []
    if "ops" in uses:
        for i, t in enumerate(lay.ops):
            out.append(f"static double op{i}(double x) {{ return {t}; }}")
        out.append(f"static double (*const ops[{NOPS}])(double) = "
                   f"{{{', '.join(f'op{i}' for i in range(NOPS))}}};")
    if "sops" in uses:
        for i, t in enumerate(lay.sops):
            out.append(f"static double sop{i}(const S *t, double y) {{ return {t}; }}")
        out.append(f"static double (*const sops[{NOPS}])(const S *, double) = "
                   f"{{{', '.join(f'sop{i}' for i in range(NOPS))}}};")
    if "rec" in uses:
        out += ["static double rec(double x, int d) {",
                f"  if (d <= 0) return {lay.rec_base[0]};",
                f"  return {_num(lay.rec_c1)} * sin(rec(x, d - 1)) + {_num(lay.rec_c2)} * x;",
                "}"]
    if "recs" in uses:
        out += ["static double recs(const S *s, int k) {",
                "  if (k < 0) return 0.0;",
                f"  return {lay.recs_body[0]} + {_num(lay.recs_c)} * recs(s, k - 1);",
                "}"]
    if "gwork" in uses:   # |w[k]| <= 1: gscale keeps it there
        out += [f"static double gw[{lay.ns}], gacc;",
                "__attribute__((noinline)) static double gread(const double *w, int n) {",
                "  double t = 0;",
                "  for (int k = 0; k < n; k++) t += w[k] * sin(w[(k + 1) % n]);",
                "  return t;",
                "}",
                "__attribute__((noinline)) static void gscale(double *w, int n, double c) {",
                "  for (int k = 0; k < n; k++) w[k] = 0.5 * c * w[k] + 0.25 * sin(w[k]);",
                "}",
                "__attribute__((noinline)) static void gadd(double *a, double v) { *a += v * v; }"]
    if "tagged" in uses:    # |w| <= 1.2 (an active scalar), |d| <= 1 stays so
        c1, c2 = _num(lay.tag_c[1]), _num(lay.tag_c[2])
        out += ["typedef struct { int tag; union { double d; long i; } u; } Tv;",
                "__attribute__((noinline)) static void tstep(Tv *v, double w) {",
                "  switch (v->tag) {",
                f"  case 0: v->u.d = {c1} * v->u.d + 0.25 * sin(w * v->u.d); break;",
                "  case 1: v->u.i = v->u.i * 3 + 1; break;",
                "  default: break;",
                "  }",
                "}",
                "__attribute__((noinline)) static Tv ttwice(Tv v) {",
                "  Tv r = v;",
                f"  if (v.tag == 0) r.u.d = {c2} * tanh(v.u.d);",
                "  else if (v.tag == 1) r.u.i = v.u.i / 2 + 7;",
                "  return r;",
                "}"]
    if "nudge" in uses:
        out += ["static S nudge(S t, double c) {",
                f"  t.x = t.x + {_num(lay.nudge_c)} * c * t.v[1];",
                "  t.v[0] *= 0.5;",
                "  return t;",
                "}"]
    return out


_PROBES = r"""/* kink recorders, used by f_probe only: the distance of each kink from its operands */
static double kink_min;
/* exactly 0: the same value on both sides (fmax(a, a), two outputs clamped to one constant) */
static void note(double d) { d = fabs(d); if (d != 0 && d < kink_min) kink_min = d; }
static double pk_fabs(double a) { note(a); return fabs(a); }
static double pk_fmax(double a, double b) { note(a - b); return fmax(a, b); }
static double pk_fmin(double a, double b) { note(a - b); return fmin(a, b); }
static int pk_gt(double a, double b) { note(a - b); return a > b; }
static int pk_lt(double a, double b) { note(a - b); return a < b; }
"""


def _main(lay: _Layout, omp: bool) -> list:
    ns, np_, K = lay.ns, lay.np, lay.nact
    L = []
    e = L.append
    names, prim, shad, dirs = [], [], [], []
    for i in range(ns):
        for fld in FIELDS_DOUBLE:
            names.append(f"s[{i}].{fld}")
            prim.append(f"&s[{i}].{fld}")
            shad.append(f"&ds[{i}].{fld}")
            dirs.append(f"&vs[{i}].{fld}")
    for k in range(np_):
        names.append(f"P[{k}]")
        prim.append(f"&P[{k}]")
        shad.append(f"&dP[{k}]")
        dirs.append(f"&vP[{k}]")
    for j, a in enumerate(lay.act):
        names.append(a)
        prim.append(f"&act[{j}]")
        shad.append(f"&gact[{j}]")
        dirs.append(f"&vact[{j}]")
    ni = len(names)
    ph = lay.phase
    e(f"#define NI {ni}")
    e(f"static S s[NS], ds[NS], vs[NS], sref[NS];")
    e(f"static double P[NP], dP[NP], vP[NP], Pref[NP];")
    e(f"static double out[NS], dout[NS], tout[NS], outref[NS];")
    e(f"static double act[{K}], gact[{K}], vact[{K}];")
    e(f"static const double wout[NS] = {{{', '.join(f'{w:.3f}' for w in lay.weights)}}};")
    e(f"static const int pidx[NS] = {{{', '.join(map(str, lay.pidx))}}};")
    e(f"static const char *names[NI] = {{{', '.join(f'{chr(34)}{n}{chr(34)}' for n in names)}}};")
    e(f"static double *const prim[NI] = {{{', '.join(prim)}}};")
    e(f"static double *const shad[NI] = {{{', '.join(shad)}}};")
    e(f"static double *const dirs[NI] = {{{', '.join(dirs)}}};")
    if lay.const_double:
        e("static const double damp_v = 0.35;")
    e("static int failed;")
    e("static void check(const char *what, const char *name, double got, double want, double tol) {")
    e("  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));")
    e('  printf("CHECK %s:%s %.17g %.17g%s\\n", what, name, got, want, ok ? "" : "  <-- FAILED");')
    e("  failed += !ok;")
    e("}")
    e("static void check_same(const char *what, const char *name, double got, double want) {")
    e("  int ok = got == want;")
    e('  printf("CHECK %s:%s %.17g %.17g%s\\n", what, name, got, want, ok ? "" : "  <-- FAILED");')
    e("  failed += !ok;")
    e("}")
    e("/* the inputs of attempt `at` (shifted until no kink of f is within 1e-3) */")
    e("static void reset(int at) {")
    e("  for (int i = 0; i < NS; i++) {")
    e(f"    s[i].x = 0.9 * sin({ph[0]:.3f} + 1.7 * i + 0.37 * at);")
    e(f"    s[i].v[0] = 0.9 * cos({ph[1]:.3f} + 2.3 * i + 0.41 * at);")
    e(f"    s[i].v[1] = 0.9 * sin({ph[2]:.3f} + 0.9 * i + 0.53 * at);")
    e(f"    s[i].in.a = 1.0 + 0.5 * sin({ph[3]:.3f} + 1.1 * i + 0.29 * at);")
    e(f"    s[i].w = (float)(1.0 + 0.5 * cos({ph[4]:.3f} + 0.7 * i));")
    e(f"    s[i].id = (int[]){{{', '.join(map(str, lay.ids))}}}[i];")
    e(f"    s[i].in.k = (int[]){{{', '.join(map(str, lay.ks))}}}[i];")
    e("    s[i].p = &P[pidx[i]];")
    e("  }")
    e(f"  for (int k = 0; k < NP; k++) P[k] = 0.9 * sin({ph[5]:.3f} + 2.9 * k + 0.31 * at);")
    e(f"  for (int j = 0; j < {K}; j++) act[j] = 0.2 + 0.9 * cos({ph[6]:.3f} + 1.9 * j + 0.23 * at);")
    e("  memset(out, 0, sizeof out);")
    e("}")
    e("/* a shadow of s: zero doubles, pointer fields into `sp` (as the primal's into P) */")
    e("static void shadow(S *d, double *sp) {")
    e("  memset(d, 0, NS * sizeof(S));")
    e("  memset(sp, 0, NP * sizeof(double));")
    e("  for (int i = 0; i < NS; i++) { d[i].id = s[i].id; d[i].in.k = s[i].in.k; d[i].p = &sp[pidx[i]]; }")
    e("}")

    def call(fn, mode):
        """the argument list of f / of a marker call: mode None (plain), 'rev', 'fwd'"""
        args = []
        for kind, nm in lay.params:
            if kind == "S":
                if mode is None:
                    args.append("s")
                else:
                    dm = "ds" if mode == "rev" else "vs"
                    args += (["enzyme_dup"] if lay.explicit else []) + ["s", dm]
            elif kind == "out":
                if mode is None:
                    args.append("out")
                else:
                    dm = "dout" if mode == "rev" else "tout"
                    args += (["enzyme_dup"] if lay.explicit else []) + ["out", dm]
            elif kind == "int":
                v = "NS" if nm == "n" else str(lay.mode)
                args += (["enzyme_const"] if mode and lay.explicit else []) + [v]
            elif kind == "cdouble":
                args += (["enzyme_const"] if mode else []) + ["damp_v"]
            else:
                j = lay.act.index(nm)
                if mode == "rev":
                    args += (["enzyme_out"] if lay.explicit else []) + [f"act[{j}]"]
                elif mode == "fwd":
                    args += [f"act[{j}]", f"vact[{j}]"]
                else:
                    args.append(f"act[{j}]")
        return f"{fn}({', '.join(args)})"

    e("static double objective(void) {")
    e(f"  double r = {call('f', None)};")
    e("  for (int i = 0; i < NS; i++) r += wout[i] * out[i];")
    e("  return r;")
    e("}")
    grad_t = "double" if K == 1 else "Grad"
    if K > 1:
        e(f"typedef struct {{ double g[{K}]; }} Grad;")
        e("Grad __enzyme_autodiff_g(void *, ...) __asm__(\"__enzyme_autodiff\");")
    marker = "__enzyme_autodiff" if K == 1 else "__enzyme_autodiff_g"
    rev_call = call(marker, "rev").replace(f"{marker}(", f"{marker}((void *)f, ", 1)
    fwd_call = call("__enzyme_fwddiff", "fwd").replace("__enzyme_fwddiff(",
                                                       "__enzyme_fwddiff((void *)f, ", 1)
    e("/* reverse mode from attempt `at`: the gradient of objective() into g */")
    e("static void reverse(int at, double *g) {")
    e("  reset(at);")
    e("  shadow(ds, dP);")
    e("  memcpy(dout, wout, sizeof dout);")
    e(f"  {grad_t} r = {rev_call};")
    if K == 1:
        e("  gact[0] = r;")
    else:
        order = [lay.act.index(nm) for kind, nm in lay.params if kind == "act"]
        e("  /* the adjoints of the active doubles come in the order of f's parameters */")
        for m, j in enumerate(order):
            e(f"  gact[{j}] = r.g[{m}];")
    e("  for (int j = 0; j < NI; j++) g[j] = *shad[j];")
    e("}")
    e("static void check_primal(const char *what) {")
    e("  char nm[64];")
    e("  for (int i = 0; i < NS; i++) {")
    e('    snprintf(nm, sizeof nm, "out[%d]", i); check(what, nm, out[i], outref[i], 1e-12);')
    e('    snprintf(nm, sizeof nm, "s[%d].x", i); check(what, nm, s[i].x, sref[i].x, 1e-12);')
    e('    snprintf(nm, sizeof nm, "s[%d].v[0]", i); check(what, nm, s[i].v[0], sref[i].v[0], 1e-12);')
    e('    snprintf(nm, sizeof nm, "s[%d].v[1]", i); check(what, nm, s[i].v[1], sref[i].v[1], 1e-12);')
    e('    snprintf(nm, sizeof nm, "s[%d].in.a", i); check(what, nm, s[i].in.a, sref[i].in.a, 1e-12);')
    e("  }")
    e("  for (int k = 0; k < NP; k++) {")
    e('    snprintf(nm, sizeof nm, "P[%d]", k); check(what, nm, P[k], Pref[k], 1e-12);')
    e("  }")
    e("}")
    e("int main(void) {")
    e("  int at = 0;")
    e("  for (; at < 64; at++) {")
    e("    reset(at);")
    e("    kink_min = 1e300;")
    e(f"    {call('f_probe', None)};")
    e("    if (kink_min > 1e-3) break;")
    e("  }")
    e("  if (at == 64) { printf(\"RESULT fail: no evaluation point away from the kinks\\n\"); return 2; }")
    e('  printf("ATTEMPT %d kink distance %g\\n", at, kink_min);')
    e("  reset(at);")
    e("  double fx = objective();")
    e("  memcpy(sref, s, sizeof s); memcpy(Pref, P, sizeof P); memcpy(outref, out, sizeof out);")
    e('  printf("PRIMAL %.17g\\n", fx);')
    e("  static double g[NI], g2[NI], fd[NI];")
    e("  /* central differences at h and h/2, Richardson-extrapolated (error O(h^4)): a term")
    e("     like sin(pow(9 + x, 3)) has curvature enough to put plain central differences")
    e("     1e-5 off at h = 1e-6 */")
    e("  const double h = 1e-6;")
    e("  for (int j = 0; j < NI; j++) {")
    e("    reset(at);")
    e("    double x0 = *prim[j], d[2];")
    e("    for (int r = 0; r < 2; r++) {")
    e("      double hr = r ? h / 2 : h;")
    e("      reset(at); *prim[j] = x0 + hr; double fp = objective();")
    e("      reset(at); *prim[j] = x0 - hr; double fm = objective();")
    e("      d[r] = (fp - fm) / (2 * hr);")
    e("    }")
    e("    fd[j] = (4 * d[1] - d[0]) / 3;")
    e("  }")
    e("  reverse(at, g);")
    e('  check_primal("rev_primal");')
    e("  for (int j = 0; j < NI; j++) {")
    e('    check("rev_fd", names[j], g[j], fd[j], 1e-5);')
    e('    printf("GRAD %s %.17g\\n", names[j], g[j]);')
    e("  }")
    e("  /* forward mode along a deterministic direction: <gradient, direction> */")
    e("  reset(at);")
    e("  shadow(vs, vP);")
    e("  memset(tout, 0, sizeof tout);")
    e("  double want = 0;")
    e("  for (int j = 0; j < NI; j++) { *dirs[j] = sin(1.3 + 7.1 * j); want += g[j] * *dirs[j]; }")
    e(f"  double tan_f = {fwd_call};")
    e("  for (int i = 0; i < NS; i++) tan_f += wout[i] * tout[i];")
    e('  check_primal("fwd_primal");')
    e('  check("fwd_dot", "dir", tan_f, want, 1e-8);')
    e('  printf("FWD %.17g\\n", tan_f);')
    e("  reverse(at, g2);")
    e("  for (int j = 0; j < NI; j++)")
    if omp:   # a reduction's order may differ between runs with several threads
        e('    check("repeat", names[j], g2[j], g[j], 1e-12);')
    else:
        e('    check_same("repeat", names[j], g2[j], g[j]);')
    e('  if (failed) { printf("RESULT fail: %d check(s)\\n", failed); return 1; }')
    e('  printf("RESULT ok\\n");')
    e("  return 0;")
    e("}")
    return L


FEATURES = ("local_copy", "realloc", "early_exit", "recursion", "fnptr", "clamped_scalar",
            "in_place", "struct_heap", "nudge", "sops", "global_work", "tagged")


def generate(seed: int, omp: bool = False, without=()) -> str:
    """The C program of `seed`; with omp=True its main loop carries `#pragma omp parallel for`.
    `without`: names from FEATURES the program leaves out (to tell which construct a failure
    needs; a program without is another program, not the seed's with lines deleted)."""
    without = frozenset(without)
    assert without <= set(FEATURES), without - set(FEATURES)
    lay = _Layout(seed)
    body = _Body(seed, lay, probe=False, omp=omp, without=without)
    lines = body.render()
    probe = _Body(seed, lay, probe=True, omp=False, without=without)
    plines = probe.render()
    uses = body.uses | probe.uses
    inner = " ".join(lay.inner_fields)
    out = [f"/* generated by tests/random_programs/generator.py, seed {seed}"
           f"{', OpenMP variant' if omp else ''}"
           f"{', without ' + ','.join(sorted(without)) if without else ''} */",
           "#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
           "extern int enzyme_dup, enzyme_const, enzyme_out;",
           "double __enzyme_autodiff(void *, ...);",
           "double __enzyme_fwddiff(void *, ...);",
           f"#define NS {lay.ns}", f"#define NP {lay.np}",
           f"typedef struct {{ {inner} }} Inner;",
           f"typedef struct {{ {' '.join(lay.s_fields)} }} S;"]
    out += _helpers(lay, uses)
    out.append(_PROBES)
    out.append(_signature(lay, "f") + " {")
    out += lines
    out.append("}")
    out.append("/* f with its kinks recorded (never differentiated; serial) */")
    out.append(_signature(lay, "f_probe") + " {")
    out += plines
    out.append("}")
    out += _main(lay, omp)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(f"usage: generator.py SEED [--omp] [--without=F1,F2] > prog.c  (F: {FEATURES})")
    wo = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--without=")]
    sys.stdout.write(generate(int(args[0]), omp="--omp" in sys.argv,
                              without=[f for w in wo for f in w.split(",") if f]))
