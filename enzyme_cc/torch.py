"""A declared C/C++/Fortran function as a PyTorch operation: `torch.library.custom_op`s for the
primal and its VJP (opaque to torch.compile), an autograd formula, a vmap rule, and a leading batch
shape looped over in C. CPU tensors of the declared dtype; contiguous tensors are passed by
pointer, without copies. A call autograd records runs Enzyme's split mode: the augmented forward
keeps its tape in the ctx and the backward reverses it, so the primal runs once.

    op = enzyme_cc.torch.op(Signature("f", [In("x", ("n",)), Int("n"), Out("y", ("n",))]),
                            sources=["f.c"])
    y = op(x)                  # x: (n,) or (batch..., n)
"""
import ctypes
import hashlib

import torch
import torch.autograd.forward_ad as _fwad

from . import ffi, torch_node
from .ffi.runtime import KINDS
from .ffi.signature import SignatureError, no_keyword_inputs

# (complex tensors: the C function sees pairs of floats, and the real-pair derivative is
# torch's convention for complex gradients, dL/dRe + i dL/dIm)
_DTYPES = {"float64": torch.float64, "float32": torch.float32, "complex128": torch.complex128,
           "complex64": torch.complex64, "int32": torch.int32, "int64": torch.int64}
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_C = torch._C
_is_wrapped = _C._functorch.is_functorch_wrapped_tensor
_is_legacy = _C._functorch.is_legacy_batchedtensor
_BASE_APPLY = _C._FunctionBase.__dict__["apply"]
_OPS = {}


def op(signature, sources=(), source=None, lang="c", flags=("-O2",), link_flags=(), order=1,
       **inferred):
    """Builds the function (cached by content) and returns it as a torch operation. order=2 also
    builds the second-order entry points (double backward, forward over reverse). `signature`:
    a Signature, or the function's name with the keywords of ffi.signature_of (shapes=,
    outputs=, nondiff=, ret=): the compiled prototype says the rest."""
    fn = signature if isinstance(signature, ffi.Function) else \
        ffi.function(signature, sources, source, lang, flags, link_flags, order, **inferred)
    key = (fn.path, fn.sig.key())
    if key not in _OPS:
        _OPS[key] = TorchOp(fn)
    return _OPS[key]


class _NoStorage(Exception):
    """A tensor that looked plain has no storage: the call goes through the custom op."""


def _plain(ts):
    """True when tensors can go straight to C: ordinary CPU tensors, nothing tracing or
    transforming them (torch.compile, torch.func, dispatch or function modes, torch.jit.trace)
    and no lazily negated or conjugated views. Otherwise the custom ops run, whose fake kernels
    and vmap rules those machineries need (and whose kernels resolve such views)."""
    if torch.compiler.is_compiling() or _C._are_functorch_transforms_active() or \
            _C._len_torch_dispatch_stack() or _C._is_torch_function_mode_enabled() or \
            _C._get_tracing_state():
        return False
    for t in ts:    # (gradcheck's legacy vmap batches tensors with no transform active)
        if type(t) not in _PLAIN or _is_wrapped(t) or t.is_neg() or t.is_conj():
            return False
    return True


def _no_lead(x, a):
    return x.dim() == len(a.shape)


def _fit(x, like):
    """x summed over the leading axes `like` lacks (a seed shared by the batch)."""
    extra = x.dim() - like.dim()
    return x.sum(dim=tuple(range(extra))) if extra > 0 else x


class TorchOp:
    """Call it with the inputs (tensors, in declared order) and Int values not implied by their
    shapes as keywords; returns the output tensor (a tuple when there are several)."""

    def __init__(self, fn):
        self.fn, self.sig = fn, fn.sig
        # (a function's names: torch.jit.trace(op, ...) asks the callable for them)
        self.__name__ = self.__qualname__ = fn.name
        self._int_names = tuple(a.name for a in self.sig.ints)
        self._in_dtypes = [_DTYPES[a.dtype] for a in self.sig.inputs]
        self._impls, self._items = {}, {}
        # whether a recorded call runs split mode: cleared when a split-mode graph is dropped
        # without a backward (its tape then costs a reverse pass), so later recorded calls run
        # the primal alone; set again by a backward of such a call (the combined VJP)
        self._split_flag = ctypes.c_int8(1)     # (the C++ node clears it too)
        tag = hashlib.sha256(repr((fn.path, fn.sig.key())).encode()).hexdigest()[:12]
        self._base = base = f"enzyme_cc::{fn.name}_{tag}"
        # one custom op per entry point (opaque to torch.compile), all with one schema:
        # (inputs, seeds, ints, sum_lead) -> results (sum_lead as ints: jit.trace takes no
        # bool lists)
        self.ops = {}
        for kind in fn.entry:
            o = torch.library.custom_op(base + ("" if kind == "primal" else "_" + kind),
                                        self._impl(kind), mutates_args=())
            o.register_fake(self._fake(kind))
            torch.library.register_vmap(o, self._vmap(kind))
            self.ops[kind] = o
        self.primal, self.vjp = self.ops["primal"], self.ops["vjp"]
        # the ops' own autograd formulas: what torch.compile traces (Dynamo refuses an
        # autograd.Function with a custom jvp); they run the same derivatives as the Functions
        for kind, back in (("primal", self._primal_vjp), ("vjp", self._vjp_vjp),
                           ("jvp", self._jvp_vjp)):
            torch.library.register_autograd(self.ops[kind], _op_backward(back),
                                            setup_context=_op_setup)
        # autograd.Functions (not register_autograd, which torch.func.grad rejects in torch
        # 2.13) over each entry point; their vmap rules come from the ops' vmap rules
        derivs = {"primal": (self._primal_vjp, self._primal_jvp),
                  "vjp": (self._vjp_vjp, self._vjp_jvp),
                  "jvp": (self._jvp_vjp, self._jvp_jvp)}
        self.function = {}
        # split: augmented forward and reverse; direct: the primal entry on plain tensors, its
        # call prepared by __call__
        derivs["split"] = (self._split_vjp, self._primal_jvp)
        derivs["direct"] = derivs["primal"]
        special = {"split": self._split_forward,
                   "direct": lambda c, *xs: tuple(self._run(c.pre, xs))}
        for kind in list(KINDS) + list(special):
            back, fwd = derivs.get(kind, (self._third_order, self._third_order))
            self.function[kind] = type(f"{fn.name}_{kind}_autograd", (torch.autograd.Function,), {
                "forward": staticmethod(special.get(kind) or self._forward(kind)),
                "setup_context": staticmethod(_setup),
                "backward": staticmethod(back), "jvp": staticmethod(fwd),
                "generate_vmap_rule": True})
        # Function.apply binds its arguments with inspect.signature on every call (~70 us);
        # outside torch.func and torch.compile the C base's apply does the same work
        self._base_apply = {k: _BASE_APPLY.__get__(None, f) for k, f in self.function.items()}

    def __repr__(self):
        return f"<enzyme_cc torch op {self.fn.name}>"

    @property
    def _split_on(self):
        return bool(self._split_flag.value)

    @_split_on.setter
    def _split_on(self, on):
        self._split_flag.value = int(on)

    # ---- the user's call: every check that names an argument happens here ----------------------
    def __call__(self, *inputs, **ints):
        s = self.sig
        no_keyword_inputs(s, ints)
        if len(inputs) != len(s.inputs):
            raise TypeError(f"{s.name}() takes {len(s.inputs)} tensor inputs "
                            f"({', '.join(a.name for a in s.inputs)}), got {len(inputs)}")
        record = False
        for k, (a, x, dt) in enumerate(zip(s.inputs, inputs, self._in_dtypes)):
            if type(x) not in _PLAIN or not x.is_cpu or x.dtype != dt or not x.is_contiguous():
                _check_tensor(s.name, a, x)
                if not x.is_contiguous() and not _C._are_functorch_transforms_active():
                    # a view (transposed, sliced, expanded) is read as torch's own ops do: a
                    # contiguous copy, through which the gradient flows back (under vmap, the
                    # op's vmap rule makes the batch contiguous itself)
                    inputs = inputs[:k] + (x.contiguous(),) + inputs[k + 1:]
            record = record or x.requires_grad
        if torch.compiler.is_compiling():   # the op, with its registered autograd formula
            if _C._are_functorch_transforms_active():
                # (Dynamo, seeing the exception while tracing, runs the compiled function
                # eagerly, where torch.func gets it right; a user sees the message only where
                # Dynamo cannot fall back)
                raise RuntimeError(
                    f"{s.name}: torch.compile cannot trace an enzyme_cc op inside a torch.func "
                    "transform (grad, jacrev, jvp, ...); it runs the function eagerly where "
                    "it can; hint: put the transform outside (torch.func.grad("
                    "torch.compile(f))), or compute the gradient with torch.autograd.grad or "
                    ".backward() inside the compiled function")
            full = self.fn.plan([tuple(x.shape) for x in inputs], ints).ints
            outs = self.ops["primal"](list(inputs), [], list(full), [])
        elif not _plain(inputs):    # traced or transformed: the autograd.Function and the ops
            full = self.fn.plan([tuple(x.shape) for x in inputs], ints).ints
            outs = self.function["primal"].apply(_Consts(full, (), len(inputs)), *inputs)
        else:
            fwad = _fwad._current_level >= 0
            if fwad or record and torch.is_grad_enabled() and not self._split_on:
                # the primal (its jvp: the JVP entry; its backward: the combined VJP)
                p = self.fn.prepare("primal", [x.shape for x in inputs], tuple(ints.items()))
                outs = self._base_apply["direct"](_Consts(p.ints, (), len(inputs), p), *inputs)
            elif record and torch.is_grad_enabled():    # split mode: the tape goes to backward
                p = self.fn.prepare_split([x.shape for x in inputs], tuple(ints.items()))
                if p.node is None:
                    p.node = torch_node.plan(self, p, _DTYPES) or False
                if p.node:      # the C++ autograd node
                    return torch_node.split_call(p.node, inputs)
                outs = self._base_apply["split"](_Consts(p.ints, (), len(inputs), p), *inputs)
            else:                   # nothing to record: straight to C
                p = self.fn.prepare("primal", [x.shape for x in inputs], tuple(ints.items()))
                outs = self._run(p, inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ---- running an entry point ----------------------------------------------------------------
    def _run(self, prepared, bufs):
        try:
            ptrs = [x.data_ptr() for x in bufs]
        except RuntimeError:    # no storage: batched by gradcheck's legacy vmap
            raise _NoStorage from None
        # (torch.empty parses unpacked sizes faster than a tuple)
        res = [torch.empty(*sh, dtype=_DTYPES[dt]) if sh else torch.empty((), dtype=_DTYPES[dt])
               for sh, dt in prepared.results]
        self.fn.run(prepared, ptrs + [r.data_ptr() for r in res])
        return res

    def _prepare(self, kind, bufs, ints, sum_lead):
        return self.fn.prepare(kind, [x.shape for x in bufs], tuple(zip(self._int_names, ints)),
                               tuple(map(bool, sum_lead)) if sum_lead else None)

    def _impl(self, kind):
        if kind in self._impls:
            return self._impls[kind]

        def impl(inputs: list[torch.Tensor], seeds: list[torch.Tensor], ints: list[int],
                 sum_lead: list[int]) -> list[torch.Tensor]:
            bufs = [x.resolve_neg().resolve_conj().contiguous()
                    for x in list(inputs) + list(seeds)]
            return self._run(self._prepare(kind, bufs, ints, sum_lead), bufs)
        self._impls[kind] = impl
        return impl

    def _fake(self, kind):
        def fake(inputs, seeds, ints, sum_lead):
            bufs = list(inputs) + list(seeds)
            # (sizes may be symbolic: torch.compile's dynamic shapes)
            p = self.fn.prepare(kind, [tuple(x.shape) for x in bufs],
                                tuple(zip(self._int_names, ints)),
                                tuple(map(bool, sum_lead)) if sum_lead else None)
            return [bufs[0].new_empty(sh, dtype=_DTYPES[dt]) for sh, dt in p.results]
        return fake

    def _call(self, kind, inputs, seeds, ints, sums, plain=None):
        """Entry point `kind` on tensors: straight to C when nothing traces them, else the op."""
        if kind not in self.ops:
            self._need_order2()
        if plain or (plain is None and _plain((*inputs, *seeds))):
            try:
                return self._impl(kind)(inputs, seeds, ints, sums)
            except _NoStorage:  # gradcheck's legacy vmap: its per-item loop over the items op
                return self._items_op(kind)(*inputs, *seeds, list(ints), [int(x) for x in sums])
        return self.ops[kind](list(inputs), list(seeds), list(ints), [int(x) for x in sums])

    def _items_op(self, kind):
        """Entry point `kind` as a custom op on single tensors (no tensor lists): torch's legacy
        vmap (gradcheck's check_batched_grad and check_batched_forward_grad) has no batching
        rule for a custom op, and its fallback, a loop calling the op on each item, refuses
        tensor lists."""
        if kind not in self._items:
            groups = {"outputs": self.sig.outputs, "diff": self.sig.diff_inputs}
            ni = len(self.sig.inputs)
            n = ni + sum(len(groups[g]) for g in KINDS[kind][0])
            impl, nres = self._impl(kind), len(groups[KINDS[kind][1]])

            def items(*a):      # (a schema's one-tensor tuple is that tensor)
                r = impl(a[:ni], a[ni:n], a[n], a[n + 1])
                return tuple(r) if nres > 1 else r[0]
            args = "".join(f"Tensor b{i}, " for i in range(n))
            op = torch.library.custom_op(
                f"{self._base}_{kind}_items", items, mutates_args=(),
                schema=f"({args}int[] ints, int[] sum_lead) -> ({', '.join(['Tensor'] * nres)})")
            self._items[kind] = op if nres > 1 else (lambda *a: (op(*a),))
        return self._items[kind]

    def _forward(self, kind):
        # (c.pre: the result, already computed by a split-mode reverse)
        return lambda c, *bufs: c.pre if c.pre is not None else \
            tuple(self._call(kind, bufs[:c.n], bufs[c.n:], c.ints, c.sums))

    # ---- split mode: the recorded forward keeps Enzyme's tape for the backward ------------------
    def _split_forward(self, c, *inputs):
        """The augmented forward (plain tensors, autograd recording): the outputs, and the tapes
        and shadows the reverse needs, held by a _Tape that setup_context gives the ctx."""
        p, bufs = c.pre, list(inputs)
        res = [torch.empty(*sh, dtype=_DTYPES[dt]) if sh else torch.empty((), dtype=_DTYPES[dt])
               for sh, dt in p.results]
        tape = torch.empty(p.tape_bytes, dtype=torch.uint8)
        ptrs = [x.data_ptr() for x in bufs + res] + [tape.data_ptr()]
        self.fn.run(p, ptrs)
        nout = len(self.sig.outputs)
        outs = res[:nout]
        nd = nout + len(self.sig.diff_inputs)
        c.pre = _Tape(self, p, ptrs, bufs, [o.detach() for o in outs], res[nout:nd],
                      res[nd:], tape)
        return tuple(outs)

    def _split_vjp(self, ctx, *cts):
        """Backward of a split-mode forward: the reverse on its tape (once; a second backward
        of a retained graph, or an output changed in place since, takes the combined VJP)."""
        xs, _ = _split(ctx)     # (checks that no input changed in place)
        self._diff_only(ctx.needs_input_grad[1:], "gradient")
        tape, ctx.tape = ctx.tape, None
        seeds = [c for c in cts if c is not None]
        # batched cotangents (a vmap of the backward, is_grads_batched, gradcheck's legacy
        # vmap) take the combined VJP, whose ops have vmap rules; the tape's shadows are one item
        if tape is None or not tape.unchanged() or not _plain(seeds) or \
                any(map(_is_legacy, seeds)):
            if tape is not None:
                tape.discard()
            return self._primal_vjp(ctx, *cts)
        dx = tape.reverse(cts)
        if torch.is_grad_enabled():     # create_graph: recorded as the VJP (double backward)
            cts = self._zeros(cts, ctx.outputs_like)
            dx = self._apply("vjp", ctx.ints, self._sums(self._diff(xs)), xs, cts, pre=tuple(dx))
        return (None, *self._scatter(dx))

    def _apply(self, kind, ints, sums, inputs, seeds, pre=None):
        """Entry point `kind` as a differentiable operation (backward and jvp call it too);
        pre: its result, already computed."""
        if _plain((*inputs, *seeds)):
            if not torch.is_grad_enabled() and _fwad._current_level < 0:   # nothing to record
                return pre or self._call(kind, inputs, seeds, ints, sums, plain=True)
            return self._base_apply[kind](_Consts(ints, tuple(sums), len(inputs), pre), *inputs,
                                          *seeds)
        return self.function[kind].apply(_Consts(ints, tuple(sums), len(inputs), pre), *inputs,
                                         *seeds)

    # ---- derivatives of each entry point (ctx: ints, sums, inputs, seeds) ------------------------
    def _need_order2(self):
        raise RuntimeError(f"{self.sig.name}: second derivatives need the second-order entry "
                           "points: build with enzyme_cc.torch.op(..., order=2)")

    def _third_order(self, ctx, *_):
        raise RuntimeError(f"{self.sig.name}: third and higher derivatives are not provided by "
                           "enzyme_cc.torch (order=2 builds second-order entry points only)")

    def _diff_only(self, wants, what):
        """Refuses a derivative with respect to a diff=False input (never a silent zero)."""
        for a, want in zip(self.sig.inputs, wants):
            if want and not a.diff:
                raise RuntimeError(f"{self.sig.name}: a {what} with respect to input {a.name!r} "
                                   "was requested, but it is declared In(..., diff=False)")

    def _zeros(self, gs, like):
        return [g if g is not None else torch.zeros_like(x) for g, x in zip(gs, like)]

    def _diff(self, xs):
        return [x for a, x in zip(self.sig.inputs, xs) if a.diff]

    def _scatter(self, grads):
        """Per input: its entry of grads (diff inputs, in order) or None."""
        it = iter(grads)
        return [next(it) if a.diff else None for a in self.sig.inputs]

    def _sums(self, xs):
        return tuple(_no_lead(x, a) for a, x in zip(self.sig.diff_inputs, xs))

    def _primal_vjp(self, ctx, *cts):
        self._split_on = True   # gradients are wanted: recorded calls keep their tapes again
        xs, _ = _split(ctx)
        self._diff_only(ctx.needs_input_grad[1:], "gradient")
        cts = self._zeros(cts, ctx.outputs_like)
        dx = self._apply("vjp", ctx.ints, self._sums(self._diff(xs)), xs, cts)
        return (None, *self._scatter(dx))

    def _primal_jvp(self, ctx, _c, *ts):
        xs, _ = _split(ctx)
        self._diff_only([t is not None for t in ts], "derivative")
        ts = self._zeros(self._diff(ts), self._diff(xs))
        return tuple(self._apply("jvp", ctx.ints, (), xs, ts))

    def _vjp_vjp(self, ctx, *us):
        """The VJP g = J(x)^T ct is linear in ct and its x-Jacobian sum_i ct_i H_i symmetric:
        d<u, g>/dx = vjp_jvp(x, ct; u), d<u, g>/dct = J u."""
        xs, cts = _split(ctx)
        n = len(xs)
        self._diff_only(ctx.needs_input_grad[1:1 + n], "second derivative")
        us = self._zeros(us, ctx.outputs_like)
        dx = self._apply("vjp_jvp", ctx.ints, self._sums(self._diff(xs)), xs, list(cts) + us) \
            if any(ctx.needs_input_grad[1:1 + n]) else [None] * len(us)
        dct = [_fit(d, c) for d, c in zip(self._apply("jvp", ctx.ints, (), xs, us), cts)] \
            if any(ctx.needs_input_grad[1 + n:]) else [None] * len(cts)
        return (None, *self._scatter(dx), *dct)

    def _vjp_jvp(self, ctx, _c, *ts):
        """Tangent of g = J(x)^T ct: vjp_jvp(x, ct; dx) + J(x)^T dct."""
        xs, cts = _split(ctx)
        n = len(xs)
        self._diff_only([t is not None for t in ts[:n]], "second derivative")
        dxs, dcts = self._zeros(self._diff(ts[:n]), self._diff(xs)), ts[n:]
        out = self._apply("vjp_jvp", ctx.ints, ctx.sums, xs, list(cts) + dxs)
        if any(t is not None for t in dcts):
            out = [a + b for a, b in zip(out, self._apply(
                "vjp", ctx.ints, ctx.sums, xs, self._zeros(dcts, cts)))]
        return tuple(out)

    def _jvp_vjp(self, ctx, *ws):
        """Gradient of <w, J(x) t>: with respect to x vjp_jvp(x, w; t), to t J(x)^T w."""
        xs, ts = _split(ctx)
        n = len(xs)
        self._diff_only(ctx.needs_input_grad[1:1 + n], "second derivative")
        ws = self._zeros(ws, ctx.outputs_like)
        dx = self._apply("vjp_jvp", ctx.ints, self._sums(self._diff(xs)), xs, ws + list(ts)) \
            if any(ctx.needs_input_grad[1:1 + n]) else [None] * len(ts)
        dt = self._apply("vjp", ctx.ints, self._sums(ts), xs, ws) \
            if any(ctx.needs_input_grad[1 + n:]) else [None] * len(ts)
        return (None, *self._scatter(dx), *dt)

    def _jvp_jvp(self, ctx, _c, *ds):
        """Tangent of J(x) t: f''[t, dx] + J(x) dt."""
        xs, ts = _split(ctx)
        n = len(xs)
        self._diff_only([t is not None for t in ds[:n]], "second derivative")
        dxs, dts = self._zeros(self._diff(ds[:n]), self._diff(xs)), ds[n:]
        out = self._apply("jvp_jvp", ctx.ints, (), xs, list(ts) + dxs)
        if any(t is not None for t in dts):
            out = [a + b for a, b in zip(out, self._apply("jvp", ctx.ints, (), xs,
                                                          self._zeros(dts, ts)))]
        return tuple(out)

    # ---- vmap: the mapped axis becomes (part of) the batch looped over in C --------------------
    def _vmap(self, kind):
        groups = {"outputs": self.sig.outputs, "diff": self.sig.diff_inputs}
        seed_nd = [len(a.shape) for g in KINDS[kind][0] for a in groups[g]]

        def rule(info, in_dims, inputs, seeds, ints, sum_lead):
            nd = [len(a.shape) for a in self.sig.inputs] + seed_nd
            n = len(inputs)
            args, inner = _broadcast(info.batch_size, list(inputs) + list(seeds),
                                     list(in_dims[0]) + list(in_dims[1] or [None] * len(seeds)),
                                     nd)
            res = self.ops[kind](args[:n], args[n:], list(ints), [0] * len(sum_lead))
            # each lane keeps its own cotangent; the inner batch is summed where it was before
            res = [r.sum(dim=tuple(range(1, 1 + len(inner)))) if s and inner else r
                   for r, s in zip(res, list(sum_lead) or [False] * len(res))]
            return res, [0] * len(res)
        return rule


class _Consts:
    """The non-tensor arguments of an entry point's autograd.Function: Int values, sum_lead
    flags, number of inputs (one opaque leaf, so torch.func's pytrees of in_dims, tangents and
    cotangents line up with the tensors); pre: the result already computed, or for split mode
    the prepared call in and the _Tape out of forward."""
    __slots__ = ("ints", "sums", "n", "pre")

    def __init__(self, ints, sums, n, pre=None):
        self.ints, self.sums, self.n, self.pre = ints, sums, n, pre

    def __repr__(self):     # torch.jit.trace compares graphs by their text
        return f"_Consts(ints={self.ints}, sums={self.sums}, n={self.n})"


class _Tape:
    """One split-mode forward's tapes (a header per batch item), the shadows its augmented
    forward was given and the buffers it ran on (kept alive: the reverse gets the same
    pointers). The reverse runs once: for the backward, else when the graph is dropped (with
    zero cotangents, which frees the tapes and what the forward kept for the reverse: the only
    way to free them, so the op then stops keeping tapes, see TorchOp._split_on)."""
    __slots__ = ("op", "prep", "ptrs", "keep", "outs", "din", "dout", "versions")

    def __init__(self, op, prep, ptrs, inputs, outs, din, dout, tape):
        self.op, self.prep, self.ptrs, self.din, self.dout = op, prep, ptrs, din, dout
        # the outputs detached (the outputs themselves would make a cycle through their
        # grad_fn and the ctx holding this)
        self.keep, self.outs = (inputs, tape), outs
        self.versions = [o._version for o in outs]

    def unchanged(self):
        """False when an output changed in place (the reverse reads the outputs' memory)."""
        return all(o._version == v for o, v in zip(self.outs, self.versions))

    def reverse(self, cts):
        for d, c in zip(self.dout, cts):
            d.zero_() if c is None else d.copy_(c)
        din = self.din
        self._run()
        return din

    def discard(self):
        for d in self.dout:
            d.zero_()
        self._run()

    def _run(self):
        ptrs, self.ptrs = self.ptrs, None
        self.op.fn.run(self.prep.reverse, ptrs)
        self.keep = self.outs = self.din = self.dout = None

    def __del__(self):
        if self.ptrs is not None:
            try:
                self.op._split_on = False
                self.discard()
            except Exception:   # interpreter shutdown: the library may be gone
                pass


def _setup(ctx, inputs, output):
    c, *bufs = inputs
    ctx.save_for_backward(*bufs)
    ctx.ints, ctx.sums, ctx.n = c.ints, c.sums, c.n
    ctx.set_materialize_grads(False)    # absent (co)tangents stay None: diff=False checks
    if isinstance(c.pre, _Tape):        # split mode (run with no forward-AD level: no jvp)
        ctx.tape, c.pre = c.pre, None
        ctx.outputs_like = ctx.tape.outs
    else:   # shapes for absent cotangents
        ctx.save_for_forward(*bufs)
        try:
            ctx.outputs_like = [o.detach() for o in output]
        except RuntimeError:    # legacy vmap's batched tensors have no detach
            ctx.outputs_like = [torch.zeros_like(o) for o in output]


def _op_setup(ctx, inputs, output):
    """setup_context of the custom ops' registered autograd (torch.compile's path): the same
    ctx fields as the autograd.Functions' (needs_input_grad offset by the _Consts slot)."""
    xs, seeds, ints, sums = inputs
    ctx.save_for_backward(*xs, *seeds)
    ctx.ints, ctx.sums, ctx.n = tuple(ints), tuple(map(bool, sums)), len(xs)
    ctx.outputs_like = [o.detach() for o in output]


class _OpCtx:
    """The custom op's ctx seen as an autograd.Function's (flat needs_input_grad)."""

    def __init__(self, ctx):
        self.saved_tensors, self.ints, self.sums, self.n = ctx.saved_tensors, ctx.ints, \
            ctx.sums, ctx.n
        self.outputs_like = ctx.outputs_like
        xs, seeds = ctx.needs_input_grad[:2]
        self.needs_input_grad = (False, *xs, *seeds)


def _op_backward(back):
    def backward(ctx, grads):
        res = back(_OpCtx(ctx), *grads)[1:]
        # (torch's pytree of the inputs keeps an empty int list a list, others a leaf)
        return (list(res[:ctx.n]), list(res[ctx.n:]), *([] if not x else None
                                                         for x in (ctx.ints, ctx.sums)))
    return backward


def _split(ctx):
    """The saved inputs and seeds."""
    saved = ctx.saved_tensors      # unpacked once (checkpoint's hooks allow no second time)
    return saved[:ctx.n], saved[ctx.n:]


def _broadcast(size, xs, dims, item_ndims):
    """Moves each mapped axis to the front and makes every batch shape either () or the common
    (size, inner...) one the C loop runs over. Returns the tensors and the inner batch shape."""
    moved = []
    for x, d, nd in zip(xs, dims, item_ndims):
        x = x if d is None else x.movedim(d, 0)
        moved.append((x, d is not None, tuple(x.shape[:x.dim() - nd]), tuple(x.shape[x.dim() - nd:])))
    inner = ()
    for x, mapped, lead, item in moved:
        inner = (lead[1:] if mapped else lead) or inner
    target = (size,) + inner
    out = []
    for x, mapped, lead, item in moved:
        if mapped and lead != target:
            x = x.reshape((size,) + (1,) * len(inner) + item).expand(target + item)
        elif not mapped and lead:
            x = x.expand(target + item)
        out.append(x.contiguous())
    return out, inner


def _check_tensor(fname, a, x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{fname}: argument {a.name!r} must be a torch.Tensor, not "
                        f"{type(x).__name__}")
    if x.layout != torch.strided:
        raise ValueError(f"{fname}: argument {a.name!r} is a {x.layout} tensor; enzyme_cc.torch "
                         "passes dense memory: pass x.to_dense()")
    if x.device.type != "cpu":
        raise ValueError(f"{fname}: argument {a.name!r} is on device {x.device}; enzyme_cc.torch"
                         " runs compiled CPU code: pass a CPU tensor (x.cpu())")
    if x.dtype != _DTYPES[a.dtype]:
        raise TypeError(f"{fname}: argument {a.name!r} has dtype {x.dtype}, expected "
                        f"{_DTYPES[a.dtype]}")


__all__ = ["TorchOp", "op", "SignatureError"]
