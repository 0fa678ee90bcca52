"""BLAS (double precision): adjoints and tangents expressed as BLAS calls or as the column-major
kernels of rules/blas_runtime.c.

    ddot dnrm2 daxpy dscal dcopy dgemv dger dgemm   (cblas_* and Fortran's ddot_ ...: the
                                                     derivatives call CBLAS: -lopenblas, -lcblas)
    dtrsm_ dsyrk_                                   (Fortran interface; our kernels)

A level-3 routine the program defines itself (dgemm_, dtrsm_, dsyrk_ with the Reference BLAS
interface, e.g. from a static libblas.a carrying bitcode, as Reference-LAPACK builds) is not
differentiated as code either: its derivative is the blocked algorithm's, O(n^2) saved data per
call instead of a tape entry per multiply-add, computed by our kernels (such a program need not
link a CBLAS). See `applies`.

The reverse sweep reads the primal vectors/matrices a call used: when the function may overwrite
them later (or the reverse runs in another function), they are copied in the forward sweep, and
trsm's solution after the call. Active alpha/beta scalars are supported for daxpy and dscal only.
"""
from __future__ import annotations

import os
import re
from .c_runtime import link_needed
from enzyme_cc.ad.structure.type_layout import underlying
from enzyme_cc.ir.lexer import fn_attr_position
from .shadow_blocks import defer_free

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
    # (the Fortran routines below only: their derivatives need no CBLAS)
    "cblas_dtrsm": (["layout", "side", "uplo", "ta", "diag", "M", "N", "alpha", "A", "lda", "B",
                     "ldb"], 10),
    "cblas_dsyrk": (["layout", "uplo", "trans", "N", "K", "alpha", "A", "lda", "beta", "C", "ldc"],
                    9),
}
_FORTRAN_ONLY = {"cblas_dtrsm", "cblas_dsyrk"}
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
    "dtrsm_": ("cblas_dtrsm", ["side#", "uplo#", "ta#", "diag#", "M*", "N*", "alpha*", "A", "lda*",
                               "B", "ldb*"]),
    "dsyrk_": ("cblas_dsyrk", ["uplo#", "trans#", "N*", "K*", "alpha*", "A", "lda*", "beta*", "C",
                               "ldc*"]),
}
# level-3 routines whose derivative rule also replaces a definition the program has
OWN = {"dgemm_", "dtrsm_", "dsyrk_"}
# the character that sets each flag argument to 1 (upper or lower case)
_FLAG_CHARS = {"side": "L", "uplo": "L", "diag": "U"}
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
    name = callee.lstrip("@")
    return (name in SIGS and name not in _FORTRAN_ONLY) or name in FORTRAN


def applies(module, callee: str) -> bool:
    """Does the BLAS rule take this call? A routine without bitcode, or one of OWN that the
    program defines with the Reference BLAS interface (every argument a pointer; flang and
    gfortran add the lengths of the character arguments after them)."""
    if not is_blas(callee):
        return False
    if not module.defines(callee):
        return True
    name = callee.lstrip("@")
    if name not in OWN or defined_as_code():
        return False
    memo = module.__dict__.setdefault("_blas_interface", {})   # (asked per call, per round)
    if callee not in memo:
        memo[callee] = _reference_interface(module.function(callee), len(FORTRAN[name][1]))
    return memo[callee]


def _reference_interface(fn, n: int) -> bool:
    """fn takes n pointers first (any more are hidden character lengths), returns nothing and
    reads every one of them: a routine that ignores its transpose flags is not BLAS (the
    optimizer may even pass it poison there)."""
    if fn is None or fn.ret_ty != "void" or len(fn.params) < n or \
            any(p.ty != "ptr" for p in fn.params[:n]):
        return False
    used = {v for inst in fn.insts() for v in inst.locals_used()}
    return all(p.name in used for p in fn.params[:n])


def _arg_names(callee: str) -> list[str]:
    name = callee.lstrip("@")
    if name in FORTRAN:
        return [a.rstrip("*#") for a in FORTRAN[name][1]]
    return SIGS[name][0]


def written_arg(callee: str):
    """Index of the array argument the routine writes (None: it writes nothing)."""
    name = callee.lstrip("@")
    w = _written(FORTRAN[name][0] if name in FORTRAN else name)
    return None if w is None else _arg_names(callee).index(w)


class _Call:
    """The call's arguments by name: primal values (ctx.p), shadows, activity. A Fortran-style
    call is presented as its CBLAS equivalent (scalars loaded, column-major, CBLAS enums)."""

    def __init__(self, ctx, inst, record=None):
        self.ctx, self.inst = ctx, inst
        raw = inst.callee.lstrip("@")
        self.fortran = raw in FORTRAN
        self.name = FORTRAN[raw][0] if self.fortran else raw
        spec = FORTRAN[raw][1] if self.fortran else SIGS[raw][0]
        self.kinds = {a.rstrip("*#"): a[-1] if a[-1] in "*#" else "" for a in spec}
        self.ops = dict(zip(self.kinds, inst.ops))
        self._loaded = {}
        # level 3: the forward sweep's record of the call (_capture), read by the reverse
        self.record = record
        self.slots = {k: n for n, k in enumerate(list(self.kinds) + ["save.A", "save.B",
                                                                      "save.X"])}
        # our kernels instead of CBLAS: dtrsm_, dsyrk_, and a dgemm_ the program defines
        self.own = self.name in _FORTRAN_ONLY or (
            self.fortran and ctx.gen().module.defines(inst.callee))

    def _value(self, k):
        if self.record is not None and self.kinds.get(k) and self.fortran:
            return self.slot(k)                 # the scalar as it was at the call
        o = self.ops[k]
        return self.ctx.p(o.value) if o.is_local else o.value

    def slot(self, k) -> str:
        """Address of entry k of the record."""
        t = self.ctx.tmp("rec")
        self.ctx.emit(f"{t} = getelementptr inbounds i8, ptr {self.record}, i64 "
                      f"{8 * self.slots[k]}")
        return t

    def flag(self, k) -> str:
        """A character argument as our kernels' 0/1 flag: transposed (any letter but N), left
        side, lower triangle, unit diagonal."""
        key = ("flag", k)
        if key in self._loaded:
            return self._loaded[key]
        ch, hit, hit2, either, t = (self.ctx.tmp("ch"), self.ctx.tmp("is"), self.ctx.tmp("is"),
                                    self.ctx.tmp("is"), self.ctx.tmp("flag"))
        self.ctx.emit(f"{ch} = load i8, ptr {self._value(k)}")
        want = _FLAG_CHARS.get(k)
        if want is None:                        # a transpose argument: N or n is 0
            self.ctx.emit(f"{hit} = icmp ne i8 {ch}, 78")
            self.ctx.emit(f"{hit2} = icmp ne i8 {ch}, 110")
            self.ctx.emit(f"{either} = and i1 {hit}, {hit2}")
        else:
            self.ctx.emit(f"{hit} = icmp eq i8 {ch}, {ord(want)}")
            self.ctx.emit(f"{hit2} = icmp eq i8 {ch}, {ord(want.lower())}")
            self.ctx.emit(f"{either} = or i1 {hit}, {hit2}")
        self.ctx.emit(f"{t} = zext i1 {either} to i32")
        self._loaded[key] = t
        return t

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


def _gemv_matrix_shape(c):
    """(rows, columns) of gemv's A as stored column-major (a row-major A is its transpose)."""
    row = _eq(c.ctx, c.p("layout"), ROW)
    return _sel(c.ctx, row, "i32", c.p("n"), c.p("m")), _sel(c.ctx, row, "i32", c.p("m"), c.p("n"))


def _gemv_matrix(c):
    """(pointer, leading dimension) of gemv's A as it was at the call: A itself, or the copy
    the forward sweep took (forward_copies) when the function may overwrite it or the reverse
    runs elsewhere."""
    if not _copy_needed(c, "A"):
        return c.p("A"), c.p("lda")
    return c.ctx._get(("ctape", f"{c.inst.line}.A")), _gemv_matrix_shape(c)[0]


def _primal_vector(c, k, n, inc):
    """(pointer, increment) of a vector operand as it was at the call: the operand itself when
    the function never overwrites it, else a copy taken in the forward sweep."""
    if not _copy_needed(c, k):
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
    if c.name in LEVEL3:
        _capture(ctx, inst)
        return
    for k, n, inc in cached_vectors(c.name):
        if not _copy_needed(c, k):
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
        _keep(ctx, f"{inst.line}.{k}", buf)
    if c.name == "cblas_dgemv" and c.sh("y") and c.sh("x") and _copy_needed(c, "A"):
        rows, cols = _gemv_matrix_shape(c)
        buf = _kernel(c, "save", [("i32", rows), ("i32", cols), ("ptr", c.p("A")),
                                  ("i32", c.p("lda"))], f"%ad.ctape.{inst.line}.A")
        _keep(ctx, f"{inst.line}.A", buf)


def _keep(ctx, key, p):
    """Block p, made by the forward sweep for the reverse one (the value `%ad.ctape.<key>`):
    freed by the reverse, or with the tape when that runs more than once; stored into its slot
    when the reverse reads it from one."""
    _own_block(ctx, p)
    slot = ctx.synth.value_slots.get(("ctape", key))
    if slot is not None:
        ctx.emit(f"store ptr {p}, ptr {slot}")


def _gemv_xlen(c):
    ctx = c.ctx
    return _sel(ctx, _eq(ctx, c.p("tr"), NT), "i32", c.p("n"), c.p("m"))


_SCALE_ARGS = ("alpha", "beta")


def own_with_active_scale(ctx, inst) -> bool:
    """A BLAS routine the program defines, called with an active alpha or beta: its code is
    differentiated instead of the rule (whose adjoints take those as constants)."""
    if not ctx.gen().module.defines(inst.callee):
        return False
    c = _Call(ctx, inst)
    return any(k in c.ops and c.active(k) for k in _SCALE_ARGS)


def _no_active_scalars(c, *names):
    for k in names:
        if c.active(k):
            called = c.inst.callee.lstrip("@")
            c.ctx.gen().fail(c.ctx.synth, c.inst, f"active '{k}' in {called} (the BLAS library's "
                             f"{c.name}) is not supported",
                             f"pass a constant {k}, or scale the result yourself; or build the "
                             f"program with its own BLAS (Reference BLAS compiled with enzyme-fc), "
                             f"whose code is then differentiated for such calls")


def _gemm(c, ly, t1, t2, m, n, k, alpha, a, lda, b, ldb, dst, ldd, beta="1.0"):
    """dst := alpha op(a) op(b) + beta dst (t1, t2: CBLAS enums)."""
    if not c.own:
        _emit_call(c.ctx, "cblas_dgemm", [("i32", ly), ("i32", t1), ("i32", t2), ("i32", m),
                                          ("i32", n), ("i32", k), ("double", alpha), ("ptr", a),
                                          ("i32", lda), ("ptr", b), ("i32", ldb),
                                          ("double", beta), ("ptr", dst), ("i32", ldd)])
        return
    f1, f2 = _tflag(c.ctx, t1), _tflag(c.ctx, t2)
    _kernel(c, "gemm", [("i32", f1), ("i32", f2), ("i32", m), ("i32", n), ("i32", k),
                        ("double", alpha), ("ptr", a), ("i32", lda), ("ptr", b), ("i32", ldb),
                        ("double", beta), ("ptr", dst), ("i32", ldd)])


def _scale(c, ly, m, n, beta, dst, ld):
    """dst (m x n) := beta dst."""
    if not c.own:
        c.ctx.gen().helpers.add(("scalemat",))
        c.ctx.emit(f"call void @__enzyme_cc_scale_matrix(i32 {ly}, i32 {m}, i32 {n}, double "
                   f"{beta}, ptr {dst}, i32 {ld})")
        return
    _kernel(c, "scale", [("i32", m), ("i32", n), ("double", beta), ("ptr", dst), ("i32", ld)])


def _tflag(ctx, enum):
    cmp, t = ctx.tmp("is"), ctx.tmp("flag")
    ctx.emit(f"{cmp} = icmp eq i32 {enum}, {TR}")
    ctx.emit(f"{t} = zext i1 {cmp} to i32")
    return t


# rules/blas_runtime.c: name -> (return type, parameter types)
KERNELS = {
    "gemm": ("void", "i32, i32, i32, i32, i32, double, ptr, i32, ptr, i32, double, ptr, i32"),
    "scale": ("void", "i32, i32, double, ptr, i32"),
    "scale_tri": ("void", "i32, i32, double, ptr, i32"),
    "save": ("ptr", "i32, i32, ptr, i32"),
    "trsm": ("void", "i32, i32, i32, i32, i32, i32, double, ptr, i32, ptr, i32"),
    "tri_update": ("void", "i32, i32, i32, i32, double, ptr, i32, i32, ptr, i32, i32, ptr, i32"),
    "syrk_adj": ("void", "i32, i32, i32, i32, double, ptr, i32, ptr, i32, ptr, i32"),
    "trmm_acc": ("void", "i32, i32, i32, i32, i32, i32, double, ptr, i32, ptr, i32, ptr, i32"),
}
KERNEL_PREFIX = "@__enzyme_cc_blas_"


def _kernel(c, name, args, result=None):
    ret, params = KERNELS[name]
    fn = KERNEL_PREFIX + name
    c.ctx.gen().declare_raw(fn, f"declare {ret} {fn}({params})")
    text = f"call {ret} {fn}({', '.join(f'{t} {v}' for t, v in args)})"
    if ret == "void":
        c.ctx.emit(text)
        return None
    t = result or c.ctx.tmp("k")
    c.ctx.emit(f"{t} = {text}")
    return t


# ---- level 3: the forward sweep's record -----------------------------------------------------
LEVEL3 = {"cblas_dgemm", "cblas_dtrsm", "cblas_dsyrk"}


def _written(name: str):
    """The name of the argument CBLAS routine `name` writes (None: it writes nothing)."""
    args, k = SIGS[name]
    return None if k is None else args[k]


def _saved(c):
    """The matrices the reverse of a level-3 call reads, each (argument, rows, columns) as
    stored (column-major; a row-major CBLAS matrix is its transpose), taken before the call;
    and whether trsm's solution is taken after it."""
    ctx, out = c.ctx, []
    if c.name == "cblas_dgemm":
        M, N, K = c.p("M"), c.p("N"), c.p("K")
        row = _eq(ctx, c.p("layout"), ROW)
        for k, other, t, r, q in (("A", "B", "ta", M, K), ("B", "A", "tb", K, N)):
            if c.sh(other):
                nt = _eq(ctx, c.p(t), NT)
                rows, cols = _sel(ctx, nt, "i32", r, q), _sel(ctx, nt, "i32", q, r)
                out.append((k, _sel(ctx, row, "i32", cols, rows), _sel(ctx, row, "i32", rows, cols)))
    elif c.name == "cblas_dtrsm":
        dim = _sel(ctx, _ne0(ctx, c.flag("side")), "i32", c.p("M"), c.p("N"))
        out.append(("A", dim, dim))
    elif c.name == "cblas_dsyrk" and c.sh("A"):
        t = _ne0(ctx, c.flag("trans"))
        N, K = c.p("N"), c.p("K")
        out.append(("A", _sel(ctx, t, "i32", K, N), _sel(ctx, t, "i32", N, K)))
    return out


def _ne0(ctx, flag):
    t = ctx.tmp("is")
    ctx.emit(f"{t} = icmp ne i32 {flag}, 0")
    return t


def _copy_needed(c, k) -> bool:
    """Must the forward sweep copy argument k? Not when the reverse runs in this function
    (combined mode), nothing in it writes that memory and the call itself does not."""
    synth = c.ctx.synth
    base = underlying(synth.fn, c.ops[k].value)
    return not (synth.mode == "combined" and synth.mem.unmodified(base) and
                _written(c.name) != k)


def _capture(ctx, inst):
    """Forward sweep, before a level-3 call: a record of its scalars (Fortran passes them by
    reference, and the program may reuse that memory before the reverse sweep) and of copies
    of the matrices its reverse reads."""
    c = _Call(ctx, inst)
    if not c.sh(_written(c.name)):
        return
    rec = f"%ad.ctape.{inst.line}"
    ctx.gen().declare_raw("@malloc", "declare ptr @malloc(i64)")
    ctx.emit(f"{rec} = call ptr @malloc(i64 {8 * len(c.slots)})")
    scalars = []
    for k, kind in (c.kinds.items() if c.fortran else ()):
        if kind:
            ty = "i8" if kind == "#" else ("double" if k in _FLOAT_SCALARS else "i32")
            v = ctx.tmp("arg")
            ctx.emit(f"{v} = load {ty}, ptr {c._value(k)}")
            scalars.append((k, ty, v))
    saved = _saved(c)
    c.record = rec
    for k, ty, v in scalars:
        ctx.emit(f"store {ty} {v}, ptr {c.slot(k)}")
    for k, rows, cols in saved:
        copy = "null"
        if _copy_needed(c, k):
            copy = _kernel(c, "save", [("i32", rows), ("i32", cols), ("ptr", c.p(k)),
                                       ("i32", c.p("ld" + k.lower()))])
            _own_block(ctx, copy)
        ctx.emit(f"store ptr {copy}, ptr {c.slot('save.' + k)}")
    _keep(ctx, inst.line, rec)


def capture_after(ctx, inst):
    """Forward sweep, after dtrsm: its solution, which the reverse needs for dA."""
    c = _Call(ctx, inst, f"%ad.ctape.{inst.line}")
    if c.name != "cblas_dtrsm" or not (c.sh("B") and c.sh("A")):
        return
    x = _kernel(c, "save", [("i32", c.p("M")), ("i32", c.p("N")), ("ptr", c.p("B")),
                            ("i32", c.p("ldb"))])
    _own_block(ctx, x)
    ctx.emit(f"store ptr {x}, ptr {c.slot('save.X')}")


def _own_block(ctx, p):
    """A block the reverse frees (_release); a reverse that runs more than once on one tape
    leaves it to the tape's end."""
    if ctx.gen().in_multi:
        defer_free(ctx, p, "null")


def _release(c, names):
    if c.ctx.gen().in_multi:
        return
    c.ctx.gen().declare_raw("@free", "declare void @free(ptr)")
    for k in names:
        t = c.ctx.tmp("saved")
        c.ctx.emit(f"{t} = load ptr, ptr {c.slot(k)}")
        c.ctx.emit(f"call void @free(ptr {t})")
    c.ctx.emit(f"call void @free(ptr {c.record})")


def _matrix(c, k):
    """(pointer, leading dimension) of matrix argument k as it was at the call."""
    if not _copy_needed(c, k):
        return c.p(k), c.p("ld" + k.lower())
    t = c.ctx.tmp("saved")
    c.ctx.emit(f"{t} = load ptr, ptr {c.slot('save.' + k)}")
    return t, [r for kk, r, _ in _saved(c) if kk == k][0]


def _not(ctx, b):
    t = ctx.tmp("not")
    ctx.emit(f"{t} = xor i1 {b}, true")
    return t


def link_runtime(module, text: str, ctx):
    """Link our kernels (rules/blas_runtime.c) into the derivative module when it calls them."""
    if KERNEL_PREFIX not in text:
        return
    link_needed(module, ctx, ("blas_runtime.c",), (), "BLAS kernels", text)


_OWN_DEFINE = re.compile(r"^define [^\n]*@(?:" + "|".join(sorted(OWN)) + r")\(", re.M)


def defined_as_code() -> bool:
    """ENZYME_CC_DEFINED_BLAS=code: the routines a program defines are differentiated as the
    code they are (to compare, or for a routine that only looks like BLAS)."""
    return os.environ.get("ENZYME_CC_DEFINED_BLAS", "rule") == "code"


def keep_calls(text: str) -> str:
    """Mark the program's own dgemm_, dtrsm_, dsyrk_ `noinline` before the pre-AD optimization:
    their rule replaces their code only where they stay calls."""
    if defined_as_code():
        return text
    out, last = [], 0
    for m in _OWN_DEFINE.finditer(text):
        at = fn_attr_position(text, m.end() - 1)
        out.append(text[last:at] + " noinline")
        last = at
    return "".join(out) + text[last:]
