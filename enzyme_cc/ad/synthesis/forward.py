"""Forward-mode synthesis (`__enzyme_fwddiff`): one sweep computing each active value's tangent
beside it. Shadow pointers and shadow allocations come from the same FORWARD rules as the reverse
mode's forward sweep; tangents of floats from the TANGENT rules.

Vector mode (`enzyme_width N`): the primal runs once and every rule runs once per lane right after
it, so the N tangents of an instruction sit next to each other (LLVM's SLP vectorizer packs them).
Lane k's shadows and tangents are named with a `.L<k>` suffix; `synth.lane` selects the lane the
rules currently see."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, carries_float, int_bits, mixed_record, zero_of
from enzyme_cc.rules import FORWARD, TANGENT, error as error_rule
from ..analysis.activity_basics import has_shadow_type, primal_only
from enzyme_cc.ir import debug_locs
from .noneed import NoNeed
from ..structure.packed_bits import is_int_record
from ..api import fp_logger
from .reverse import Synth
from .sweep_ctx import FwdCtx, copy_fields

# integer instructions whose result would drop a float's tangent (icmp/trunc/ext only inspect it)
_PLACEHOLDER = re.compile(r"@@TAN:(\d+):([^@]+)@@")


class TanCtx(FwdCtx):
    def __init__(self, synth, block, lines):
        super().__init__(synth, block, lines)
        self.after_phis = []

    def t(self, v: str, ty: str) -> str:
        """Tangent of operand v (zero for constants and inactive values)."""
        only = self.synth.t_only
        if only is not None:                  # error mode: one operand's term (rules/error.py)
            return only[1] if v == only[0] else zero_of(ty)
        if v in self.act.active:
            return self.synth.tan.get(v, f"@@TAN:{self.synth.lane}:{v}@@")
        return zero_of(ty)

    def error(self, inst, why, hint):
        raise UserError(f"{self.synth.where(inst)}: {why}; hint: {hint}")


from ..parallel.openmp import FORK, tangent_fork
from enzyme_cc.rules.call_kinds import kind_of
from enzyme_cc.rules.calls import _involved, call_kind
from ..api.checkpoint_tangent import tangent_call


class ForwardSynth(Synth):
    """mode 'forward': tangents; `callee=True` returns {primal, tangent} for use by a caller.
    error=True: the tangents are error estimates (__enzyme_error_estimate, rules/error.py)."""

    def __init__(self, gen, fn, arg_act, callee: bool, hints=None, width: int = 1,
                 error: bool = False):
        super().__init__(gen, fn, arg_act, False, "forward", hints or {})
        self.callee, self.error, self.t_only = callee, error, None
        self.width, self.lane = width, 0
        self.noneed = NoNeed.of(gen, fn, arg_act, error)
        self.tans: list[dict[str, str]] = [{} for _ in range(width)]
        for _ in self.lanes():
            for p, a in zip(fn.params, arg_act):
                if a == "active":
                    self.tan[p.name] = self.tname(p.name)

    @property
    def tan(self) -> dict[str, str]:
        """Tangents of the current lane."""
        return self.tans[self.lane]

    def _suffix(self) -> str:
        return f".L{self.lane}" if self.width > 1 else ""

    def tname(self, v: str) -> str:
        return "%ad.t." + self.r(v)[1:].replace('"', "") + self._suffix()

    def sname(self, v: str) -> str:
        return super().sname(v) + self._suffix()

    def lanes(self):
        """Iterate over the lanes, leaving `self.lane` set to each in turn (and 0 after)."""
        for self.lane in range(self.width):
            yield self.lane
        self.lane = 0

    def vec(self, ty: str) -> str:
        """Type of the N tangents (or shadows) of a value of type ty."""
        return ty if self.width == 1 else f"[{self.width} x {ty}]"

    def ret_type(self) -> str:
        ret = self.fn.ret_ty
        if not self.callee:
            return self.vec(ret) if is_fp(ret) or carries_float(ret) else "void"
        if carries_float(ret) or self.returns_bits():
            return "{ " + ret + ", " + self.vec(ret) + " }"
        if has_shadow_type(ret) and self.returns_shadow():
            return "{ " + ret + ", " + self.vec(ret) + " }"
        return ret

    def returns_bits(self) -> bool:
        """An integer return that carries a float's bits (callee_summary._callee_summary_once): its
        tangent is returned as the integer the float's tangent is, as tangents of such
        integers are kept."""
        return (int_bits(self.fn.ret_ty) > 0 or is_int_record(self.fn.ret_ty)) and any(
            r.term.ops and r.term.ops[0].value in self.act.punned for r in self.rets)

    def build(self):
        lines = []
        blocks = [b for b in self.fn.blocks if b.label in self.reachable]
        for b in blocks:
            lines.append(f"{self.r(b.label)[1:]}:")
            ctx = TanCtx(self, b, lines)
            for inst in b.insts[:-1]:
                at = len(lines)
                self._one(ctx, inst)
                debug_locs.tag(lines, at, inst)
            self._term(ctx, b)
        text = "\n".join(lines)
        return _PLACEHOLDER.sub(lambda m: self.tans[int(m.group(1))].get(m.group(2), "0.0"),
                                text).split("\n")

    def _one(self, ctx, inst):
        if primal_only(ctx, inst):
            return
        skip = self.noneed.drops_primal(inst)      # enzyme_dupnoneed memory (noneed.py)
        if inst.op == "phi":
            if not skip:
                ctx.lines.append(self.print_primal(inst))
            rule = FORWARD.get("phi")
            for _ in self.lanes():
                rule(ctx, inst, before=False)
                if inst.name in self.act.active:
                    name = self.tname(inst.name)
                    inc = ", ".join(f"[ {ctx.t(v, inst.ty)}, {self.r(b)} ]" for v, b in inst.incoming)
                    ctx.lines.append(f"{name} = phi {inst.ty} {inc}")
                    self.tan[inst.name] = name
            return
        active = inst.name in self.act.active
        if inst.op == "call" and inst.callee == FORK:     # a parallel region (ad/parallel/openmp.py)
            tangent_fork(ctx, inst)
            return
        if inst.op == "call" and self._calls_checkpoint(ctx, inst):
            tans = tangent_call(ctx, inst)
            for lane in self.lanes():
                if active:
                    self.tan[inst.name] = tans[lane] if tans else zero_of(inst.ty)
            return
        if self.width > 1 and inst.op == "call" and self._calls_derivative(ctx, inst):
            # one call of the callee's vector derivative computes the primal and all N lanes
            tans = self.gen.emit_forward_call(ctx, inst)
            for lane in self.lanes():
                if active:
                    self.tan[inst.name] = tans[lane] if tans else zero_of(inst.ty)
            return
        fwd = FORWARD.get(inst.op)
        keep = True
        if fwd:
            keep = all([fwd(ctx, inst, before=True) is not False for _ in self.lanes()])
        if not active:
            self.refuse_bit_manipulation(inst)
        self.emit_stop(ctx.lines, inst)
        if keep and not skip:
            ctx.lines.append(self.print_primal(inst))
            if active:
                fp_logger.value(ctx, inst)
        if self.error and not active and inst.op == "call":
            error_rule.rounds(ctx, inst)      # refuses calls it cannot estimate through
        if not active and inst.op not in ("store", "call", "atomicrmw", "cmpxchg"):
            for _ in self.lanes():
                if fwd:
                    fwd(ctx, inst, before=False)
            return                         # no tangent; side effects only matter for these
        rule = TANGENT.get(inst.op)
        if self.error and active and rule is not None and error_rule.rounds(ctx, inst):
            if fwd:
                fwd(ctx, inst, before=False)
            self.tan[inst.name] = error_rule.error_of(ctx, inst, self)
            fp_logger.error(ctx, inst, self.tan[inst.name])
            return
        if rule is None:
            raise UserError(self.where(inst) + f": cannot differentiate instruction "
                            f"'{inst.op}' in forward mode (no tangent rule)")
        for _ in self.lanes():
            if fwd:
                fwd(ctx, inst, before=False)
            t = rule(ctx, inst)
            if active:
                self.tan[inst.name] = t if t is not None else zero_of(inst.ty)

    def _calls_checkpoint(self, ctx, inst) -> bool:
        return kind_of(self.gen, inst) == "ckpt_fn" and _involved(ctx, inst)

    def _calls_derivative(self, ctx, inst) -> bool:
        return call_kind(ctx, inst) == "diff" and _involved(ctx, inst)

    def _term(self, ctx, b):
        t = b.term
        if t.op != "ret":
            if t.op in ("invoke", "resume", "indirectbr", "callbr"):
                raise UserError(self.where(t) + f": cannot differentiate '{t.op}'")
            ctx.lines.append(self.print_primal(t))
            return
        rty = self.ret_type()
        if rty == "void":
            ctx.lines.append("ret void")
            return
        v = t.ops[0] if t.ops else None
        if rty == self.fn.ret_ty and self.callee:
            ctx.lines.append(f"ret {rty} {self.r(v.value) if v.is_local else v.value}")
            return
        bits = not carries_float(v.ty) and self.returns_bits()
        tangents = [ctx.t(v.value, v.ty) if carries_float(v.ty) or bits else ctx.s(v.value)
                    for _ in self.lanes()]
        if mixed_record(v.ty) and v.value in self.act.shadowed:
            # a record of pointers and floats: its tangent, with the pointers' shadows
            tangents = [copy_fields(ctx, v.ty, t, ctx.s(v.value), lambda f: f == "ptr")
                        for t, _ in zip(tangents, self.lanes())]
        second = tangents[0]
        if self.width > 1:
            second = "poison"
            for k, tv in enumerate(tangents):
                nxt = self.tmp("rv")
                ctx.lines.append(f"{nxt} = insertvalue {self.vec(v.ty)} {second}, {v.ty} {tv}, {k}")
                second = nxt
        if not self.callee:
            ctx.lines.append(f"ret {rty} {second}")
            return
        a = self.tmp("r")
        prim = self.r(v.value) if v.is_local else v.value
        ctx.lines.append(f"{a} = insertvalue {rty} poison, {v.ty} {prim}, 0")
        ctx.lines.append(f"{a}.1 = insertvalue {rty} {a}, {self.vec(v.ty)} {second}, 1")
        ctx.lines.append(f"ret {rty} {a}.1")
