"""Forward-mode synthesis (`__enzyme_fwddiff`): one sweep computing each active value's tangent
beside it. Shadow pointers and shadow allocations come from the same FORWARD rules as the reverse
mode's forward sweep; tangents of floats from the TANGENT rules."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp
from enzyme_cc.rules import FORWARD, TANGENT
from .activity import carries_float
from enzyme_cc.ir.lexer import zero_of
from .reverse import Synth, FwdCtx

_PLACEHOLDER = re.compile(r"@@TAN:([^@]+)@@")


class TanCtx(FwdCtx):
    def __init__(self, synth, block, lines):
        super().__init__(synth, block, lines)
        self.after_phis = []

    def t(self, v: str, ty: str) -> str:
        """Tangent of operand v (zero for constants and inactive values)."""
        if v in self.act.active:
            return self.synth.tan.get(v, f"@@TAN:{v}@@")
        return zero_of(ty)

    def error(self, inst, why, hint):
        raise UserError(f"{self.synth.where(inst)}: {why}; hint: {hint}")


class ForwardSynth(Synth):
    """mode 'forward': tangents; `callee=True` returns {primal, tangent} for use by a caller."""

    def __init__(self, gen, fn, arg_act, callee: bool, hints=None):
        super().__init__(gen, fn, arg_act, False, "forward", hints or {})
        self.callee = callee
        self.tan: dict[str, str] = {}
        for p, a in zip(fn.params, arg_act):
            if a == "active":
                self.tan[p.name] = self.tname(p.name)

    def tname(self, v: str) -> str:
        return "%ad.t." + self.r(v)[1:].replace('"', "")

    def ret_type(self) -> str:
        ret = self.fn.ret_ty
        if not self.callee:
            return ret if is_fp(ret) or carries_float(ret) else "void"
        if carries_float(ret):
            return "{ " + ret + ", " + ret + " }"
        if ret == "ptr" and self.returns_shadow():
            return "{ ptr, ptr }"
        return ret

    def build(self):
        lines = []
        blocks = [b for b in self.fn.blocks if b.label in self.reachable]
        for b in blocks:
            lines.append(f"{self.r(b.label)[1:]}:")
            ctx = TanCtx(self, b, lines)
            for inst in b.insts[:-1]:
                self._one(ctx, inst)
            self._term(ctx, b)
        text = "\n".join(lines)
        return _PLACEHOLDER.sub(lambda m: self.tan.get(m.group(1), "0.0"), text).split("\n")

    def _one(self, ctx, inst):
        if inst.op == "phi":
            ctx.lines.append(self.print_primal(inst))
            rule = FORWARD.get("phi")
            rule(ctx, inst, before=False)
            if inst.name in self.act.active:
                name = self.tname(inst.name)
                inc = ", ".join(f"[ {ctx.t(v, inst.ty)}, {self.r(b)} ]" for v, b in inst.incoming)
                ctx.lines.append(f"{name} = phi {inst.ty} {inc}")
                self.tan[inst.name] = name
            return
        fwd = FORWARD.get(inst.op)
        keep = fwd(ctx, inst, before=True) is not False if fwd else True
        if keep:
            ctx.lines.append(self.print_primal(inst))
        if fwd:
            fwd(ctx, inst, before=False)
        active = inst.name in self.act.active
        if not active and inst.op not in ("store", "call"):
            return                         # no tangent; side effects only matter for these
        rule = TANGENT.get(inst.op)
        if rule is None:
            raise UserError(self.where(inst) + f": cannot differentiate instruction "
                            f"'{inst.op}' in forward mode (no tangent rule)")
        t = rule(ctx, inst)
        if active:
            self.tan[inst.name] = t if t is not None else zero_of(inst.ty)

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
        if not self.callee:
            ctx.lines.append(f"ret {rty} {ctx.t(v.value, v.ty)}")
            return
        if rty == self.fn.ret_ty:
            ctx.lines.append(f"ret {rty} {self.r(v.value) if v.is_local else v.value}")
            return
        second = ctx.t(v.value, v.ty) if carries_float(v.ty) else ctx.s(v.value)
        a = self.tmp("r")
        prim = self.r(v.value) if v.is_local else v.value
        ctx.lines.append(f"{a} = insertvalue {rty} poison, {v.ty} {prim}, 0")
        ctx.lines.append(f"{a}.1 = insertvalue {rty} {a}, {v.ty} {second}, 1")
        ctx.lines.append(f"ret {rty} {a}.1")
