"""enzyme_cc.ffi: declared signatures built with enzyme-cc, their primal/VJP/JVP entry points
checked against analytic values and central finite differences, the cache, and the errors."""
import os

import pytest

np = pytest.importorskip("numpy")
from enzyme_cc import ffi  # noqa: E402
from enzyme_cc.ffi import In, Int, Out, Ret, SignatureError  # noqa: E402
from ffi_kernels import (AFFINE, C_SRC, CUBIC, CXX_SRC, F_SRC, NORM2, SMOOTH,  # noqa: E402
                         SOFTMAX)

OPT = ["-O0", "-O2"]


@pytest.fixture(scope="module", params=OPT)
def lib(request):
    return ffi.build([NORM2, SMOOTH, AFFINE], source=C_SRC, flags=(request.param,))


def fd_jacobian(f, x, h=1e-6):
    """Central differences of f (array -> array) at x: J[i, j] = d f_i / d x_j."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = h
        cols.append((np.ravel(f(x + e)) - np.ravel(f(x - e))) / (2 * h))
    return np.stack(cols, axis=1)


def check_derivatives(fn, inputs, k, rtol=1e-6):
    """VJP and JVP of fn with respect to input k against finite differences, both modes."""
    rng = np.random.default_rng(0)

    def f(xk):
        args = list(inputs)
        args[k] = xk
        out = fn(*args)
        return np.concatenate([np.ravel(o) for o in (out if isinstance(out, tuple) else (out,))])
    J = fd_jacobian(f, inputs[k])
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    cts = [rng.standard_normal(o.shape) for o in outs]
    grads = fn.vjp(inputs, cts)
    diff = [i for i, a in enumerate(fn.sig.inputs) if a.diff]
    g = (grads if isinstance(grads, tuple) else (grads,))[diff.index(k)]
    assert g.shape == inputs[k].shape
    np.testing.assert_allclose(np.ravel(g), np.concatenate([np.ravel(c) for c in cts]) @ J,
                               rtol=rtol, atol=1e-8)
    ts = [np.zeros_like(inputs[i]) for i in diff]
    ts[diff.index(k)] = rng.standard_normal(inputs[k].shape)
    tout = fn.jvp(inputs, ts)
    tout = tout if isinstance(tout, tuple) else (tout,)
    np.testing.assert_allclose(np.concatenate([np.ravel(t) for t in tout]),
                               J @ np.ravel(ts[diff.index(k)]), rtol=rtol, atol=1e-8)


def test_scalar_output(lib):
    x = np.array([1.0, -2.0, 3.0, 0.5])
    assert lib.norm2(x) == pytest.approx(np.linalg.norm(x), rel=1e-14)
    np.testing.assert_allclose(lib.norm2.vjp([x], [np.array(1.0)]), x / np.linalg.norm(x),
                               rtol=1e-14)
    check_derivatives(lib.norm2, [x], 0)


def test_vector_output_with_loop_and_malloc(lib):
    x, w = np.array([0.3, -1.2, 2.0, 0.7, 1.1]), np.array([0.5, 2.0, -1.0, 3.0, 1.5])
    t = np.sin(x) * w
    np.testing.assert_allclose(lib.smooth(x, w), t * np.roll(t, -1) + np.exp(0.1 * x),
                               rtol=1e-14)
    check_derivatives(lib.smooth, [x, w], 0)


def test_float32_two_outputs(lib):
    a = np.array([0.5, -1.0, 2.0], np.float32)
    b = np.array([1.5, 0.25, -2.0], np.float32)
    y, s = lib.affine(a, b)
    np.testing.assert_allclose(y, a * b + b[0], rtol=1e-6)
    assert s == pytest.approx(float(a @ a), rel=1e-6)
    ga, gb = lib.affine.vjp([a, b], [np.ones(3, np.float32), np.array(2.0, np.float32)])
    np.testing.assert_allclose(ga, b + 4 * a, rtol=1e-6)
    np.testing.assert_allclose(gb, a + np.array([3, 0, 0]), rtol=1e-6)


def test_batch_is_looped_in_c(lib):
    rng = np.random.default_rng(1)
    xs, w = rng.standard_normal((4, 5)), rng.standard_normal(5)
    np.testing.assert_allclose(lib.smooth(xs, w), np.stack([lib.smooth(x, w) for x in xs]),
                               rtol=1e-15)
    cts = rng.standard_normal((4, 5))
    np.testing.assert_allclose(lib.smooth.vjp([xs, w], [cts]),
                               np.stack([lib.smooth.vjp([x, w], [c]) for x, c in zip(xs, cts)]),
                               rtol=1e-15)
    # an input shared by the batch gets the sum of the items' cotangents
    x = xs[0]
    np.testing.assert_allclose(lib.norm2.vjp([np.stack([x, 2 * x])], [np.ones(2)]),
                               np.stack([x, x]) / np.linalg.norm(x), rtol=1e-14)


@pytest.mark.parametrize("opt", OPT)
def test_cxx_std_vector(opt):
    sm = ffi.function(SOFTMAX, source=CXX_SRC, lang="c++", flags=(opt,))
    x = np.array([0.1, 0.5, -0.3, 1.2])
    np.testing.assert_allclose(sm(x), np.exp(x) / np.exp(x).sum(), rtol=1e-14)
    check_derivatives(sm, [x], 0)


@pytest.mark.parametrize("opt", OPT)
def test_fortran(opt):
    cu = ffi.function(CUBIC, source=F_SRC, lang="fortran", flags=(opt,))
    p, x = np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.5, -0.3])
    np.testing.assert_allclose(cu(p, x), p[0] * x**3 + p[1] * np.sin(x) + p[2], rtol=1e-14)
    check_derivatives(cu, [p, x], 0)
    check_derivatives(cu, [p, x], 1)


def test_source_files_and_cache(tmp_path):
    (tmp_path / "k.c").write_text(C_SRC)
    first = ffi.build([NORM2], sources=[tmp_path / "k.c"])
    built = os.stat(first.path).st_mtime_ns
    again = ffi.build([NORM2], sources=[tmp_path / "k.c"])
    assert again.path == first.path and os.stat(again.path).st_mtime_ns == built  # not rebuilt
    (tmp_path / "k.c").write_text(C_SRC.replace("sqrt(s)", "sqrt(s) * 2"))
    changed = ffi.build([NORM2], sources=[tmp_path / "k.c"])
    assert changed.path != first.path
    assert changed.norm2(np.array([3.0, 4.0])) == pytest.approx(10.0)


HEADER_SRC = """#include "coef.h"
void scaled(const double *x, int n, double *out) {
  double s = 0;
  for (int i = 0; i < n; i++) s += COEF * x[i] * x[i];
  *out = s;
}
"""


@pytest.mark.parametrize("where", ["beside", "include_path"])
def test_included_header_is_found_and_its_edit_rebuilds(tmp_path, where):
    """A header beside the source (found as `#include "coef.h"` finds it in a plain compile:
    the build compiles a copy elsewhere, and it was not found) or on the -I path: editing it
    builds again, where the cached library kept the old value (a wrong result)."""
    inc = tmp_path if where == "beside" else tmp_path / "inc"
    inc.mkdir(exist_ok=True)
    (tmp_path / "f.c").write_text(HEADER_SRC)
    flags = ["-O2"] + ([f"-I{inc}"] if where == "include_path" else [])
    sig = ffi.Signature("scaled", [In("x", ("n",)), Int("n"), Out("out", ())])
    x = np.array([1.0, 2.0, 3.0])
    for coef in (1.0, 3.0, 1.0):
        (inc / "coef.h").write_text(f"#define COEF {coef}\n")
        lib = ffi.build([sig], sources=[tmp_path / "f.c"], flags=flags)
        assert lib.scaled(x) == pytest.approx(14.0 * coef)
        grad = lib.scaled.vjp([x], [np.array(1.0)])      # (a single input: its cotangent)
        assert grad == pytest.approx(2 * coef * x)


def test_compiler_error_carries_enzyme_cc_message():
    with pytest.raises(ffi.BuildError, match=r"error: .*undeclared identifier 'zz'"):
        ffi.build([NORM2], source="double norm2(const double *x, int n) { return zz; }")


def test_compiler_error_names_the_users_file(tmp_path):
    """The compiler's message points at the user's source file, not at the build's copy."""
    src = tmp_path / "broken.c"
    src.write_text("double norm2(const double *x, int n) { return x[0] + ; }\n")
    with pytest.raises(ffi.BuildError) as e:
        ffi.build([NORM2], sources=[src])
    assert f"{src}:1:" in str(e.value) and "expected expression" in str(e.value), str(e.value)


def test_missing_function_is_a_build_error():
    with pytest.raises(ffi.BuildError, match="'norm2' is not defined in the given sources"):
        ffi.build([NORM2], source="double other(double x) { return x; }")


@pytest.mark.parametrize("sig,src,message", [
    # float64 declared for a C `float *`: read as doubles, it gave [256, 512, 0, 0]
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("y", ("n",))]),
     "void sq(const float *x, int n, float *y) { for (int i = 0; i < n; i++) y[i] = x[i] * x[i]; }",
     "argument 'x' is `const float \\*` in C, but In declares dtype 'float64'"),
    # an Out of float32 where C writes doubles: heap corruption
    (ffi.Signature("sq", [In("x", ("n",), "float32"), ffi.Int("n"), Out("y", ("n",), "float32")]),
     "void sq(const float *x, int n, double *y) { for (int i = 0; i < n; i++) y[i] = x[i]; }",
     "argument 'y' is `double \\*` in C, but Out declares dtype 'float32'"),
    # a by-value double declared as an array
    (ffi.Signature("scale", [In("x", ("n",)), In("a", (2,)), ffi.Int("n"), Out("y", ("n",))]),
     "void scale(const double *x, double a, int n, double *y) { for (int i = 0; i < n; i++) y[i] = a * x[i]; }",
     "argument 'a' is `double` in C, passed by value, but In declares a pointer .*"
     "In\\('a', \\(\\)\\)"),
    (ffi.Signature("scale", [In("x", ("n",)), In("a", (), "float32"), ffi.Int("n"),
                             Out("y", ("n",))]),
     "void scale(const double *x, double a, int n, double *y) { for (int i = 0; i < n; i++) y[i] = a * x[i]; }",
     "argument 'a' is `double` in C, passed by value, but In declares dtype 'float32'"),
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n", "int64_t"), Out("y", ("n",))]),
     "void sq(const double *x, int n, double *y) { for (int i = 0; i < n; i++) y[i] = x[i]; }",
     "argument 'n' is `int` in C, but Int declares int64_t"),
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("y", ("n",))]),
     "void sq(const double *x, int n, const double *y) { }",
     "argument 'y' is `const double \\*` in C \\(read only\\), but Out declares it written"),
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n")], ret=ffi.Ret("r")),
     "void sq(const double *x, int n) { }", "it returns void, but Ret declares double"),
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("y", ("n",))]),
     "void sq(const double *x, double *y) { }", "with 2 argument\\(s\\), but the signature declares 3"),
    # an output left out, the only input declared Out: the argument is named, not "declares
    # no output" / "no differentiable input"
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n")]),
     "void sq(const double *x, int n, double *y) { }", "with 3 argument\\(s\\), but the signature declares 2"),
    (ffi.Signature("sq", [Out("x", ("n",)), ffi.Int("n"), Out("y", ("n",))]),
     "void sq(const double *x, int n, double *y) { for (int i = 0; i < n; i++) y[i] = x[i]; }",
     "argument 'x' is `const double \\*` in C \\(read only\\), but Out declares it written"),
    # two arrays of one type swapped (C's names are in the debug info): every type check passed,
    # then the C code read and wrote n x n elements of an n-element buffer (heap corruption)
    (ffi.Signature("quad", [In("v", ("n",)), In("A", ("n", "n")), ffi.Int("n")], ret=ffi.Ret("s")),
     "double quad(const double *A, const double *v, int n) { double s = 0; "
     "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) s += v[i] * A[i * n + j] * v[j]; "
     "return s; }",
     r"argument 'v' is parameter 2 in C, but the signature declares it as argument 1 \(where C "
     r"has 'A'\): declare the arguments in C's order \(A, v, n\)"),
    # the same swap under names of one's own: C read 1000 doubles from a 2-element buffer
    (ffi.Signature("quad", [In("vec", ("n",)), In("mat", ("n", "n")), ffi.Int("n")],
                   ret=ffi.Ret("s")),
     "double quad(const double *A, const double *v, int n) { double s = 0; "
     "for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) s += v[i] * A[i * n + j] * v[j]; "
     "return s; }",
     r"argument 1 is 'A' in C, but the signature names it 'vec': use C's names, in C's order "
     r"\(A, v, n\)"),
    # a double returned, no Ret: the value and its derivative were dropped in silence
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("y", ("n",))]),
     "double sq(const double *x, int n, double *y) { double s = 0; for (int i = 0; i < n; i++) "
     "{ y[i] = x[i] * x[i]; s += y[i]; } return s; }",
     r"it returns double, but the signature declares no Ret .*add ret=Ret\(\"name\"\)"),
    # an In the function writes: the caller's tensor changed, JAX gave another result per call
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("s", ())]),
     "void sq(double *x, int n, double *s) { double a = 0; for (int i = 0; i < n; i++) "
     "{ a += x[i] * x[i]; x[i] *= 2; } *s = a; }",
     "argument 'x' is `double \\*` in C and the function writes through it, but In declares it "
     "read only"),
    # the same through a `const double *` whose const the function casts away: the caller's
    # array doubled, and a second vjp at it gave twice the gradient
    (ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("s", ())]),
     "void sq(const double *x, int n, double *s) { double *p = (double *)x, a = 0; "
     "for (int i = 0; i < n; i++) { p[i] *= 2; a += p[i] * p[i]; } *s = a; }",
     "argument 'x' is `const double \\*` in C and the function writes through it \\(casting "
     "the const away\\), but In declares it read only"),
])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_signature_contradicting_the_prototype_is_refused(sig, src, message, opt):
    """The compiler knows the prototype: a Signature that contradicts it is refused before any
    call, naming the argument (it gave wrong numbers, heap corruption or an internal error)."""
    with pytest.raises(ffi.SignatureError, match=message):
        ffi.build([sig], source=src, flags=(opt,))


def test_input_without_const_that_is_only_read():
    """A pointer C code forgot to make const is an In when the function only reads it."""
    sig = ffi.Signature("sq", [In("x", ("n",)), ffi.Int("n"), Out("s", ())])
    f = ffi.function(sig, source="void sq(double *x, int n, double *s) { double a = 0; "
                                 "for (int i = 0; i < n; i++) a += x[i] * x[i]; *s = a; }")
    x = np.array([1.0, 2.0, 3.0])
    assert f(x) == 14.0
    np.testing.assert_allclose(f.vjp([x], [np.array(1.0)]), 2 * x, rtol=1e-15)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_scalar_passed_by_value(opt):
    """A C function taking a double by value: declared In(name, ()), the value is passed, and
    its derivative comes back like an array input's (it was an internal error)."""
    sig = ffi.Signature("scale", [In("x", ("n",)), In("a", ()), ffi.Int("n"), Out("y", ("n",))])
    src = ("void scale(const double *x, double a, int n, double *y) "
           "{ for (int i = 0; i < n; i++) y[i] = a * x[i] * x[i]; }")
    f = ffi.build([sig], source=src, flags=(opt,))["scale"]
    x, a, ct = np.array([1.0, 2.0, 3.0]), np.array(1.5), np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(f(x, a), 1.5 * x * x, rtol=1e-15)
    gx, ga = f.vjp([x, a], [ct])
    np.testing.assert_allclose(gx, 2 * 1.5 * x * ct, rtol=1e-14)
    np.testing.assert_allclose(ga, np.sum(x * x * ct), rtol=1e-14)
    (ty,) = [f.jvp([x, a], [np.zeros(3), np.array(1.0)])]
    np.testing.assert_allclose(ty, x * x, rtol=1e-14)
    batch = f(np.stack([x, 2 * x]), a)          # a shared by a batch of x
    np.testing.assert_allclose(batch, [1.5 * x * x, 6 * x * x], rtol=1e-15)


def test_missing_compiler(monkeypatch):
    monkeypatch.setenv("ENZYME_CC_CLANG", "/nonexistent/clang-22")
    with pytest.raises(ffi.CompilerNotFound, match="cannot find '/nonexistent/clang-22'"):
        ffi.build([NORM2], source=C_SRC + "/* a new input: no cache hit */\n")


def test_call_errors_name_the_argument(lib):
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="'x' has dtype float32, expected float64"):
        lib.norm2(x.astype(np.float32))
    with pytest.raises(ValueError, match="'x' is not C-contiguous"):
        lib.norm2(np.ones((2, 4))[:, ::2])
    with pytest.raises(ffi.SignatureError, match="'w' has shape \\(3,\\), expected \\(2,\\)"):
        lib.smooth(x, np.ones(3))
    # (a size set by an earlier input's wrong shape: the message says where it came from)
    with pytest.raises(ffi.SignatureError, match=r"; n = 2 from the shape \(2,\) of argument 'x'"):
        lib.smooth(x, np.ones(3))
    with pytest.raises(ffi.SignatureError, match="'w' has batch axes \\(4,\\), but 'x' has \\(3,\\)"):
        lib.smooth(np.ones((3, 2)), np.ones((4, 2)))
    # an Int's value is an integer, never a float, string or bool truncated or parsed
    assert lib.norm2(x, n=np.int64(2)) == lib.norm2(x, n=2)
    for bad, shown in ((2.0, "float 2.0"), ("2", "str '2'"), (True, "bool True")):
        with pytest.raises(TypeError, match=f"integer argument 'n' must be an int, not {shown}"):
            lib.norm2(x, n=bad)
    # an input by keyword, a seed left out: said so, not as a count of inputs or buffers
    with pytest.raises(TypeError, match="input 'x' was given by keyword: inputs are passed "
                                        "positionally"):
        lib.norm2(x=x)
    with pytest.raises(ffi.SignatureError, match="vjp takes 1 seed\\(s\\) after the inputs "
                                                 "\\(cotangent of 'r'\\), got 0"):
        lib.norm2.vjp([x], [])


def test_int_out_of_its_c_range_is_refused():
    """An Int value that does not fit its C type raised nothing and reached C wrapped around
    (k = 2**32 + 3 acted as 3; a new-user check): OverflowError naming it."""
    sig = ffi.Signature("powk", [In("x", ("n",)), Int("n"), Int("k"), Int("m", "long")],
                        ret=Ret("r"))
    f = ffi.function(sig, source="double powk(const double *x, int n, int k, long m) { "
                                 "double s = 0; for (int i = 0; i < n; i++) s += x[i] * k + m; "
                                 "return s; }")
    x = np.array([1.0, 2.0])
    assert f(x, k=3, m=-1) == pytest.approx(7.0)
    assert f(x, k=2**31 - 1, m=2**63 - 1) == pytest.approx(3.0 * (2**31 - 1) + 2.0 * 2**63)
    for k, m, name in ((2**32 + 3, 0, "k"), (2**31, 0, "k"), (-2**31 - 1, 0, "k"),
                       (1, 2**64 + 3, "m")):
        with pytest.raises(OverflowError, match=f"integer argument '{name}' = .* does not fit"):
            f(x, k=k, m=m)


def test_shape_error_quotes_the_shape_the_other_arguments_imply():
    """W passed transposed: the expected shape comes from the other arguments (x says nin = 3,
    b says nout = 5), where it was read partly from W's own wrong shape, (3, 3)."""
    sig = ffi.Signature("dense", [In("x", ("nin",)), In("W", ("nout", "nin")), In("b", ("nout",)),
                                  Int("nin"), Int("nout"), Out("y", ("nout",))])
    f = ffi.function(sig, source="void dense(const double *x, const double *W, const double *b, "
                                 "int nin, int nout, double *y) { for (int i = 0; i < nout; i++) "
                                 "{ double s = b[i]; for (int j = 0; j < nin; j++) "
                                 "s += W[i * nin + j] * x[j]; y[i] = s; } }")
    with pytest.raises(ffi.SignatureError, match=r"'W' has shape \(3, 5\), expected \(5, 3\)"):
        f(np.ones(3), np.ones((3, 5)), np.ones(5))


GATHER = """#include <stdint.h>
double gather(const double *x, const int *idx, const int64_t *perm, const double *w, int n, int m,
              double *y) {
  double acc = 0;
  for (int i = 0; i < n; i++) {
    y[i] = w[idx[i]] * x[perm[i]] * x[i];
    acc += y[i];
  }
  return acc;
}
"""


def test_integer_index_arrays():
    """`const int *` and `const int64_t *` index arrays are inputs without derivatives (int32,
    int64 with diff=False), inferred or declared; they were refused, the inference pointing to a
    Signature that refused them too. vjp against central differences, batched calls against
    one-by-one, and the errors: an integer output, a differentiable integer input, a dtype."""
    f = ffi.function("gather", source=GATHER, shapes={"x": ("n",), "idx": ("n",), "perm": ("n",),
                                                      "w": ("m",), "y": ("n",)})
    assert [(a.name, a.dtype, a.diff) for a in f.sig.inputs][:3] == [
        ("x", "float64", True), ("idx", "int32", False), ("perm", "int64", False)]
    x, w = np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.5])
    idx, perm = np.array([2, 0, 1], np.int32), np.array([1, 2, 0], np.int64)
    cy, ct = np.array([1.0, -1.0, 0.5]), np.array(2.0)
    gx, gw = f.vjp([x, idx, perm, w], [cy, ct])

    def loss(x, w):
        y, t = f(x, idx, perm, w)
        return (cy * y).sum() + ct * t
    h, e = 1e-6, np.eye(3)
    assert gx == pytest.approx([(loss(x + h * e[k], w) - loss(x - h * e[k], w)) / (2 * h)
                                for k in range(3)], rel=1e-6)
    assert gw == pytest.approx([(loss(x, w + h * e[k]) - loss(x, w - h * e[k])) / (2 * h)
                                for k in range(3)], rel=1e-6)
    xb, idxb = np.stack([x, -x]), np.stack([idx, idx[::-1]])
    yb, tb = f(xb, idxb, perm, w)
    for b in range(2):
        assert f(xb[b], idxb[b], perm, w)[1] == pytest.approx(tb[b])
    with pytest.raises(TypeError, match="'idx' has dtype int64, expected int32"):
        f(x, idx.astype(np.int64), perm, w)
    for bad, msg in ((Out("idx", ("n",), "int32"), "not Out"),
                     (In("idx", ("n",), "int32"), "not In with diff=True")):
        with pytest.raises(SignatureError, match=f"'idx': an integer array carries no derivative.*{msg}"):
            ffi.Signature("gather", [In("x", ("n",)), bad, Int("n")])


def test_signature_errors():
    with pytest.raises(ffi.SignatureError, match="names 'm', which is not an Int"):
        ffi.Signature("f", [In("x", ("m",)), Out("y", (2,))])
    with pytest.raises(ffi.SignatureError, match="dtype must be float64, float32, complex128 or complex64"):
        ffi.Signature("f", [In("x", (2,), "int16"), Out("y", (2,))])
    # (checked after the prototype, whose messages name a wrong argument)
    with pytest.raises(ffi.SignatureError, match="no differentiable input"):
        ffi.build([ffi.Signature("f", [In("x", (2,), diff=False), Out("y", (2,))])],
                  source="void f(const double *x, double *y) { y[0] = x[0]; y[1] = x[1]; }")



@pytest.mark.parametrize("opt", OPT)
def test_second_order_entry_points(opt):
    """order=2: vjp_jvp (forward over reverse) and jvp_jvp (forward over forward) against
    central differences of the first-order entry points, batched and shared; order=1 builds
    refuse them by name."""
    lib2 = ffi.build([SMOOTH], source=C_SRC, flags=(opt,), order=2)
    cu = ffi.function(CUBIC, source=F_SRC, lang="fortran", flags=(opt,), order=2)
    rng = np.random.default_rng(3)
    sm, h = lib2.smooth, 1e-6
    x, w, ct, t, s = (rng.standard_normal(5) for _ in range(5))
    fd = (sm.vjp([x + h * t, w], ct) - sm.vjp([x - h * t, w], ct)) / (2 * h)
    np.testing.assert_allclose(sm.vjp_jvp([x, w], ct, t), fd, rtol=1e-6, atol=1e-8)
    fd = (sm.jvp([x + h * s, w], t) - sm.jvp([x - h * s, w], t)) / (2 * h)
    np.testing.assert_allclose(sm.jvp_jvp([x, w], t, s), fd, rtol=1e-6, atol=1e-8)
    # a shared parameter p under a batch of x: its entry sums over the batch
    p, xs, cts = rng.standard_normal(3), rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    tp, txs = rng.standard_normal(3), rng.standard_normal((4, 6))
    got = cu.vjp_jvp([p, xs], cts, [tp, txs])
    lo, hi = cu.vjp([p - h * tp, xs - h * txs], cts), cu.vjp([p + h * tp, xs + h * txs], cts)
    for g, a, b in zip(got, lo, hi):
        np.testing.assert_allclose(g, (b - a) / (2 * h), rtol=1e-6, atol=1e-7)
    assert got[0].shape == (3,) and got[1].shape == (4, 6)
    # C++ with std::vector
    so = ffi.function(SOFTMAX, source=CXX_SRC, lang="c++", flags=(opt,), order=2)
    fd = (so.vjp([x + h * t], ct) - so.vjp([x - h * t], ct)) / (2 * h)
    np.testing.assert_allclose(so.vjp_jvp([x], ct, t), fd, rtol=1e-6, atol=1e-8)
    fd = (so.jvp([x + h * s], t) - so.jvp([x - h * s], t)) / (2 * h)
    np.testing.assert_allclose(so.jvp_jvp([x], t, s), fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(ffi.SignatureError, match="entry point 'vjp_jvp' is not built .*order=2"):
        ffi.build([SMOOTH], source=C_SRC, flags=(opt,)).smooth.vjp_jvp([x, w], ct, t)


SECOND_ORDER_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
typedef void entry(int64_t, const int64_t *, void *const *, const int64_t *);
entry ecc_vjp_jvp_smooth, ecc_jvp_jvp_smooth, ecc_vjp_jvp_norm2, ecc_jvp_jvp_norm2;
int main(void) {
  int64_t n = 4, ints[1] = {4};
  double x[12], w[4], ct[12], t[12], t2[12], r[12], r1[3], ct1[3] = {1, 2, 3};
  for (int i = 0; i < 12; i++) {
    x[i] = 0.1 * i - 0.3; ct[i] = 0.05 * i; t[i] = 1 - 0.1 * i; t2[i] = 0.2 * i;
  }
  for (int i = 0; i < 4; i++) w[i] = 0.5 + i;
  /* a batch of 3 with w shared; then t shared and the result summed over the batch */
  ecc_vjp_jvp_smooth(3, ints, (void *[]){x, w, ct, t, r}, (int64_t[]){n, 0, n, n, n});
  ecc_jvp_jvp_smooth(3, ints, (void *[]){x, w, t, t2, r}, (int64_t[]){n, 0, n, n, n});
  ecc_vjp_jvp_smooth(3, ints, (void *[]){x, w, ct, t, r}, (int64_t[]){n, 0, n, 0, 0});
  ecc_vjp_jvp_norm2(3, ints, (void *[]){x, ct1, t, r}, (int64_t[]){n, 1, n, n});
  ecc_jvp_jvp_norm2(3, ints, (void *[]){x, t, t2, r1}, (int64_t[]){n, n, n, 1});
  printf("%.15g\n", r1[2]);
  return 0;
}
"""


@pytest.mark.skipif(__import__("shutil").which("valgrind") is None,
                    reason="valgrind not installed")
@pytest.mark.parametrize("opt", OPT)
def test_second_order_wrappers_valgrind(tmp_path, opt):
    """The second-order entry points (scratch buffers, batch loop, shared buffers) run
    valgrind-clean: no invalid access, no definite leak."""
    import subprocess
    from enzyme_cc.ffi.build import driver
    from enzyme_cc.ffi.codegen import wrapper_source
    files = {"main.c": SECOND_ORDER_MAIN, "kern.c": C_SRC,
             "w1.c": wrapper_source(SMOOTH, 2), "w2.c": wrapper_source(NORM2, 2)}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    exe = tmp_path / "m"
    subprocess.run([driver("c"), opt, *[str(tmp_path / f) for f in files], "-lm", "-o",
                    str(exe)], check=True, capture_output=True)
    r = subprocess.run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
                        "--errors-for-leak-kinds=definite", str(exe)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    # the last item's f''[t, t2] of norm2 against the analytic Hessian (I - x x^T/|x|^2)/|x|
    i = np.arange(8, 12)
    x, t, t2 = 0.1 * i - 0.3, 1 - 0.1 * i, 0.2 * i
    nx = np.linalg.norm(x)
    assert float(r.stdout) == pytest.approx(t @ ((np.eye(4) - np.outer(x, x) / nx**2) / nx) @ t2,
                                            rel=1e-12)


SPLIT_MAIN = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*Entry)(int64_t, const int64_t *, void *const *, const int64_t *);
void ecc_augfwd_smooth(int64_t, const int64_t *, void *const *, const int64_t *);
void ecc_reverse_smooth(int64_t, const int64_t *, void *const *, const int64_t *);
void ecc_vjp_smooth(int64_t, const int64_t *, void *const *, const int64_t *);
void ecc_primal_smooth(int64_t, const int64_t *, void *const *, const int64_t *);
int64_t ecc_tapesize_smooth(void);
enum { N = 5, B = 3 };
/* <ct, smooth(x, w)> over the batch, through the primal entry */
static double dot(double *x, double *w, double *ct) {
  double y[B * N];
  int64_t n = N, st[3] = {N, 0, N};
  void *bufs[3] = {x, w, y};
  ecc_primal_smooth(B, &n, bufs, st);
  double s = 0;
  for (int i = 0; i < B * N; i++) s += ct[i] * y[i];
  return s;
}
int main(void) {
  double x[B * N], w[N], y[B * N], dx[B * N], dy[B * N], ct[B * N], ref[B * N];
  for (int i = 0; i < B * N; i++) { x[i] = 0.1 * i - 0.4; ct[i] = 1 - 0.05 * i; }
  for (int i = 0; i < N; i++) w[i] = 0.5 + 0.2 * i;
  int64_t n = N, T = ecc_tapesize_smooth();
  char *tapes = malloc(B * T);
  void *bufs[6] = {x, w, y, dx, dy, tapes};
  int64_t st[6] = {N, 0, N, N, N, T};
  double err = 0;
  for (int rep = 0; rep < 3; rep++) {     /* rep 2: dropped (a reverse with zero seeds) */
    ecc_augfwd_smooth(B, &n, bufs, st);
    for (int i = 0; i < B * N; i++) dy[i] = rep == 2 ? 0 : ct[i];
    ecc_reverse_smooth(B, &n, bufs, st);
    for (int i = 0; rep < 2 && i < B * N; i++) {      /* central differences */
      double h = 1e-6, keep = x[i];
      x[i] = keep + h; double hi = dot(x, w, ct);
      x[i] = keep - h; double lo = dot(x, w, ct);
      x[i] = keep;
      err = fmax(err, fabs(dx[i] - (hi - lo) / (2 * h)));
    }
  }
  /* the combined VJP entry gives the same gradient */
  void *vbufs[4] = {x, w, ct, ref};
  int64_t vst[4] = {N, 0, N, N};
  ecc_augfwd_smooth(B, &n, bufs, st);
  for (int i = 0; i < B * N; i++) dy[i] = ct[i];
  ecc_reverse_smooth(B, &n, bufs, st);
  ecc_vjp_smooth(B, &n, vbufs, vst);
  double diff = 0;
  for (int i = 0; i < B * N; i++) diff = fmax(diff, fabs(dx[i] - ref[i]));
  printf("%.3g %.3g\n", err, diff);
  free(tapes);
  return 0;
}
"""


@pytest.mark.skipif(__import__("shutil").which("valgrind") is None,
                    reason="valgrind not installed")
@pytest.mark.parametrize("opt", OPT)
def test_split_entries_valgrind(tmp_path, opt):
    """The split-mode entries (augmented forward with one caller-allocated tape per batch
    item, reverse on them, also with zero cotangents as for a dropped graph) on a kernel with a
    heap temporary: the gradient equals central differences and the VJP entry, valgrind-clean
    (each tape and what the reverse frees freed once, no definite leak)."""
    import subprocess
    from enzyme_cc.ffi.build import driver
    from enzyme_cc.ffi.codegen import wrapper_source
    files = {"main.c": SPLIT_MAIN, "kern.c": C_SRC, "w.c": wrapper_source(SMOOTH)}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    exe = tmp_path / "m"
    subprocess.run([driver("c"), opt, *[str(tmp_path / f) for f in files], "-lm", "-o",
                    str(exe)], check=True, capture_output=True)
    r = subprocess.run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
                        "--errors-for-leak-kinds=definite", str(exe)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    fd_err, vjp_diff = map(float, r.stdout.split())
    assert fd_err < 1e-7 and vjp_diff < 1e-14, r.stdout


CPOLY = """
#include <complex.h>
void cpoly(const double _Complex *z, int n, double _Complex *y) {
  for (int i = 0; i < n; i++) y[i] = z[i] * z[i] * z[i] + cexp(conj(z[i]));
}
"""


@pytest.mark.parametrize("opt", OPT)
def test_complex_arrays_vjp_and_jvp(opt):
    """complex128 arrays: the VJP of cotangent g is dL/dRe + i dL/dIm of L = Re(sum(conj(g) y))
    (against central differences along the real and the imaginary axis); the JVP is the
    real-pair tangent."""
    sig = ffi.Signature("cpoly", [In("z", ("n",), "complex128"), ffi.Int("n"),
                                  Out("y", ("n",), "complex128")])
    f = ffi.function(sig, source=CPOLY, flags=(opt,))
    rng = np.random.default_rng(3)
    z = rng.normal(size=4) + 1j * rng.normal(size=4)
    g = rng.normal(size=4) + 1j * rng.normal(size=4)
    np.testing.assert_allclose(f(z), z ** 3 + np.exp(z.conj()), rtol=1e-14)
    dz = f.vjp([z], [g])

    def loss(z):
        return np.real(np.sum(np.conj(g) * f(z)))
    h = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd = (loss(z + e) - loss(z - e)) / (2 * h) + 1j * (loss(z + 1j * e) - loss(z - 1j * e)) / (2 * h)
        assert abs(dz[k] - fd) <= 1e-7 * (1 + abs(fd))
    t = rng.normal(size=4) + 1j * rng.normal(size=4)
    ty = f.jvp([z], [t])
    np.testing.assert_allclose(ty, 3 * z ** 2 * t + np.exp(z.conj()) * t.conj(), rtol=1e-12)


# ---- signatures read from the compiled prototype (ffi/infer.py) --------------------------------
INFER_SRC = r"""
#include <math.h>
#include <stddef.h>
/* x read through a non-const pointer, forces only written, acc accumulated into (read and
   written), k and n by value, a double result */
double energy(double *x, size_t n, double k, double *forces, float *acc) {
  double e = 0;
  for (size_t i = 0; i < n; i++) {
    e += k * sin(x[i]) * x[i];
    forces[i] = -k * cos(x[i]);
    acc[i % 2] += (float)(x[i] * x[i]);
  }
  return e;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_signature_inferred_from_the_prototype(opt):
    """In/Out from const-ness and from what the function does with each pointer (LLVM's
    readonly/writeonly), dtypes from the pointee types, integers and scalars by value, the
    double result: the same Signature one would write, and the same values and gradients."""
    shapes = {"x": ("n",), "forces": ("n",), "acc": (2,)}
    sig = ffi.signature_of("energy", source=INFER_SRC, flags=(opt,), shapes=shapes,
                           outputs=("acc",))
    assert sig.args == (In("x", ("n",)), Int("n", "size_t"), In("k", ()),
                        Out("forces", ("n",)), Out("acc", (2,), "float32"))
    assert sig.ret == Ret("result")
    assert repr(sig).startswith("Signature('energy', [In(name='x', shape=('n',)")   # readable
    f = ffi.function("energy", source=INFER_SRC, flags=(opt,), shapes=shapes, outputs=("acc",),
                     nondiff=("k",))
    x, k = np.array([0.3, -0.7, 1.1]), np.array(1.3)
    forces, acc, e = f(x, k)
    np.testing.assert_allclose(e, np.sum(1.3 * np.sin(x) * x), rtol=1e-14)
    np.testing.assert_allclose(forces, -1.3 * np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(acc, [x[0] ** 2 + x[2] ** 2, x[1] ** 2], rtol=1e-6)
    gx = f.vjp([x, k], [np.zeros(3), np.zeros(2, np.float32), np.array(1.0)])
    np.testing.assert_allclose(gx, 1.3 * (np.cos(x) * x + np.sin(x)), rtol=1e-13)


def test_signature_inferred_for_fortran():
    """flang's debug info names the dummy arguments of a bind(c) routine; intent(in) arrays are
    read only, intent(out) written only."""
    sig = ffi.signature_of("cubic", source=F_SRC, lang="fortran",
                           shapes={"p": (3,), "x": ("n",), "y": ("n",)})
    assert sig.args == CUBIC.args
    # Fortran's names are case-insensitive (shapes= named 'X' was "not an argument")
    assert ffi.signature_of("cubic", source=F_SRC, lang="fortran",
                            shapes={"P": (3,), "X": ("N",), "Y": ("n",)}).args == CUBIC.args


ACCUMULATE_F = """subroutine sq(x, n, y)
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: y(n)
  integer :: i
  y = 0d0
  do i = 1, n
    y(i) = y(i) + x(i)**2
  end do
end subroutine
"""


def test_fortran_intent_out_read_and_written():
    """An intent(out) array the routine zeroes and accumulates into reads as read and written in
    the compiled code; its declaration says intent(out), so it is an output without outputs=
    (it had to be named there before), and the routine's values are right."""
    sig = ffi.signature_of("sq_", source=ACCUMULATE_F, lang="fortran",
                           shapes={"x": ("n",), "y": ("n",)})
    assert sig.args == (In("x", ("n",)), Int("n"), Out("y", ("n",)))
    f = ffi.function("sq_", source=ACCUMULATE_F, lang="fortran",
                     shapes={"X": ("n",), "Y": ("n",)})
    assert f(np.array([1.0, 2.0, 3.0])) == pytest.approx([1.0, 4.0, 9.0])


INTENT_F = """subroutine energy(x, n, e, w) bind(c)
  use iso_c_binding
  implicit none
  integer(c_int), value :: n
  real(c_double), intent(in) :: x(n)   ! handed to a routine without INTENT below
  real(c_double), intent(out) :: e
  real(c_double), intent( in out ) :: w(2)
  interface
    subroutine scale_log(v, m) bind(c)
      import :: c_double, c_int
      integer(c_int), value :: m
      real(c_double) :: v(m)
    end subroutine
  end interface
  e = sum(x**2) + w(1)
  w(2) = e
  call scale_log(x, n)
end subroutine
"""
INTENT_C = """/* reads its array only, though its prototype does not say so */
double last_seen;
void scale_log(double *v, int m) { last_seen = v[m - 1]; }
"""


def test_fortran_intent_read_from_the_source(tmp_path):
    """intent(in) array passed to a routine the compiled code cannot see into looked written
    (the signature was refused, with no way around it); the declaration now says In. An
    intent(inout) argument is refused by name."""
    (tmp_path / "energy.f90").write_text(INTENT_F.replace(", w) bind(c)", ") bind(c)")
                                         .replace("  real(c_double), intent( in out ) :: w(2)\n",
                                                  "").replace(" + w(1)", "")
                                         .replace("  w(2) = e\n", ""))
    (tmp_path / "log.c").write_text(INTENT_C)
    srcs = [tmp_path / "energy.f90", tmp_path / "log.c"]
    sig = ffi.signature_of("energy", sources=srcs, shapes={"x": ("n",)})
    assert sig.args == (In("x", ("n",)), Int("n"), Out("e", ()))
    f = ffi.function("energy", sources=srcs, shapes={"x": ("n",)})
    x = np.array([1.0, -2.0, 3.0])
    assert f(x) == pytest.approx(14.0)
    np.testing.assert_allclose(f.vjp([x], [np.array(1.0)]), 2 * x, rtol=1e-14)
    (tmp_path / "energy.f90").write_text(INTENT_F)
    # (an explicit-shape array is spelled with its extents, not `(:)`, the notation of an
    # assumed-shape one, which the docs tell users to avoid)
    with pytest.raises(SignatureError, match="'w' is `real\\(kind=8\\)\\(2\\)`, intent\\(inout\\): "
                                             "an argument updated in place is not supported"):
        ffi.signature_of("energy", sources=srcs, shapes={"x": ("n",), "w": (2,)})


def test_fortran_intents_read_from_statements():
    """The reader joins continuations, cuts comments, skips interface blocks and stops at the
    routine's end."""
    from enzyme_cc.ffi.fortran_intent import intents
    src = b"""module m
contains
  pure real(8) function f(a, b, c, d) result(r)  ! f's header
    real(8), intent(in) :: a(:, &
        & :), b  ! 'intent(out) :: q' in a comment
    real(8), dimension(3), &
      intent(inout) :: c
    interface
      subroutine g(z)
        real(8), intent(out) :: z
      end subroutine
    end interface
    integer :: i; real(8), intent(out) :: d
    r = 0
  end function
  subroutine h(e)
    real(8), intent(in) :: e
  end subroutine
end module
"""
    assert intents([("m.f90", "fortran", src)], "m::f") == \
        {"a": "in", "b": "in", "c": "inout", "d": "out"}
    assert intents([("m.f90", "fortran", src)], "h") == {"e": "in"}
    assert intents([("m.c", "c", src)], "h") == {}


@pytest.mark.parametrize("kw, message", [
    (dict(shapes={"x": ("n",), "forces": ("n",), "acc": (2,)}),
     "argument 'acc' is `float *`, and the function both reads and writes it: name it in "
     "outputs="),
    (dict(shapes={"x": ("n",), "acc": (2,)}, outputs=("acc",)),
     "argument 'forces' is `double *`: give its shape in shapes="),
    (dict(shapes={"x": ("n",), "forces": ("n",), "acc": (2,), "y": (2,)}, outputs=("acc",)),
     "shapes names 'y', which is not an argument of the C function (x, n, k, forces, acc)"),
    (dict(shapes={"x": ("n",), "forces": ("n",), "acc": (2,)}, outputs=("acc", "x", "k")),
     "argument 'k' is `double`, passed by value: it cannot be an output"),
])
def test_signature_inference_errors_name_the_argument(kw, message):
    with pytest.raises(SignatureError) as e:
        ffi.signature_of("energy", source=INFER_SRC, **kw)
    assert message in str(e.value), str(e.value)


CXX_NO_EXTERN = r"""
#include <cmath>
#include <vector>
namespace phys {
double energy(const double *x, int n, double *pos) {
  std::vector<double> v(x, x + n);
  double e = 0;
  for (int i = 0; i < n; i++) { e += std::sin(v[i]) * v[i]; pos[i] = v[i] * v[i]; }
  return e;
}
double energy(const float *x, int n) { return x[0] * n; }
double scale(const double *x) { return 2 * x[0]; }
}
"""

F_NO_BIND = r"""
subroutine cubic(p, x, n, y)
  integer :: n
  real(8), intent(in) :: p(3), x(n)
  real(8), intent(out) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = p(1) * x(i)**3 + p(2) * sin(x(i)) + p(3)
  end do
end subroutine
function dotw(x, w, n) result(s)
  integer(8), intent(in) :: n
  real(8), intent(in) :: x(n), w
  real(8) :: s
  s = w * sum(x * x)
end function
"""


def test_cxx_function_without_extern_c():
    """A C++ function found by its name among the demangled ones (qualified or not); an
    overloaded name is refused, listing the candidates and their symbols."""
    x = np.array([0.3, -0.5, 0.9])
    f = ffi.function("phys::energy",
                     source=CXX_NO_EXTERN.replace(
                         "double energy(const float *x, int n) { return x[0] * n; }", ""),
                     lang="c++", shapes={"x": ("n",), "pos": ("n",)})
    assert f.sig.symbol == "_ZN4phys6energyEPKdiPd"
    pos, e = f(x)
    np.testing.assert_allclose(e, np.sum(np.sin(x) * x), rtol=1e-14)
    g = f.vjp([x], [np.zeros(3), np.array(1.0)])
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-13)
    s = ffi.function("scale", source=CXX_NO_EXTERN, lang="c++", shapes={"x": (1,)})
    np.testing.assert_allclose(s(np.array([1.5])), 3.0)
    with pytest.raises(SignatureError) as err:
        ffi.signature_of("energy", source=CXX_NO_EXTERN, lang="c++", shapes={"x": ("n",)})
    assert "'energy' names 2 C++ functions" in str(err.value)
    assert "_ZN4phys6energyEPKfi" in str(err.value)
    # the symbol itself picks one overload
    one = ffi.signature_of("_ZN4phys6energyEPKfi", source=CXX_NO_EXTERN, lang="c++",
                           shapes={"x": ("n",)})
    assert one.args == (In("x", ("n",), "float32"), Int("n"))


CXX_TEMPLATE = """
namespace phys {
template <class T> T sq(const T *x, int n) { T s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
template double sq<double>(const double *, int);
template float sq<float>(const float *, int);
}
"""


def test_cxx_function_template_by_name():
    """A function template's instantiation by its name with the template's arguments
    (`phys::sq<double>`; its demangled name starts with the return type, and it was "not
    defined in the given sources"); the name alone, with two instantiations, lists both."""
    sig = ffi.signature_of("phys::sq<double>", source=CXX_TEMPLATE, lang="c++",
                           shapes={"x": ("n",)})
    assert sig.symbol == "_ZN4phys2sqIdEET_PKS1_i" and sig.args[0].dtype == "float64"
    with pytest.raises(SignatureError, match="'phys::sq' names 2 C\\+\\+ functions"):
        ffi.signature_of("phys::sq", source=CXX_TEMPLATE, lang="c++", shapes={"x": ("n",)})


def test_fortran_without_bind_c():
    """flang's external name (cubic_), every argument by reference: integers (the wrapper
    passes the address of its copy), a REAL scalar, arrays."""
    f = ffi.function("cubic", source=F_NO_BIND, lang="fortran",
                     shapes={"p": (3,), "x": ("n",), "y": ("n",)})
    assert f.sig.symbol == "cubic_" and f.sig.args == CUBIC.args
    p, x = np.array([1.0, 2.0, 0.5]), np.array([0.3, -0.4, 1.2])
    np.testing.assert_allclose(f(p, x), p[0] * x ** 3 + p[1] * np.sin(x) + p[2], rtol=1e-14)
    g = ffi.function("dotw", source=F_NO_BIND, lang="fortran", shapes={"x": ("n",)})
    assert g.sig.args == (In("x", ("n",)), In("w", ()), Int("n", "long"))
    np.testing.assert_allclose(g(x, np.array(2.0)), 2 * np.sum(x * x), rtol=1e-14)
    gx, gw = g.vjp([x, np.array(2.0)], [np.array(1.0)])
    np.testing.assert_allclose(gx, 4 * x, rtol=1e-14)
    np.testing.assert_allclose(gw, np.sum(x * x), rtol=1e-14)


def test_signature_message_for_a_fortran_argument_read_and_written():
    """A Fortran array the routine reads and writes, its declaration giving no INTENT: the
    message speaks Fortran (it said "the C function's argument" and "make it `const`", a
    new-user check)."""
    from enzyme_cc.ffi.infer import _signature
    from enzyme_cc.ffi.signature import SignatureError
    params = [("v", "ptr", "real(kind=8)(:)", "double", False, "readwrite")]
    with pytest.raises(SignatureError) as e:
        _signature("smooth", params, "void", {"v": ("n",)}, (), (), None, None)
    assert "the Fortran routine's argument 'v'" in str(e.value), e.value
    assert "name it in outputs= if it is an output" in str(e.value) and \
        "declare it intent(in) if it is an input" in str(e.value) and \
        "const" not in str(e.value), e.value


F_COLSUM = """
subroutine colsum(m, k, a, w, y)
  integer, intent(in) :: m, k
  real(8), intent(in) :: a(m, k), w(k)
  real(8), intent(out) :: y(m)
  y = matmul(a**2, w)
end subroutine
"""


def test_fortran_rank_two_array_refused():
    """A Fortran a(m, k) is stored column by column, NumPy's and torch's arrays row by row: a
    shape ("m", "k") read the transpose (y = [1, 4, 9] for [1, 25, 81], silently; a square
    matrix would not even fail a shape check). Refused, naming the argument, until the
    front ends pass such arrays in Fortran order."""
    from enzyme_cc.ffi.signature import SignatureError
    with pytest.raises(SignatureError, match="argument 'a' is a Fortran array of rank 2"):
        ffi.function("colsum_", source=F_COLSUM, lang="fortran",
                     shapes={"a": ("m", "k"), "w": ("k",), "y": ("m",)}, outputs=("y",))


F_ASSUMED_SHAPE = """
subroutine energy_c(u, e) bind(c, name="energy_c")
  use iso_c_binding
  real(c_double), intent(in) :: u(:)
  real(c_double), intent(out) :: e
  e = sum(u**2)
end subroutine
"""


def test_fortran_assumed_shape_array_refused():
    """A Fortran u(:) is passed as the address of a descriptor, not of its data: taken as an
    array, the first call crashed Python (a bus error; found by a new-user check). Refused by
    name, inferred or declared."""
    from enzyme_cc.ffi.signature import SignatureError
    with pytest.raises(SignatureError, match="argument 'u' is a Fortran array passed by "
                                             "descriptor"):
        ffi.function(ffi.Signature("energy_c", [In("u", (5,)), Out("e", ())]),
                     source=F_ASSUMED_SHAPE, lang="fortran")
    with pytest.raises(SignatureError, match="assumed shape"):
        ffi.function("energy_c", source=F_ASSUMED_SHAPE, lang="fortran", outputs=("e",))


F_MODULE = """
module mech
  implicit none
contains
  function spring_energy(x, k, n) result(e)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n), k
    real(8) :: e
    e = 0.5d0 * k * sum((x(2:n) - x(1:n-1) - 1d0)**2)
  end function
end module
"""


@pytest.mark.parametrize("name", ["spring_energy", "mech::spring_energy"])
def test_fortran_module_procedure_by_name(name):
    """A Fortran module procedure is found by its name, or module::name (flang's
    _QMmechPspring_energy); before only that symbol worked ("not defined in the given
    sources"). E = k/2 sum (d_i - 1)^2: dE/dx_i = k ((d_{i-1} - 1) - (d_i - 1))."""
    f = ffi.function(name, source=F_MODULE, lang="fortran", shapes={"x": ("n",)})
    x, k = np.array([0.0, 1.2, 2.1, 3.5]), np.array(2.0)
    d = np.diff(x) - 1
    assert f(x, k) == pytest.approx(k * 0.5 * np.sum(d ** 2))
    g = f.vjp([x, k], [np.array(1.0)])[0]
    want = k * (np.concatenate([[0], d]) - np.concatenate([d, [0]]))
    assert g == pytest.approx(want, rel=1e-12)


F_STATS = """
subroutine stats(n, x, mean, var)
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8), intent(out) :: mean, var
  mean = sum(x) / n
  var = sum((x - mean)**2) / n
end subroutine
"""


def test_fortran_intent_out_scalars_inferred_as_outputs():
    """A Fortran routine's intent(out) scalars (written, never read: LLVM's writeonly) are
    inferred as outputs, as write-only arrays are; they were inputs, and the build refused
    the inferred signature (a new-user check). d var / dx_i = 2 (x_i - mean) / n."""
    f = ffi.function("stats", source=F_STATS, lang="fortran", shapes={"x": ("n",)})
    assert [type(a).__name__ for a in f.sig.args] == ["Int", "In", "Out", "Out"], f.sig
    x = np.array([1.0, 2.0, 4.0, 7.0])
    mean, var = f(x)
    assert mean == pytest.approx(3.5) and var == pytest.approx(5.25)
    g = f.vjp([x], [np.array(0.0), np.array(1.0)])       # (one input: its gradient)
    assert np.asarray(g) == pytest.approx(2 * (x - 3.5) / 4, rel=1e-12)


OMP_SMOOTH = """
#include <math.h>
void smooth(const double *u, double *v, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) v[i] = 0.5 * u[i] * u[i] + sin(u[i]);
}
"""


def test_signature_of_an_openmp_output_says_it_cannot_tell(tmp_path):
    """A pointer the function hands to an OpenMP region: LLVM's inference does not see what
    the region does with it, so the message says that, not that the function reads and writes
    it (a new-user check); naming it in outputs= builds the function, and its gradient is
    right."""
    src = tmp_path / "ompk.c"
    src.write_text(OMP_SMOOTH)
    with pytest.raises(SignatureError) as e:
        ffi.signature_of("smooth", sources=[str(src)], shapes={"u": ("n",), "v": ("n",)},
                         flags=("-O2", "-fopenmp"))
    assert "hands it to an OpenMP parallel region" in str(e.value), e.value
    f = ffi.function("smooth", sources=[str(src)], shapes={"u": ("n",), "v": ("n",)},
                     outputs=("v",), flags=("-O2", "-fopenmp"), link_flags=("-fopenmp",))
    u = np.array([0.1, 0.2, 0.3])
    du = f.vjp([u], [np.ones(3)])            # (one input: its cotangent alone)
    assert list(du) == pytest.approx(list(u + np.cos(u)), rel=1e-12)


ROWS_SRC = r"""
#include <stdbool.h>
/* C99 arrays of rows: a VLA `a[n][n]` and fixed rows `w[][3]`; a bool by value */
double form(int n, const double a[n][n], const double w[][3], const double *x, bool twice) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += x[i] * a[i][j] * x[j] + w[i][j % 3] * x[j];
  return twice ? 2 * s : s;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_arrays_of_rows_and_bool_by_value(opt):
    """`double a[n][n]` and `double w[][3]` parameters are float arrays (given a shape in C's
    row order); a `bool` by value is an Int taking True/False (both refused before, by name)."""
    shapes = {"a": ("n", "n"), "w": ("n", 3), "x": ("n",)}
    sig = ffi.signature_of("form", source=ROWS_SRC, flags=(opt,), shapes=shapes)
    assert sig.args == (Int("n"), In("a", ("n", "n")), In("w", ("n", 3)), In("x", ("n",)),
                        Int("twice", "bool"))
    f = ffi.function("form", source=ROWS_SRC, flags=(opt,), shapes=shapes)
    rng = np.random.default_rng(3)
    a, w, x = rng.normal(size=(4, 4)), rng.normal(size=(4, 3)), rng.normal(size=4)
    wj = w[:, [j % 3 for j in range(4)]]
    for twice in (False, True):
        c = 2.0 if twice else 1.0
        e = f(a, w, x, twice=twice)
        np.testing.assert_allclose(e, c * (x @ a @ x + np.sum(wj * x)), rtol=1e-13)
        ga, gw, gx = f.vjp([a, w, x], [np.array(1.0)], twice=twice)
        np.testing.assert_allclose(ga, c * np.outer(x, x), rtol=1e-13)
        want_w = np.zeros((4, 3))
        for i in range(4):
            for j in range(4):
                want_w[i, j % 3] += c * x[j]
        np.testing.assert_allclose(gw, want_w, rtol=1e-13)
        np.testing.assert_allclose(gx, c * ((a + a.T) @ x + wj.sum(axis=0)), rtol=1e-13)
    with pytest.raises(SignatureError, match=r"'w' is `const double \(\*\)\[3\]` in C, read "
                                             r"in rows of 3, but the signature gives it shape"):
        ffi.function("form", source=ROWS_SRC, flags=(opt,),
                     shapes={"a": ("n", "n"), "w": ("n", 4), "x": ("n",)})
    with pytest.raises(OverflowError, match="does not fit C's `bool`"):
        f(a, w, x, twice=2)


VLA_SRC = r"""
void matvec(int n, int m, const double A[n][m], const double w[][3], const double *v,
            double *out) {
  for (int i = 0; i < n; i++) {
    double s = w[i][0] * w[i][2];
    for (int j = 0; j < m; j++) s += A[i][j] * v[j];
    out[i] = s;
  }
}
"""


@pytest.mark.parametrize("shape_a,shape_w,words", [
    (("n",), ("n", 3), r"'A' is `const double \(\*\)\[\?\]` in C, read in rows of m, but the "
                       r"signature gives it shape \('n',\): give it shape \(rows, m\)"),
    (("m", "n"), ("n", 3), r"read in rows of m, but the signature gives it shape \('m', 'n'\)"),
    (("n", "m"), ("n",), r"'w' is `const double \(\*\)\[3\]` in C, read in rows of 3, but the "
                         r"signature gives it shape \('n',\): give it shape \(rows, 3\)"),
    (("n", "m"), ("n", 3, 1), r"read in rows of 3, but the signature gives it shape"),
])
def test_rows_of_another_rank_or_extent_are_refused(shape_a, shape_w, words):
    """A shape that contradicts C's rows is refused: a one-dimensional shape for `w[][3]` had C
    read three times the array (and the VJP write past it: heap corruption), the transposed
    shape for C99's `A[n][m]` read it skewed (wrong numbers). The VLA's row extent is the
    parameter its declaration names."""
    shapes = {"A": shape_a, "w": shape_w, "v": ("m",), "out": ("n",)}
    with pytest.raises(SignatureError, match=words):
        ffi.function("matvec", source=VLA_SRC, shapes=shapes)
    f = ffi.function("matvec", source=VLA_SRC,
                     shapes={"A": ("n", "m"), "w": ("n", 3), "v": ("m",), "out": ("n",)})
    rng = np.random.default_rng(5)
    a, w, v = rng.normal(size=(3, 5)), rng.normal(size=(3, 3)), rng.normal(size=5)
    np.testing.assert_allclose(f(a, w, v), a @ v + w[:, 0] * w[:, 2], rtol=1e-13)


@pytest.mark.parametrize("shape", ["m", "steps", 5])
def test_shape_that_is_not_a_tuple_is_refused(shape):
    """shapes={"v": "steps"} was read letter by letter ("shape names 's', which is not an Int
    argument"); a name or a number alone is refused saying how to write it."""
    with pytest.raises(SignatureError, match=rf"shapes\['v'\] is {shape!r}, but a shape is a "
                                             rf"tuple: write \({shape!r},\)"):
        ffi.signature_of("matvec", source=VLA_SRC, shapes={"A": ("n", "m"), "w": ("n", 3),
                                                           "v": shape, "out": ("n",)})


CXX_TEMPLATE_CALLEE = r"""
template <typename T> __attribute__((noinline)) void axpy(int n, T a, const T *x, T *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] * x[i];
}
extern "C" void model(int n, double a, double *x, double *y) { axpy(n, a, x, y); }
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_pointers_handed_to_a_template_callee(opt):
    """x (not const) and y go to a noinline template instance (linkonce_odr, about which LLVM
    infers nothing, and at -O2 vectorized with alias checks): y was reported read and written,
    x too; both are read from the callee's code now."""
    shapes = {"x": ("n",), "y": ("n",)}
    sig = ffi.signature_of("model", source=CXX_TEMPLATE_CALLEE, lang="c++", flags=(opt,),
                           shapes=shapes)
    assert sig.args == (Int("n"), In("a", ()), In("x", ("n",)), Out("y", ("n",)))
    f = ffi.function("model", source=CXX_TEMPLATE_CALLEE, lang="c++", flags=(opt,),
                     shapes=shapes)
    x, a = np.array([0.5, -1.0, 2.0]), np.array(1.5)
    np.testing.assert_allclose(f(a, x), 1.5 * x ** 2, rtol=1e-15)
    ga, gx = f.vjp([a, x], [np.ones(3)])
    np.testing.assert_allclose(ga, np.sum(x ** 2), rtol=1e-14)
    np.testing.assert_allclose(gx, 2 * 1.5 * x, rtol=1e-14)
