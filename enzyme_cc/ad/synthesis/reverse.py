"""Reverse-mode synthesis (seeds/001 section 2, Figure 5).

For every block B of the primal a reverse block rev.B holds the adjoints of B's instructions in
reverse order; a return becomes a branch to its reverse block; rev.B ends by branching to the
reverse of the predecessor that was taken. Adjoints of SSA values live in zero-initialised allocas
(SROA promotes them). Primal values the reverse sweep needs are, by cost:
  direct     usable as is (arguments, constants, values dominating every return, outside cycles)
  recompute  cheap pure instructions re-executed in the reverse block from available operands
  slot       an alloca written once in the forward sweep (value outside any cycle)
  tape       pushed on a LIFO tape at the end of the forward block that needs it, popped at the
             start of its reverse block: exact for loops of any shape, recursion and callees.
Combined mode builds one function (forward sweep, then reverse); split mode builds an augmented
forward function and a reverse function sharing the tape (Figure 4, right).
"""
from __future__ import annotations

import hashlib
import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import join, one_of
from enzyme_cc.ir.model import Inst
from enzyme_cc.rules import REVERSE, FORWARD
from ..analysis.activity import Activity
from ..analysis.activity_basics import primal_only, has_shadow_type, pointer_aggregate
from ..structure.cfg import (dominators, cyclic_blocks, pred_edges, reverse_postorder,
                             always_passes, doomed_blocks)
from ..structure.diagnostics import located
from ..analysis.speculative import speculative
from ..api import fp_logger
from ..analysis import activity_report
from ..parallel import openmp_affine, openmp_index, openmp_ranges, openmp_classes
from enzyme_cc.ir import debug_locs
from . import openmp_version, undo_stores
from ..plan import restored_args, loop_accum
from .sweep_ctx import NO_ADJOINT, FwdCtx, RevCtx, adjoint_zero, block_local_adjoints
from .integer_checks import IntegerChecks
from ..plan.tape_records import TapeRecords
from ..plan.value_plan import ValuePlan
from ..plan.loop_accum import reset, allocas, flush
from ..structure.loops import affine_phi, find_loops
from ..analysis.memory import MemoryInfo
from .noneed import NoNeed
from ..plan.plan import hoist_allocas, hoist_tapes, iteration_records, exit_phis
from .prepare import prepare
from ..plan.tape_reserve import reserve_loops
from ..structure.type_layout import underlying
from ..analysis.typeinfo import TypeInfo
from enzyme_cc.rules.call_kinds import kind_of
from enzyme_cc.rules.registry import is_deallocator

TAPE_TY = "{ ptr, i64, i64, ptr }"   # data, top, capacity, deferred frees


def local_name(name: str) -> str:
    """Original local name -> name used in generated code: never numeric, never quoted (so
    derived names like %ad.s.<name> stay valid), never clashing with our %ad.* names."""
    body = name[1:]
    if body.startswith('"'):
        inner = body[1:-1]
        return "%n." + re.sub(r"[^-\w.$]", "_", inner) + "." + hashlib.sha1(inner.encode()).hexdigest()[:6]
    if len(body) > _LONGEST:
        # LLVM cuts a local name at 1024 characters, so two long names (SROA's chains of
        # `.sroa.3.i.i...`) that a prefix pushes past it would clash: a shortened unique one
        return "%n." + body[:_LONGEST - 12] + "." + hashlib.sha1(body.encode()).hexdigest()[:10]
    return "%v" + body if body.isdigit() else "%n." + body


_LONGEST = 800        # room for the prefixes and suffixes derived names add


class Synth(TapeRecords, ValuePlan, IntegerChecks):
    """Builds the derivative function(s) for one (function, activity) request."""

    def __init__(self, gen, fn, arg_act: list[str], ret_active: bool, mode: str, hints: dict):
        fn = prepare(fn, gen.module)
        if mode != "forward":       # loop stores' old bytes, for the reverse to put back
            fn = undo_stores.with_old_loads(fn, gen.module, mode)
        if any(p.ty == "..." for p in fn.params):
            raise UserError(f"cannot differentiate variadic function '{fn.name[1:]}' (its "
                            "arguments are read with va_arg); hint: pass the values in an array, "
                            "or mark the function __enzyme_inactivefn if it carries no derivative")
        self.gen, self.fn, self.mode = gen, fn, mode
        self.parallel = False                 # run by an OpenMP team: atomic shared adjoints
        self.restored = {}                    # parameter -> bytes restored (restored_args.py)
        self.module = gen.module
        self.arg_act, self.ret_active = arg_act, ret_active
        self.hints = hints
        self.ren = {}
        for p in fn.params:
            if p.name:
                self.ren[p.name] = local_name(p.name)
        for b in fn.blocks:
            self.ren[b.label] = local_name(b.label)
            for i in b.insts:
                if i.name:
                    self.ren[i.name] = local_name(i.name)
        self.types = TypeInfo(self.module, fn, hints)
        self.act = Activity(fn, self.module, arg_act, gen.callee_activity, self.types,
                            gen.callee_writes, shared_globals=gen.shared_globals,
                            inactive_globals=gen.reg.inactive_globals,
                            global_users=gen.global_users, inert_call=gen.inert_call,
                            arg_demand=gen.arg_demand)
        # enzyme_dupnoneed: the forward sweep skips primal writes nobody reads (noneed.py)
        # (memoized per function name for every mode: the private copy with old-value loads
        # has instructions of its own)
        self.noneed = NoNeed(gen, fn, arg_act) if hasattr(fn, "old_loads") else \
            NoNeed.of(gen, fn, arg_act)
        self.dom = dominators(fn)
        self.cyclic = cyclic_blocks(fn)
        self.rpo = reverse_postorder(fn)
        self.reachable = {b.label for b in self.rpo}
        self.order = {}
        for k, b in enumerate(self.rpo):
            for j, i in enumerate(b.insts):
                self.order[id(i)] = (k, j)
        self.rets = [b for b in self.rpo if b.term.op == "ret"]
        self.loops = find_loops(fn, self.dom)
        self.affine = {}                      # header phi -> (loop, init, step)
        for lp in self.loops.values():
            for phi in fn.block(lp.header).phis:
                a = affine_phi(fn, lp, phi)
                if a is not None:
                    self.affine[phi.name] = (lp,) + a
        self.mem = MemoryInfo(fn, lambda i: kind_of(gen, i), self.act.has_shadow, gen.module)
        self.undo_old: dict = {}              # undone store -> its old bytes (undo_stores.py)
        self.loop_undone: dict = {}           # undone loop store -> its old-value load
        self.line_insts = {i.line: i for i in fn.insts()}
        self._check_int_pointers()
        # loops run at most once per call (in no enclosing cycle): their exit count is kept in a
        # slot written at the exiting blocks; other loops tape it at each exit (ivx keys)
        self.once = set()
        if mode == "combined":
            for h, lp in self.loops.items():
                if h not in cyclic_blocks(fn, skip_edge=(lp.latch, h)):
                    self.once.add(h)
        self._tmp = 0
        self.slots: dict[str, str] = {}       # original value -> adjoint alloca
        self.local_adjoints: set[str] = set()  # adjoints held in registers (sweep_ctx)
        self.value_slots: dict = {}           # need key -> alloca for slot-cached primal values
        # allocations this function always frees once made: their reverse frees them. Others
        # (freed on some paths only, e.g. a map node dropped when its key exists, or elsewhere)
        # are freed with the gradient: the forward rule of free defers those frees (as it does
        # realloc's old block).
        self.freed: set[str] = set()
        blocks = {i.name: b.label for b in fn.blocks for i in b.insts if i.name}
        for b in fn.blocks:
            for i in b.insts:
                if i.op in ("call", "invoke") and (i.callee in gen.FREES or is_deallocator(
                        i.callee or "")) and i.ops and i.ops[0].value in self.act.shadowed and \
                        i.ops[0].value in blocks and \
                        always_passes(fn, blocks[i.ops[0].value], b.label):
                    self.freed.add(i.ops[0].value)

    # ---- naming -------------------------------------------------------------------------------
    def tmp(self, hint="t") -> str:
        self._tmp += 1
        return f"%ad.{hint}{self._tmp}"

    def r(self, v: str) -> str:
        """Rename an operand for the forward sweep."""
        return self.ren.get(v, v)

    def sname(self, v: str) -> str:
        return "%ad.s." + self.r(v)[1:].replace('"', "")

    def null_based(self, v: str) -> bool:
        """v is computed from the null pointer by GEPs/casts: it is its own shadow."""
        return underlying(self.fn, v) == "null"

    def where(self, inst) -> str:
        return located(self.module, self.fn, inst)

    # ---- the two sweeps ------------------------------------------------------------------------
    def build(self):
        fn = self.fn
        blocks = [b for b in fn.blocks if b.label in self.reachable]
        self.local_adjoints = block_local_adjoints(self, blocks)
        if self.mode == "combined":
            undo_stores.plan(self)
        self.accumulators = loop_accum.plan_accumulators(self)
        # Dry run: which primal values does each reverse block read?
        self.needs = {}
        for b in blocks:
            ctx = RevCtx(self, b, dry=True)
            if b.label not in doomed_blocks(self.fn):    # (no reverse: see primal_only)
                self._reverse_body(ctx, b)
            if b.label in self.loops:         # the accumulators' flush on the way out
                loop_accum.flush(self, ctx, self.loops[b.label])
            self.needs[b.label] = ctx.requests
        # entering a loop backwards needs its iteration count at the exit
        for b in blocks:
            for p in b.preds:
                for lp in self.exited(p.label, b.label):
                    if lp.header in self.once:
                        continue
                    if ("ivx", (lp.header, b.label)) not in self.needs[b.label]:
                        self.needs[b.label].append(("ivx", (lp.header, b.label)))
        for lp, label in openmp_version.loops(self).values():   # the versioning tests' inputs
            self.needs[label] += [k for k in openmp_version.needs(self, label)
                                  if k not in self.needs[label]]
        undo_stores.select(self)
        self.needs_are_known()
        self.plan = {}
        for b in blocks:
            closure, todo = [], list(self.needs[b.label])
            if len(b.preds) > 1 and b.label not in self.loops:
                todo.append(("pred", b.label))     # which edge the reverse leaves by
            seen = set()
            while todo:
                k = todo.pop()
                if k in seen:
                    continue
                seen.add(k)
                how = self.classify(k, b.label)
                closure.append((k, how))
                if how == "recompute":
                    todo.extend(self.deps(k, b.label))
            self.plan[b.label] = closure
        hoist_tapes(self)
        iteration_records(self)
        for b in blocks:
            for k, how in self.plan[b.label]:
                if how == "slot" and k not in self.value_slots:
                    self.value_slots[k] = self.tmp("slot")
        activity_report.report(self)
        return self._emit(blocks)

    def exited(self, src: str, dst: str):
        """Canonical loops left by the edge src -> dst."""
        return [lp for lp in self.loops.values() if src in lp.blocks and dst not in lp.blocks]

    def _key_type(self, key) -> str:
        kind, v = key
        if kind in ("iv", "ivx"):
            return "i64"
        if kind == "ctape":
            return "ptr"
        if kind == "pred":
            return self.pred_type(v)
        if kind == "s":
            d = self.fn.defs.get(v)
            return d.ty if isinstance(d, Inst) and d.op != "alloca" and pointer_aggregate(d.ty) \
                else "ptr"
        d = self.fn.defs[v]
        return d.ty

    def pred_type(self, label: str) -> str:
        """Type of the taken-predecessor index of block `label`: a byte for up to 128 preds
        (the switch reads it as signed)."""
        return "i8" if len(self.fn.block(label).preds) <= 128 else "i32"

    def _key_forward_name(self, key) -> str:
        kind, v = key
        if kind == "iv":
            return "%ad.iv." + self.r(v)[1:]
        if kind == "ctape":
            return f"%ad.ctape.{v}"
        if kind == "ivx":
            return f"%ad.ivx.{self.r(v[0])[1:]}.{self.r(v[1])[1:]}"
        if kind == "pred":
            return "%ad.pred." + self.r(v)[1:]
        if kind == "s":
            return self.fwd_shadow(v)
        return self.r(v)

    def fwd_shadow(self, v: str) -> str:
        if v in self.act.global_shadows:
            return self.gen.shadow_global(v)
        if not v.startswith("%"):
            return v                  # null / undef / constant memory: its own (unused) shadow
        return self.sname(v)

    # ---- emission ------------------------------------------------------------------------------
    def _emit(self, blocks):
        fn = self.fn
        fwd_lines, rev_lines = [], []
        entry = blocks[0]
        # adjoint allocas for every active value, zeroed
        act_vals = [p.name for p in fn.params if p.name in self.act.active]
        act_vals += [i.name for b in blocks for i in b.insts if i.name in self.act.active]
        prologue = []
        act_vals = [v for v in act_vals if v not in self.local_adjoints]
        for v in act_vals:
            self.slots[v] = "%ad.d." + self.r(v)[1:].replace('"', "")
        self.tape = "%ad.tape"
        for k, slot in self.value_slots.items():
            prologue.append(f"{slot} = alloca {self._key_type(k)}")
        prologue += hoist_allocas(self)
        if self.mode == "combined":
            prologue += self._riv_allocas() + allocas(self)
        elif getattr(self, "parallel", False):
            prologue += openmp_ranges.track_allocas()   # its adjoint ranges (registers)
            prologue += openmp_index.allocas(self)     # and its gathers' index ranges

        # forward sweep
        ranges = {}                        # block -> its lines (tape_reserve edits loops)
        for b in blocks:
            start = len(fwd_lines)
            fwd_lines.append(f"{self.r(b.label)[1:]}:")
            if b is entry:
                if self.mode == "combined":     # (split: the reverse function has its own)
                    fwd_lines.extend(self._adjoint_allocas(act_vals, combined=True))
                fwd_lines.extend(prologue)
                if self.mode == "combined":
                    fwd_lines.append(f"{self.tape} = alloca {TAPE_TY}")
                    fwd_lines.append(f"call void @__enzyme_cc_tape_start(ptr {self.tape})")
            ctx = FwdCtx(self, b, fwd_lines)
            ctx.after_phis = []            # slot stores wait until the phi group is complete
            lp = self.loops.get(b.label)
            if lp is not None:
                h = self.r(b.label)[1:]
                fwd_lines.append(f"%ad.iv.{h} = phi i64 [ 0, {self.r(lp.preheader)} ], "
                                 f"[ %ad.ivn.{h}, {self.r(lp.latch)} ]")
                if ("iv", b.label) in self.value_slots:
                    ctx.after_phis.append(f"store i64 %ad.iv.{h}, ptr {self.value_slots[('iv', b.label)]}")
            elif len(b.preds) > 1:
                index = {p.label: k for k, p in enumerate(b.preds)}
                inc = ", ".join(f"[ {index[p.label]}, {self.r(p.label)} ]" for p in pred_edges(b))
                fwd_lines.append(f"%ad.pred.{self.r(b.label)[1:]} = phi {self.pred_type(b.label)} {inc}")
                if ("pred", b.label) in self.value_slots:
                    ctx.after_phis.append(f"store {self.pred_type(b.label)} %ad.pred.{self.r(b.label)[1:]}, ptr "
                                          f"{self.value_slots[('pred', b.label)]}")
            for h in [lp.header for lp in self.loops.values() if b.label in lp.exits
                      and lp.header not in self.once]:
                lp = self.loops[h]
                inc = ", ".join(f"[ {'%ad.iv.' + self.r(h)[1:] if p.label in lp.blocks else 0}, "
                                f"{self.r(p.label)} ]" for p in pred_edges(b))
                key = ("ivx", (h, b.label))
                fwd_lines.append(f"{self._key_forward_name(key)} = phi i64 {inc}")
                if key in self.value_slots:
                    ctx.after_phis.append(f"store i64 {self._key_forward_name(key)}, ptr "
                                          f"{self.value_slots[key]}")
            fwd_lines.extend(exit_phis(self, b))     # hoisted in-loop loads leaving by b
            if getattr(self, "parallel", False):     # gathers' index ranges made addresses
                phis, lines = openmp_index.at_exit(self, b)
                fwd_lines.extend(phis)
                ctx.after_phis.extend(lines)
            for inst in b.insts[:-1]:
                if inst.op != "phi" and ctx.after_phis:
                    fwd_lines.extend(ctx.after_phis)
                    ctx.after_phis = []
                at = len(fwd_lines)
                self._forward_inst(ctx, inst)
                debug_locs.tag(fwd_lines, at, inst)
            fwd_lines.extend(ctx.after_phis)
            for lp in self.loops.values():
                h = self.r(lp.header)[1:]
                if lp.latch == b.label:
                    fwd_lines.append(f"%ad.ivn.{h} = add nuw nsw i64 %ad.iv.{h}, 1")
                if lp.header in self.once and b.label in lp.blocks and \
                        any(t not in lp.blocks for t in b.term.targets):
                    fwd_lines.append(f"store i64 %ad.iv.{h}, ptr %ad.nexit.{h}")
            self._push_needs(ctx, b)
            if getattr(self, "parallel", False):
                openmp_index.track_rows(ctx, b)   # rows' indices (short loops' loads)
                openmp_affine.emit(ctx, b, openmp_index.covered(self))   # the other affine loads
            self._forward_term(ctx, b)
            ranges[b.label] = (start, len(fwd_lines))
        fwd_lines = reserve_loops(self, fwd_lines, ranges)

        # reverse sweep
        self.own_entries = {}              # versioned loops' entry tests (openmp_version)
        rev_lines += self._rev_prologue()
        for b in reversed(blocks):
            if b.label in doomed_blocks(self.fn):
                continue
            ctx = RevCtx(self, b, dry=False)
            ctx.lines.append(f"rev.{self.r(b.label)[1:]}:")
            self._materialize(ctx, b)
            self._reverse_body(ctx, b)
            self._reverse_branch(ctx, b)
            rev_lines.extend(ctx.lines)
        if getattr(self, "parallel", False) and rev_lines[:1] == ["rev.entry:"]:
            rev_lines[1:1] = openmp_ranges.entry_loads(self)
        return fwd_lines, openmp_version.version(self, rev_lines, self.own_entries)

    def value_type(self, v: str) -> str:
        """Type of v's adjoint: its own type, or the float type an integer copy carries."""
        if v in self.act.punned:
            return self.act.punned[v]
        d = self.fn.defs[v]
        return d.ty

    def _riv_allocas(self):
        return [f"%ad.riv.{self.r(h)[1:]} = alloca i64" for h in self.loops] + \
            [f"%ad.nexit.{self.r(h)[1:]} = alloca i64" for h in sorted(self.once)]

    def _adjoint_allocas(self, act_vals, combined):
        out = []
        for v in act_vals:
            ty = self.value_type(v)
            out.append(f"{self.slots[v]} = alloca {ty}")
            out.append(f"store {ty} {adjoint_zero(ty)}, ptr {self.slots[v]}")
        return out

    def _rev_prologue(self):
        if self.mode == "combined":
            return []
        # split: the reverse function starts here; adjoint allocas + which return was taken
        lines = ["rev.entry:"]
        act_vals = list(self.slots)
        lines += self._adjoint_allocas(act_vals, combined=False)
        for k, slot in self.value_slots.items():
            lines.append(f"{slot} = alloca {self._key_type(k)}")
        lines += hoist_allocas(self)
        lines += self._riv_allocas() + allocas(self)
        lines += restored_args.restore(self)      # (saved after the return's index)
        if not self.rets:                # it never returns (it always throws or aborts): its
            lines.append("unreachable")  # augmented forward does not either
        elif len(self.rets) == 1:
            lines.append(f"br label %rev.{self.r(self.rets[0].label)[1:]}")
        else:
            lines.append("%ad.retid.p = call ptr @__enzyme_cc_pop(ptr %ad.tape, i64 4)")
            lines.append("%ad.retid = load i32, ptr %ad.retid.p, align 1")
            cases = " ".join(f"i32 {k}, label %rev.{self.r(r.label)[1:]}"
                             for k, r in enumerate(self.rets))
            lines.append(f"switch i32 %ad.retid, label %rev.{self.r(self.rets[0].label)[1:]} [ {cases} ]")
        return lines




    # forward sweep pieces
    def _forward_inst(self, ctx, inst):
        if primal_only(ctx, inst):
            return
        self.refuse_bit_manipulation(inst)
        self.emit_stop(ctx.lines, inst)
        if id(inst) in self.mem.undo and id(inst) not in self.loop_undone:
            undo_stores.save_old(self, ctx, inst)
        rule = FORWARD.get(inst.op)
        keep = True
        if rule is not None:
            keep = rule(ctx, inst, before=True) is not False
        if keep and not self.noneed.drops_primal(inst):
            ctx.lines.append(self.print_primal(inst))
            if inst.name in self.act.active:
                fp_logger.value(ctx, inst)
        if rule is not None:
            rule(ctx, inst, before=False)
        if inst.op == "load" and getattr(self, "parallel", False):
            openmp_ranges.track_load(ctx, inst, openmp_classes.shared)   # where its adjoint goes
        out = ctx.after_phis if inst.op == "phi" else ctx.lines
        key = ("p", inst.name)
        if inst.name and key in self.value_slots:
            out.append(f"store {inst.ty} {self.r(inst.name)}, ptr {self.value_slots[key]}")
        skey = ("s", inst.name)
        if inst.name and skey in self.value_slots:
            out.append(f"store ptr {self.sname(inst.name)}, ptr {self.value_slots[skey]}")
        ckey = ("ctape", inst.line)
        if ckey in self.value_slots and inst.op in ("call", "invoke"):
            # (a call's record; a GEP materialized before it shares its line: prepare.py)
            out.append(f"store ptr %ad.ctape.{inst.line}, ptr {self.value_slots[ckey]}")

    def print_primal(self, inst) -> str:
        toks = [self.ren.get(t, t) for t in inst.toks]
        return join(toks)

    def _forward_term(self, ctx, b):
        t = b.term
        if t.op == "ret":
            if self.mode == "combined":
                ctx.lines.append(f"br label %rev.{self.r(b.label)[1:]}")
                return
            if getattr(self, "parallel", False):
                openmp_ranges.track_merge(ctx)
            if len(self.rets) > 1:
                k = self.rets.index(b)
                p = self.tmp("push")
                ctx.lines.append(f"{p} = call ptr @__enzyme_cc_push(ptr %ad.tape, i64 4)")
                ctx.lines.append(f"store i32 {k}, ptr {p}, align 1")
            restored_args.save(self, ctx.lines)
            rty = self.aug_ret_type()
            if rty == "void":
                ctx.lines.append("ret void")
            elif rty == self.fn.ret_ty:
                ctx.lines.append(f"ret {rty} {self.r(t.ops[0].value)}")
            else:
                a = self.tmp()
                rv, ty = t.ops[0].value, t.ops[0].ty
                ctx.lines.append(f"{a} = insertvalue {rty} poison, {ty} {self.r(rv)}, 0")
                ctx.lines.append(f"{a}.1 = insertvalue {rty} {a}, {ty} {self.fwd_shadow(rv)}, 1")
                ctx.lines.append(f"ret {rty} {a}.1")
            return
        if t.op in ("invoke", "resume", "indirectbr", "callbr"):
            raise UserError(self.where(t) + f": cannot differentiate '{t.op}' (exception handling)"
                            " in function being differentiated; hint: build with -fno-exceptions")
        ctx.lines.append(self.print_primal(t))

    def aug_ret_type(self) -> str:
        ret = self.fn.ret_ty
        if has_shadow_type(ret) and self.returns_shadow():
            return "{ " + ret + ", " + ret + " }"
        return ret

    def ret_adjoint_type(self) -> str:
        """The type of the return's adjoint: the float whose bits an integer return carries."""
        for b in self.rets:
            if b.term.ops and b.term.ops[0].value in self.act.punned:
                return self.act.punned[b.term.ops[0].value]
        return self.fn.ret_ty

    def returns_shadow(self) -> bool:
        return any(r.term.ops and r.term.ops[0].value in self.act.shadowed for r in self.rets)

    # reverse sweep pieces
    def _reverse_body(self, ctx, b):
        if b.term.op == "ret" and self.ret_active and b.term.ops:
            rv = b.term.ops[0]                # the seed (the dry run too: see RevCtx.take)
            if rv.value in self.act.active:
                ty = self.act.punned.get(rv.value, rv.ty)       # (a float's bits)
                ctx.add(rv.value, ty, "%ad.dret" if self.mode == "split" else one_of(ty))
        for inst in reversed(b.insts[:-1] if b.term.op != "invoke" else b.insts):
            if inst.op == "phi":
                continue
            d, at = None, len(ctx.lines)
            if inst.name and inst.name in self.act.active:
                d = ctx.take(inst.name, self.value_type(inst.name))
            effects = inst.op in ("store", "call", "invoke", "alloca", "atomicrmw", "cmpxchg")
            if (d is None or d is NO_ADJOINT) and not effects:
                continue                      # no adjoint to pass on, no effect on memory
            if d is NO_ADJOINT:
                d = adjoint_zero(self.value_type(inst.name))
            rule = REVERSE.get(inst.op)
            if rule is None:
                if d is not None or self._touches_shadow(inst):
                    raise UserError(self.where(inst) + f": cannot differentiate instruction "
                                    f"'{inst.op}' (no derivative rule); hint: file an issue with "
                                    "this instruction, or mark the function __enzyme_inactivefn")
                continue
            if d is not None and inst.name in speculative(self):
                ctx.guard = (d, self.value_type(inst.name))    # thrown away by a select
            rule(ctx, inst, d)
            ctx.guard = None
            if d is not None:
                fp_logger.grad(ctx, inst, d)
            if id(inst) in self.loop_undone and not ctx.dry:
                undo_stores.restore_loop(self, ctx, inst)
            elif id(inst) in self.mem.undo and not ctx.dry:
                undo_stores.restore_old(self, ctx, inst)
            debug_locs.tag(ctx.lines, at, inst)
        # phi adjoints are read here and distributed on the edges (see _reverse_branch)
        ctx.phi_d = {}
        for phi in b.phis:
            if phi.name in self.act.active:
                ctx.phi_d[phi.name] = ctx.take(phi.name, self.value_type(phi.name))

    def _touches_shadow(self, inst) -> bool:
        return any(o.value in self.act.shadowed for o in inst.ops)

    def _enter_loops(self, ctx, b, pred):
        """Reverse edge b -> pred enters loops backwards: start their counters at the last iteration."""
        for lp in self.exited(pred.label, b.label):
            reset(self, ctx, lp)
            h = self.r(lp.header)[1:]
            if lp.header in self.once:
                n = self.tmp("nexit")
                ctx.lines.append(f"{n} = load i64, ptr %ad.nexit.{h}")
            else:
                n = ctx.avail[("ivx", (lp.header, b.label))]
            ctx.lines.append(f"store i64 {n}, ptr %ad.riv.{h}")
            if openmp_version.loops(self).get(lp.header, (None, None))[1] == b.label:
                self.own_entries[lp.header] = openmp_version.flag(ctx, lp, n)

    def _reverse_branch(self, ctx, b):
        preds = b.preds
        if b is self.fn.blocks[0]:
            undo_stores.redo(self, ctx)
            ctx.lines.extend(self.gen.finish_reverse(self, ctx))
            return
        lp = self.loops.get(b.label)
        if lp is not None:
            h = self.r(b.label)[1:]
            iv = ctx.avail.get(("iv", b.label))
            if iv is None:
                iv = self.tmp("iv")
                ctx.lines.append(f"{iv} = load i64, ptr %ad.riv.{h}")
            first = self.tmp("first")
            ctx.lines.append(f"{first} = icmp eq i64 {iv}, 0")
            ctx.lines.append(f"br i1 {first}, label %redge.{h}.pre, label %redge.{h}.latch")
            ctx.lines.append(f"redge.{h}.pre:")
            flush(self, ctx, lp)
            self._enter_loops(ctx, b, self.fn.block(lp.preheader))
            self._edge_adjoints(ctx, b, self.fn.block(lp.preheader))
            ctx.lines.append(f"br label %rev.{self.r(lp.preheader)[1:]}")
            ctx.lines.append(f"redge.{h}.latch:")
            dec = self.tmp("ivm")
            ctx.lines.append(f"{dec} = sub i64 {iv}, 1")
            ctx.lines.append(f"store i64 {dec}, ptr %ad.riv.{h}")
            # an unrotated nest (-Oz): the inner loop exits straight to this header
            self._enter_loops(ctx, b, self.fn.block(lp.latch))
            self._edge_adjoints(ctx, b, self.fn.block(lp.latch))
            ctx.lines.append(f"br label %rev.{self.r(lp.latch)[1:]}")
            return
        if len(preds) == 1:
            self._enter_loops(ctx, b, preds[0])
            self._edge_adjoints(ctx, b, preds[0])
            ctx.lines.append(f"br label %rev.{self.r(preds[0].label)[1:]}")
            return
        pid = ctx.avail[("pred", b.label)]
        edges = []
        for k, p in enumerate(preds):
            # not rev.*: that is the reverse of a primal block, and a primal label may end in .from.0
            lab = f"redge.{self.r(b.label)[1:]}.{k}"
            edges.append((k, lab, p))
        pty = self.pred_type(b.label)
        cases = " ".join(f"{pty} {k}, label %{lab}" for k, lab, _ in edges[1:])
        ctx.lines.append(f"switch {pty} {pid}, label %{edges[0][1]} [ {cases} ]")
        for k, lab, p in edges:
            ctx.lines.append(f"{lab}:")
            self._enter_loops(ctx, b, p)
            self._edge_adjoints(ctx, b, p)
            ctx.lines.append(f"br label %rev.{self.r(p.label)[1:]}")

    def _edge_adjoints(self, ctx, b, pred):
        for phi in b.phis:
            if phi.name not in ctx.phi_d:
                continue
            for val, lab in phi.incoming:
                if lab == pred.label:
                    ctx.add(val, self.value_type(phi.name), ctx.phi_d[phi.name])
                    break

