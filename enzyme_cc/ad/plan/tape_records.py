"""Getting primal values to the reverse sweep (Synth, reverse.py): the records a forward block
pushes and its reverse pops, values re-executed in the reverse block (recompute), and the
reverse block's prologue that makes every planned value available."""
from __future__ import annotations

from enzyme_cc.ir import debug_locs
from enzyme_cc.ir.lexer import type_size, join
from ..structure import exit_count
from . import phi_select
from ..api.lane_fusion import mark_local_shadows
from .plan import exit_keys, store_hoisted


class TapeRecords:
    """Mixed into Synth: the tape, slot and recompute side of the plan."""

    def _tape_items(self, b):
        """The record block b pushes: its own tape entries, then the loop-invariant values of
        the loops it exits and, as a latch, its iteration's values (plan.py)."""
        return [(k, self._key_type(k)) for k, how in self.plan[b.label] if how == "tape"] + \
            [(k, self._key_type(k)) for k in exit_keys(self, b)]

    def _push_needs(self, ctx, b):
        self._push_items(ctx, self._tape_items(b), getattr(self, "exit_phi_names", {}).get(b.label))

    def _push_items(self, ctx, items, names=None):
        if not items:
            return
        size = sum(_slot(ty, self.module) for _, ty in items)
        p = self.tmp("push")
        ctx.lines.append(f"{p} = call ptr @__enzyme_cc_push(ptr %ad.tape, i64 {size})")
        off = 0
        for k, ty in items:
            at = self.tmp("at")
            ctx.lines.append(f"{at} = getelementptr inbounds i8, ptr {p}, i64 {off}")
            # records are packed (a 1-byte flag takes 1 byte): nothing on the tape is aligned
            val = (names or {}).get(k) or self._key_forward_name(k)
            ctx.lines.append(f"store {ty} {val}, ptr {at}, align 1")
            off += _slot(ty, self.module)

    def _materialize(self, ctx, b):
        """Make every planned primal value available at the top of rev.b."""
        plan = self.plan[b.label]
        items = self._tape_items(b)
        for k, val in self._pop_items(ctx, items):
            ctx.avail[k] = val
        store_hoisted(self, ctx, b)
        for k, how in plan:
            if how == "hoist":
                val = self.tmp("hv")
                slot = self.hoist_slots[(k, self.hoist_of[(b.label, k)])]
                ctx.lines.append(f"{val} = load {self._key_type(k)}, ptr {slot}")
                ctx.avail[k] = val
            elif how == "iter" and k not in ctx.avail:     # (the latch has it from its pop)
                val = self.tmp("iv")
                slot = self.iter_slots[(k, self.iter_of[(b.label, k)])]
                ctx.lines.append(f"{val} = load {self._key_type(k)}, ptr {slot}")
                ctx.avail[k] = val
            elif how == "slot":
                val = self.tmp("sv")
                ctx.lines.append(f"{val} = load {self._key_type(k)}, ptr {self.value_slots[k]}")
                ctx.avail[k] = val
            elif how == "riv":
                val = self.tmp("iv")
                ctx.lines.append(f"{val} = load i64, ptr %ad.riv.{self.r(k[1])[1:]}")
                ctx.avail[k] = val
            elif how == "direct":
                ctx.avail[k] = self._key_forward_name(k) if k[0] in ("iv", "ivx", "pred", "ctape") or \
                    k[1].startswith("%") else \
                    (k[1] if k[0] == "p" else self.fwd_shadow(k[1]))
        mark_local_shadows(self, ctx, dict.fromkeys(
            [k for k, _ in items] + [k for k, how in plan if how in ("hoist", "slot", "iter")]))
        recs = sorted((k for k, how in plan if how == "recompute" and k[0] not in ("ivx", "pred")),
                      key=lambda k: (self.order[id(self.fn.defs[k[1]])], k[0] == "s"))
        for k in recs:
            at = len(ctx.lines)
            self._recompute(ctx, k)
            debug_locs.tag(ctx.lines, at, self.fn.defs[k[1]])
        for k, how in plan:               # exit counts and edges last: they read recomputed values
            if how == "recompute" and k[0] == "ivx":
                exit_count.emit(self, ctx, k)
            elif how == "recompute" and k[0] == "pred":
                phi_select.emit_pred(self, ctx, k)

    def _pop_items(self, ctx, items):
        """Pop one tape record of `items` (as _push_items laid it out): [(key, value)]."""
        if not items:
            return []
        size = sum(_slot(ty, self.module) for _, ty in items)
        p = self.tmp("pop")
        ctx.lines.append(f"{p} = call ptr @__enzyme_cc_pop(ptr %ad.tape, i64 {size})")
        off, out = 0, []
        for k, ty in items:
            at, val = self.tmp("at"), self.tmp("tv")
            ctx.lines.append(f"{at} = getelementptr inbounds i8, ptr {p}, i64 {off}")
            ctx.lines.append(f"{val} = load {ty}, ptr {at}, align 1")
            out.append((k, val))
            off += _slot(ty, self.module)
        return out

    def _recompute(self, ctx, key):
        kind, v = key
        inst = self.fn.defs[v]
        if kind == "p" and exit_count.exit_value(self, v, ctx.block.label) is not None:
            exit_count.emit_value(self, ctx, key)
            return
        if v in self.affine:
            lp, init, step = self.affine[v]
            iv = ctx.avail[("iv", lp.header)]
            base = ctx.avail.get((kind, init), init) if init.startswith("%") else \
                (init if kind == "p" else ctx.s(init))
            new = self.tmp("rc")
            if inst.ty == "ptr":
                off = self.tmp("off")
                ctx.lines.append(f"{off} = mul i64 {iv}, {step}")
                ctx.lines.append(f"{new} = getelementptr i8, ptr {base}, i64 {off}")
            else:
                ivt = iv
                if inst.ty != "i64":
                    ivt = self.tmp("ivt")
                    ctx.lines.append(f"{ivt} = trunc i64 {iv} to {inst.ty}")
                off = self.tmp("off")
                ctx.lines.append(f"{off} = mul {inst.ty} {ivt}, {step}")
                ctx.lines.append(f"{new} = add {inst.ty} {base}, {off}")
            ctx.avail[key] = new
            return
        if inst.op == "phi":
            c, vt, vf = (ctx.avail.get(("p", x), x) for x in phi_select.branch_select(self, inst))
            new = self.tmp("rc")
            ctx.lines.append(f"{new} = select i1 {c}, {inst.ty} {vt}, {inst.ty} {vf}")
            ctx.avail[key] = new
            return
        mapping = {}
        for t in inst.toks:
            if t in self.fn.defs or t in self.ren:
                if t == inst.name:
                    continue
                if ("p", t) in ctx.avail:
                    mapping[t] = ctx.avail[("p", t)]
        new = self.tmp("rc")
        toks = list(inst.toks)
        if kind == "s":
            base = inst.ops[0].value
            toks = _replace_first_operand(toks, inst, base, ctx.avail[("s", base)])
        toks = [mapping.get(t, t) for t in toks]
        toks[0] = new
        ctx.lines.append(join(toks))
        ctx.avail[key] = new


def _replace_first_operand(toks, inst, old, new):
    out, done = [], False
    start = 2 if inst.name else 0
    for k, t in enumerate(toks):
        if not done and k >= start and t == old:
            out.append(new)
            done = True
        else:
            out.append(t)
    return out


def _slot(ty: str, module) -> int:
    """Bytes a value of type ty takes in a tape record (packed, see _push_items)."""
    return type_size(ty, module.named_types)
