"""A built library loaded with ctypes: each declared function's three entry points, the shape
plan of one call, and a numpy front end (the framework-free way to call them)."""
import ctypes
from dataclasses import dataclass
from math import prod

from .signature import SignatureError, common_lead, strides

ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                         ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64))


@dataclass(frozen=True)
class Plan:
    """One call's sizes: the Int values, the batch shape, each input's batch axes and each
    output's full shape."""
    ints: tuple
    lead: tuple
    leads: tuple
    out_shapes: tuple

    @property
    def batch(self):
        return prod(self.lead)


class Function:
    """One declared function of a loaded library."""

    def __init__(self, lib, sig, path):
        self.sig, self.name, self.path = sig, sig.name, path
        self.entry = {k: getattr(lib, f"ecc_{k}_{sig.name}") for k in ("primal", "vjp", "jvp")}
        for fn in self.entry.values():
            fn.restype, fn.argtypes = None, [ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                                             ctypes.POINTER(ctypes.c_void_p),
                                             ctypes.POINTER(ctypes.c_int64)]
        self.address = {k: ctypes.cast(fn, ctypes.c_void_p).value for k, fn in self.entry.items()}

    def __repr__(self):
        return f"<enzyme_cc function {self.name} from {self.path}>"

    # ---- shapes ------------------------------------------------------------------------------
    def plan(self, input_shapes, ints=None, extra_leads=()):
        """Sizes of one call. extra_leads: batch axes of seeds (tangents, cotangents) that take
        part in the batch shape, as under a framework's vmap of a derivative."""
        ints = dict(ints or {})
        if len(input_shapes) != len(self.sig.inputs):
            raise SignatureError(f"{self.name}: takes {len(self.sig.inputs)} inputs "
                                 f"({', '.join(a.name for a in self.sig.inputs)}), "
                                 f"got {len(input_shapes)}")
        values, lead, leads = self.sig.resolve(input_shapes, ints)
        if extra_leads:
            lead = common_lead(self.name, list(self.sig.inputs) + [_Seed()] * len(extra_leads),
                               list(leads) + [tuple(x) for x in extra_leads])
        outs = tuple(lead + self.sig.shape_of(a, values) for a in self.sig.outputs)
        return Plan(values, lead, tuple(leads), outs)

    def item_shape(self, arg, plan):
        return self.sig.shape_of(arg, plan.ints)

    def buffer_strides(self, kind, plan, seed_leads=None, grad_leads=None):
        """Per-buffer element strides in the order of the `kind` entry point's buffers.
        seed_leads: batch axes of the input tangents (jvp; default the inputs') or of the output
        cotangents (vjp; default the batch shape). grad_leads: batch axes of the input cotangents
        (vjp; default the inputs'; () sums over the batch)."""
        s, P = self.sig, plan
        ins = [strides(l, P.lead, self.item_shape(a, P)) for a, l in zip(s.inputs, P.leads)]
        outs = [strides(P.lead, P.lead, self.item_shape(a, P)) for a in s.outputs]
        diff = [i for i, a in enumerate(s.inputs) if a.diff]
        if kind == "primal":
            return ins + outs
        if kind == "jvp":
            seeds = seed_leads if seed_leads is not None else [P.leads[i] for i in diff]
            return ins + [strides(l, P.lead, self.item_shape(s.inputs[i], P))
                          for i, l in zip(diff, seeds)] + outs
        seeds = seed_leads if seed_leads is not None else [P.lead] * len(s.outputs)
        grads = grad_leads if grad_leads is not None else [P.leads[i] for i in diff]
        return ins + [strides(l, P.lead, self.item_shape(a, P)) for a, l in zip(s.outputs, seeds)] \
            + [strides(l, P.lead, self.item_shape(s.inputs[i], P)) for i, l in zip(diff, grads)]

    def call(self, kind, plan, pointers, strides_):
        """Runs an entry point on raw buffer addresses (the caller checked every buffer)."""
        n = len(pointers)
        ints = (ctypes.c_int64 * max(1, len(plan.ints)))(*plan.ints)
        ptrs = (ctypes.c_void_p * n)(*pointers)
        st = (ctypes.c_int64 * n)(*strides_)
        self.entry[kind](plan.batch, ints, ptrs, st)

    # ---- numpy front end ---------------------------------------------------------------------
    def __call__(self, *inputs, **ints):
        """Outputs of the function on numpy arrays (a tuple unless it has one output)."""
        np = _numpy()
        inputs = [_check_array(np, self.name, a, x) for a, x in zip(self.sig.inputs, inputs)]
        plan = self.plan([x.shape for x in inputs], ints)
        outs = [np.empty(sh, a.dtype) for a, sh in zip(self.sig.outputs, plan.out_shapes)]
        self.call("primal", plan, [x.ctypes.data for x in inputs + outs],
                  self.buffer_strides("primal", plan))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def vjp(self, inputs, cotangents, **ints):
        """Cotangents of the differentiable inputs (each summed over batch axes it lacks)."""
        np = _numpy()
        inputs = [_check_array(np, self.name, a, x) for a, x in zip(self.sig.inputs, inputs)]
        plan = self.plan([x.shape for x in inputs], ints)
        cts = []
        for a, sh, c in zip(self.sig.outputs, plan.out_shapes, _as_list(cotangents)):
            c = _check_array(np, self.name, a, c, "cotangent of ")
            if c.shape != sh:
                raise SignatureError(f"{self.name}: cotangent of {a.name!r} has shape {c.shape},"
                                     f" expected {sh}")
            cts.append(c)
        diff = [(a, x) for a, x in zip(self.sig.inputs, inputs) if a.diff]
        grads = [np.empty(x.shape, a.dtype) for a, x in diff]
        self.call("vjp", plan, [x.ctypes.data for x in inputs + cts + grads],
                  self.buffer_strides("vjp", plan))
        return grads[0] if len(grads) == 1 else tuple(grads)

    def jvp(self, inputs, tangents, **ints):
        """Tangents of the outputs given tangents of the differentiable inputs."""
        np = _numpy()
        inputs = [_check_array(np, self.name, a, x) for a, x in zip(self.sig.inputs, inputs)]
        plan = self.plan([x.shape for x in inputs], ints)
        diff = [(a, x) for a, x in zip(self.sig.inputs, inputs) if a.diff]
        ts = []
        for (a, x), t in zip(diff, _as_list(tangents)):
            t = _check_array(np, self.name, a, t, "tangent of ")
            if t.shape != x.shape:
                raise SignatureError(f"{self.name}: tangent of {a.name!r} has shape {t.shape}, "
                                     f"expected {x.shape}")
            ts.append(t)
        outs = [np.empty(sh, a.dtype) for a, sh in zip(self.sig.outputs, plan.out_shapes)]
        self.call("jvp", plan, [x.ctypes.data for x in inputs + ts + outs],
                  self.buffer_strides("jvp", plan))
        return outs[0] if len(outs) == 1 else tuple(outs)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("enzyme_cc.ffi's array front end needs numpy (pip install numpy)") \
            from None
    return numpy


def _check_array(np, fname, a, x, what=""):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{fname}: {what}argument {a.name!r} must be a numpy array, "
                        f"not {type(x).__name__}")
    if x.dtype != np.dtype(a.dtype):
        raise TypeError(f"{fname}: {what}argument {a.name!r} has dtype {x.dtype}, expected "
                        f"{a.dtype}")
    if not x.flags.c_contiguous:
        raise ValueError(f"{fname}: {what}argument {a.name!r} is not C-contiguous "
                         "(use numpy.ascontiguousarray)")
    return x


class Library:
    """The functions of one built library, by name (`lib.f` or `lib["f"]`)."""

    def __init__(self, path, sigs):
        self.path = path
        self._dll = ctypes.CDLL(path)
        self.functions = {s.name: Function(self._dll, s, path) for s in sigs}

    def __getitem__(self, name):
        return self.functions[name]

    def __getattr__(self, name):
        try:
            return self.__dict__["functions"][name]
        except KeyError:
            raise AttributeError(name) from None


class _Seed:
    name = "a tangent or cotangent"
