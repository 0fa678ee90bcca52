"""A declared C/C++/Fortran function as JAX primitives: the primal, a JVP linear in its tangents
whose transpose is the VJP, each lowered to an XLA custom call through `jax.ffi` (no Python on the
path of a jitted call), with batching rules that turn vmap into the batch loop in C. So jax.grad,
jax.jacrev, jax.jacfwd, jax.vmap and jax.jit all work; with order=2 also second derivatives
(jax.hessian, check_grads order=2); beyond that JAX refuses ("Differentiation rule ... not
implemented"), never a silent zero.

    f = enzyme_cc.jax.op(Signature("f", [In("x", ("n",)), Int("n"), Out("y", ("n",))]),
                         sources=["f.c"])
    y = jax.jit(f)(x)
"""
import os
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive, concrete_or_error
from jax.interpreters import ad, batching, mlir

from . import ffi
from .ffi.build import helper_library
from .ffi.runtime import KINDS
from .ffi.signature import SignatureError, integer, no_keyword_inputs

TARGET = "enzyme_cc_call"
_lock = threading.Lock()
_registered = False
_OPS = {}


def _handler_library():
    """The FFI handler (enzyme_cc/ffi/jax_handler.cc) built against this jaxlib's headers."""
    return helper_library(os.path.join(os.path.dirname(ffi.__file__), "jax_handler.cc"),
                          "jax-handler", ["-std=c++17", "-O2", "-shared", "-fPIC", "-I",
                                          jax.ffi.include_dir()], jax.__version__)


def _register():
    global _registered
    with _lock:
        if not _registered:
            import ctypes
            dll = ctypes.CDLL(_handler_library())
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(dll.EnzymeCcCall),
                                        platform="cpu")
            _registered = dll       # keeps the library loaded


def op(signature, sources=(), source=None, lang="c", flags=("-O2",), link_flags=(), order=1,
       **inferred):
    """Builds the function (cached by content) and returns it as a JAX operation. order=2 also
    builds the second-order entry points (jax.hessian, check_grads order=2). `signature`: a
    Signature, or the function's name with the keywords of ffi.signature_of (shapes=,
    outputs=, nondiff=, ret=): the compiled prototype says the rest."""
    if not isinstance(signature, ffi.Function):
        signature = ffi.declared(signature, sources, source, lang, flags, **inferred)
        inferred = {}
    fn = signature if isinstance(signature, ffi.Function) else \
        ffi.function(signature, sources, source, lang, flags, link_flags, order)
    _register()
    key = (fn.path, fn.sig.key())
    if key not in _OPS:
        _OPS[key] = JaxOp(fn)
    return _OPS[key]


class JaxOp:
    """Call it with the inputs (arrays of the declared dtypes, in declared order) and Int values
    not implied by their shapes as keywords; returns the output (a tuple when several)."""

    def __init__(self, fn):
        self.fn, self.sig = fn, fn.sig

    def __repr__(self):
        return f"<enzyme_cc jax op {self.fn.name}>"

    def __call__(self, *inputs, **ints):
        s = self.sig
        no_keyword_inputs(s, ints)
        if len(inputs) != len(s.inputs):
            raise TypeError(f"{s.name}() takes {len(s.inputs)} array inputs "
                            f"({', '.join(a.name for a in s.inputs)}), got {len(inputs)}")
        xs = []
        for a, x in zip(s.inputs, inputs):
            if not hasattr(x, "dtype") or not hasattr(x, "shape"):
                raise TypeError(f"{s.name}: argument {a.name!r} must be an array, not "
                                f"{type(x).__name__}")
            # (the dtype JAX will hand the C code: without jax_enable_x64 a NumPy float64 or
            # int64 array becomes 32-bit, and C would read it as 64-bit data)
            dt = np.dtype(jax.dtypes.canonicalize_dtype(x.dtype))
            if dt != np.dtype(a.dtype):
                hint = " (enable 64-bit types with jax.config.update('jax_enable_x64', True))" \
                    if a.dtype in ("float64", "int64", "complex128") else ""
                got = f"{x.dtype} (JAX makes it {dt})" if dt != np.dtype(x.dtype) else x.dtype
                raise TypeError(f"{s.name}: argument {a.name!r} has dtype {got}, expected "
                                f"{a.dtype}{hint}")
            xs.append(x if isinstance(x, jax.Array) else jnp.asarray(x))
        for name, v in ints.items():
            if isinstance(v, jax.core.Tracer):
                try:                       # a constant under the trace is as good as an int
                    v = concrete_or_error(None, v)
                except Exception:
                    raise TypeError(
                        f"{s.name}: integer argument {name!r} is a traced value (an argument of "
                        f"jax.jit or another transform), but the output shapes and the C call "
                        f"need its value when tracing; hint: make it static "
                        f"(jax.jit(..., static_argnames=...)) or pass a Python int") from None
            ints[name] = integer(s.name, name, v, s)
        full = self.fn.prepare("primal", [tuple(x.shape) for x in xs], tuple(ints.items())).ints
        # (jitted: an eager call takes jit's C++ dispatch; under a transformation it is one
        # more nested call, inlined when lowered)
        outs = _jitted(call_p, fn=self.fn, ints=full)(*xs)
        return outs[0] if len(outs) == 1 else tuple(outs)


# ---- shapes ------------------------------------------------------------------------------------
def _lead(x, arg):
    return tuple(x.shape[:len(x.shape) - len(arg.shape)])


def _prepare(fn, kind, args, ints, sum_lead=None):
    return fn.prepare(kind, [x.shape for x in args], tuple(zip((a.name for a in fn.sig.ints),
                                                               ints)), sum_lead)


def _avals(kind):
    def abstract(*args, fn, ints, sum_lead=None):
        return [jax.core.ShapedArray(sh, np.dtype(dt))
                for sh, dt in _prepare(fn, kind, args, ints, sum_lead).results]
    return abstract


# ---- the primitives ----------------------------------------------------------------------------
def _body(kind):
    """The XLA custom call of entry point `kind` (args: inputs, then its seeds)."""
    def body(*args, fn, ints, sum_lead=None):
        p = _prepare(fn, kind, args, ints, sum_lead)
        args = _conj_cotangents(fn, kind, args)
        outs = jax.ffi.ffi_call(TARGET, [jax.ShapeDtypeStruct(sh, np.dtype(dt))
                                         for sh, dt in p.results])(
            *args, fn=np.int64(fn.address[kind]), batch=np.int64(p.batch),
            ints=np.asarray(p.ints, np.int64), strides=np.asarray(p.strides, np.int64))
        if kind.startswith("vjp"):          # gradients: cotangents of the inputs
            outs = [jnp.conj(o) if o.dtype in _CPLX else o for o in outs]
        return outs
    return body


# JAX pairs a complex cotangent u with a value v as Re(sum u v), the C derivative (real and
# imaginary parts as two floats) as Re(sum conj(u) v): JAX's cotangents are the conjugates of
# the C code's, on the way in and out of the reverse-mode entries
_CPLX = (np.dtype("complex64"), np.dtype("complex128"))


def _conj_cotangents(fn, kind, args):
    if not kind.startswith("vjp"):
        return args
    n, k = len(fn.sig.inputs), len(fn.sig.outputs)   # the output cotangents follow the inputs
    return [jnp.conj(a) if n <= i < n + k and a.dtype in _CPLX else a
            for i, a in enumerate(args)]


_JITTED: dict = {}


def _jitted(p, **params):
    """Primitive p bound with params, as a jitted function: compiled once per (primitive,
    params) and then dispatched by jit's C++ path, instead of preparing and dispatching the
    custom call in Python on every call."""
    key = (p, *params.items())          # (bound with the same keywords every time)
    f = _JITTED.get(key)
    if f is None:
        if len(_JITTED) >= 1024:        # (integers that change every call: bounded)
            _JITTED.clear()
        f = _JITTED[key] = jax.jit(lambda *xs: p.bind(*xs, **params))
    return f


def _eager(p, kind):
    """A call outside any transformation: through _jitted."""
    body = _body(kind)

    def impl(*args, **params):
        if jax.config.jax_disable_jit:        # (jit would call back into this impl)
            return body(*args, **params)
        return _jitted(p, **params)(*args)
    return impl


def _primitive(name, kind):
    p = Primitive(name)
    p.multiple_results = True
    p.def_impl(_eager(p, kind))
    p.def_abstract_eval(_avals(kind))
    mlir.register_lowering(p, mlir.lower_fun(_body(kind), multiple_results=True), platform="cpu")
    return p


call_p = _primitive("enzyme_cc_call", "primal")
jvp_p = _primitive("enzyme_cc_jvp", "jvp")
vjp_p = _primitive("enzyme_cc_vjp", "vjp")


# ---- differentiation ----------------------------------------------------------------------------
# First order: the JVP rule of the primal is jvp_p (linear in the tangents), whose transpose is
# vjp_p. Second order (order=2 builds): the JVP of jvp_p adds jvp_jvp_p (f''[t, dx]), the JVP of
# vjp_p adds vjp_jvp_p (sum_i ct_i H_i dx); both are linear in dx and, the Hessians being
# symmetric, transpose into vjp_jvp_p again. Third order: JAX's "Differentiation rule for
# 'enzyme_cc_vjp_jvp' not implemented".
vjp_jvp_p = _primitive("enzyme_cc_vjp_jvp", "vjp_jvp")
jvp_jvp_p = _primitive("enzyme_cc_jvp_jvp", "jvp_jvp")


def _zero(x):
    return ad.Zero.from_primal_value(x)


def _is_zero(t):
    return type(t) is ad.Zero


def _input_tangents(fn, primals, tangents):
    """The differentiable inputs' tangents (zeros instantiated), or None if all are zero;
    a tangent of a diff=False input is an error."""
    for a, t in zip(fn.sig.inputs, tangents):
        if not a.diff and not _is_zero(t):
            raise ValueError(f"{fn.name}: a derivative with respect to input {a.name!r} was "
                             "requested, but it is declared In(..., diff=False)")
    diff = [t for a, t in zip(fn.sig.inputs, tangents) if a.diff]
    return None if all(_is_zero(t) for t in diff) else [ad.instantiate_zeros(t) for t in diff]


def _second_order(fn):
    if fn.order < 2:
        raise NotImplementedError(f"{fn.name}: second derivatives need the second-order entry "
                                  "points: build with enzyme_cc.jax.op(..., order=2)")


def _add(terms, outs):
    terms = [t for t in terms if t is not None]
    if not terms:
        return [_zero(o) for o in outs]
    return [sum(parts[1:], parts[0]) for parts in zip(*terms)]


def _call_jvp(primals, tangents, *, fn, ints):
    outs = call_p.bind(*primals, fn=fn, ints=ints)
    ts = _input_tangents(fn, primals, tangents)
    return outs, [_zero(o) for o in outs] if ts is None else jvp_p.bind(*primals, *ts, fn=fn,
                                                                          ints=ints)


def _jvp_jvp(primals, tangents, *, fn, ints):
    """Tangent of J(x) t: f''[t, dx] + J(x) dt."""
    n = len(fn.sig.inputs)
    xs, ts = primals[:n], primals[n:]
    outs = jvp_p.bind(*primals, fn=fn, ints=ints)
    dx = _input_tangents(fn, xs, tangents[:n])
    dts = tangents[n:]
    if dx is not None:
        _second_order(fn)
    return outs, _add([
        None if dx is None else jvp_jvp_p.bind(*xs, *ts, *dx, fn=fn, ints=ints),
        None if all(_is_zero(t) for t in dts) else
        jvp_p.bind(*xs, *map(ad.instantiate_zeros, dts), fn=fn, ints=ints)], outs)


def _vjp_jvp(primals, tangents, *, fn, ints, sum_lead):
    """Tangent of J(x)^T ct: sum_i ct_i H_i dx + J(x)^T dct."""
    n = len(fn.sig.inputs)
    xs, cts = primals[:n], primals[n:]
    outs = vjp_p.bind(*primals, fn=fn, ints=ints, sum_lead=sum_lead)
    dx = _input_tangents(fn, xs, tangents[:n])
    dcts = tangents[n:]
    if dx is not None:
        _second_order(fn)
    return outs, _add([
        None if dx is None else
        vjp_jvp_p.bind(*xs, *cts, *dx, fn=fn, ints=ints, sum_lead=sum_lead),
        None if all(_is_zero(t) for t in dcts) else
        vjp_p.bind(*xs, *map(ad.instantiate_zeros, dcts), fn=fn, ints=ints,
                   sum_lead=sum_lead)], outs)


def _linear_in_last(fn, args, group):
    """Splits a transpose's arguments into the known primals and the last `group` of seeds, in
    which it is linear (some may be known zeros); returns those seeds' avals too."""
    k = len(group)
    known, linear = args[:len(args) - k], args[len(args) - k:]
    if any(ad.is_undefined_primal(x) for x in known):
        raise ValueError(f"{fn.name}: cannot transpose with respect to a primal input")
    return known, [x.aval if ad.is_undefined_primal(x) else x for x in linear], linear


def _only_undefined(res, linear):
    return [r if ad.is_undefined_primal(x) else None for r, x in zip(res, linear)]


def _instantiate(cts, kind, fn, args, ints, sum_lead=None):
    if not any(_is_zero(c) for c in cts):
        return cts
    p = _prepare(fn, kind, args, ints, sum_lead)
    return [jnp.zeros(sh, dt) if _is_zero(c) else c for c, (sh, dt) in zip(cts, p.results)]


def _sums(avals, args):
    return tuple(not _lead(t, a) for t, a in zip(avals, args))


def _fit(x, aval):
    """x summed over the leading axes aval lacks (a seed shared by a batch)."""
    extra = x.ndim - len(aval.shape)
    return x.sum(axis=tuple(range(extra))) if extra else x


def _jvp_transpose(cts, *args, fn, ints):
    xs, ts, lin = _linear_in_last(fn, args, fn.sig.diff_inputs)
    cts = _instantiate(cts, "jvp", fn, list(xs) + ts, ints)
    grads = vjp_p.bind(*xs, *cts, fn=fn, ints=ints, sum_lead=_sums(ts, fn.sig.diff_inputs))
    return [None] * len(xs) + _only_undefined(grads, lin)


def _vjp_transpose(cts, *args, fn, ints, sum_lead):
    """J(x)^T ct is linear in ct: its transpose is J(x) w."""
    xs, ct_avals, lin = _linear_in_last(fn, args, fn.sig.outputs)
    cts = _instantiate(cts, "vjp", fn, list(xs) + ct_avals, ints, sum_lead)
    outs = jvp_p.bind(*xs, *cts, fn=fn, ints=ints)
    return [None] * len(xs) + _only_undefined([_fit(o, a) for o, a in zip(outs, ct_avals)], lin)


def _vjp_jvp_transpose(cts, *args, fn, ints, sum_lead):
    """sum_i ct_i H_i t is linear in t with a symmetric matrix: its transpose is itself."""
    known, t_avals, lin = _linear_in_last(fn, args, fn.sig.diff_inputs)
    cts = _instantiate(cts, "vjp_jvp", fn, list(known) + t_avals, ints, sum_lead)
    res = vjp_jvp_p.bind(*known, *cts, fn=fn, ints=ints,
                         sum_lead=_sums(t_avals, fn.sig.diff_inputs))
    return [None] * len(known) + _only_undefined(res, lin)


def _jvp_jvp_transpose(cts, *args, fn, ints):
    """f''[t, dx] = (w . f'')(t, dx) per output weight w: its transpose in dx is
    sum_i w_i H_i t."""
    known, dx_avals, lin = _linear_in_last(fn, args, fn.sig.diff_inputs)
    n = len(fn.sig.inputs)
    xs, ts = known[:n], known[n:]
    cts = _instantiate(cts, "jvp_jvp", fn, list(known) + dx_avals, ints)
    res = vjp_jvp_p.bind(*xs, *cts, *ts, fn=fn, ints=ints,
                         sum_lead=_sums(dx_avals, fn.sig.diff_inputs))
    return [None] * len(known) + _only_undefined(res, lin)


ad.primitive_jvps[call_p] = _call_jvp
ad.primitive_jvps[jvp_p] = _jvp_jvp
ad.primitive_jvps[vjp_p] = _vjp_jvp
ad.primitive_transposes[jvp_p] = _jvp_transpose
ad.primitive_transposes[vjp_p] = _vjp_transpose
ad.primitive_transposes[vjp_jvp_p] = _vjp_jvp_transpose
ad.primitive_transposes[jvp_jvp_p] = _jvp_jvp_transpose


# ---- vmap: the mapped axis becomes (part of) the batch looped over in C ------------------------
def _broadcast(args, dims, item_ndims):
    size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
    moved = []
    for x, d, nd in zip(args, dims, item_ndims):
        x = x if d is None else jnp.moveaxis(x, d, 0)
        k = x.ndim - nd
        moved.append((x, d is not None, tuple(x.shape[:k]), tuple(x.shape[k:])))
    inner = ()
    for x, mapped, lead, item in moved:
        inner = (lead[1:] if mapped else lead) or inner
    target = (size,) + inner
    out = []
    for x, mapped, lead, item in moved:
        if mapped and lead != target:
            x = jnp.broadcast_to(x.reshape((size,) + (1,) * len(inner) + item), target + item)
        elif not mapped and lead:
            x = jnp.broadcast_to(x, target + item)
        out.append(x)
    return out, inner


def _batcher(prim, kind):
    def rule(args, dims, *, fn, ints, sum_lead=None):
        groups = {"outputs": fn.sig.outputs, "diff": fn.sig.diff_inputs}
        nd = [len(a.shape) for a in fn.sig.inputs] + \
            [len(a.shape) for g in KINDS[kind][0] for a in groups[g]]
        xs, inner = _broadcast(args, dims, nd)
        if sum_lead is None:
            res = prim.bind(*xs, fn=fn, ints=ints)
        else:
            res = prim.bind(*xs, fn=fn, ints=ints, sum_lead=(False,) * len(sum_lead))
            # each lane keeps its own cotangent; the inner batch is summed where it was before
            res = [r.sum(axis=tuple(range(1, 1 + len(inner)))) if s and inner else r
                   for r, s in zip(res, sum_lead)]
        return res, [0] * len(res)
    return rule


for _p, _k in ((call_p, "primal"), (jvp_p, "jvp"), (vjp_p, "vjp"), (vjp_jvp_p, "vjp_jvp"),
               (jvp_jvp_p, "jvp_jvp")):
    batching.primitive_batchers[_p] = _batcher(_p, _k)

__all__ = ["JaxOp", "op", "SignatureError", "call_p", "jvp_p", "vjp_p", "vjp_jvp_p", "jvp_jvp_p"]
