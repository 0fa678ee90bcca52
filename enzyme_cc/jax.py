"""A declared C/C++/Fortran function as JAX primitives: the primal, a JVP linear in its tangents
whose transpose is the VJP, each lowered to an XLA custom call through `jax.ffi` (no Python on the
path of a jitted call), with batching rules that turn vmap into the batch loop in C. So jax.grad,
jax.jacrev, jax.jacfwd, jax.vmap and jax.jit all work; second derivatives are refused by JAX
("Differentiation rule ... not implemented"), never silently zero.

    f = enzyme_cc.jax.op(Signature("f", [In("x", ("n",)), Int("n"), Out("y", ("n",))]),
                         sources=["f.c"])
    y = jax.jit(f)(x)
"""
import hashlib
import os
import subprocess
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import ffi
from .ffi.build import BuildError, cache_root, check_toolchain
from .ffi.signature import SignatureError

TARGET = "enzyme_cc_call"
_lock = threading.Lock()
_registered = False
_OPS = {}


def _handler_library():
    """The FFI handler (enzyme_cc/ffi/jax_handler.cc) built against this jaxlib's headers."""
    src = os.path.join(os.path.dirname(ffi.__file__), "jax_handler.cc")
    with open(src, "rb") as f:
        code = f.read()
    key = hashlib.sha256(code + jax.__version__.encode() + jax.ffi.include_dir().encode())
    lib = os.path.join(cache_root(), f"jax-handler-{key.hexdigest()[:24]}.so")
    if not os.path.isfile(lib):
        check_toolchain({"c++"})
        from .toolchain import tool
        os.makedirs(cache_root(), exist_ok=True)
        tmp = f"{lib}.{os.getpid()}.tmp"
        r = subprocess.run([tool("clang++"), "-std=c++17", "-O2", "-shared", "-fPIC",
                            "-I", jax.ffi.include_dir(), src, "-o", tmp],
                           capture_output=True, text=True)
        if r.returncode:
            raise BuildError(f"building the JAX FFI handler failed:\n{r.stderr.strip()}")
        os.replace(tmp, lib)
    return lib


def _register():
    global _registered
    with _lock:
        if not _registered:
            import ctypes
            dll = ctypes.CDLL(_handler_library())
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(dll.EnzymeCcCall),
                                        platform="cpu")
            _registered = dll       # keeps the library loaded


def op(signature, sources=(), source=None, lang="c", flags=("-O2",), link_flags=()):
    """Builds the function (cached by content) and returns it as a JAX operation."""
    fn = signature if isinstance(signature, ffi.Function) else \
        ffi.function(signature, sources, source, lang, flags, link_flags)
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
        if len(inputs) != len(s.inputs):
            raise TypeError(f"{s.name}() takes {len(s.inputs)} array inputs "
                            f"({', '.join(a.name for a in s.inputs)}), got {len(inputs)}")
        xs = []
        for a, x in zip(s.inputs, inputs):
            if not hasattr(x, "dtype") or not hasattr(x, "shape"):
                raise TypeError(f"{s.name}: argument {a.name!r} must be an array, not "
                                f"{type(x).__name__}")
            if np.dtype(x.dtype) != np.dtype(a.dtype):
                hint = " (enable float64 with jax.config.update('jax_enable_x64', True))" \
                    if a.dtype == "float64" else ""
                raise TypeError(f"{s.name}: argument {a.name!r} has dtype {x.dtype}, expected "
                                f"{a.dtype}{hint}")
            xs.append(jnp.asarray(x))
        plan = self.fn.plan([x.shape for x in xs], ints)
        outs = call_p.bind(*xs, fn=self.fn, ints=plan.ints)
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
        return jax.ffi.ffi_call(TARGET, [jax.ShapeDtypeStruct(sh, np.dtype(dt))
                                         for sh, dt in p.results])(
            *args, fn=np.int64(fn.address[kind]), batch=np.int64(p.batch),
            ints=np.asarray(p.ints, np.int64), strides=np.asarray(p.strides, np.int64))
    return body


def _primitive(name, kind):
    p = Primitive(name)
    p.multiple_results = True
    p.def_impl(_body(kind))
    p.def_abstract_eval(_avals(kind))
    mlir.register_lowering(p, mlir.lower_fun(_body(kind), multiple_results=True), platform="cpu")
    return p


call_p = _primitive("enzyme_cc_call", "primal")
jvp_p = _primitive("enzyme_cc_jvp", "jvp")
vjp_p = _primitive("enzyme_cc_vjp", "vjp")


# ---- differentiation: JVP rule of the primal, transpose of the (linear) JVP ----------------------
def _zero(x):
    return ad.Zero.from_primal_value(x)


def _call_jvp(primals, tangents, *, fn, ints):
    outs = call_p.bind(*primals, fn=fn, ints=ints)
    for a, t in zip(fn.sig.inputs, tangents):
        if not a.diff and type(t) is not ad.Zero:
            raise ValueError(f"{fn.name}: a derivative with respect to input {a.name!r} was "
                             "requested, but it is declared In(..., diff=False)")
    diff = [(x, t) for a, x, t in zip(fn.sig.inputs, primals, tangents) if a.diff]
    if all(type(t) is ad.Zero for _, t in diff):
        return outs, [_zero(o) for o in outs]
    ts = [ad.instantiate_zeros(t) for _, t in diff]
    return outs, jvp_p.bind(*primals, *ts, fn=fn, ints=ints)


def _jvp_transpose(cts, *args, fn, ints):
    n = len(fn.sig.inputs)
    primals, tangents = args[:n], args[n:]
    if any(ad.is_undefined_primal(x) for x in primals):
        raise ValueError(f"{fn.name}: cannot transpose with respect to a primal input")
    p = _prepare(fn, "jvp", list(primals) + [t.aval for t in tangents], ints)
    cts = [jnp.zeros(sh, dt) if type(c) is ad.Zero else c for c, (sh, dt) in zip(cts, p.results)]
    sums = tuple(not _lead(t.aval, a) for t, a in zip(tangents, fn.sig.diff_inputs))
    grads = vjp_p.bind(*primals, *cts, fn=fn, ints=ints, sum_lead=sums)
    return [None] * n + list(grads)


ad.primitive_jvps[call_p] = _call_jvp
ad.primitive_transposes[jvp_p] = _jvp_transpose


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


def _call_batch(args, dims, *, fn, ints):
    xs, _ = _broadcast(args, dims, [len(a.shape) for a in fn.sig.inputs])
    outs = call_p.bind(*xs, fn=fn, ints=ints)
    return outs, [0] * len(outs)


def _jvp_batch(args, dims, *, fn, ints):
    nd = [len(a.shape) for a in fn.sig.inputs] + [len(a.shape) for a in fn.sig.diff_inputs]
    xs, _ = _broadcast(args, dims, nd)
    outs = jvp_p.bind(*xs, fn=fn, ints=ints)
    return outs, [0] * len(outs)


def _vjp_batch(args, dims, *, fn, ints, sum_lead):
    nd = [len(a.shape) for a in fn.sig.inputs] + [len(a.shape) for a in fn.sig.outputs]
    xs, inner = _broadcast(args, dims, nd)
    grads = vjp_p.bind(*xs, fn=fn, ints=ints, sum_lead=(False,) * len(sum_lead))
    # each lane keeps its own cotangent; the inner batch is summed where it was before
    grads = [g.sum(axis=tuple(range(1, 1 + len(inner)))) if s and inner else g
             for g, s in zip(grads, sum_lead)]
    return grads, [0] * len(grads)


batching.primitive_batchers[call_p] = _call_batch
batching.primitive_batchers[jvp_p] = _jvp_batch
batching.primitive_batchers[vjp_p] = _vjp_batch

__all__ = ["JaxOp", "op", "SignatureError", "call_p", "jvp_p", "vjp_p"]
