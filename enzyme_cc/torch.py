"""A declared C/C++/Fortran function as a PyTorch operation: `torch.library.custom_op`s for the
primal and its VJP (opaque to torch.compile), an autograd formula, a vmap rule, and a leading batch
shape looped over in C. CPU tensors of the declared dtype; contiguous tensors are passed by
pointer, without copies.

    op = enzyme_cc.torch.op(Signature("f", [In("x", ("n",)), Int("n"), Out("y", ("n",))]),
                            sources=["f.c"])
    y = op(x)                  # x: (n,) or (batch..., n)
"""
import hashlib

import torch

from . import ffi
from .ffi.signature import SignatureError

_DTYPES = {"float64": torch.float64, "float32": torch.float32}
_OPS = {}


def op(signature, sources=(), source=None, lang="c", flags=("-O2",), link_flags=()):
    """Builds the function (cached by content) and returns it as a torch operation."""
    fn = signature if isinstance(signature, ffi.Function) else \
        ffi.function(signature, sources, source, lang, flags, link_flags)
    key = (fn.path, fn.sig.key())
    if key not in _OPS:
        _OPS[key] = TorchOp(fn)
    return _OPS[key]


def _pointer(t):
    return t.data_ptr() if t.numel() else 0


class TorchOp:
    """Call it with the inputs (tensors, in declared order) and Int values not implied by their
    shapes as keywords; returns the output tensor (a tuple when there are several)."""

    def __init__(self, fn):
        self.fn, self.sig = fn, fn.sig
        tag = hashlib.sha256(repr((fn.path, fn.sig.key())).encode()).hexdigest()[:12]
        base = f"enzyme_cc::{fn.name}_{tag}"
        self.primal = torch.library.custom_op(base, self._primal, mutates_args=())
        self.vjp = torch.library.custom_op(base + "_vjp", self._vjp, mutates_args=())
        self.primal.register_fake(self._primal_fake)
        self.vjp.register_fake(self._vjp_fake)
        torch.library.register_vmap(self.primal, self._primal_vmap)
        torch.library.register_vmap(self.vjp, self._vjp_vmap)
        # An autograd.Function (not register_autograd) so that torch.func.grad/vjp work too;
        # its vmap rule is generated from the two ops' vmap rules.
        self.function = type(f"{fn.name}_autograd", (torch.autograd.Function,), {
            "forward": staticmethod(lambda ints, *xs: tuple(self.primal(list(xs), list(ints)))),
            "setup_context": staticmethod(self._setup),
            "backward": staticmethod(self._backward),
            "generate_vmap_rule": True})
        # The VJP as a function too: differentiating it again is refused, never a silent zero.
        self.vjp_function = type(f"{fn.name}_vjp_autograd", (torch.autograd.Function,), {
            "forward": staticmethod(lambda ints, sums, n, *xs: tuple(
                self.vjp(list(xs[:n]), list(xs[n:]), list(ints), list(sums)))),
            "setup_context": staticmethod(lambda ctx, inputs, output: None),
            "backward": staticmethod(self._second_order),
            "generate_vmap_rule": True})

    def __repr__(self):
        return f"<enzyme_cc torch op {self.fn.name}>"

    # ---- the user's call: every check that names an argument happens here ----------------------
    def __call__(self, *inputs, **ints):
        s = self.sig
        if len(inputs) != len(s.inputs):
            raise TypeError(f"{s.name}() takes {len(s.inputs)} tensor inputs "
                            f"({', '.join(a.name for a in s.inputs)}), got {len(inputs)}")
        for a, x in zip(s.inputs, inputs):
            _check_tensor(s.name, a, x)
        plan = self.fn.plan([tuple(x.shape) for x in inputs], ints)
        outs = self.function.apply(tuple(plan.ints), *inputs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ---- the custom ops ------------------------------------------------------------------------
    def _plan(self, inputs, ints, extra=()):
        return self.fn.plan([tuple(x.shape) for x in inputs], dict(zip(
            (a.name for a in self.sig.ints), ints)), extra)

    def _primal(self, inputs: list[torch.Tensor], ints: list[int]) -> list[torch.Tensor]:
        inputs = [x.contiguous() for x in inputs]
        plan = self._plan(inputs, ints)
        outs = [torch.empty(sh, dtype=_DTYPES[a.dtype]) for a, sh in
                zip(self.sig.outputs, plan.out_shapes)]
        self.fn.call("primal", plan, [_pointer(x) for x in inputs + outs],
                     self.fn.buffer_strides("primal", plan))
        return outs

    def _primal_fake(self, inputs, ints):
        plan = self._plan(inputs, ints)
        return [inputs[0].new_empty(sh, dtype=_DTYPES[a.dtype]) for a, sh in
                zip(self.sig.outputs, plan.out_shapes)]

    def _vjp_shapes(self, inputs, cts, ints, sum_lead):
        out_nd = [len(a.shape) for a in self.sig.outputs]
        seeds = [tuple(c.shape[:c.dim() - n]) for c, n in zip(cts, out_nd)]
        plan = self._plan(inputs, ints, seeds)
        diff = [(a, x) for a, x in zip(self.sig.inputs, inputs) if a.diff]
        grad_leads = [() if s else plan.lead for s in sum_lead]
        shapes = [lead + self.fn.item_shape(a, plan) for (a, _), lead in zip(diff, grad_leads)]
        return plan, seeds, grad_leads, shapes, [a for a, _ in diff]

    def _vjp(self, inputs: list[torch.Tensor], cts: list[torch.Tensor], ints: list[int],
             sum_lead: list[bool]) -> list[torch.Tensor]:
        """Input cotangents: each over the whole batch, or summed over it where sum_lead."""
        inputs = [x.contiguous() for x in inputs]
        cts = [c.contiguous() for c in cts]
        plan, seeds, grad_leads, shapes, args = self._vjp_shapes(inputs, cts, ints, sum_lead)
        grads = [torch.empty(sh, dtype=_DTYPES[a.dtype]) for a, sh in zip(args, shapes)]
        self.fn.call("vjp", plan, [_pointer(x) for x in inputs + cts + grads],
                     self.fn.buffer_strides("vjp", plan, seeds, grad_leads))
        return grads

    def _vjp_fake(self, inputs, cts, ints, sum_lead):
        _, _, _, shapes, args = self._vjp_shapes(inputs, cts, ints, sum_lead)
        return [inputs[0].new_empty(sh, dtype=_DTYPES[a.dtype]) for a, sh in zip(args, shapes)]

    # ---- autograd ------------------------------------------------------------------------------
    def _setup(self, ctx, inputs, output):
        ints, *xs = inputs
        ctx.save_for_backward(*xs)
        ctx.ints = ints

    def _backward(self, ctx, *grads):
        xs = ctx.saved_tensors
        for a, want in zip(self.sig.inputs, ctx.needs_input_grad[1:]):
            if want and not a.diff:
                raise RuntimeError(f"{self.sig.name}: a gradient with respect to input {a.name!r}"
                                   " was requested, but it is declared In(..., diff=False)")
        plan = self._plan(xs, ctx.ints)
        cts = [g if g is not None else torch.zeros(sh, dtype=_DTYPES[a.dtype])
               for a, sh, g in zip(self.sig.outputs, plan.out_shapes, grads)]
        leads = [lead for a, lead in zip(self.sig.inputs, plan.leads) if a.diff]
        dx = iter(self.vjp_function.apply(tuple(ctx.ints), tuple(not lead for lead in leads),
                                          len(xs), *xs, *cts))
        return (None, *[next(dx) if a.diff else None for a in self.sig.inputs])

    def _second_order(self, ctx, *grads):
        raise RuntimeError(f"{self.sig.name}: second derivatives are not provided by "
                           "enzyme_cc.torch (the library holds first-order VJP and JVP only)")

    # ---- vmap: the mapped axis becomes (part of) the batch looped over in C ------------------------
    def _primal_vmap(self, info, in_dims, inputs, ints):
        args, _ = _broadcast(info.batch_size, inputs, in_dims[0],
                             [len(a.shape) for a in self.sig.inputs])
        outs = self.primal(args, list(ints))
        return outs, [0] * len(outs)

    def _vjp_vmap(self, info, in_dims, inputs, cts, ints, sum_lead):
        nd = [len(a.shape) for a in self.sig.inputs] + [len(a.shape) for a in self.sig.outputs]
        args, inner = _broadcast(info.batch_size, list(inputs) + list(cts),
                                 list(in_dims[0]) + list(in_dims[1]), nd)
        n = len(inputs)
        grads = self.vjp(args[:n], args[n:], list(ints), [False] * len(sum_lead))
        # each lane keeps its own cotangent; the inner batch is summed where it was before
        grads = [g.sum(dim=tuple(range(1, 1 + len(inner)))) if s and inner else g
                 for g, s in zip(grads, sum_lead)]
        return grads, [0] * len(grads)


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
    if x.device.type != "cpu":
        raise ValueError(f"{fname}: argument {a.name!r} is on device {x.device}; enzyme_cc.torch"
                         " runs compiled CPU code: pass a CPU tensor (x.cpu())")
    if x.dtype != _DTYPES[a.dtype]:
        raise TypeError(f"{fname}: argument {a.name!r} has dtype {x.dtype}, expected "
                        f"{_DTYPES[a.dtype]}")
    if not x.is_contiguous():
        raise ValueError(f"{fname}: argument {a.name!r} is not contiguous (call .contiguous()): "
                         "the compiled function reads it by pointer")


__all__ = ["TorchOp", "op", "SignatureError"]
