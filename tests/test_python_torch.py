"""enzyme_cc.torch: gradcheck on C, C++ and Fortran functions, batches and vmap against a Python
loop, torch.func.grad, torch.compile, and the errors naming the argument."""
import pytest

torch = pytest.importorskip("torch")
from enzyme_cc import ffi  # noqa: E402
import enzyme_cc.torch as et  # noqa: E402
from ffi_kernels import (AFFINE, C_SRC, CUBIC, CXX_SRC, F_SRC, NORM2, SMOOTH,  # noqa: E402
                         SOFTMAX)

D = torch.float64


@pytest.fixture(scope="module", params=["-O0", "-O2"])
def ops(request):
    lib = ffi.build([NORM2, SMOOTH, AFFINE], source=C_SRC, flags=(request.param,))
    return {name: et.op(lib[name]) for name in ("norm2", "smooth", "affine")}


def rand(*shape, grad=True, dtype=D):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(sum(shape)),
                       requires_grad=grad)


def test_gradcheck_c(ops):
    w = rand(5, grad=False)
    assert torch.autograd.gradcheck(ops["norm2"], (rand(6),))
    assert torch.autograd.gradcheck(lambda x: ops["smooth"](x, w), (rand(5),))
    x = rand(6).detach()
    torch.testing.assert_close(ops["norm2"](x), x.norm(), rtol=1e-14, atol=0)


def test_float32(ops):
    a, b = rand(4, dtype=torch.float32), rand(4, dtype=torch.float32)
    y, s = ops["affine"](a, b)
    (y.sum() + 2 * s).backward()
    torch.testing.assert_close(a.grad, (b + 4 * a).detach())
    torch.testing.assert_close(b.grad, (a + torch.tensor([4.0, 0, 0, 0])).detach())


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_gradcheck_cxx_and_fortran(opt):
    sm = et.op(SOFTMAX, source=CXX_SRC, lang="c++", flags=(opt,))
    cu = et.op(CUBIC, source=F_SRC, lang="fortran", flags=(opt,))
    assert torch.autograd.gradcheck(sm, (rand(5),))
    assert torch.autograd.gradcheck(cu, (rand(3), rand(4)))


def test_batch_against_python_loop(ops):
    xs, w = rand(3, 5), rand(5)
    y = ops["smooth"](xs, w.detach())
    torch.testing.assert_close(y, torch.stack([ops["smooth"](x, w.detach()) for x in xs]))
    assert torch.autograd.gradcheck(lambda x: ops["smooth"](x, w.detach()), (xs,))
    # a parameter shared by the batch gets the summed gradient
    cu = et.op(CUBIC, source=F_SRC, lang="fortran")
    assert torch.autograd.gradcheck(cu, (rand(3), rand(2, 4)))


def test_torch_func_grad_and_vmap(ops):
    xs = rand(4, 6, grad=False)
    torch.testing.assert_close(torch.func.vmap(ops["norm2"])(xs), xs.norm(dim=1))
    torch.testing.assert_close(torch.func.grad(ops["norm2"])(xs[0]), xs[0] / xs[0].norm())
    torch.testing.assert_close(torch.func.vmap(torch.func.grad(ops["norm2"]))(xs),
                               xs / xs.norm(dim=1, keepdim=True))
    w = rand(6, grad=False)
    jac = torch.func.jacrev(lambda x: ops["smooth"](x, w))(xs[0])
    fd = torch.autograd.functional.jacobian(lambda x: ops["smooth"](x, w), xs[0])
    torch.testing.assert_close(jac, fd)


def test_forward_mode(ops):
    """torch.func.jvp and torch.autograd.forward_ad through the library's JVP entry point."""
    import torch.autograd.forward_ad as fwAD
    w, x, v = rand(5, grad=False), rand(5, grad=False), rand(5, 1, grad=False)[:, 0]
    f = lambda x: ops["smooth"](x, w)   # noqa: E731
    y, t = torch.func.jvp(f, (x,), (v,))
    eps = 1e-6
    torch.testing.assert_close(y, f(x))
    torch.testing.assert_close(t, (f(x + eps * v) - f(x - eps * v)) / (2 * eps), rtol=1e-6,
                               atol=1e-8)
    torch.testing.assert_close(t, torch.func.jacrev(f)(x) @ v, rtol=1e-13, atol=1e-14)
    with fwAD.dual_level():
        yd = ops["smooth"](fwAD.make_dual(x, v), w)
        torch.testing.assert_close(fwAD.unpack_dual(yd).tangent, t, rtol=1e-14, atol=0)
    torch.testing.assert_close(torch.func.jacfwd(f)(x), torch.func.jacrev(f)(x), rtol=1e-13,
                               atol=1e-14)
    # batched, a shared parameter, vmap of jvp
    cu = et.op(CUBIC, source=F_SRC, lang="fortran")
    assert torch.autograd.gradcheck(cu, (rand(3), rand(2, 4)), check_forward_ad=True)
    assert torch.autograd.gradcheck(ops["norm2"], (rand(6),), check_forward_ad=True)
    assert torch.autograd.gradcheck(lambda x: ops["smooth"](x, w), (rand(3, 5),),
                                    check_forward_ad=True)
    xs, vs = rand(3, 6, grad=False), rand(6, 3, grad=False).T
    tv = torch.func.vmap(lambda x, v: torch.func.jvp(ops["norm2"], (x,), (v,))[1])(xs, vs)
    torch.testing.assert_close(tv, (xs * vs).sum(1) / xs.norm(dim=1))
    with pytest.raises(RuntimeError, match="derivative with respect to input 'w' was requested"):
        torch.func.jvp(lambda w: ops["smooth"](x, w), (w,), (v,))


def test_gradcheck_batched_checks(ops):
    """gradcheck's batched checks (torch's legacy vmap over the JVP and the VJP: a per-item op,
    its fallback loops over) and batched cotangents of a split-mode graph (is_grads_batched,
    torch.func.vmap and legacy vmap of autograd.grad: the combined VJP) against the direct C
    VJP of each cotangent."""
    from torch._vmap_internals import _vmap
    kw = dict(check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True)
    sm, w = ops["smooth"], rand(5, grad=False)
    assert torch.autograd.gradcheck(ops["norm2"], (rand(3, 6),), **kw)
    assert torch.autograd.gradcheck(lambda x: sm(x, w), (rand(5),), **kw)
    cu = et.op(CUBIC, source=F_SRC, lang="fortran")
    assert torch.autograd.gradcheck(cu, (rand(3), rand(2, 4)), **kw)
    x, vs = rand(5), rand(2, 5, grad=False)
    expect = torch.stack([torch.from_numpy(sm.fn.vjp([x.detach().numpy(), w.numpy()],
                                                     [v.numpy()])) for v in vs])
    (g,) = torch.autograd.grad(sm(x, w), x, vs, is_grads_batched=True)
    torch.testing.assert_close(g, expect, rtol=1e-14, atol=1e-15)
    for vmap in (torch.func.vmap, _vmap):
        y = sm(x, w)
        (g,) = vmap(lambda v: torch.autograd.grad(y, x, v, retain_graph=True))(vs)
        torch.testing.assert_close(g, expect, rtol=1e-14, atol=1e-15)


@pytest.fixture(scope="module", params=["-O0", "-O2"])
def ops2(request):
    lib = ffi.build([NORM2, SMOOTH], source=C_SRC, flags=(request.param,), order=2)
    cu = ffi.function(CUBIC, source=F_SRC, lang="fortran", flags=(request.param,), order=2)
    return {"norm2": et.op(lib["norm2"]), "smooth": et.op(lib["smooth"]), "cubic": et.op(cu)}


def test_second_order(ops2):
    """order=2: double backward (forward over reverse), Hessians by jacfwd(jacrev),
    jacrev(jacfwd) and jacfwd(jacfwd) (forward over forward)."""
    n2, w = ops2["norm2"], rand(5, grad=False)
    assert torch.autograd.gradgradcheck(n2, (rand(6),))
    assert torch.autograd.gradgradcheck(lambda x: ops2["smooth"](x, w), (rand(5),))
    assert torch.autograd.gradgradcheck(lambda x: ops2["smooth"](x, w), (rand(3, 5),))
    assert torch.autograd.gradgradcheck(ops2["cubic"], (rand(3), rand(2, 4)))
    assert torch.autograd.gradgradcheck(ops2["cubic"], (rand(3), rand(4)),
                                        check_fwd_over_rev=True)
    # its batched check (legacy vmap of the double backward: the per-item op)
    assert torch.autograd.gradgradcheck(ops2["cubic"], (rand(3), rand(2, 4)),
                                        check_batched_grad=True)
    x = rand(4, grad=False)
    r = x.norm()
    exact = (torch.eye(4, dtype=D) - torch.outer(x, x) / r ** 2) / r
    tf = torch.func
    for hess in (tf.hessian(n2), tf.jacrev(tf.jacfwd(n2)), tf.jacfwd(tf.jacfwd(n2)),
                 tf.jacrev(tf.jacrev(n2))):
        torch.testing.assert_close(hess(x), exact, rtol=1e-12, atol=1e-14)
    # vector output: every composition of the modes equals central differences of the Jacobian
    f = lambda x: ops2["smooth"](x, w)   # noqa: E731
    x5, eps, J = rand(5, grad=False), 1e-6, torch.func.jacrev(f)
    fd = torch.stack([(J(x5 + eps * e) - J(x5 - eps * e)) / (2 * eps)
                      for e in torch.eye(5, dtype=D)], dim=-1)
    for outer, inner in [(torch.func.jacfwd, torch.func.jacrev), (torch.func.jacrev,) * 2,
                         (torch.func.jacfwd,) * 2, (torch.func.jacrev, torch.func.jacfwd)]:
        torch.testing.assert_close(outer(inner(f))(x5), fd, rtol=1e-6, atol=1e-7)
    # mixed second derivatives of a batch sharing a parameter: d/dx of the p-Jacobian and d/dp
    # of the x-Jacobian, against central differences
    cu, p, xb = ops2["cubic"], rand(3, grad=False), rand(2, 4, grad=False)
    Jp = torch.func.jacfwd(cu, argnums=0)
    fd = torch.stack([(Jp(p, xb + eps * e) - Jp(p, xb - eps * e)) / (2 * eps)
                      for e in torch.eye(8, dtype=D).reshape(8, 2, 4)], dim=-1).reshape(
                          2, 4, 3, 2, 4)
    torch.testing.assert_close(torch.func.jacrev(Jp, argnums=1)(p, xb), fd, rtol=1e-6,
                               atol=1e-7)
    Jx = torch.func.jacrev(cu, argnums=1)
    fd = torch.stack([(Jx(p + eps * e, xb) - Jx(p - eps * e, xb)) / (2 * eps)
                      for e in torch.eye(3, dtype=D)], dim=-1)
    torch.testing.assert_close(torch.func.jacfwd(Jx, argnums=0)(p, xb), fd, rtol=1e-6,
                               atol=1e-7)
    with pytest.raises(RuntimeError, match="third and higher derivatives are not provided"):
        torch.func.jacrev(torch.func.hessian(n2))(x)


def test_compile_second_order(ops2):
    """A double backward through the compiled op (its registered formula calls the VJP op,
    whose own formula gives the second derivative) equals the analytic Hessian."""
    n2, x = ops2["norm2"], rand(4)
    f = torch.compile(lambda x: n2(x) * 1.0, backend="eager", fullgraph=True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    xd = x.detach()
    r = xd.norm()
    exact = (torch.eye(4, dtype=D) - torch.outer(xd, xd) / r ** 2) / r
    torch.testing.assert_close(g, xd / r, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(h, exact.sum(1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_second_order_two_outputs_float32(opt):
    """Hessian blocks of y = a*b + b[0], s = |a|^2 (float32, two outputs, one of them unused)
    against the analytic ones; double backward through create_graph."""
    af = et.op(ffi.function(AFFINE, source=C_SRC, flags=(opt,), order=2))
    a, b = rand(4, grad=False, dtype=torch.float32), rand(3, 4, grad=False, dtype=torch.float32)[1]
    H = torch.func.hessian(lambda a, b: (lambda y, s: y.sum() + 2 * s)(*af(a, b)),
                           argnums=(0, 1))(a, b)
    eye = torch.eye(4)
    for got, want in zip((H[0][0], H[0][1], H[1][0], H[1][1]), (4 * eye, eye, eye, 0 * eye)):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(torch.func.hessian(lambda a: af(a, b)[1])(a), 2 * eye)
    a2 = a.clone().requires_grad_()
    (ga,) = torch.autograd.grad(af(a2, b)[1], a2, create_graph=True)
    torch.testing.assert_close(torch.autograd.grad(ga.sum(), a2)[0], torch.full((4,), 2.0))


def test_second_order_is_refused(ops):
    x = rand(3)
    (g,) = torch.autograd.grad(ops["norm2"](x), x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"second derivatives need .* order=2"):
        g.sum().backward()


def test_torch_compile_opaque(ops):
    x = rand(4, 6, grad=False)
    f = torch.compile(lambda x: ops["norm2"](x).sum() * 2, fullgraph=True, backend="eager")
    torch.testing.assert_close(f(x), 2 * x.norm(dim=1).sum())
    # the op's schema, fake kernel and autograd registrations pass torch's own checks
    torch.library.opcheck(ops["norm2"].primal, ([x], [], [6], []))


@pytest.mark.parametrize("dynamic", [True, None])
def test_compile_dynamic_shapes(ops, dynamic):
    """torch.compile with symbolic sizes (dynamic=True, or automatic after a size changes):
    the op's fake kernel plans its outputs from the symbolic sizes; values and gradients
    right at every size."""
    n2 = ops["norm2"]
    f = torch.compile(lambda x: n2(x).sum() * 2, backend="eager", dynamic=dynamic)
    g = torch.compile(lambda x: n2(x).sum(), backend="eager", dynamic=dynamic)
    for n in (4, 6, 9):
        x = rand(3, n)
        torch.testing.assert_close(f(x.detach()), 2 * x.detach().norm(dim=1).sum())
        g(x).backward()
        torch.testing.assert_close(x.grad, (x / x.norm(dim=1, keepdim=True)).detach())


def _central(f, xs, ct, k, eps=1e-6):
    """Central differences of <ct, f(*xs)> with respect to xs[k]."""
    x, g = xs[k].detach(), torch.zeros_like(xs[k])
    for i in range(x.numel()):
        e = torch.zeros_like(x).view(-1)
        e[i] = eps
        e = e.view_as(x)
        hi = [y if j != k else x + e for j, y in enumerate(xs)]
        lo = [y if j != k else x - e for j, y in enumerate(xs)]
        g.view(-1)[i] = ((f(*hi) - f(*lo)) * ct).sum() / (2 * eps)
    return g


def test_compile_with_gradient(ops):
    """torch.compile (fullgraph, backend="eager") of a graph needing the ops' gradients: the
    custom ops' registered autograd; the gradient equals the direct C VJP and central
    differences."""
    w = rand(5, grad=False)
    loss = lambda x: (ops["smooth"](x, w) ** 2).sum() + ops["norm2"](x).sum()   # noqa: E731
    f = torch.compile(loss, fullgraph=True, backend="eager")
    x = rand(3, 5)
    f(x).backward()
    with torch.no_grad():
        y = ops["smooth"](x, w)
    direct = ops["smooth"].fn.vjp([x.detach().numpy(), w.numpy()], [(2 * y).numpy()]) + \
        ops["norm2"].fn.vjp([x.detach().numpy()], [torch.ones(3, dtype=D).numpy()])
    torch.testing.assert_close(x.grad, torch.from_numpy(direct), rtol=1e-13, atol=1e-14)
    fd = _central(lambda x: loss(x), [x], torch.ones((), dtype=D), 0)
    torch.testing.assert_close(x.grad, fd, rtol=1e-6, atol=1e-8)
    # a batched shared parameter, two outputs in float32
    af = ops["affine"]
    g = torch.compile(lambda a, b: (lambda y, s: (y ** 2).sum() + s.sum())(*af(a, b)),
                      fullgraph=True, backend="eager")
    a, b = rand(4, dtype=torch.float32), rand(2, 4, dtype=torch.float32)
    ga, gb = torch.autograd.grad(g(a, b), (a, b))
    a2, b2 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    ra, rb = torch.autograd.grad((lambda y, s: (y ** 2).sum() + s.sum())(*af(a2, b2)), (a2, b2))
    torch.testing.assert_close((ga, gb), (ra, rb))
    # the autograd registration passes torch's own checks
    torch.library.opcheck(ops["smooth"].primal, ([rand(2, 5), w], [], [5], []))
    with pytest.raises(RuntimeError, match="input 'w' was requested, but it is declared"):
        torch.compile(lambda x, w: ops["smooth"](x, w).sum(), backend="eager")(
            rand(5), rand(5)).backward()


def test_compile_around_torch_func_transforms(ops):
    """torch.compile(torch.func.grad(op)) and of jacrev: the gradient (Dynamo cannot trace the
    op inside a functorch transform, and runs the function eagerly)."""
    n2 = ops["norm2"]
    x = rand(6, grad=False)
    torch.testing.assert_close(torch.compile(torch.func.grad(n2))(x), x / x.norm(),
                               rtol=1e-14, atol=0)
    torch.testing.assert_close(torch.compile(torch.func.jacrev(n2))(x), x / x.norm(),
                               rtol=1e-14, atol=0)


def test_compile_inductor_with_gradient(ops):
    """The default backend (inductor, CPU) compiles the same graph around the opaque op."""
    w = rand(5, grad=False)
    loss = lambda x: (ops["smooth"](x, w) ** 2).sum()   # noqa: E731
    x, x2 = rand(3, 5), rand(3, 5)
    torch.compile(loss, fullgraph=True)(x).backward()
    loss(x2).backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-14, atol=0)


def _watch_runs(monkeypatch, fn, hook):
    """Calls hook(kind, address of the first buffer) at each entry point fn runs. The split
    entries are watched by wrappers in their place: the C++ autograd node
    (enzyme_cc/torch_node.py) calls them without fn.run."""
    import ctypes
    orig = fn.run
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p)
    for kind in ffi.runtime.SPLIT:
        real = proto(ctypes.cast(fn.raw_entry[kind], ctypes.c_void_p).value)
        monkeypatch.setitem(fn.raw_entry, kind, proto(
            lambda b, i, ptrs, st, kind=kind, real=real: (
                hook(kind, ctypes.cast(ptrs, ctypes.POINTER(ctypes.c_void_p))[0]),
                real(b, i, ptrs, st))))
    monkeypatch.setattr(fn, "_prepared", {})    # (prepared calls hold the entries)
    monkeypatch.setattr(fn, "run", lambda p, ptrs: (
        p.kind in ffi.runtime.SPLIT or hook(p.kind, ptrs[0]), orig(p, ptrs)))


def _count_runs(monkeypatch, fn):
    """Counts the entry points fn runs, by kind."""
    runs = {}
    _watch_runs(monkeypatch, fn, lambda kind, _: runs.__setitem__(kind, runs.get(kind, 0) + 1))
    return runs


@pytest.mark.parametrize("node", ["C++", "Python"])
def test_split_mode(ops, monkeypatch, node):
    """A recorded call runs the augmented forward and its backward the reverse on the tape
    (in the C++ autograd node, or without it in the Python autograd.Function):
    gradients equal the direct C VJP and central differences (batched, a shared parameter,
    two outputs); each tape is reversed exactly once: by the backward, or when the graph is
    dropped without one; a second backward of a retained graph runs the combined VJP; an
    output changed in place since the forward falls back to it too. After a dropped tape the
    next recorded calls run the primal alone (a forward that is never differentiated costs no
    reverse pass), until one of them is differentiated (the combined VJP)."""
    import gc
    from enzyme_cc import torch_node
    sm, af, w = ops["smooth"], ops["affine"], rand(5, grad=False)
    if node == "Python":
        monkeypatch.setattr(torch_node, "plan", lambda *a: None)
        monkeypatch.setattr(af.fn, "_prepared", {})
    runs = _count_runs(monkeypatch, sm.fn)
    x, ct = rand(3, 5), rand(5, 3, grad=False).T.contiguous() + 0.5
    y = sm(x, w)
    assert y.grad_fn.name() == {"C++": "EnzymeCcSplitBackward",
                                "Python": "smooth_split_autogradBackward"}[node]
    assert runs == {"augfwd": 1}
    (g,) = torch.autograd.grad(y, x, ct, retain_graph=True)
    assert runs == {"augfwd": 1, "reverse": 1}
    direct = torch.from_numpy(sm.fn.vjp([x.detach().numpy(), w.numpy()], [ct.numpy()]))
    torch.testing.assert_close(g, direct, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(g, _central(sm, [x, w], ct, 0), rtol=1e-6, atol=1e-8)
    runs.clear()
    runs.update(augfwd=1, reverse=1)
    (g2,) = torch.autograd.grad(y, x, ct, retain_graph=True)
    (g3,) = torch.autograd.grad(y, x, 2 * ct)
    torch.testing.assert_close(g2, g, rtol=1e-14, atol=0)
    torch.testing.assert_close(g3, 2 * g, rtol=1e-14, atol=0)
    assert runs == {"augfwd": 1, "reverse": 1, "vjp": 2}
    del y
    gc.collect()
    assert runs == {"augfwd": 1, "reverse": 1, "vjp": 2}
    # dropped without a backward: the tape is reversed (freed) once, with zero cotangents
    y = sm(x, w)
    del y
    assert runs == {"augfwd": 2, "reverse": 2, "vjp": 2}
    # so the next recorded calls run the primal only, and a backward the combined VJP
    for _ in range(3):
        y = sm(x, w)
    assert y.requires_grad and runs == {"augfwd": 2, "reverse": 2, "vjp": 2, "primal": 3}
    torch.testing.assert_close(y, sm(x.detach(), w), rtol=0, atol=0)
    (g5,) = torch.autograd.grad(y, x, ct)
    torch.testing.assert_close(g5, g, rtol=1e-14, atol=0)
    assert runs == {"augfwd": 2, "reverse": 2, "vjp": 3, "primal": 4}
    # after which recorded calls keep their tapes again
    # an output changed in place: the combined VJP (from the saved inputs) and the tape freed
    y = sm(x, w)
    y.mul_(3)
    (g4,) = torch.autograd.grad(y, x, ct)
    torch.testing.assert_close(g4, 3 * g, rtol=1e-14, atol=0)
    assert runs == {"augfwd": 3, "reverse": 3, "vjp": 4, "primal": 4}
    # a batched input sharing a parameter, two float32 outputs, an unused output
    a, b = rand(4, dtype=torch.float32), rand(2, 4, dtype=torch.float32)
    ys, s = af(a, b)
    cy = rand(2, 4, grad=False, dtype=torch.float32)
    ga, gb = torch.autograd.grad((ys * cy).sum() + 3 * s.sum(), (a, b))
    da, db = af.fn.vjp([a.detach().numpy(), b.detach().numpy()],
                       [cy.numpy(), 3 * torch.ones(2, dtype=torch.float32).numpy()])
    torch.testing.assert_close((ga, gb), (torch.from_numpy(da), torch.from_numpy(db)))
    (gb2,) = torch.autograd.grad(af(a, b)[0].sum(), b)     # s unused: no cotangent
    torch.testing.assert_close(gb2, a.detach().expand(2, 4) + torch.tensor([[4.0, 0, 0, 0]] * 2))


def test_split_node_threads_and_saved_tensor_hooks(ops):
    """The C++ node from several threads at once, and under torch's saved-tensor hooks (which
    see the inputs it saves, as for torch's own nodes): the gradients of the direct VJP."""
    import threading
    sm, w = ops["smooth"], rand(5, grad=False)
    xs = [rand(2, 5) * (k + 1) for k in range(4)]
    want = [torch.from_numpy(sm.fn.vjp([x.detach().numpy(), w.numpy()],
                                       [torch.ones(2, 5, dtype=D).numpy()])) for x in xs]
    got, errors = [[] for _ in xs], []

    def work(k):
        try:
            for _ in range(50):
                got[k].append(torch.autograd.grad(sm(xs[k], w).sum(), xs[k])[0])
        except Exception as e:      # (re-raised below, on the test's thread)
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for g, ref in zip(got, want):
        assert len(g) == 50
        for gi in g:
            torch.testing.assert_close(gi, ref, rtol=1e-14, atol=1e-15)
    packed, unpacked = [], []
    with torch.autograd.graph.saved_tensors_hooks(
            lambda t: (packed.append(t.shape), t.clone())[1],
            lambda t: (unpacked.append(t.shape), t)[1]):
        y = sm(xs[0], w)
    assert y.grad_fn.name() == "EnzymeCcSplitBackward" and packed == [(2, 5), (5,)]
    (g,) = torch.autograd.grad(y.sum(), xs[0])
    assert unpacked == packed
    torch.testing.assert_close(g, want[0], rtol=1e-14, atol=1e-15)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * __import__("os").sysconf("SC_PAGE_SIZE")


def test_split_mode_frees_tapes(ops, monkeypatch):
    """1000 recorded calls of a kernel with a heap temporary (whose block and shadow the
    reverse frees) without a backward, each followed by one with a backward (so each runs split
    mode), and 1000 with one: RSS stays flat (each tape would keep ~0.5 MB)."""
    n = 20000
    sm, w = ops["smooth"], rand(n, grad=False)
    x = rand(n)
    for _ in range(50):
        sm(x, w)
        sm(x, w).sum().backward()
    before = _rss()
    runs = _count_runs(monkeypatch, sm.fn)
    for _ in range(1000):
        sm(x, w)
        sm(x, w).sum().backward()
    assert runs == {"augfwd": 1000, "reverse": 1000, "primal": 1000, "vjp": 1000}
    for _ in range(1000):
        sm(x, w).sum().backward()
    grown = _rss() - before
    assert grown < 32 << 20, f"RSS grew by {grown >> 20} MiB"


def test_no_copy_for_contiguous_inputs(ops, monkeypatch):
    x, seen = rand(6, grad=False), []
    _watch_runs(monkeypatch, ops["norm2"].fn, lambda _, ptr: seen.append(ptr))
    ops["norm2"](x)
    xg = x.clone().requires_grad_()
    ops["norm2"](xg).backward()     # split mode: the augmented forward, then the reverse
    assert seen == [x.data_ptr(), xg.data_ptr(), xg.data_ptr()]


def test_direct_and_traced_paths_agree(ops):
    """Calls go straight to C only when nothing records or traces them: no_grad and
    inference_mode give the recorded path's values, torch.jit.trace records the op (the trace
    generalizes to new inputs), lazily negated views are resolved, not read raw."""
    import warnings
    n2, sm, w = ops["norm2"], ops["smooth"], rand(5, grad=False)
    x = rand(5)
    with torch.no_grad():
        y0 = sm(x, w)
    with torch.inference_mode():
        y1 = sm(x.detach(), w)
    y2 = sm(x, w)
    assert y2.requires_grad and not y0.requires_grad
    torch.testing.assert_close(y0, y2, rtol=0, atol=0)
    torch.testing.assert_close(y1, y2, rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(lambda x: n2(x), x.detach())
        traced_op = torch.jit.trace(n2, x.detach())    # (the op itself: it has a name)
    z = rand(5, grad=False) + 1
    torch.testing.assert_close(traced(z), z.norm(), rtol=1e-14, atol=0)
    torch.testing.assert_close(traced_op(z), z.norm(), rtol=1e-14, atol=0)
    neg = torch._neg_view(z)
    torch.testing.assert_close(n2(neg), z.norm(), rtol=1e-14, atol=0)
    (g1,) = torch.autograd.grad(sm(x, w), x, torch._neg_view(torch.ones(5, dtype=D)))
    (g2,) = torch.autograd.grad(sm(x, w), x, -torch.ones(5, dtype=D))
    torch.testing.assert_close(g1, g2, rtol=0, atol=0)


def test_errors_name_the_argument(ops):
    w = rand(5, grad=False)
    with pytest.raises(ValueError, match="'x' is a torch.sparse_coo tensor"):
        ops["norm2"](rand(5, grad=False).to_sparse())
    with pytest.raises(TypeError, match="'x' has dtype torch.float32, expected torch.float64"):
        ops["smooth"](rand(5, dtype=torch.float32), w)
    with pytest.raises(ffi.SignatureError, match="'w' has shape \\(4,\\), expected \\(5,\\)"):
        ops["smooth"](rand(5), rand(4, grad=False))
    with pytest.raises(ValueError, match="'x' is on device meta; .* pass a CPU tensor"):
        ops["smooth"](torch.empty(5, dtype=D, device="meta"), w)
    with pytest.raises(TypeError, match="'w' must be a torch.Tensor"):
        ops["smooth"](rand(5), [1.0] * 5)
    with pytest.raises(RuntimeError, match="input 'w' was requested, but it is declared"):
        ops["smooth"](rand(5), rand(5)).sum().backward()


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "python"


@pytest.fixture
def examples_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def test_example_fit_oscillator(examples_path):
    import fit_oscillator_torch
    from oscillator import SIMULATE, SOURCE
    sim = et.op(SIMULATE, sources=[SOURCE])
    assert torch.autograd.gradcheck(lambda p, s: sim(p, s, steps=30),
                                    (torch.tensor([1.7, 0.15, 0.8], dtype=D, requires_grad=True),
                                     torch.tensor([1.0, 0.2], dtype=D, requires_grad=True)))
    losses = fit_oscillator_torch.main(iters=30)
    assert losses[-1] < 0.2 * losses[0]


def test_example_cxx_layer(examples_path):
    import cxx_layer_torch
    layer = cxx_layer_torch.TanhPool(3, 4)
    assert torch.autograd.gradcheck(lambda x, W, b: layer.op(x, W, b),
                                    (rand(2, 3), layer.W.detach().clone().requires_grad_(),
                                     rand(4)))
    losses = cxx_layer_torch.main(iters=20)
    assert losses[-1] < 0.8 * losses[0]


def test_views_and_vmap_over_a_later_axis(ops):
    """Non-contiguous views (strided, transposed, expanded) are read as torch's own ops read
    them, gradients flowing back into the view's base; torch.func.vmap with in_dims=1 (and under
    grad) maps the axis the user names."""
    n2, sm = ops["norm2"], ops["smooth"]
    base = rand(10)
    x = base[::2]
    w = rand(5, grad=False)
    torch.testing.assert_close(sm(x, w), sm(x.detach().contiguous(), w))
    sm(x, w).sum().backward()
    want = torch.zeros(10, dtype=D)
    xc = x.detach().clone().requires_grad_()
    sm(xc, w).sum().backward()
    want[::2] = xc.grad
    torch.testing.assert_close(base.grad, want)
    m = rand(6, 4, grad=False)
    torch.testing.assert_close(n2(m.t()), m.t().norm(dim=1))
    torch.testing.assert_close(n2(rand(5, grad=False).expand(3, 5)),
                               rand(5, grad=False).norm().expand(3))
    torch.testing.assert_close(torch.func.vmap(n2, in_dims=1)(m), m.norm(dim=0))
    g = torch.func.vmap(torch.func.grad(n2), in_dims=1)(m)
    torch.testing.assert_close(g, (m / m.norm(dim=0)).t())



@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint(ops, reentrant):
    """torch.utils.checkpoint around the ops (use_reentrant=False is torch's recommended mode):
    the same gradient as without it."""
    from torch.utils.checkpoint import checkpoint
    sm, n2 = ops["smooth"], ops["norm2"]
    w = rand(5, grad=False)
    x = rand(3, 5)
    checkpoint(lambda x: n2(sm(x, w)).sum(), x, use_reentrant=reentrant).backward()
    x2 = x.detach().clone().requires_grad_()
    n2(sm(x2, w)).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=1e-14, atol=0)


COMPLEX_SRC = """
#include <complex.h>
/* y_i = z_i^2 w + conj(z_i) x_i + sin(z_i): complex inputs z, w, a real input x */
void cfun(const double _Complex *z, const double _Complex *w, const double *x, int n,
          double _Complex *y) {
  for (int i = 0; i < n; i++) y[i] = z[i] * z[i] * w[0] + conj(z[i]) * x[i] + csin(z[i]);
}
"""


def _complex_sig(z="complex128", y="complex128"):
    return ffi.Signature("cfun", [ffi.In("z", ("n",), z), ffi.In("w", (1,), "complex128"),
                                  ffi.In("x", ("n",)), ffi.Int("n"), ffi.Out("y", ("n",), y)])


def test_complex_tensors():
    """complex128 tensors: the C function gets `double _Complex *`; gradients follow torch's
    convention for complex inputs (dL/dRe + i dL/dIm), so they match torch's own autograd, and
    forward mode matches torch.func.jvp."""
    f = et.op(ffi.function(_complex_sig(), source=COMPLEX_SRC))
    z = rand(5, dtype=torch.complex128)
    w = rand(1, dtype=torch.complex128)
    x = rand(5)

    def ref(z, w, x):
        return z * z * w[0] + z.conj() * x + torch.sin(z)
    torch.testing.assert_close(f(z, w, x), ref(z, w, x), rtol=1e-14, atol=1e-14)
    assert torch.autograd.gradcheck(f, (z, w, x))
    g = rand(5, grad=False, dtype=torch.complex128)
    for a, b in zip(torch.autograd.grad(f(z, w, x), (z, w, x), g),
                    torch.autograd.grad(ref(z, w, x), (z, w, x), g)):
        torch.testing.assert_close(a, b, rtol=1e-13, atol=1e-13)
    primals = (z.detach(), w.detach(), x.detach())
    tangents = (rand(5, grad=False, dtype=torch.complex128),
                rand(1, grad=False, dtype=torch.complex128), rand(5, grad=False))
    torch.testing.assert_close(torch.func.jvp(f, primals, tangents)[1],
                               torch.func.jvp(ref, primals, tangents)[1], rtol=1e-13, atol=1e-13)


def test_conjugated_views():
    """torch's lazily conjugated tensors (x.conj(): a flag, the data unchanged) as inputs, and
    as the cotangent a loss written with y.conj() hands the backward: the C code read the raw
    data (op(z.conj()) gave f(z); |y|^2's gradient came out conjugated)."""
    f = et.op(ffi.function(_complex_sig(), source=COMPLEX_SRC))
    z, w, x = rand(5, dtype=torch.complex128), rand(1, dtype=torch.complex128), rand(5)

    def ref(z, w, x):
        return z * z * w[0] + z.conj() * x + torch.sin(z)
    torch.testing.assert_close(f(z.conj(), w, x), ref(z.conj(), w, x), rtol=1e-14, atol=1e-14)
    for loss in (lambda y: (y.conj() * y).real.sum(), lambda y: (y.conj() * y.sin()).real.sum()):
        got = torch.autograd.grad(loss(f(z, w, x)), (z, w, x))
        want = torch.autograd.grad(loss(ref(z, w, x)), (z, w, x))
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("z,y,culprit", [("float64", "complex128", "'z'"),
                                         ("complex64", "complex128", "'z'"),
                                         ("complex128", "float64", "'y'")])
def test_complex_signature_checked_against_the_prototype(z, y, culprit):
    with pytest.raises(ffi.SignatureError, match=f"argument {culprit} is `(const )?complex "
                                                 "double \\*` in C"):
        ffi.function(_complex_sig(z, y), source=COMPLEX_SRC)


def test_op_from_the_function_name():
    """No Signature: the compiled prototype says inputs, outputs, sizes and scalars (here a
    `const double *`, a write-only `double *`, an int and a double by value)."""
    src = r"""
#include <math.h>
double spring(const double *x, int n, double k, double *f) {
  double e = 0;
  for (int i = 0; i + 1 < n; i++) { double d = x[i + 1] - x[i] - 1; e += 0.5 * k * d * d; }
  for (int i = 0; i < n; i++) f[i] = sin(x[i]) * k;
  return e;
}
"""
    op = et.op("spring", source=src, shapes={"x": ("n",), "f": ("n",)})
    assert [type(a).__name__ for a in op.sig.args] == ["In", "Int", "In", "Out"]
    x = torch.tensor([0.1, 1.3, 2.0, 3.4], dtype=torch.float64, requires_grad=True)
    k = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, k: op(x, k), (x, k))
    f, e = op(x, k)
    d = x[1:] - x[:-1] - 1
    torch.testing.assert_close(e, (0.5 * k * d * d).sum())
