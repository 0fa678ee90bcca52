"""BLAS (CBLAS interface, double precision): adjoints and tangents expressed as BLAS calls.

    ddot dnrm2 daxpy dscal dcopy dgemv dgemm   (cblas_*; link with -lopenblas or -lcblas)

The reverse sweep reads the primal vectors/matrices a call used: when the function may overwrite
them later, vectors are copied in the forward sweep (cblas_dcopy into a temporary) and matrices
are refused with an error. Active alpha/beta scalars are supported for daxpy and dscal only.
"""
from __future__ import annotations

ROW, COL, NT, TR = 101, 102, 111, 112
# name -> (argument names in order, index of the argument the call writes or None)
SIGS = {
    "cblas_ddot": (["n", "x", "incx", "y", "incy"], None),
    "cblas_dnrm2": (["n", "x", "incx"], None),
    "cblas_daxpy": (["n", "a", "x", "incx", "y", "incy"], 4),
    "cblas_dscal": (["n", "a", "x", "incx"], 2),
    "cblas_dcopy": (["n", "x", "incx", "y", "incy"], 3),
    "cblas_dgemv": (["layout", "tr", "m", "n", "alpha", "A", "lda", "x", "incx", "beta", "y",
                     "incy"], 10),
    "cblas_dgemm": (["layout", "ta", "tb", "M", "N", "K", "alpha", "A", "lda", "B", "ldb", "beta",
                     "C", "ldc"], 12),
    "cblas_dasum": (["n", "x", "incx"], None),
    "cblas_dger": (["layout", "m", "n", "alpha", "x", "incx", "y", "incy", "A", "lda"], 8),
}
# Fortran-style entry points (every argument by reference, column-major, 'N'/'T' characters):
# the CBLAS routine they map to and their arguments (`*`: a scalar read through the pointer,
# `#`: a transpose character).
FORTRAN = {
    "ddot_": ("cblas_ddot", ["n*", "x", "incx*", "y", "incy*"]),
    "dnrm2_": ("cblas_dnrm2", ["n*", "x", "incx*"]),
    "dasum_": ("cblas_dasum", ["n*", "x", "incx*"]),
    "daxpy_": ("cblas_daxpy", ["n*", "a*", "x", "incx*", "y", "incy*"]),
    "dscal_": ("cblas_dscal", ["n*", "a*", "x", "incx*"]),
    "dcopy_": ("cblas_dcopy", ["n*", "x", "incx*", "y", "incy*"]),
    "dgemv_": ("cblas_dgemv", ["tr#", "m*", "n*", "alpha*", "A", "lda*", "x", "incx*", "beta*", "y",
                               "incy*"]),
    "dger_": ("cblas_dger", ["m*", "n*", "alpha*", "x", "incx*", "y", "incy*", "A", "lda*"]),
    "dgemm_": ("cblas_dgemm", ["ta#", "tb#", "M*", "N*", "K*", "alpha*", "A", "lda*", "B", "ldb*",
                               "beta*", "C", "ldc*"]),
}
_FLOAT_SCALARS = {"a", "alpha", "beta"}
DECLS = {
    "cblas_ddot": "declare double @cblas_ddot(i32, ptr, i32, ptr, i32)",
    "cblas_daxpy": "declare void @cblas_daxpy(i32, double, ptr, i32, ptr, i32)",
    "cblas_dscal": "declare void @cblas_dscal(i32, double, ptr, i32)",
    "cblas_dcopy": "declare void @cblas_dcopy(i32, ptr, i32, ptr, i32)",
    "cblas_dger": "declare void @cblas_dger(i32, i32, i32, double, ptr, i32, ptr, i32, ptr, i32)",
    "cblas_dgemv": "declare void @cblas_dgemv(i32, i32, i32, i32, double, ptr, i32, ptr, i32, "
                   "double, ptr, i32)",
    "cblas_dgemm": "declare void @cblas_dgemm(i32, i32, i32, i32, i32, i32, double, ptr, i32, ptr, "
                   "i32, double, ptr, i32)",
    "cblas_dasum": "declare double @cblas_dasum(i32, ptr, i32)",
}


def is_blas(callee: str) -> bool:
    return callee.lstrip("@") in SIGS or callee.lstrip("@") in FORTRAN


def _arg_names(callee: str) -> list[str]:
    name = callee.lstrip("@")
    if name in FORTRAN:
        return [a.rstrip("*#") for a in FORTRAN[name][1]]
    return SIGS[name][0]


def written_arg(callee: str):
    """Index of the array argument the routine writes (None: it writes nothing)."""
    name = callee.lstrip("@")
    cname = FORTRAN[name][0] if name in FORTRAN else name
    k = SIGS[cname][1]
    if k is None:
        return None
    return _arg_names(callee).index(SIGS[cname][0][k])


class _Call:
    """The call's arguments by name: primal values (ctx.p), shadows, activity. A Fortran-style
    call is presented as its CBLAS equivalent (scalars loaded, column-major, CBLAS enums)."""

    def __init__(self, ctx, inst):
        self.ctx, self.inst = ctx, inst
        raw = inst.callee.lstrip("@")
        self.fortran = raw in FORTRAN
        self.name = FORTRAN[raw][0] if self.fortran else raw
        spec = FORTRAN[raw][1] if self.fortran else SIGS[raw][0]
        self.kinds = {a.rstrip("*#"): a[-1] if a[-1] in "*#" else "" for a in spec}
        self.ops = dict(zip(self.kinds, inst.ops))
        self._loaded = {}

    def _value(self, k):
        o = self.ops[k]
        return self.ctx.p(o.value) if o.is_local else o.value

    def p(self, k):
        if self.fortran and k == "layout":
            return str(COL)
        kind = self.kinds.get(k, "") if self.fortran else ""
        if not kind:
            return self._value(k)
        if k in self._loaded:
            return self._loaded[k]
        ptr, t = self._value(k), self.ctx.tmp("farg")
        if kind == "#":                          # 'N'/'n' -> CblasNoTrans, else CblasTrans
            ch, isn, isn2, either = (self.ctx.tmp("ch"), self.ctx.tmp("isn"), self.ctx.tmp("isn"),
                                     self.ctx.tmp("isn"))
            self.ctx.emit(f"{ch} = load i8, ptr {ptr}")
            self.ctx.emit(f"{isn} = icmp eq i8 {ch}, 78")
            self.ctx.emit(f"{isn2} = icmp eq i8 {ch}, 110")
            self.ctx.emit(f"{either} = or i1 {isn}, {isn2}")
            self.ctx.emit(f"{t} = select i1 {either}, i32 {NT}, i32 {TR}")
        else:
            ty = "double" if k in _FLOAT_SCALARS else "i32"
            self.ctx.emit(f"{t} = load {ty}, ptr {ptr}")
        self._loaded[k] = t
        return t

    def sh(self, k):
        return self.ops[k].value in self.ctx.act.shadowed

    def s(self, k):
        return self.ctx.s(self.ops[k].value)

    def active(self, k):
        if self.fortran and self.kinds.get(k) == "*":
            return self.sh(k)                   # a scalar passed by reference: its memory's shadow
        return self.ctx.active(self.ops[k].value)

    def add_scalar(self, k, val):
        """Accumulate into the adjoint of a float scalar argument."""
        if self.fortran:
            sp, old, new = self.s(k), self.ctx.tmp("o"), self.ctx.tmp("n")
            self.ctx.emit(f"{old} = load double, ptr {sp}")
            self.ctx.emit(f"{new} = fadd double {old}, {val}")
            self.ctx.emit(f"store double {new}, ptr {sp}")
        else:
            self.ctx.add(self.ops[k].value, "double", val)

    def tangent_scalar(self, k):
        if self.fortran:
            t = self.ctx.tmp("ft")
            self.ctx.emit(f"{t} = load double, ptr {self.s(k)}")
            return t
        return self.ctx.t(self.ops[k].value, "double")


def _emit_call(ctx, fn, args, ret="void"):
    ctx.gen().declare_raw("@" + fn, DECLS[fn])
    text = f"call {ret} @{fn}({', '.join(f'{t} {v}' for t, v in args)})"
    if ret == "void":
        ctx.emit(text)
        return None
    t = ctx.tmp("blas")
    ctx.emit(f"{t} = {text}")
    return t


def _sel(ctx, cond, ty, a, b):
    t = ctx.tmp("sel")
    ctx.emit(f"{t} = select i1 {cond}, {ty} {a}, {ty} {b}")
    return t


def _eq(ctx, v, const):
    t = ctx.tmp("is")
    ctx.emit(f"{t} = icmp eq i32 {v}, {const}")
    return t


def _primal_matrix(c, k):
    """A matrix operand must be unchanged until the reverse sweep reads it."""
    synth = c.ctx.synth
    from enzyme_cc.ad.type_layout import underlying
    base = underlying(synth.fn, c.ops[k].value)
    if synth.mode != "combined" or not synth.mem.unmodified(base):
        c.ctx.gen().fail(synth, c.inst, f"the matrix argument '{k}' of {c.name} may be "
                         "overwritten before the reverse sweep reads it",
                         "keep the matrix unchanged in the differentiated function, or copy it")
    return c.p(k)


def _primal_vector(c, k, n, inc):
    """(pointer, increment) of a vector operand as it was at the call: the operand itself when
    the function never overwrites it, else a copy taken in the forward sweep."""
    synth = c.ctx.synth
    from enzyme_cc.ad.type_layout import underlying
    base = underlying(synth.fn, c.ops[k].value)
    if synth.mode == "combined" and synth.mem.unmodified(base) and \
            SIGS[c.name][1] != SIGS[c.name][0].index(k):
        return c.p(k), c.p(inc)
    return c.ctx._get(("ctape", f"{c.inst.line}.{k}")), "1"


def cached_vectors(name):
    """Vector arguments the reverse of `name` reads (copied in the forward sweep when needed)."""
    return {"cblas_ddot": [("x", "n", "incx"), ("y", "n", "incy")],
            "cblas_dnrm2": [("x", "n", "incx")],
            "cblas_daxpy": [("x", "n", "incx")],
            "cblas_dscal": [("x", "n", "incx")],
            "cblas_dgemv": [("x", None, "incx")],
            "cblas_dasum": [("x", "n", "incx")],
            "cblas_dger": [("x", "m", "incx"), ("y", "n", "incy")]}.get(name, [])


def forward_copies(ctx, inst):
    """Forward sweep, before the call: copy the vectors its reverse will need and may not find
    intact later (combined mode with unwritten memory needs none)."""
    c = _Call(ctx, inst)
    synth = ctx.synth
    from enzyme_cc.ad.type_layout import underlying
    for k, n, inc in cached_vectors(c.name):
        base = underlying(synth.fn, c.ops[k].value)
        if synth.mode == "combined" and synth.mem.unmodified(base) and \
                SIGS[c.name][1] != SIGS[c.name][0].index(k):
            continue
        length = c.p(n) if n else _gemv_xlen(c)
        bytes_ = ctx.tmp("bytes")
        wide = ctx.tmp("len")
        ctx.emit(f"{wide} = sext i32 {length} to i64")
        ctx.emit(f"{bytes_} = mul i64 {wide}, 8")
        buf = f"%ad.ctape.{inst.line}.{k}"
        ctx.emit(f"{buf} = call ptr @malloc(i64 {bytes_})")
        ctx.gen().declare_raw("@malloc", "declare ptr @malloc(i64)")
        _emit_call(ctx, "cblas_dcopy", [("i32", length), ("ptr", c.p(k)), ("i32", c.p(inc)),
                                         ("ptr", buf), ("i32", "1")])
        key = ("ctape", f"{inst.line}.{k}")
        if key in synth.value_slots:
            ctx.emit(f"store ptr {buf}, ptr {synth.value_slots[key]}")


def _gemv_xlen(c):
    ctx = c.ctx
    return _sel(ctx, _eq(ctx, c.p("tr"), NT), "i32", c.p("n"), c.p("m"))


def _free_copies(c):
    synth = c.ctx.synth
    from enzyme_cc.ad.type_layout import underlying
    for k, _, _ in cached_vectors(c.name):
        base = underlying(synth.fn, c.ops[k].value)
        if synth.mode == "combined" and synth.mem.unmodified(base) and \
                SIGS[c.name][1] != SIGS[c.name][0].index(k):
            continue
        c.ctx.emit(f"call void @free(ptr {c.ctx._get(('ctape', f'{c.inst.line}.{k}'))})")
        c.ctx.gen().declare_raw("@free", "declare void @free(ptr)")


def reverse(ctx, inst, d):
    c = _Call(ctx, inst)
    name = c.name
    if name == "cblas_ddot":
        if d is not None:
            for dst, src in (("x", "y"), ("y", "x")):
                if c.sh(dst):
                    v, inc = _primal_vector(c, src, "n", "inc" + src)
                    _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", d), ("ptr", v),
                                                    ("i32", inc), ("ptr", c.s(dst)),
                                                    ("i32", c.p("inc" + dst))])
    elif name == "cblas_dnrm2":
        if d is not None and c.sh("x"):
            r = ctx.p(inst.name)
            q, z, coef = ctx.tmp("q"), ctx.tmp("z"), ctx.tmp("coef")
            ctx.emit(f"{q} = fdiv double {d}, {r}")
            ctx.emit(f"{z} = fcmp oeq double {r}, 0.0")
            ctx.emit(f"{coef} = select i1 {z}, double 0.0, double {q}")
            v, inc = _primal_vector(c, "x", "n", "incx")
            _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", coef), ("ptr", v),
                                            ("i32", inc), ("ptr", c.s("x")), ("i32", c.p("incx"))])
    elif name == "cblas_daxpy":
        if c.sh("y"):
            if c.active("a"):
                v, inc = _primal_vector(c, "x", "n", "incx")
                da = _emit_call(ctx, "cblas_ddot", [("i32", c.p("n")), ("ptr", v), ("i32", inc),
                                                    ("ptr", c.s("y")), ("i32", c.p("incy"))], "double")
                c.add_scalar("a", da)
            if c.sh("x"):
                _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", c.p("a")),
                                                ("ptr", c.s("y")), ("i32", c.p("incy")),
                                                ("ptr", c.s("x")), ("i32", c.p("incx"))])
    elif name == "cblas_dscal":
        if c.sh("x"):
            if c.active("a"):
                v, inc = _primal_vector(c, "x", "n", "incx")
                da = _emit_call(ctx, "cblas_ddot", [("i32", c.p("n")), ("ptr", v), ("i32", inc),
                                                    ("ptr", c.s("x")), ("i32", c.p("incx"))], "double")
                c.add_scalar("a", da)
            _emit_call(ctx, "cblas_dscal", [("i32", c.p("n")), ("double", c.p("a")),
                                            ("ptr", c.s("x")), ("i32", c.p("incx"))])
    elif name == "cblas_dcopy":
        if c.sh("y"):
            if c.sh("x"):
                _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", "1.0"),
                                                ("ptr", c.s("y")), ("i32", c.p("incy")),
                                                ("ptr", c.s("x")), ("i32", c.p("incx"))])
            _emit_call(ctx, "cblas_dscal", [("i32", c.p("n")), ("double", "0.0"),
                                            ("ptr", c.s("y")), ("i32", c.p("incy"))])
    elif name == "cblas_dasum":
        if d is not None and c.sh("x"):
            v, inc = _primal_vector(c, "x", "n", "incx")
            ctx.gen().helpers.add(("dasum",))
            ctx.emit(f"call void @__enzyme_cc_dasum_adj(i32 {c.p('n')}, double {d}, ptr {v}, i32 {inc}, "
                     f"ptr {c.s('x')}, i32 {c.p('incx')})")
    elif name == "cblas_dger":
        _reverse_ger(c)
    elif name == "cblas_dgemv":
        _reverse_gemv(c)
    elif name == "cblas_dgemm":
        _reverse_gemm(c)
    _free_copies(c)


def _no_active_scalars(c, *names):
    for k in names:
        if c.active(k):
            c.ctx.gen().fail(c.ctx.synth, c.inst, f"active '{k}' in {c.name} is not supported",
                             f"pass a constant {k}, or scale the result yourself")


def _reverse_ger(c):
    """A += alpha x y^T: dx += alpha dA y, dy += alpha dA^T x (dA keeps accumulating)."""
    ctx = c.ctx
    _no_active_scalars(c, "alpha")
    if not c.sh("A"):
        return
    common = [("i32", c.p("layout"))]
    for dst, src, tr in (("x", "y", NT), ("y", "x", TR)):
        if not c.sh(dst):
            continue
        v, inc = _primal_vector(c, src, None, "inc" + src)
        _emit_call(ctx, "cblas_dgemv", common + [
            ("i32", str(tr)), ("i32", c.p("m")), ("i32", c.p("n")), ("double", c.p("alpha")),
            ("ptr", c.s("A")), ("i32", c.p("lda")), ("ptr", v), ("i32", inc), ("double", "1.0"),
            ("ptr", c.s(dst)), ("i32", c.p("inc" + dst))])


def _reverse_gemv(c):
    ctx = c.ctx
    _no_active_scalars(c, "alpha", "beta")
    if not c.sh("y"):
        return
    nt = _eq(ctx, c.p("tr"), NT)
    dy, incy = c.s("y"), c.p("incy")
    if c.sh("A"):
        x, incx = _primal_vector(c, "x", None, "incx")
        # NoTrans: dA += alpha dy x^T; Trans: dA += alpha x dy^T
        u, iu = _sel(ctx, nt, "ptr", dy, x), _sel(ctx, nt, "i32", incy, incx)
        v, iv = _sel(ctx, nt, "ptr", x, dy), _sel(ctx, nt, "i32", incx, incy)
        _emit_call(ctx, "cblas_dger", [("i32", c.p("layout")), ("i32", c.p("m")), ("i32", c.p("n")),
                                       ("double", c.p("alpha")), ("ptr", u), ("i32", iu), ("ptr", v),
                                       ("i32", iv), ("ptr", c.s("A")), ("i32", c.p("lda"))])
    if c.sh("x"):
        a = _primal_matrix(c, "A")
        flip = _sel(ctx, nt, "i32", TR, NT)
        _emit_call(ctx, "cblas_dgemv", [("i32", c.p("layout")), ("i32", flip), ("i32", c.p("m")),
                                        ("i32", c.p("n")), ("double", c.p("alpha")), ("ptr", a),
                                        ("i32", c.p("lda")), ("ptr", dy), ("i32", incy),
                                        ("double", "1.0"), ("ptr", c.s("x")), ("i32", c.p("incx"))])
    ylen = _sel(ctx, nt, "i32", c.p("m"), c.p("n"))
    _emit_call(ctx, "cblas_dscal", [("i32", ylen), ("double", c.p("beta")), ("ptr", dy),
                                    ("i32", incy)])


def _reverse_gemm(c):
    ctx = c.ctx
    _no_active_scalars(c, "alpha", "beta")
    if not c.sh("C"):
        return
    ly, M, N, K = c.p("layout"), c.p("M"), c.p("N"), c.p("K")
    dC, ldc, alpha = c.s("C"), c.p("ldc"), c.p("alpha")
    ta_nt, tb_nt = _eq(ctx, c.p("ta"), NT), _eq(ctx, c.p("tb"), NT)
    if c.sh("A"):
        B = _primal_matrix(c, "B")
        # ta=N: dA(MxK) += alpha dC op(B)^T ; ta=T: dA(KxM) += alpha op(B) dC^T
        t1 = _sel(ctx, ta_nt, "i32", NT, c.p("tb"))
        t2 = _sel(ctx, ta_nt, "i32", _sel(ctx, tb_nt, "i32", TR, NT), TR)
        m, n = _sel(ctx, ta_nt, "i32", M, K), _sel(ctx, ta_nt, "i32", K, M)
        p1, l1 = _sel(ctx, ta_nt, "ptr", dC, B), _sel(ctx, ta_nt, "i32", ldc, c.p("ldb"))
        p2, l2 = _sel(ctx, ta_nt, "ptr", B, dC), _sel(ctx, ta_nt, "i32", c.p("ldb"), ldc)
        _emit_call(ctx, "cblas_dgemm", [("i32", ly), ("i32", t1), ("i32", t2), ("i32", m),
                                        ("i32", n), ("i32", N), ("double", alpha), ("ptr", p1),
                                        ("i32", l1), ("ptr", p2), ("i32", l2), ("double", "1.0"),
                                        ("ptr", c.s("A")), ("i32", c.p("lda"))])
    if c.sh("B"):
        A = _primal_matrix(c, "A")
        # tb=N: dB(KxN) += alpha op(A)^T dC ; tb=T: dB(NxK) += alpha dC^T op(A)
        t1 = _sel(ctx, tb_nt, "i32", _sel(ctx, ta_nt, "i32", TR, NT), TR)
        t2 = _sel(ctx, tb_nt, "i32", NT, c.p("ta"))
        m, n = _sel(ctx, tb_nt, "i32", K, N), _sel(ctx, tb_nt, "i32", N, K)
        p1, l1 = _sel(ctx, tb_nt, "ptr", A, dC), _sel(ctx, tb_nt, "i32", c.p("lda"), ldc)
        p2, l2 = _sel(ctx, tb_nt, "ptr", dC, A), _sel(ctx, tb_nt, "i32", ldc, c.p("lda"))
        _emit_call(ctx, "cblas_dgemm", [("i32", ly), ("i32", t1), ("i32", t2), ("i32", m),
                                        ("i32", n), ("i32", M), ("double", alpha), ("ptr", p1),
                                        ("i32", l1), ("ptr", p2), ("i32", l2), ("double", "1.0"),
                                        ("ptr", c.s("B")), ("i32", c.p("ldb"))])
    ctx.gen().helpers.add(("scalemat",))
    ctx.emit(f"call void @__enzyme_cc_scale_matrix(i32 {ly}, i32 {M}, i32 {N}, double "
             f"{c.p('beta')}, ptr {dC}, i32 {ldc})")


def tangent_before(ctx, inst):
    """Forward mode, before the primal call: dscal overwrites x, whose old value the tangent
    a*tx + ta*x needs."""
    c = _Call(ctx, inst)
    if c.name != "cblas_dscal" or not c.sh("x"):
        return
    _emit_call(ctx, "cblas_dscal", [("i32", c.p("n")), ("double", c.p("a")), ("ptr", c.s("x")),
                                    ("i32", c.p("incx"))])
    if c.active("a"):
        _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", c.tangent_scalar("a")),
                                        ("ptr", c.p("x")), ("i32", c.p("incx")), ("ptr", c.s("x")),
                                        ("i32", c.p("incx"))])


def tangent(ctx, inst):
    """Forward mode: the tangent of the result (ddot, dnrm2) or of the written vector/matrix."""
    c = _Call(ctx, inst)
    name = c.name
    zero = "0.0"

    def tvec(k):
        return c.s(k) if c.sh(k) else None
    if name in ("cblas_ddot", "cblas_dnrm2"):
        terms = []
        pairs = [("x", "y"), ("y", "x")] if name == "cblas_ddot" else [("x", "x")]
        for t, other in pairs:
            if tvec(t):
                terms.append(_emit_call(ctx, "cblas_ddot", [
                    ("i32", c.p("n")), ("ptr", tvec(t)), ("i32", c.p("inc" + t)),
                    ("ptr", c.p(other)), ("i32", c.p("inc" + other))], "double"))
        if not terms:
            return None
        total = terms[0]
        for t in terms[1:]:
            s = ctx.tmp("t")
            ctx.emit(f"{s} = fadd double {total}, {t}")
            total = s
        if name == "cblas_dnrm2":
            q = ctx.tmp("t")
            ctx.emit(f"{q} = fdiv double {total}, {ctx.p(inst.name)}")
            total = q
        return total
    if name == "cblas_dasum":
        if not c.sh("x"):
            return None
        ctx.gen().helpers.add(("dasum",))
        t = ctx.tmp("t")
        ctx.emit(f"{t} = call double @__enzyme_cc_dasum_tan(i32 {c.p('n')}, ptr {c.p('x')}, i32 "
                 f"{c.p('incx')}, ptr {c.s('x')}, i32 {c.p('incx')})")
        return t
    if name == "cblas_dger" and c.sh("A"):
        _no_active_scalars(c, "alpha")
        for a, b in (("x", "y"), ("y", "x")):
            if c.sh(a):
                ops = {a: c.s(a), b: c.p(b)}
                _emit_call(ctx, "cblas_dger", [
                    ("i32", c.p("layout")), ("i32", c.p("m")), ("i32", c.p("n")),
                    ("double", c.p("alpha")), ("ptr", ops["x"]), ("i32", c.p("incx")),
                    ("ptr", ops["y"]), ("i32", c.p("incy")), ("ptr", c.s("A")), ("i32", c.p("lda"))])
        return None
    if name == "cblas_daxpy" and c.sh("y"):
        if c.sh("x"):
            _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", c.p("a")), ("ptr", c.s("x")),
                                            ("i32", c.p("incx")), ("ptr", c.s("y")), ("i32", c.p("incy"))])
        if c.active("a"):
            _emit_call(ctx, "cblas_daxpy", [("i32", c.p("n")), ("double", c.tangent_scalar("a")),
                                            ("ptr", c.p("x")), ("i32", c.p("incx")), ("ptr", c.s("y")),
                                            ("i32", c.p("incy"))])
    elif name == "cblas_dscal":
        pass                                # done before the call (tangent_before)
    elif name == "cblas_dcopy" and c.sh("y"):
        if c.sh("x"):
            _emit_call(ctx, "cblas_dcopy", [("i32", c.p("n")), ("ptr", c.s("x")), ("i32", c.p("incx")),
                                            ("ptr", c.s("y")), ("i32", c.p("incy"))])
        else:
            _emit_call(ctx, "cblas_dscal", [("i32", c.p("n")), ("double", zero), ("ptr", c.s("y")),
                                            ("i32", c.p("incy"))])
    elif name == "cblas_dgemv" and c.sh("y"):
        _no_active_scalars(c, "alpha", "beta")
        ly, tr, m, n, alpha = c.p("layout"), c.p("tr"), c.p("m"), c.p("n"), c.p("alpha")
        tx = c.s("x") if c.sh("x") else None
        if tx:
            _emit_call(ctx, "cblas_dgemv", [("i32", ly), ("i32", tr), ("i32", m), ("i32", n),
                                            ("double", alpha), ("ptr", c.p("A")), ("i32", c.p("lda")),
                                            ("ptr", tx), ("i32", c.p("incx")), ("double", c.p("beta")),
                                            ("ptr", c.s("y")), ("i32", c.p("incy"))])
        else:
            ylen = _sel(ctx, _eq(ctx, tr, NT), "i32", m, n)
            _emit_call(ctx, "cblas_dscal", [("i32", ylen), ("double", c.p("beta")), ("ptr", c.s("y")),
                                            ("i32", c.p("incy"))])
        if c.sh("A"):
            _emit_call(ctx, "cblas_dgemv", [("i32", ly), ("i32", tr), ("i32", m), ("i32", n),
                                            ("double", alpha), ("ptr", c.s("A")), ("i32", c.p("lda")),
                                            ("ptr", c.p("x")), ("i32", c.p("incx")), ("double", "1.0"),
                                            ("ptr", c.s("y")), ("i32", c.p("incy"))])
    elif name == "cblas_dgemm" and c.sh("C"):
        _no_active_scalars(c, "alpha", "beta")
        common = [("i32", c.p("layout")), ("i32", c.p("ta")), ("i32", c.p("tb")), ("i32", c.p("M")),
                  ("i32", c.p("N")), ("i32", c.p("K")), ("double", c.p("alpha"))]
        ctx.gen().helpers.add(("scalemat",))
        ctx.emit(f"call void @__enzyme_cc_scale_matrix(i32 {c.p('layout')}, i32 {c.p('M')}, i32 "
                 f"{c.p('N')}, double {c.p('beta')}, ptr {c.s('C')}, i32 {c.p('ldc')})")
        for a, b in (("A", "B"), ("B", "A")):
            if not c.sh(a):
                continue
            ops = {a: c.s(a), b: c.p(b)}
            _emit_call(ctx, "cblas_dgemm", common + [
                ("ptr", ops["A"]), ("i32", c.p("lda")), ("ptr", ops["B"]), ("i32", c.p("ldb")),
                ("double", "1.0"), ("ptr", c.s("C")), ("i32", c.p("ldc"))])
    return None
