"""What a call to a function with bitcode does, as the caller's synthesis needs it (a mixin of
Generator): the activity of each argument (`call_activity`), whether the result is active or has
a shadow (`callee_activity`), and which pointer arguments the callee may write active data
through, store away or return (`callee_writes`), from a summary of the callee's own activity
analysis per activity signature (`_callee_summary`, a least fixed point for recursion)."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import adjoint_type_of, carries_float
from ..analysis.activity import Activity
from ..analysis.const_fields import DupFields, act_key, fields_passed
from ..analysis.activity_basics import has_shadow_type
from ..structure.diagnostics import located, quoted_name
from ..analysis.typeinfo import TypeInfo
from ..parallel import openmp
from ..structure import packed_bits
from .prepare import prepare
from ..structure.type_layout import constant_float_global
from enzyme_cc.rules.fortran_catalog import written_args
from enzyme_cc.rules.call_kinds import kind_of
from ..analysis.inert import reads_only


# an indirect call with more possible targets than this keeps the conservative summary: Rust's
# std gives a `void (ptr)` call hundreds, and summarizing each multiplied the differentiate
# stage of a program by twelve (7 s -> 87 s)
MAX_SUMMARIZED_TARGETS = 16


class CalleeSummaries:
    def param_types(self, inst) -> list[str]:
        """Parameter types of the function a call reaches (from the call itself when indirect)."""
        fn = self.module.function(inst.callee) if (inst.callee or "").startswith("@") else None
        return [p.ty for p in fn.params] if fn else [o.ty for o in inst.ops]

    def call_hints(self, synth, inst, target: str | None = None) -> dict:
        """What the caller knows about the memory behind each pointer argument of a call (of
        an indirect call, for its possible target `target`)."""
        callee = target or inst.callee or ""
        if synth is None or not callee.startswith("@"):
            return {}
        fn = self.module.function(callee)
        if fn is None:
            return {}
        return {p.name: synth.types.call_hint(o.value, fn, p.name)
                for p, o in zip(fn.params, inst.ops) if p.ty == "ptr" and o.value.startswith(("%", "@"))}

    def call_activity(self, inst, caller_act) -> list[str]:
        acts = []
        for k, (ty, o) in enumerate(zip(self.param_types(inst), inst.ops)):
            if carries_float(ty) and caller_act.is_active(o.value):
                acts.append("active")
            elif o.value in caller_act.punned and self.takes_bits(inst, k, caller_act):
                acts.append("active")       # a float's bits as an integer argument
            elif ty == "ptr" and caller_act.has_shadow(o.value):   # (null: its own shadow)
                fields = getattr(caller_act, "const_fields", None) and fields_passed(
                    self.module, caller_act.fn, caller_act.const_fields, o.value)
                acts.append(DupFields(fields) if fields else "dup")
            else:
                acts.append("const")
        for k in self._stored_constants(inst, acts):
            acts[k] = "dup"
        return acts

    def takes_bits(self, inst, k, caller_act) -> bool:
        """The callee takes the call's integer argument k as the float whose bits the caller
        passes there: whole (an i64 as a double, an i32 as a float), or, through a direct call,
        packed beside integer data where the callee unpacks it (packed_bits). An indirect call:
        every function it may reach takes the float whole."""
        v = inst.ops[k].value
        if not (inst.callee or "").startswith("@"):
            fns = [self.module.function(t) for t in self.address_taken(
                inst.ty, [o.ty for o in inst.ops], inst)]
            return bool(fns) and all(packed_bits.takes_whole(f, k, caller_act, v) for f in fns)
        fn = self.module.function(inst.callee)
        if fn is None or k >= len(fn.params):
            return False
        p = fn.params[k]
        want = packed_bits.param_lanes(fn, p.name) if p.ty == "i64" else None
        if want:
            # the same halves; or a pair (a record read from memory as an i64, its integer
            # half a float with a zero shadow: activity.pun_type) into one the callee unpacks
            have = packed_bits.lanes_of(caller_act, v) if inst.ops[k].ty == "i64" else None
            return have is not None and (have == want or len(have) == 2)
        return packed_bits.takes_whole(fn, k, caller_act, v)

    def _stored_constants(self, inst, acts) -> list[int]:
        """Positions of a call's pointers to constant float data (a `const` global: GSL's
        robust-fit type descriptor) that the callee stores away: where it stores them into
        memory with a shadow, the shadow stored is the constant's zeroed scratch, passed as
        theirs (a null shadow would fault where its doubles are read through the record)."""
        callee = inst.callee or ""
        fn = self.module.function(callee) if callee.startswith("@") else None
        if fn is None or len(fn.params) != len(inst.ops):
            return []
        cands = [k for k, (a, o) in enumerate(zip(acts, inst.ops)) if o.ty == "ptr" and
                 a == "const" and constant_float_global(self.module, o.value)]
        if not cands:
            return []
        escapes = self._callee_summary(callee, acts)[3]
        return [k for k in cands if k in escapes]

    def callee_activity(self, inst, caller_act=None):
        """(result active, result has a shadow) for a call to a function with bitcode; for an
        indirect call, over the functions it may reach (the address-taken ones of its type)."""
        if (inst.callee or "").startswith("%") and caller_act is not None:
            tys = [o.ty for o in inst.ops]
            acts = self.call_activity(inst, caller_act)
            targets = self.address_taken(inst.ty, tys, inst)
            out = [self._callee_summary(t, acts)[:2] for t in targets]
            returning = [t for t in targets if (t, tuple(acts)) in self._record_returns]
            if inst.name and returning:
                # a float's bits whole in an integer field of a returned record: every target
                # returns them in the same field, or the call is refused
                records = {self._record_returns.get((t, tuple(acts))) for t in targets}
                if len(records) != 1 or None in records:
                    self._refuse_record_return(caller_act, inst, returning[0], "through a "
                                               "function pointer whose possible targets return "
                                               "them differently ")
                caller_act.punned[inst.name] = records.pop()
                if not carries_float(inst.ty):       # (a record of integer registers only)
                    return True, False
            if inst.name and not carries_float(inst.ty) and any(a for a, _ in out):
                # a float's bits returned whole by every function the call may reach: the
                # result is that float (the dispatchers pass its adjoint or tangent on)
                odd = [t for t, (a, _) in zip(targets, out) if not a or (t, tuple(acts)) in
                       self._packed_returns or (t, tuple(acts)) in self._float_bits_returned]
                if odd:
                    bits = next(t for t, (a, _) in zip(targets, out) if a)
                    raise UserError(
                        f"{located(self.module, caller_act.fn, inst)}: {quoted_name(bits)}, "
                        "which this indirect call may reach, returns a float's bits in an "
                        f"integer, and {quoted_name(odd[0])}, which it may reach too, does not "
                        "return them the same way; hint: return the float itself, or write the "
                        "result through a pointer argument")
            return any(a for a, _ in out), any(s for _, s in out)
        fn = self.module.function(inst.callee)
        if caller_act is None or fn is None:
            return False, False
        acts = self.call_activity(inst, caller_act)
        if all(a == "const" for a in acts) and not has_shadow_type(fn.ret_ty) and \
                inst.callee not in self.global_users:
            return False, False
        out = self._callee_summary(inst.callee, acts, self._arg_hints(inst, caller_act))[:2]
        lanes = self._packed_returns.get((inst.callee, tuple(acts)))
        if inst.name and out[0] and lanes is not None:
            caller_act.packed[inst.name] = lanes
        record = self._record_returns.get((inst.callee, tuple(acts)))
        if inst.name and out[0] and record is not None:
            caller_act.punned[inst.name] = record
        if inst.name and (inst.callee, tuple(acts)) in self._float_bits_returned:
            self._refuse_record_return(caller_act, inst, inst.callee, "")
        return out

    def inert_call(self, caller_act, inst) -> bool:
        """A direct call of a function with bitcode that writes nothing outside its frame and
        gets no active value: where its pointer result needs no shadow, it carries no
        derivative (std::vector<int>::operator[] of a constant object: analysis/shadow_demand)."""
        c = inst.callee or ""
        return c.startswith("@") and kind_of(self, inst) == "diff" and not any(
            o.value in caller_act.active or o.value in caller_act.punned for o in inst.ops) \
            and reads_only(self, c)

    def arg_demand(self, caller_act, inst):
        """(the argument positions whose shadows the function(s) a call reaches read, those
        whose memory's shadow they only store pointers of their own into: needed where the
        caller reads them back) (analysis/shadow_demand.py, the summaries' last two parts), or
        None: all of them."""
        c = inst.callee or ""
        if c.startswith("@"):
            fn = self.module.function(c)
            if fn is None or len(fn.params) != len(inst.ops) or kind_of(self, inst) != "diff":
                return None
            return self._callee_summary(c, self.call_activity(inst, caller_act),
                                        self._arg_hints(inst, caller_act))[5:7]
        targets = self.address_taken(inst.ty, self.param_types(inst), inst) \
            if c.startswith("%") else None
        if not targets or len(targets) > MAX_SUMMARIZED_TARGETS:
            return None
        acts, demand, fill = self.call_activity(inst, caller_act), set(), set()
        for t in targets:
            fn = self.module.function(t)
            if fn is None or len(fn.params) != len(inst.ops):
                return None
            summary = self._callee_summary(t, acts, {})
            demand, fill = demand | summary[5], fill | summary[6]
        return demand, fill - demand

    def _refuse_record_return(self, caller_act, inst, callee, how):
        ret_ty = self.module.function(callee).ret_ty
        raise UserError(
            f"{located(self.module, caller_act.fn, inst)}: {quoted_name(callee)} returns a "
            f"float's bits among other data in integers ('{re.sub(r' +,', ',', ret_ty)}': a "
            "union or record holding a float and more, returned by value in integer "
            f"registers), and the derivative through such a return {how}is not supported yet "
            "(a float's bits returned alone, packed beside integer data in one register, or "
            "whole in one field of a record returned directly, are); hint: return the float "
            "itself, or write the result through a pointer argument")

    def _arg_hints(self, inst, caller_act) -> dict:
        types = getattr(caller_act, "types", None)
        fn = self.module.function(inst.callee)
        if types is None or fn is None:
            return {}
        return {p.name: types.call_hint(o.value, fn, p.name) for p, o in zip(fn.params, inst.ops)
                if p.ty == "ptr" and o.value.startswith(("%", "@"))}

    def _callee_summary(self, callee, acts, hints=None):
        """(result active, result shadowed, indices of pointer parameters the callee may write
        active data through, indices of those it stores away or returns, indices of those
        whose memory a pointer it stores away was read from, indices of those whose shadow a
        use demands, indices of those whose memory's shadow only its own pointers stored back
        demand: analysis/shadow_demand.py, indices of those whose memory a pointer it stores
        into memory holding active data was read from) for one activity signature of a
        function with bitcode.

        Recursion starts from "nothing active" and iterates to the least fixed point: assuming
        the worst for a recursive call would make every pointer a recursive sort takes look
        written with active data, and give shadows to integer arrays (Rust's `Vec<usize>`
        sorted by a float key). The summaries that read a guess, directly or through other
        summaries, are dropped before the next round, since they may rest on it; the others
        stay (dropping every summary made during a round made mutual recursion over many
        activity signatures exponential: a Fortran adaptive quadrature, 190 s)."""
        key = (callee, act_key(acts))
        cache, stack, deps = self._callee_act_cache, self._summary_stack, self._summary_deps
        if key in cache:
            if key in stack:
                self._summary_guessed.add(key)      # a recursive call used the current guess
                self._depends_on(key, stack.index(key))
            for g in deps.get(key, ()):             # a summary made from guesses still open
                self._depends_on(g, stack.index(g))
            return cache[key]
        cache[key] = (False, False, set(), set(), set(), set(), set(), set())
        stack.append(key)
        try:
            while True:
                deps[key] = set()
                self._summary_guessed.discard(key)
                res = self._callee_summary_once(callee, acts, hints)
                guess = cache[key]
                res = (res[0] or guess[0], res[1] or guess[1],
                       *(a | b for a, b in zip(res[2:], guess[2:])))
                if key not in self._summary_guessed or res == guess:
                    break
                cache[key] = res
                for k in [k for k, d in deps.items() if key in d and k != key]:
                    del cache[k]                    # (they may rest on the old guess)
                    del deps[k]
        finally:
            stack.pop()
        cache[key] = res
        deps[key].discard(key)
        for d in deps.values():     # made with the final value: exact as far as key goes
            d.discard(key)
        return res

    def _depends_on(self, guessed, at: int):
        """The summaries being computed above stack position `at` read the guess of the summary
        there (directly or through one that did)."""
        for k in self._summary_stack[at + 1:]:
            self._summary_deps[k].add(guessed)

    def _callee_summary_once(self, callee, acts, hints):
        fn = self.module.function(callee)
        ptrs = {k for k, p in enumerate(fn.params) if p.ty == "ptr"}
        fn = prepare(fn, self.module)
        act = Activity(fn, self.module, acts, self.callee_activity,
                       types=TypeInfo(self.module, fn, hints or {}), callee_writes=self.callee_writes,
                       shared_globals=self.shared_globals,
                       inactive_globals=self.reg.inactive_globals,
                       global_users=self.global_users, inert_call=self.inert_call,
                       arg_demand=self.arg_demand, summary=True)
        rets = [b.term for b in fn.blocks if b.term.op == "ret" and b.term.ops]
        bits = [] if carries_float(fn.ret_ty) and not packed_bits.is_flat_record(fn.ret_ty) else \
            [r for r in rets if _returned_float_bits(fn, act, r.ops[0].value)]
        # a float's bits returned whole as an integer of its width (a union of a double and a
        # pointer in rax): the result is active, its adjoint that float (lexer.adjoint_type_of)
        whole = bool(bits) and all(act.punned.get(r.ops[0].value) == adjoint_type_of(fn.ret_ty)
                                   and r.ops[0].value not in act.packed for r in bits)
        # or whole in an integer field of a record, the same field at every return that
        # returns active data
        records = {act.punned.get(r.ops[0].value) for r in bits}
        if bits and not whole and packed_bits.is_flat_record(fn.ret_ty) and len(records) == 1 \
                and None not in records and all(r in bits or not act.is_active(r.ops[0].value)
                                                for r in rets):
            whole = True
            self._record_returns[(callee, tuple(acts))] = records.pop()
        # or packed in one register (packed_bits), in the same halves at every return
        lanes = {packed_bits.lanes_of(act, r.ops[0].value) for r in bits}
        if bits and not whole and fn.ret_ty == "i64" and len(lanes) == 1 and None not in lanes:
            whole = True
            self._packed_returns[(callee, tuple(acts))] = lanes.pop()
        if bits and not whole:
            self._float_bits_returned.add((callee, tuple(acts)))
        return (whole or carries_float(fn.ret_ty) and any(act.is_active(r.ops[0].value)
                                                          for r in rets),
                has_shadow_type(fn.ret_ty) and any(r.ops[0].value in act.shadowed for r in rets),
                {k for k in ptrs if act._find(fn.params[k].name) in act.active_objects},
                {k for k in ptrs if act._find(fn.params[k].name) in act.escaped},
                {k for k in ptrs if act._find(fn.params[k].name) in act.pointee_escaped},
                set(act.param_demand), set(act.param_fill),
                {k for k in ptrs if act._find(fn.params[k].name) in act.pointee_active})

    def callee_writes(self, inst, caller_act):
        """(argument positions through which a call may store active data, positions whose
        pointer the callee stores away or returns, positions whose memory a pointer the callee
        stores away was read from, and those of these whose pointer goes into memory holding
        active data); None when unknown."""
        if inst.callee == openmp.FORK:      # a parallel region: its outlined function's summary
            return openmp.fork_writes(self, inst, caller_act)
        fn = self.module.function(inst.callee) if (inst.callee or "").startswith("@") else None
        if fn is None and (inst.callee or "").startswith("%"):
            return self._indirect_writes(inst, caller_act)
        if fn is None:                  # flang's MATMUL behind our fallback wrapper
            return written_args(inst.callee)
        if len(fn.params) != len(inst.ops):
            return None
        return _writes_part(self._callee_summary(inst.callee,
                                                 self.call_activity(inst, caller_act),
                                                 self._arg_hints(inst, caller_act)))

    def _indirect_writes(self, inst, caller_act):
        """callee_writes of an indirect call: the union of the summaries of the functions it may
        reach, those the derivative dispatches over (dispatch.address_taken). A C++ virtual
        call on objects read from enzyme_const memory inside an OpenMP region: taken as writing
        every argument, it made the captured slot holding the objects' array look active, and
        the derivative read the objects through a null shadow (a crash)."""
        targets = self.address_taken(inst.ty, self.param_types(inst), inst)
        if not targets or len(targets) > MAX_SUMMARIZED_TARGETS:
            return None     # (every argument may be written: a summary per target costs)
        acts = self.call_activity(inst, caller_act)
        out = (set(), set(), set(), set())
        for t in targets:
            fn = self.module.function(t)
            if fn is None or len(fn.params) != len(inst.ops):
                return None
            out = tuple(a | b for a, b in zip(out, _writes_part(self._callee_summary(t, acts,
                                                                                     {}))))
        return out


def _writes_part(summary) -> tuple:
    """callee_writes' part of a callee summary: (written, kept, read and kept, read and kept
    in memory holding active data) argument positions."""
    return summary[2], summary[3], summary[4], summary[7]


def _returned_float_bits(fn, act, v: str, depth: int = 0) -> bool:
    """The returned value v is (or a field inserted into it is) an integer carrying an active
    float's bits."""
    if v in act.punned:
        return True
    d = fn.defs.get(v)
    if depth < 16 and getattr(d, "op", None) == "insertvalue":
        return any(_returned_float_bits(fn, act, o.value, depth + 1) for o in d.ops[:2])
    return False
