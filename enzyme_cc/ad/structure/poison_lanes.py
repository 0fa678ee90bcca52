"""Undefined lanes of float vectors made zero on the private copy, before synthesis.

Vectorized code (SLP, SROA's vector promotion, Eigen's packets) leaves lanes nobody reads as
poison: `fdiv <1.0, poison>, %v` computes one reciprocal, `shufflevector %a, poison, <1, poison>`
moves one lane, `insertelement poison, %x, 0` starts a vector. The primal never looks at those
lanes, but the reverse sweep does: an unread lane has a zero adjoint, and 0 * poison is poison,
so the operand's lane adjoint (a real lane of %v) becomes garbage once LLVM folds it (Eigen's
4x4 inverse under AVX-512: the derivative of 14 of 16 entries lost). Poison may be refined to any
value, so on our copy each such lane gets a defined one: 0.0, or 1.0 in a divisor (x / 1 stays
finite), the first operand's lane 0 for a shuffle lane with no zero to pick from."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import vector_shape
from enzyme_cc.ir.model import parse_inst

_FLOATS = ("double", "float", "half", "bfloat")
_UNDEF_LANE = re.compile(r"\b(" + "|".join(_FLOATS) + r")\s+(?:poison|undef)\b")
_UNDEF = ("poison", "undef")


def _float_vector(ty: str) -> tuple[int, str] | None:
    shape = vector_shape(ty)
    return shape if shape and shape[1] in _FLOATS else None


def _defined(value: str, fill: str, ty: str) -> str:
    """A float vector constant of type ty with its undefined lanes set to `fill`."""
    if value in _UNDEF:
        if fill == "0.0":
            return "zeroinitializer"
        n, el = _float_vector(ty)
        return "<" + ", ".join([f"{el} {fill}"] * n) + ">"
    return _UNDEF_LANE.sub(lambda m: f"{m.group(1)} {fill}", value)


def _rewrite(inst) -> str | None:
    """inst's text with every undefined float lane defined, or None when it has none."""
    if inst.op == "shufflevector" and _float_vector(inst.ty) and -1 in inst.indices:
        a, b = inst.ops[0], inst.ops[1]
        n = _float_vector(a.ty)[0]
        av, bv = _defined(a.value, "0.0", a.ty), _defined(b.value, "0.0", b.ty)
        # the first lane of a (now) zero second operand, else the first operand's lane 0 (a zero
        # itself, or any defined value: the lane is unread)
        pad = n if bv == "zeroinitializer" else 0
        mask = ", ".join(f"i32 {pad if k < 0 else k}" for k in inst.indices)
        return (f"{inst.name} = shufflevector {a.ty} {av}, {b.ty} {bv}, "
                f"<{len(inst.indices)} x i32> <{mask}>")
    touched = [o for o in inst.ops if _float_vector(o.ty) and not o.is_local
               and (o.value in _UNDEF or _UNDEF_LANE.search(o.value))]
    if not touched:
        return None
    text = str(inst)
    for o in touched:
        fill = "1.0" if inst.op in ("fdiv", "frem") and o is inst.ops[-1] else "0.0"
        new = _defined(o.value, fill, o.ty)
        if new == o.value:
            continue
        old = " " + o.value
        head, sep, tail = text.rpartition(old) if o is inst.ops[-1] else text.partition(old)
        new = " " + new
        text = head + new + tail if sep else text
    return text if text != str(inst) else None


def define_poison_lanes(fn):
    """Give fn's undefined float vector lanes defined values (module docstring)."""
    changed = False
    for b in fn.blocks:
        for i, inst in enumerate(b.insts):
            if inst.name is None and inst.op not in ("store", "call"):
                continue
            text = _rewrite(inst)
            if text is None:
                continue
            new = parse_inst(text)
            new.line, new.line_end, new.md = inst.line, inst.line_end, inst.md
            b.insts[i] = new
            changed = True
    if changed:
        fn.index()
