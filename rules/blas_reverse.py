"""BLAS in reverse mode (rules/blas.py): the adjoint of a call, as BLAS calls (ddot, daxpy, dgemv,
dger, dgemm) or our kernels (the level-3 trsm and syrk), reading the primal data the forward
sweep kept (its copies freed after)."""
from __future__ import annotations

from .blas import (LEVEL3, NT, TR, _Call, _copy_needed, _emit_call, _eq, _gemm, _gemv_matrix,
                   _kernel, _matrix, _ne0, _no_active_scalars, _not, _primal_vector, _release,
                   _saved, _scale, _sel, _written, cached_vectors)

_LOCK = "@__enzyme_cc_blas_lock"


_IDENT = "@__enzyme_cc_blas_ident"


def reverse(ctx, inst, d):
    """The adjoint of a BLAS call. Run by the threads of an OpenMP team (inside a parallel
    region), the calls add into the shadows of what they read, which the threads may share (a
    vector or matrix every thread reads): one thread at a time, in a critical section."""
    gen = ctx.gen()
    if not gen.in_parallel:
        _reverse(ctx, inst, d)
        return
    gen.declare_raw("@__kmpc_global_thread_num", "declare i32 @__kmpc_global_thread_num(ptr)")
    gen.declare_raw("@__kmpc_critical", "declare void @__kmpc_critical(ptr, i32, ptr)")
    gen.declare_raw("@__kmpc_end_critical", "declare void @__kmpc_end_critical(ptr, i32, ptr)")
    gen.declare_raw(_LOCK, f"{_LOCK} = common global [8 x i32] zeroinitializer")
    gen.declare_raw(_IDENT + ".str", f'{_IDENT}.str = private unnamed_addr constant [23 x i8] '
                    'c";unknown;unknown;0;0;;\\00"')
    gen.declare_raw(_IDENT, f"{_IDENT} = private unnamed_addr constant {{ i32, i32, i32, i32, "
                    f"ptr }} {{ i32 0, i32 2, i32 0, i32 22, ptr {_IDENT}.str }}")
    gtid = ctx.tmp("gtid")
    ctx.emit(f"{gtid} = call i32 @__kmpc_global_thread_num(ptr {_IDENT})")
    ctx.emit(f"call void @__kmpc_critical(ptr {_IDENT}, i32 {gtid}, ptr {_LOCK})")
    _reverse(ctx, inst, d)
    ctx.emit(f"call void @__kmpc_end_critical(ptr {_IDENT}, i32 {gtid}, ptr {_LOCK})")


def _reverse(ctx, inst, d):
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
    elif name in LEVEL3:
        if not c.sh(_written(name)):
            return
        c.record = ctx._get(("ctape", inst.line))
        {"cblas_dgemm": _reverse_gemm, "cblas_dtrsm": _reverse_trsm,
         "cblas_dsyrk": _reverse_syrk}[name](c)
        _release(c, ["save." + k for k, _, _ in _saved(c)] +
                 (["save.X"] if name == "cblas_dtrsm" and c.sh("A") else []))
    _free_copies(c)


def _free_copies(c):
    if c.ctx.gen().in_multi:
        return                          # reversed more than once: freed with the tape (_own_block)
    if c.name == "cblas_dgemv" and c.sh("y") and c.sh("x") and _copy_needed(c, "A"):
        c.ctx.emit(f"call void @free(ptr {c.ctx._get(('ctape', f'{c.inst.line}.A'))})")
        c.ctx.gen().declare_raw("@free", "declare void @free(ptr)")
    for k, _, _ in cached_vectors(c.name):
        if not _copy_needed(c, k):
            continue
        c.ctx.emit(f"call void @free(ptr {c.ctx._get(('ctape', f'{c.inst.line}.{k}'))})")
        c.ctx.gen().declare_raw("@free", "declare void @free(ptr)")


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
        a, lda = _gemv_matrix(c)
        flip = _sel(ctx, nt, "i32", TR, NT)
        _emit_call(ctx, "cblas_dgemv", [("i32", c.p("layout")), ("i32", flip), ("i32", c.p("m")),
                                        ("i32", c.p("n")), ("double", c.p("alpha")), ("ptr", a),
                                        ("i32", lda), ("ptr", dy), ("i32", incy),
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
        B, ldb = _matrix(c, "B")
        # ta=N: dA(MxK) += alpha dC op(B)^T ; ta=T: dA(KxM) += alpha op(B) dC^T
        t1 = _sel(ctx, ta_nt, "i32", NT, c.p("tb"))
        t2 = _sel(ctx, ta_nt, "i32", _sel(ctx, tb_nt, "i32", TR, NT), TR)
        m, n = _sel(ctx, ta_nt, "i32", M, K), _sel(ctx, ta_nt, "i32", K, M)
        p1, l1 = _sel(ctx, ta_nt, "ptr", dC, B), _sel(ctx, ta_nt, "i32", ldc, ldb)
        p2, l2 = _sel(ctx, ta_nt, "ptr", B, dC), _sel(ctx, ta_nt, "i32", ldb, ldc)
        _gemm(c, ly, t1, t2, m, n, N, alpha, p1, l1, p2, l2, c.s("A"), c.p("lda"))
    if c.sh("B"):
        A, lda = _matrix(c, "A")
        # tb=N: dB(KxN) += alpha op(A)^T dC ; tb=T: dB(NxK) += alpha dC^T op(A)
        t1 = _sel(ctx, tb_nt, "i32", _sel(ctx, ta_nt, "i32", TR, NT), TR)
        t2 = _sel(ctx, tb_nt, "i32", NT, c.p("ta"))
        m, n = _sel(ctx, tb_nt, "i32", K, N), _sel(ctx, tb_nt, "i32", N, K)
        p1, l1 = _sel(ctx, tb_nt, "ptr", A, dC), _sel(ctx, tb_nt, "i32", lda, ldc)
        p2, l2 = _sel(ctx, tb_nt, "ptr", dC, A), _sel(ctx, tb_nt, "i32", ldc, lda)
        _gemm(c, ly, t1, t2, m, n, M, alpha, p1, l1, p2, l2, c.s("B"), c.p("ldb"))
    _scale(c, ly, M, N, c.p("beta"), dC, ldc)


def _reverse_trsm(c):
    """X = alpha op(A)^-1 B0 (left; right: alpha B0 op(A)^-1). With Z = op(A)^-T dX
    (right: dX op(A)^-T): dB0 = alpha Z, d op(A) -= Z X^T (right: X^T Z), on A's triangle."""
    ctx = c.ctx
    _no_active_scalars(c, "alpha")
    if not c.sh("B"):
        return
    left, lower, t, unit = c.flag("side"), c.flag("uplo"), c.flag("ta"), c.flag("diag")
    M, N, dB, ldb = c.p("M"), c.p("N"), c.s("B"), c.p("ldb")
    A, lda = _matrix(c, "A")
    flip = ctx.tmp("flip")
    ctx.emit(f"{flip} = xor i32 {t}, 1")
    _kernel(c, "trsm", [("i32", left), ("i32", lower), ("i32", flip), ("i32", unit), ("i32", M),
                        ("i32", N), ("double", "1.0"), ("ptr", A), ("i32", lda), ("ptr", dB),
                        ("i32", ldb)])
    if c.sh("A"):
        X = ctx.tmp("saved")
        ctx.emit(f"{X} = load ptr, ptr {c.slot('save.X')}")
        isl, ist = _ne0(ctx, left), _ne0(ctx, t)
        # left: U V^T = Z X^T (t=0) or X Z^T (t=1), n = M, k = N, stored as is;
        # right: X^T Z (t=0) or Z^T X (t=1), n = N, k = M, both stored transposed
        zfirst = ctx.tmp("is")
        ctx.emit(f"{zfirst} = icmp eq i1 {isl}, {_not(ctx, ist)}")
        u, lu = _sel(ctx, zfirst, "ptr", dB, X), _sel(ctx, zfirst, "i32", ldb, M)
        v, lv = _sel(ctx, zfirst, "ptr", X, dB), _sel(ctx, zfirst, "i32", M, ldb)
        n, k = _sel(ctx, isl, "i32", M, N), _sel(ctx, isl, "i32", N, M)
        tr = _sel(ctx, isl, "i32", "0", "1")
        _kernel(c, "tri_update", [("i32", lower), ("i32", unit), ("i32", n), ("i32", k),
                                  ("double", "-1.0"), ("ptr", u), ("i32", lu), ("i32", tr),
                                  ("ptr", v), ("i32", lv), ("i32", tr), ("ptr", c.s("A")),
                                  ("i32", c.p("lda"))])
    _kernel(c, "scale", [("i32", M), ("i32", N), ("double", c.p("alpha")), ("ptr", dB),
                         ("i32", ldb)])


def _reverse_syrk(c):
    """C := alpha op(A) op(A)^T + beta C on C's triangle: op(dA) += alpha (G + G^T) op(A) with
    G the triangle of dC, then that triangle of dC := beta times itself."""
    _no_active_scalars(c, "alpha", "beta")
    if not c.sh("C"):
        return
    lower, N, dC, ldc = c.flag("uplo"), c.p("N"), c.s("C"), c.p("ldc")
    if c.sh("A"):
        A, lda = _matrix(c, "A")
        _kernel(c, "syrk_adj", [("i32", lower), ("i32", c.flag("trans")), ("i32", N),
                                ("i32", c.p("K")), ("double", c.p("alpha")), ("ptr", dC),
                                ("i32", ldc), ("ptr", A), ("i32", lda), ("ptr", c.s("A")),
                                ("i32", c.p("lda"))])
    _kernel(c, "scale_tri", [("i32", lower), ("i32", N), ("double", c.p("beta")), ("ptr", dC),
                             ("i32", ldc)])
