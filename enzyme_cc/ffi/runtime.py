"""A built library loaded with ctypes: each declared function's entry points, the prepared call
of each (shapes, C arrays) cached per shapes, and a numpy front end (the framework-free way to
call them)."""
import ctypes
from dataclasses import dataclass
from math import prod

from .signature import SignatureError, common_lead, integer, no_keyword_inputs, strides


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


# Buffers of each entry point after the inputs: the seeds it reads (by group: the outputs'
# cotangents, the differentiable inputs' tangents) and what it writes.
KINDS = {
    "primal": ((), "outputs"),
    "jvp": (("diff",), "outputs"),
    "vjp": (("outputs",), "diff"),
    # second order (built with order=2): the tangent of the VJP in the inputs' direction t
    # (H(ct) t, forward over reverse), the second derivative f''[t1, t2] (forward over forward)
    "vjp_jvp": (("outputs", "diff"), "diff"),
    "jvp_jvp": (("diff", "diff"), "outputs"),
}
# Split mode (augmented forward, then reverse on its tapes): both take the same buffers, the
# inputs, the outputs, the shadows of the diff inputs and of the outputs, then the tapes.
SPLIT = ("augfwd", "reverse")
SEED_NAMES = {"outputs": "cotangent of ", "diff": "tangent of "}
_ENTRY_ARGS = [ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p),
               ctypes.POINTER(ctypes.c_int64)]


class Prepared:
    """Everything about one call of an entry point that depends only on the shapes: the plan,
    the C arrays of Int values and buffer strides, the shapes and dtypes of the results. Cached
    per shapes, so a repeated call only fills in the buffer addresses."""
    __slots__ = ("kind", "plan", "batch", "ints", "strides", "results", "leads", "_entry",
                 "_c_batch", "_c_ints", "_c_strides", "_ptrs", "tape_bytes", "reverse", "node")

    def __init__(self, fn, kind, plan, strides_, results, leads):
        self.kind, self.plan, self.batch, self.ints = kind, plan, plan.batch, plan.ints
        self.strides, self.results, self.leads = tuple(strides_), tuple(results), tuple(leads)
        # every argument is a ctypes object of the exact C type, so the entry point needs no
        # argtypes conversion (a third of a trivial call's cost)
        self._entry = fn.raw_entry[kind]
        self._c_batch = ctypes.c_int64(plan.batch)
        self._c_ints = (ctypes.c_int64 * max(1, len(plan.ints)))(*plan.ints)
        self._c_strides = (ctypes.c_int64 * len(strides_))(*strides_)
        self._ptrs = ctypes.c_void_p * len(strides_)
        self.node = None        # split mode's C++ autograd node plan (enzyme_cc/torch_node.py)

    def run(self, pointers):
        """Runs the entry point on raw buffer addresses (the caller checked every buffer)."""
        self._entry(self._c_batch, self._c_ints, self._ptrs(*pointers), self._c_strides)


class Function:
    """One declared function of a loaded library."""

    def __init__(self, lib, sig, path, order=1):
        self.sig, self.name, self.path, self.order = sig, sig.name, path, order
        kinds = [k for k in KINDS if order >= 2 or "_" not in k]
        self.entry = {k: getattr(lib, f"ecc_{k}_{sig.name}") for k in kinds}
        for fn in self.entry.values():
            fn.restype, fn.argtypes = None, _ENTRY_ARGS
        self.address = {k: ctypes.cast(fn, ctypes.c_void_p).value for k, fn in self.entry.items()}
        self.raw_entry = {k: lib[f"ecc_{k}_{sig.name}"] for k in kinds + list(SPLIT)}
        for fn in self.raw_entry.values():     # (argtypes None)
            fn.restype = None
        size = lib[f"ecc_tapesize_{sig.name}"]
        size.restype, size.argtypes = ctypes.c_int64, []
        self.tape_bytes = size()        # one item's tape header (__enzyme_augmentsize)
        self._prepared = {}
        self._groups = {"outputs": self.sig.outputs, "diff": self.sig.diff_inputs}

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

    def prepare(self, kind, shapes, ints=(), sum_lead=None):
        """The Prepared call of entry point `kind` for buffers of these shapes (tuples: inputs,
        then the seeds KINDS lists; each possibly under batch axes) and Int values ((name,
        value) pairs).
        sum_lead (vjp kinds): per differentiable input, whether its cotangent is summed over the
        batch (default: where the input itself has no batch axes)."""
        _no_float_ints(self.sig, ints)
        key = (kind, tuple(shapes), tuple(ints), sum_lead)
        try:
            p = self._prepared.get(key)
        except TypeError:           # symbolic sizes (torch.compile's dynamic shapes): no cache
            return self._prepare(kind, *key[1:])
        if p is None:
            if len(self._prepared) > 256:
                self._prepared.clear()
            p = self._prepared[key] = self._prepare(kind, *key[1:])
        return p

    def _prepare(self, kind, shapes, ints, sum_lead):
        if kind not in self.entry:
            raise SignatureError(f"{self.name}: entry point {kind!r} is not built (second-order "
                                 "entry points need order=2 when building)")
        s, n = self.sig, len(self.sig.inputs)
        seed_groups, result_group = KINDS[kind]
        seed_args = [(g, a) for g in seed_groups for a in self._groups[g]]
        if len(shapes) != n + len(seed_args):
            raise SignatureError(f"{self.name}: {kind} takes {n + len(seed_args)} buffers, "
                                 f"got {len(shapes)}")
        seed_leads = []
        for (g, a), sh in zip(seed_args, shapes[n:]):
            k = len(sh) - len(a.shape)
            if k < 0:
                raise SignatureError(f"{self.name}: {SEED_NAMES[g]}{a.name!r} has shape {sh}, "
                                     f"expected {a.shape} (with leading batch axes allowed)")
            seed_leads.append(sh[:k])
        plan = self.plan(shapes[:n], dict(ints), seed_leads)
        for (g, a), sh, lead in zip(seed_args, shapes[n:], seed_leads):
            if sh[len(lead):] != self.item_shape(a, plan):
                raise SignatureError(f"{self.name}: {SEED_NAMES[g]}{a.name!r} has shape {sh}, "
                                     f"expected {self.item_shape(a, plan)} (with leading batch "
                                     "axes allowed)")
        if result_group == "outputs":
            res_args, res_leads = s.outputs, [plan.lead] * len(s.outputs)
        else:
            diff = [i for i, a in enumerate(s.inputs) if a.diff]
            if sum_lead is None:
                sum_lead = tuple(not plan.leads[i] for i in diff)
            res_args, res_leads = s.diff_inputs, [() if x else plan.lead for x in sum_lead]
        bufs = list(zip(s.inputs, plan.leads)) + [(a, l) for (_, a), l in
                                                   zip(seed_args, seed_leads)] \
            + list(zip(res_args, res_leads))
        st = [strides(l, plan.lead, self.item_shape(a, plan)) for a, l in bufs]
        results = [(lead + self.item_shape(a, plan), a.dtype) for a, lead in
                   zip(res_args, res_leads)]
        return Prepared(self, kind, plan, st, results, res_leads)

    def prepare_split(self, shapes, ints=()):
        """The Prepared call of the split entries (augfwd and reverse share it) for inputs of
        these shapes; its results are the outputs, then the shadows: of the diff inputs (a shared
        input's without batch axes: its gradient sums over the batch), of the outputs. Its
        `tape_bytes` is the size of the tapes' buffer (one header per batch item)."""
        _no_float_ints(self.sig, ints)
        key = ("split", tuple(shapes), tuple(ints))
        try:
            p = self._prepared.get(key)
        except TypeError:           # symbolic sizes: no cache
            key, p = None, None
        if p is None:
            if len(self._prepared) > 256:
                self._prepared.clear()
            s, plan = self.sig, self.plan(shapes, dict(ints))
            diff_leads = [l for a, l in zip(s.inputs, plan.leads) if a.diff]
            res = [(a, plan.lead) for a in s.outputs] + list(zip(s.diff_inputs, diff_leads)) + \
                [(a, plan.lead) for a in s.outputs]
            st = [strides(l, plan.lead, self.item_shape(a, plan)) for a, l in
                  list(zip(s.inputs, plan.leads)) + res] + [self.tape_bytes]
            p = Prepared(self, "augfwd", plan, st, [(l + self.item_shape(a, plan), a.dtype)
                                                     for a, l in res], [l for _, l in res])
            p.tape_bytes = self.tape_bytes * plan.batch
            p.reverse = Prepared(self, "reverse", plan, st, p.results, p.leads)
            if key is not None:
                self._prepared[key] = p
        return p

    def run(self, prepared, pointers):
        """Runs a prepared call on raw buffer addresses (the caller checked every buffer)."""
        prepared.run(pointers)

    # ---- numpy front end ---------------------------------------------------------------------
    def _call_np(self, kind, inputs, seeds, ints):
        np = _numpy()
        s = self.sig
        no_keyword_inputs(s, ints)
        if len(inputs) != len(s.inputs):
            raise SignatureError(f"{self.name}: takes {len(s.inputs)} inputs "
                                 f"({', '.join(a.name for a in s.inputs)}), got {len(inputs)}")
        seed_args = [(g, a) for g in KINDS[kind][0] for a in self._groups[g]]
        if len(seeds) != len(seed_args):
            raise SignatureError(f"{self.name}: {kind} takes {len(seed_args)} seed(s) after the "
                                 "inputs (" + ", ".join(SEED_NAMES[g] + repr(a.name)
                                                       for g, a in seed_args) +
                                 f"), got {len(seeds)}")
        bufs = list(inputs) + list(seeds)
        for (g, a), x in zip([("", a) for a in s.inputs] + seed_args, bufs):
            if type(x) is not np.ndarray or x.dtype != a.dtype or not x.flags.c_contiguous:
                _check_array(np, self.name, a, x, SEED_NAMES.get(g, ""))
        p = self.prepare(kind, [x.shape for x in bufs], tuple(ints.items()))
        res = [np.empty(sh, dt) for sh, dt in p.results]
        self.run(p, [_address(x) for x in bufs] + [_address(x) for x in res])
        return res[0] if len(res) == 1 else tuple(res)

    def __call__(self, *inputs, **ints):
        """Outputs of the function on numpy arrays (a tuple unless it has one output)."""
        return self._call_np("primal", inputs, (), ints)

    def vjp(self, inputs, cotangents, **ints):
        """Cotangents of the differentiable inputs (each summed over batch axes it lacks)."""
        return self._call_np("vjp", inputs, _as_list(cotangents), ints)

    def jvp(self, inputs, tangents, **ints):
        """Tangents of the outputs given tangents of the differentiable inputs."""
        return self._call_np("jvp", inputs, _as_list(tangents), ints)

    def vjp_jvp(self, inputs, cotangents, tangents, **ints):
        """(order=2) The VJP's tangent when the inputs move along `tangents`: sum_i ct_i H_i t."""
        return self._call_np("vjp_jvp", inputs, _as_list(cotangents) + _as_list(tangents), ints)

    def jvp_jvp(self, inputs, tangents1, tangents2, **ints):
        """(order=2) The second derivative f''[t1, t2] of each output."""
        return self._call_np("jvp_jvp", inputs, _as_list(tangents1) + _as_list(tangents2), ints)


def _no_float_ints(sig, ints):
    """A float or bool Int value would find the prepared call of the equal int in the cache:
    refused here as the shapes' check refuses it (Signature.resolve)."""
    for k, v in ints:
        if isinstance(v, (float, bool)):
            integer(sig.name, k, v, sig)


def _address(x):
    """Address of a contiguous array's data: through the buffer protocol when it is writable
    (4x faster than x.ctypes.data), else numpy's ctypes view."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(x))
    except (TypeError, ValueError):
        return x.ctypes.data


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

    def __init__(self, path, sigs, order=1):
        self.path = path
        self._dll = ctypes.CDLL(path)
        self.functions = {s.name: Function(self._dll, s, path, order) for s in sigs}

    def __getitem__(self, name):
        return self.functions[name]

    def __getattr__(self, name):
        try:
            return self.__dict__["functions"][name]
        except KeyError:
            raise AttributeError(name) from None


class _Seed:
    name = "a tangent or cotangent"
