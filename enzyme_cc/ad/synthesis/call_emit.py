"""Calls of differentiated callees inside a derivative: the callee's forward derivative in a
forward-mode caller, its augmented forward in the caller's forward sweep and its reverse in the
caller's reverse sweep (a mixin of Generator, which builds the callee's derivative functions)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import adjoint_type_of, mixed_record
from ..analysis.activity_basics import has_shadow_type
from ..parallel import openmp
from ..structure import packed_bits
from ..plan.restored_args import restored_args


class CallEmitter:
    def emit_forward_call(self, ctx, inst):
        """In a forward-mode caller: call the callee's forward derivative. Returns the tangent
        (width 1) or the list of N lane tangents (vector mode); pointer results get their
        shadows named for the caller."""
        synth = ctx.synth
        width = getattr(synth, "width", 1)
        acts = self.call_activity(inst, synth.act)
        indirect = inst.callee.startswith("%")
        if not indirect:
            acts = synth.noneed.propagate(inst, acts)
        error = getattr(synth, "error", False)
        name, rty = self.forward_indirect(inst, acts, width, error, synth) if indirect else \
            self.forward(inst.callee, acts, callee=True, hints=self.call_hints(synth, inst),
                         width=width, error=error)
        args = [f"ptr {ctx.p(inst.callee)}"] if indirect else []
        for ty, o, a in zip(self.param_types(inst), inst.ops, acts):
            args.append(f"{ty} {ctx.p(o.value) if o.is_local else o.value}")
            for _ in synth.lanes() if width > 1 else (0,):
                if a in ("dup", "dupnoneed"):
                    args.append(f"ptr {ctx.s(o.value)}")
                elif a == "active":
                    args.append(f"{ty} {ctx.t(o.value, o.ty)}")
        call = f"call {rty} {name}({', '.join(args)})"
        if rty == "void" or not inst.name:
            ctx.emit(call)
            return None
        if rty == inst.ty:
            ctx.emit(f"{synth.r(inst.name)} = {call}")
            return None
        t = synth.tmp("fr")
        ctx.emit(f"{t} = {call}")
        ctx.emit(f"{synth.r(inst.name)} = extractvalue {rty} {t}, 0")
        out = []
        for lane in synth.lanes() if width > 1 else (None,):
            idx = "1" if lane is None else f"1, {lane}"
            if has_shadow_type(inst.ty):
                ctx.emit(f"{synth.sname(inst.name)} = extractvalue {rty} {t}, {idx}")
                # (a record of pointers and floats: one record holds shadows and tangents)
                out.append(synth.sname(inst.name) if mixed_record(inst.ty) else None)
                continue
            tan = synth.tmp("ft")
            ctx.emit(f"{tan} = extractvalue {rty} {t}, {idx}")
            out.append(tan)
        return out if width > 1 else out[0]

    def _call_args(self, ctx, inst, acts, get_p, get_s):
        args = [f"ptr {get_p(inst.callee)}"] if inst.callee.startswith("%") else []
        for ty, o, a in zip(self.param_types(inst), inst.ops, acts):
            args.append(f"{ty} {get_p(o.value)}")
            if a in ("dup", "dupnoneed"):
                args.append(f"ptr {get_s(o.value)}")
        return args

    def _split_for(self, inst, acts, ret_active, synth=None):
        if inst.callee.startswith("@"):
            return self.split(inst.callee, acts, ret_active, self.call_hints(synth, inst),
                              private=openmp.private_args(self, synth, inst),
                              restored=restored_args(self, synth, inst))
        return self.split_indirect(inst, acts, ret_active, synth)

    def _split_call_activity(self, inst, synth):
        acts = self.call_activity(inst, synth.act)
        return acts if inst.callee.startswith("%") else synth.noneed.propagate(inst, acts)

    def emit_augmented_call(self, ctx, inst):
        synth = ctx.synth
        acts = self._split_call_activity(inst, synth)
        ret_active = bool(inst.name) and synth.act.is_active(inst.name)
        aug, aug_ret, _, _ = self._split_for(inst, acts, ret_active, synth)
        args = self._call_args(ctx, inst, acts, lambda v: ctx.p(v) if v.startswith("%") else v,
                               ctx.s)
        call = f"call {aug_ret} {aug}({', '.join(args + ['ptr %ad.tape'])})"
        if aug_ret == "void":
            ctx.emit(call)
        elif aug_ret != inst.ty and has_shadow_type(inst.ty):
            t = synth.tmp("aug")
            ctx.emit(f"{t} = {call}")
            if inst.name:
                ctx.emit(f"{synth.r(inst.name)} = extractvalue {aug_ret} {t}, 0")
                ctx.emit(f"{synth.sname(inst.name)} = extractvalue {aug_ret} {t}, 1")
        elif inst.name:
            ctx.emit(f"{synth.r(inst.name)} = {call}")
        else:
            ctx.emit(call)

    def emit_reverse_call(self, ctx, inst, d):
        synth = ctx.synth
        acts = self._split_call_activity(inst, synth)
        ret_active = bool(inst.name) and synth.act.is_active(inst.name)
        _, _, rev, rev_ret = self._split_for(inst, acts, ret_active, synth)
        args = self._call_args(ctx, inst, acts, ctx.p, ctx.s)
        if ret_active:
            args.append(f"{synth.act.punned.get(inst.name, inst.ty)} {d}")
        call = f"call {rev_ret} {rev}({', '.join(args + ['ptr %ad.tape'])})"
        if rev_ret == "void":
            ctx.emit(call)
            return
        t = ctx.tmp("radj")
        ctx.emit(f"{t} = {call}")
        fn = self.module.function(inst.callee) if inst.callee.startswith("@") else None
        params = fn.params if fn else [None] * len(inst.ops)
        active = [(packed_bits.param_adjoint_type(fn, p) if fn else adjoint_type_of(ty), o, p)
                  for ty, o, a, p in zip(self.param_types(inst), inst.ops, acts, params)
                  if a == "active"]
        for k, (ty, o, p) in enumerate(active):
            e = t
            if len(active) > 1:
                e = ctx.tmp()
                ctx.emit(f"{e} = extractvalue {rev_ret} {t}, {k}")
            if synth.act.punned.get(o.value) == packed_bits.FLOAT_PAIR and ty == "float":
                # the callee's float, in the half of the caller's pair it came from
                (lane,) = packed_bits.param_lanes(fn, p.name)
                lane //= 32
                e, x = ctx.tmp(), e
                ctx.emit(f"{e} = insertelement {packed_bits.FLOAT_PAIR} zeroinitializer, "
                         f"float {x}, i32 {lane}")
                ty = packed_bits.FLOAT_PAIR
            ctx.add(o.value, ty, e)
