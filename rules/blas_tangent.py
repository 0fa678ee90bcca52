"""BLAS in forward mode (rules/blas.py): the tangent of a call, as BLAS calls and our kernels, and
the copies a call's tangent needs of inputs the call overwrites (`tangent_before`)."""
from __future__ import annotations

from .blas import NT, _Call, _emit_call, _eq, _gemm, _kernel, _no_active_scalars, _scale, _sel

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
        ly = c.p("layout")
        _scale(c, ly, c.p("M"), c.p("N"), c.p("beta"), c.s("C"), c.p("ldc"))
        for a, b in (("A", "B"), ("B", "A")):
            if not c.sh(a):
                continue
            ops = {a: c.s(a), b: c.p(b)}
            _gemm(c, ly, c.p("ta"), c.p("tb"), c.p("M"), c.p("N"), c.p("K"), c.p("alpha"),
                  ops["A"], c.p("lda"), ops["B"], c.p("ldb"), c.s("C"), c.p("ldc"))
    elif name == "cblas_dtrsm" and c.sh("B"):
        _tangent_trsm(c)
    elif name == "cblas_dsyrk" and c.sh("C"):
        _tangent_syrk(c)
    return None


def _tangent_trsm(c):
    """After the call (B holds X): dX = op(A)^-1 (alpha dB0 - op(dA) X) (right: the mirror)."""
    _no_active_scalars(c, "alpha")
    left, lower, t, unit = c.flag("side"), c.flag("uplo"), c.flag("ta"), c.flag("diag")
    M, N, dB, ldb = c.p("M"), c.p("N"), c.s("B"), c.p("ldb")
    _kernel(c, "scale", [("i32", M), ("i32", N), ("double", c.p("alpha")), ("ptr", dB),
                         ("i32", ldb)])
    if c.sh("A"):
        _kernel(c, "trmm_acc", [("i32", left), ("i32", lower), ("i32", t), ("i32", unit),
                                ("i32", M), ("i32", N), ("double", "-1.0"), ("ptr", c.s("A")),
                                ("i32", c.p("lda")), ("ptr", c.p("B")), ("i32", ldb), ("ptr", dB),
                                ("i32", ldb)])
    _kernel(c, "trsm", [("i32", left), ("i32", lower), ("i32", t), ("i32", unit), ("i32", M),
                        ("i32", N), ("double", "1.0"), ("ptr", c.p("A")), ("i32", c.p("lda")),
                        ("ptr", dB), ("i32", ldb)])


def _tangent_syrk(c):
    """dC := beta dC + alpha (op(dA) op(A)^T + op(A) op(dA)^T), on C's triangle."""
    _no_active_scalars(c, "alpha", "beta")
    lower, t, N, K = c.flag("uplo"), c.flag("trans"), c.p("N"), c.p("K")
    dC, ldc = c.s("C"), c.p("ldc")
    _kernel(c, "scale_tri", [("i32", lower), ("i32", N), ("double", c.p("beta")), ("ptr", dC),
                             ("i32", ldc)])
    if not c.sh("A"):
        return
    for u, v in ((c.s("A"), c.p("A")), (c.p("A"), c.s("A"))):
        _kernel(c, "tri_update", [("i32", lower), ("i32", "0"), ("i32", N), ("i32", K),
                                  ("double", c.p("alpha")), ("ptr", u), ("i32", c.p("lda")),
                                  ("i32", t), ("ptr", v), ("i32", c.p("lda")), ("i32", t),
                                  ("ptr", dC), ("i32", ldc)])
