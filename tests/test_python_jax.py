"""enzyme_cc.jax: check_grads (forward and reverse) on C, C++ and Fortran functions, jit, vmap
against a Python loop, jacfwd/jacrev, and the errors naming the argument."""
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from enzyme_cc import ffi  # noqa: E402
import enzyme_cc.jax as ej  # noqa: E402
from ffi_kernels import (AFFINE, C_SRC, CUBIC, CXX_SRC, F_SRC, NORM2, SMOOTH,  # noqa: E402
                         SOFTMAX)


@pytest.fixture(scope="module", params=["-O0", "-O2"])
def ops(request):
    lib = ffi.build([NORM2, SMOOTH, AFFINE], source=C_SRC, flags=(request.param,))
    return {name: ej.op(lib[name]) for name in ("norm2", "smooth", "affine")}


def rand(*shape, seed=0, dtype=np.float64):
    return jnp.asarray(np.random.default_rng(seed + sum(shape)).standard_normal(shape), dtype)


def test_check_grads_c(ops):
    x, w = rand(5), rand(5, seed=1)
    check_grads(ops["norm2"], (x,), order=1, modes=["fwd", "rev"])
    check_grads(lambda x: ops["smooth"](x, w), (x,), order=1, modes=["fwd", "rev"])
    assert float(ops["norm2"](x)) == pytest.approx(float(jnp.linalg.norm(x)), rel=1e-14)
    np.testing.assert_allclose(jax.grad(ops["norm2"])(x), x / jnp.linalg.norm(x), rtol=1e-14)


def test_numpy_64bit_arrays_without_x64():
    """Without jax_enable_x64, JAX makes a NumPy float64 (int64) array 32-bit when the
    primitive runs: an eager call checked the NumPy dtype and the C code read 32-bit data as
    64-bit (wrong numbers, a read past the buffer, a fault with int64 indices)."""
    import subprocess
    import sys
    code = (
        "import jax, numpy as np, pytest\n"
        "from enzyme_cc import ffi\n"
        "import enzyme_cc.jax as ej\n"
        "from ffi_kernels import C_SRC, NORM2\n"
        "op = ej.op(ffi.build([NORM2], source=C_SRC)['norm2'])\n"
        "with pytest.raises(TypeError, match='float64 .JAX makes it float32., expected float64'):\n"
        "    op(np.arange(4.0))\n"
        "print('refused')\n")
    import os
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=os.path.dirname(__file__), env=dict(os.environ, JAX_ENABLE_X64="0"))
    assert r.stdout.strip() == "refused", r.stdout + r.stderr


def test_float32(ops):
    a, b = rand(4, dtype=np.float32), rand(4, seed=2, dtype=np.float32)
    ga, gb = jax.grad(lambda a, b: (lambda y, s: y.sum() + 2 * s)(*ops["affine"](a, b)),
                      argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b + 4 * a, rtol=1e-6)
    np.testing.assert_allclose(gb, a + jnp.array([4.0, 0, 0, 0]), rtol=1e-6)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_check_grads_cxx_and_fortran(opt):
    sm = ej.op(SOFTMAX, source=CXX_SRC, lang="c++", flags=(opt,))
    cu = ej.op(CUBIC, source=F_SRC, lang="fortran", flags=(opt,))
    check_grads(sm, (rand(5),), order=1, modes=["fwd", "rev"])
    check_grads(cu, (rand(3), rand(4)), order=1, modes=["fwd", "rev"])
    # a parameter shared by a batch: its gradient sums over the batch
    check_grads(cu, (rand(3), rand(2, 4)), order=1, modes=["fwd", "rev"])


def test_eager_and_disable_jit(ops):
    """Eager calls go through a jitted call of the primitive (compiled once per set of
    integers); under jax.disable_jit() the custom call is dispatched directly. Same values."""
    x, w = rand(5), rand(5, seed=4)
    eager = ops["smooth"](x, w)
    np.testing.assert_allclose(eager, jax.jit(ops["smooth"])(x, w), rtol=1e-15)
    g = jax.grad(lambda x: ops["smooth"](x, w).sum())(x)
    with jax.disable_jit():
        np.testing.assert_allclose(ops["smooth"](x, w), eager, rtol=1e-15)
        np.testing.assert_allclose(jax.grad(lambda x: ops["smooth"](x, w).sum())(x), g,
                                   rtol=1e-15)
    assert float(ops["norm2"](np.asarray(x))) == pytest.approx(float(jnp.linalg.norm(x)))


def test_jit_vmap_jacobians(ops):
    xs, w = rand(3, 5), rand(5, seed=3)
    f = jax.jit(lambda x: ops["smooth"](x, w))
    loop = jnp.stack([ops["smooth"](x, w) for x in xs])
    np.testing.assert_allclose(jax.vmap(f)(xs), loop, rtol=1e-15)
    np.testing.assert_allclose(f(xs), loop, rtol=1e-15)          # the C batch loop
    jr, jf = jax.jit(jax.jacrev(f))(xs[0]), jax.jit(jax.jacfwd(f))(xs[0])
    np.testing.assert_allclose(jr, jf, rtol=1e-13)
    eps = 1e-6
    fd = jnp.stack([(f(xs[0] + eps * e) - f(xs[0] - eps * e)) / (2 * eps)
                    for e in jnp.eye(5)], axis=1)
    np.testing.assert_allclose(jr, fd, rtol=1e-6, atol=1e-8)
    g = jax.vmap(jax.grad(ops["norm2"]))(xs)
    np.testing.assert_allclose(g, xs / jnp.linalg.norm(xs, axis=1, keepdims=True), rtol=1e-14)
    # vmap over an already batched call, with a shared argument
    cu = ej.op(CUBIC, source=F_SRC, lang="fortran")
    p, xb = rand(4, 3), rand(2, 5)
    out = jax.vmap(lambda p: cu(p, xb))(p)
    np.testing.assert_allclose(out, jnp.stack([cu(q, xb) for q in p]), rtol=1e-15)
    gp = jax.vmap(jax.grad(lambda p: cu(p, xb).sum()))(p)
    np.testing.assert_allclose(gp, jnp.stack([jax.grad(lambda q: cu(q, xb).sum())(q) for q in p]),
                               rtol=1e-13)


def test_jit_call_has_no_python_callback(ops):
    hlo = jax.jit(ops["norm2"]).lower(rand(5)).as_text()
    assert "enzyme_cc_call" in hlo and "callback" not in hlo


def test_second_order_is_refused(ops):
    with pytest.raises(NotImplementedError, match="second derivatives need .* order=2"):
        jax.hessian(ops["norm2"])(rand(3))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_second_order(opt):
    """order=2: check_grads order 2 in both modes (forward over forward, forward over reverse
    and the transposes), Hessians against the analytic one and FD, third order refused."""
    lib = ffi.build([NORM2, SMOOTH, AFFINE], source=C_SRC, flags=(opt,), order=2)
    n2, sm, af = ej.op(lib["norm2"]), ej.op(lib["smooth"]), ej.op(lib["affine"])
    cu = ej.op(CUBIC, source=F_SRC, lang="fortran", flags=(opt,), order=2)
    x, w = rand(5), rand(5, seed=1)
    check_grads(n2, (x,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: sm(x, w), (x,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: sm(x, w), (rand(3, 5),), order=2, modes=["fwd", "rev"])
    check_grads(cu, (rand(3), rand(2, 4)), order=2, modes=["fwd", "rev"])
    r = jnp.linalg.norm(x)
    exact = (jnp.eye(5) - jnp.outer(x, x) / r ** 2) / r
    for hess in (jax.hessian(n2), jax.jacfwd(jax.jacfwd(n2)), jax.jacrev(jax.jacrev(n2)),
                 jax.jacrev(jax.jacfwd(n2))):
        np.testing.assert_allclose(jax.jit(hess)(x), exact, rtol=1e-12, atol=1e-14)
    J, eps = jax.jacrev(lambda x: sm(x, w)), 1e-6
    fd = jnp.stack([(J(x + eps * e) - J(x - eps * e)) / (2 * eps) for e in jnp.eye(5)], axis=-1)
    np.testing.assert_allclose(jax.hessian(lambda x: sm(x, w))(x), fd, rtol=1e-6, atol=1e-7)
    # vmap of a Hessian runs the batch loop in C
    xs = rand(3, 5)
    np.testing.assert_allclose(jax.vmap(jax.hessian(n2))(xs),
                               jnp.stack([jax.hessian(n2)(v) for v in xs]), rtol=1e-13)
    # two float32 outputs (y = a*b + b[0], s = |a|^2), one unused: analytic Hessian blocks
    a, b = rand(4, dtype=np.float32), rand(4, seed=5, dtype=np.float32)
    H = jax.hessian(lambda a, b: (lambda y, s: y.sum() + 2 * s)(*af(a, b)), argnums=(0, 1))(a, b)
    eye = np.eye(4, dtype=np.float32)
    for got, want in zip((H[0][0], H[0][1], H[1][0], H[1][1]), (4 * eye, eye, eye, 0 * eye)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(jax.hessian(lambda a: af(a, b)[1])(a), 2 * eye, atol=1e-6)
    with pytest.raises(NotImplementedError, match="enzyme_cc_(vjp|jvp)_jvp"):
        jax.jacfwd(jax.hessian(n2))(x)


def test_errors_name_the_argument(ops):
    w = rand(5)
    with pytest.raises(TypeError, match="'x' has dtype float32, expected float64"):
        ops["smooth"](rand(5, dtype=np.float32), w)
    with pytest.raises(ffi.SignatureError, match="'w' has shape \\(4,\\), expected \\(5,\\)"):
        ops["smooth"](rand(5), rand(4))
    with pytest.raises(TypeError, match="'w' must be an array"):
        ops["smooth"](rand(5), [1.0] * 5)
    with pytest.raises(ValueError, match="input 'w' was requested, but it is declared"):
        jax.grad(lambda w: ops["smooth"](rand(5), w).sum())(w)


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "python"


def test_example_fit_oscillator(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import fit_oscillator_jax
    from oscillator import SIMULATE, SOURCE
    sim = ej.op(SIMULATE, sources=[SOURCE])
    check_grads(lambda p, s: sim(p, s, steps=30), (jnp.array([1.7, 0.15, 0.8]),
                                                   jnp.array([1.0, 0.2])),
                order=1, modes=["fwd", "rev"])
    losses = fit_oscillator_jax.main(iters=60)
    assert losses[-1] < 0.5 * losses[0]


def test_traced_int_is_named(ops):
    """An integer argument traced under jit is refused naming it, with the fix; static, it
    works."""
    x = rand(5)
    with pytest.raises(TypeError, match=r"integer argument 'n' is a traced value.*static_argnames"):
        jax.jit(lambda x, n: ops["norm2"](x, n=n))(x, 5)
    f = jax.jit(lambda x, n: ops["norm2"](x, n=n), static_argnames="n")
    np.testing.assert_allclose(f(x, n=5), jnp.linalg.norm(x), rtol=1e-14)


COMPLEX_SRC = r"""
#include <complex.h>
void cfun(const double _Complex *z, const double *a, int n, double _Complex *y, double *r) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    y[i] = z[i] * z[i] * cexp(a[i] * z[i]);
    s += creal(z[i]) * creal(z[i]) + cimag(z[i]) * cimag(z[i]) * a[i];
  }
  *r = s;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_complex_in_jax_convention(opt):
    """complex128 inputs and outputs: values, and derivatives in JAX's convention (its
    cotangents are the conjugates of the C code's real-pair ones): against the same function
    in jax.numpy, jax.grad of a real loss, check_grads in both modes."""
    sig = ffi.Signature("cfun", [ffi.In("z", ("n",), "complex128"), ffi.In("a", ("n",)),
                                 ffi.Int("n"), ffi.Out("y", ("n",), "complex128"),
                                 ffi.Out("r", ())])
    op = ej.op(sig, source=COMPLEX_SRC, flags=(opt,))

    def ref(z, a):
        return z * z * jnp.exp(a * z), jnp.sum(z.real ** 2 + z.imag ** 2 * a)
    z = rand(4) + 1j * rand(4, seed=5)
    a = rand(4, seed=6)
    for got, want in zip(op(z, a), ref(z, a)):
        np.testing.assert_allclose(got, want, rtol=1e-13)

    def loss(f):
        return lambda z, a: jnp.sum(jnp.abs(f(z, a)[0]) ** 2) + f(z, a)[1]
    gz, ga = jax.grad(loss(op), argnums=(0, 1))(z, a)
    wz, wa = jax.grad(loss(ref), argnums=(0, 1))(z, a)
    np.testing.assert_allclose(gz, wz, rtol=1e-12)
    np.testing.assert_allclose(ga, wa, rtol=1e-12)
    check_grads(op, (z, a), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_complex_second_order(opt):
    """order=2 with complex data: the Hessian of a real loss against jax.numpy's, and
    check_grads of order 2 in both modes (forward over reverse through the reverse of cexp and
    complex products, whose result adjoints are {double, double} arguments)."""
    sig = ffi.Signature("cfun", [ffi.In("z", ("n",), "complex128"), ffi.In("a", ("n",)),
                                 ffi.Int("n"), ffi.Out("y", ("n",), "complex128"),
                                 ffi.Out("r", ())])
    op = ej.op(sig, source=COMPLEX_SRC, flags=(opt,), order=2)

    def ref(z, a):
        return z * z * jnp.exp(a * z), jnp.sum(z.real ** 2 + z.imag ** 2 * a)

    def loss(f):
        return lambda z, a: jnp.sum(jnp.abs(f(z, a)[0]) ** 2) + f(z, a)[1]
    z = rand(4) + 1j * rand(4, seed=5)
    a = rand(4, seed=6)
    v = rand(4, seed=9) + 1j * rand(4, seed=10)
    got = jax.jvp(lambda z: jax.grad(loss(op))(z, a), (z,), (v,))[1]
    want = jax.jvp(lambda z: jax.grad(loss(ref))(z, a), (z,), (v,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(jax.hessian(loss(op), argnums=1)(z, a),
                               jax.hessian(loss(ref), argnums=1)(z, a), rtol=1e-10)
    check_grads(op, (z, a), order=2, modes=["fwd", "rev"])


def test_op_from_the_function_name():
    """No Signature: the compiled prototype says inputs (const), outputs (write only), sizes."""
    src = r"""
#include <math.h>
void smooth_abs(const double *x, int n, double *y) {
  for (int i = 0; i < n; i++) y[i] = sqrt(x[i] * x[i] + 0.01);
}
"""
    op = ej.op("smooth_abs", source=src, shapes={"x": ("n",), "y": ("n",)})
    x = rand(6)
    np.testing.assert_allclose(op(x), jnp.sqrt(x * x + 0.01), rtol=1e-14)
    check_grads(op, (x,), order=1, modes=["fwd", "rev"])
