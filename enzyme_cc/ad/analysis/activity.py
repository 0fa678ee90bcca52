"""Activity analysis: which float values carry a derivative, which pointers need a shadow.

Forward propagation to a fixed point (phis make it iterative): a float is active when it depends
on an active input or is read from memory that has a shadow; a pointer has a shadow when it is
derived from a duplicated argument, a local allocation, or is read from shadowed memory.
Integers never carry a derivative (seeds/001, section 2).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import (adjoint_type_of, carries_float, int_bits, is_fp,  # noqa: F401
                                 same_floats, scalar_of)
from .debug_types import copied_kind, valued_kind
from ..structure.cfg import doomed_blocks
from ..structure.unionfind import UnionFind
from ..structure.diagnostics import located
from enzyme_cc.errors import UserError
from ..structure.enum_arms import integer_variant
from ..structure.packed_bits import (PACKING_OPS, adjoint_type as packed_type, is_flat_record,
                                     lanes_of, packed_lane, param_lanes, record_pun)
from enzyme_cc.rules import is_inactive_call, call_rule
from enzyme_cc.rules.registry import is_mirror_call
from enzyme_cc.rules.tape import is_tape_call
from .activity_basics import (_libm_out, has_shadow_type, int_pointer_base, int_pointer_bases,
                              pun_type, string_objects)
from .activity_memory import ActiveMemory
from .const_fields import field_load, record_fields
from ..structure.local_slots import param_spill_slots
from .shadow_demand import prune
from enzyme_cc.rules.call_kinds import MEMCPY
from ..structure.type_layout import (constant_float_global, same_memory, underlying,
                                     pinned_constant, global_named)


class Activity(ActiveMemory):
    def __init__(self, fn, module, arg_act: list[str], callee_info, types=None, callee_writes=None,
                 shared_globals=(), inactive_globals=(), global_users=(), inert_call=None,
                 arg_demand=None, summary=False):
        """arg_act per param: 'active', 'dup', 'dupnoneed', 'const'.
        callee_info(inst) -> (result_active, result_shadowed) for calls to functions with bitcode.
        inert_call(act, inst): the call carries no derivative when its result's shadow is not
        needed; arg_demand(act, inst): the argument positions whose shadows the call's callees
        read, or None (shadow_demand.py). summary: the analysis is a callee summary's, which
        tells callers where arguments passed without a shadow here would need one."""
        self.fn, self.module = fn, module
        self.for_summary = summary
        # instructions of blocks that never reach a return (an abort, a throw and what builds
        # its message, structure/cfg.doomed_blocks): nothing there needs a derivative, and they
        # run as primal code (rules/calls.py call_kind)
        doomed = doomed_blocks(fn)
        self.doomed = {id(i) for b in fn.blocks if b.label in doomed for i in b.insts}
        self.active: set[str] = set()     # active float/aggregate values (original names)
        self.shadowed: set[str] = set()   # pointer values with a shadow
        self.punned: dict[str, str] = {}  # integer values that carry float data -> float type
        # i64 values that hold floats' 32 bits beside integer data or each other (a `{float,
        # int}` record, a Rust `[f32; 2]` passed in one register): the floats' bit offsets
        self.packed: dict[str, frozenset] = {}
        self.ptrint: set[str] = set()     # integer values that carry a pointer (shadow as int too)
        self.unknown_copies: set[str] = set()   # integers read from active memory, type unknown
        self.float_pieces: set[str] = set()     # integers narrower than the float they are read from
        self.types = types
        self.callee_writes = callee_writes
        # Mutable globals the function stores active data into get a shadow global.
        # Globals that carry active data from one function to another (Generator.shared_globals)
        # have a shadow everywhere.
        self.global_shadows: set[str] = set(shared_globals)
        self.inactive_globals = set(inactive_globals)     # enzyme_inactive: hold no derivative
        # functions reading or writing the shared globals: active data may come out of a call
        # of one even when no argument is active (Generator.global_users)
        self.global_users = global_users
        self.shadowed.update(shared_globals)
        for p, a in zip(fn.params, arg_act):
            if a == "active":
                self.active.add(p.name)
                if int_bits(p.ty):              # a float's bits passed as an integer
                    lanes = param_lanes(module.function(fn.name) or fn, p.name) \
                        if p.ty == "i64" else None
                    self.punned[p.name] = packed_type(lanes) if lanes else adjoint_type_of(p.ty)
                    if lanes:                   # packed in one register (packed_bits)
                        self.packed[p.name] = lanes
            elif a in ("dup", "dupnoneed"):
                self.shadowed.add(p.name)
        # Local memory (allocas, allocations) needs a shadow only once active data may reach it:
        # an active store, a copy from shadowed memory, escaping, or a call that may write it.
        self._classes = UnionFind()
        self._find, self._union = self._classes.find, self._classes.union
        self.active_objects: set[str] = set()   # objects active data is written into
        self.escaped: set[str] = set()          # local objects whose address leaves our sight
        self.returned: set[str] = set()         # ... or is returned (the caller's to follow)
        # objects a pointer stored away was loaded from (a view's data pointer read from the
        # vector it views): the caller gives them shadows where the memory it went to is active
        self.pointee_escaped: set[str] = set()
        # ... and of those, the ones known to go into memory that holds active data (a view of
        # an output matrix a callee writes through): the caller gives them shadows outright
        self.pointee_active: set[str] = set()
        self._underlying = underlying
        # one object per class: phi/select joins, and a realloc'd block with its old block (the
        # data, hence its shadow, moves over)
        for a, b in same_memory(fn):
            self._union(a, b)
        # std::string objects (and the buffers joined with them) hold characters and their own
        # buffer's address, never a derivative, as in Enzyme's type analysis: moving or
        # assigning one (a log message built from an active value) gives it no shadow
        self._chars = {self._find(o) for o in string_objects(module, fn)}
        # code pointers (used only as the callee of calls) carry no shadow: indirect calls
        # dispatch on the primal function pointer
        uses: dict[str, list] = {}
        for inst in fn.insts():
            for o in inst.ops:
                uses.setdefault(o.value, []).append(inst)
            if inst.op in ("call", "invoke") and inst.callee and inst.callee.startswith("%"):
                uses.setdefault(inst.callee, []).append(("callee", inst))
        self._uses = uses       # value -> instructions using it (("callee", inst) as a callee)
        self.code_ptrs = {v for v, us in uses.items()
                          if us and all(isinstance(u, tuple) or (u.op in ("phi", "select") and
                                                                  u.ty == "ptr") for u in us)
                          and any(isinstance(u, tuple) for u in us)}
        # pointers stored into each object: a pointer loaded from it may be any of them
        self._stored_ptrs: dict[str, list[str]] = {}
        # objects handed to a callee, which may store pointers into them (flang's ALLOCATE
        # filling an array descriptor)
        self._filled_by_calls: set[str] = set()
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and (
                    inst.ops[0].value.startswith("%") or inst.ops[0].value in module.globals
                    and not module.is_constant_global(inst.ops[0].value)):
                # (a mutable global's address too: `double *c = U;` kept in a local)
                self._stored_ptrs.setdefault(self._obj(inst.ops[1].value), []).append(
                    inst.ops[0].value)
            elif inst.op in ("call", "invoke") and inst.callee and \
                    not inst.callee.startswith("@llvm."):
                self._filled_by_calls.update(self._obj(o.value) for o in inst.ops
                                             if o.ty == "ptr" and o.value.startswith("%"))
        self._copied_ptrs(fn)
        self._const_slots = _const_spill_slots(fn, arg_act)
        # records' fields holding pointers without a shadow beside ones with (const_fields.py)
        self.const_fields = record_fields(module, fn, arg_act)
        changed = True
        while changed:
            changed = False
            changed |= self._mark_objects(callee_info)
            for inst in fn.insts():
                if not inst.name or id(inst) in self.doomed:
                    continue
                act, sh = self._infer(inst, callee_info)
                if act and inst.name not in self.active:
                    self.active.add(inst.name)
                    changed = True
                if sh and inst.name not in self.shadowed:
                    self.shadowed.add(inst.name)
                    changed = True
            for inst in fn.insts():
                if id(inst) in self.doomed:
                    continue
                if inst.op == "store" and (inst.ops[0].value in self.active or
                                           inst.ops[0].value in self.shadowed):
                    changed |= self._global_store(underlying(fn, inst.ops[1].value))
        # shadows nothing reads are not built (one read through a constant pointer's null
        # shadow would fault); calls found to need none run as primal code (rules/calls.py)
        self.inert_calls: set[int] = set()
        prune(self, fn, inert_call and (lambda i: inert_call(self, i)),
              arg_demand and (lambda i: arg_demand(self, i)))

    def _copied_ptrs(self, fn):
        """A copy moves the pointers stored in its source into its destination (Rust moves a
        Vec's header, pointer included, with memcpy from one local to another): a pointer
        loaded from the destination may be any of them."""
        copies = [(self._obj(i.ops[0].value), self._obj(i.ops[1].value)) for i in fn.insts()
                  if i.op in ("call", "invoke") and len(i.ops) > 2 and
                  (i.callee or "").startswith(MEMCPY)]
        changed = bool(copies)
        while changed:
            changed = False
            for dst, src in copies:
                have = self._stored_ptrs.setdefault(dst, [])
                for v in list(self._stored_ptrs.get(src, ())):
                    if v not in have:
                        have.append(v)
                        changed = True

    def _global_store(self, g: str) -> bool:
        """Active data is stored into global g (if it is a mutable one): it gets a shadow."""
        module = self.module
        if g.startswith("@") and g in module.globals and not module.is_constant_global(g) and \
                g not in self.shadowed and g not in self.inactive_globals:
            self.shadowed.add(g)
            self.global_shadows.add(g)
            return True
        return False

    def _escape(self, v: str, seen=None, into=None) -> bool:
        """v's object escapes (into `escaped`, or the set given); when v was reloaded from a
        local spill slot, so do the pointers stored there, and when a callee returned it, so do
        the pointers the callee was given (it may return one of them)."""
        seen = set() if seen is None else seen
        into = self.escaped if into is None else into
        u = self._underlying(self.fn, v)
        if u in seen:
            return False
        seen.add(u)
        changed = False
        o = self._find(u)
        if o not in into:
            into.add(o)
            changed = True
        d = self.fn.defs.get(u)
        op = getattr(d, "op", None)
        if op == "load":
            for stored in self._stored_ptrs.get(self._obj(d.ops[0].value), []):
                changed |= self._escape(stored, seen, into)
            if into is self.escaped:
                changed |= self._pointee_escape(d.ops[0].value, set())
        elif op in ("call", "invoke") and self.module.defines(d.callee or ""):
            for x in d.ops:
                if x.ty == "ptr" and x.value.startswith("%"):
                    changed |= self._escape(x.value, seen, into)
        elif op == "extractvalue" and d.ops[0].value.startswith("%") and \
                getattr(self.fn.defs.get(d.ops[0].value), "op", None) in ("call", "invoke"):
            # a pointer field of a record a callee returned by value (std::get_temporary_buffer's
            # pair): the call's result carries its shadow
            changed |= self._escape(d.ops[0].value, seen, into)
        elif op == "inttoptr":          # an address rebuilt from an integer: its pointers (a
            # Rust Vec's buffer, kept as an integer beside the dangling empty address, moved
            # into a record a callee takes: vec![vec![0.0; n]; m]'s row)
            for src in int_pointer_bases(self.fn, d.ops[0].value):
                changed |= self._escape(src, seen, into)
        return changed

    def _pointee_escape(self, ptr: str, seen: set, active: bool = False) -> bool:
        """A pointer read from ptr's memory escapes (active: into memory that holds active
        data): note that memory's object, and where ptr was itself reloaded from a local spill
        slot (unoptimized code), the pointers stored there (the parameter it came in)."""
        u = self._underlying(self.fn, ptr)
        if u in seen:
            return False
        seen.add(u)
        o, changed = self._find(u), False
        if o not in self.pointee_escaped:
            self.pointee_escaped.add(o)
            changed = True
        if active and o not in self.pointee_active:
            self.pointee_active.add(o)
            changed = True
        d = self.fn.defs.get(u)
        if getattr(d, "op", None) == "load":
            for stored in self._stored_ptrs.get(self._obj(d.ops[0].value), []):
                changed |= self._pointee_escape(stored, seen, active)
        return changed

    def into_inactive_global(self, ptr: str) -> bool:
        """Does ptr point into a global marked enzyme_inactive (whose derivative is dropped)?"""
        return self._underlying(self.fn, ptr) in self.inactive_globals

    def _constant_globals(self, vals) -> bool:
        """A choice between constant globals (a `cond ? &T0 : &T1` type descriptor holding
        floats, the vtables of two classes a factory may construct): stored where a shadow is
        kept, its shadow chooses between theirs (shadow_storage.constant_shadow: a zeroed
        scratch for floats, else the global itself), where a null one would fault."""
        consts = [o.value for o in vals if o.value not in ("null", "undef", "poison")]
        return bool(consts) and all(not v.startswith("%") and (
            constant_float_global(self.module, v) or
            self.module.is_constant_global(global_named(v) or "")) for v in consts)

    def _local_shadowed(self, v: str) -> bool:
        o = self._obj(v)
        return o not in self._chars and (o in self.active_objects or o in self.escaped or
                                         o in self.returned)

    def _obj(self, ptr: str) -> str:
        return self._find(self._underlying(self.fn, ptr))

    def is_active(self, v: str) -> bool:
        return v in self.active

    def has_shadow(self, v: str) -> bool:
        return v in self.shadowed or v == "null"

    def _any_active(self, inst):
        return any(o.value in self.active for o in inst.ops)

    def _infer(self, inst, callee_info):
        op, ty = inst.op, inst.ty
        if inst.name in self.code_ptrs:
            return False, False
        fp = carries_float(ty)
        isptr = has_shadow_type(ty)
        if op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc"):
            return self._any_active(inst), False
        if op in PACKING_OPS and inst.ops:
            lanes = packed_lane(self, inst)
            if lanes == "whole":                # the low float's own 32 bits
                self.punned[inst.name] = "float"
                return True, False
            if lanes:
                self.punned[inst.name] = packed_type(lanes)
                self.packed[inst.name] = lanes
                return True, False
        if op in ("phi", "select", "freeze"):
            vals = inst.ops[1:] if op == "select" else inst.ops
            if self._joined_copies(inst, vals):
                return inst.name in self.punned, False
            lanes = {lanes_of(self, o.value) if o.ty == "i64" else None for o in vals
                     if o.value in self.punned}
            if len(lanes) > 1:
                raise UserError(f"{located(self.module, self.fn, inst)}: joins integers that "
                                "carry float bits in different places (a float's bits alone, "
                                "or packed into different halves of a 64-bit integer); hint: "
                                "compute on the float value instead")
            if lanes and None not in lanes:
                self.packed[inst.name] = lanes.pop()
            pun = [self.punned[o.value] for o in vals if o.value in self.punned]
            if pun and (ty in ("i64", "i32") or is_flat_record(ty)):
                if is_flat_record(ty) and (len(set(pun)) > 1 or any(
                        o.value in self.active and o.value not in self.punned for o in vals)):
                    raise UserError(f"{located(self.module, self.fn, inst)}: joins records "
                                    "that carry a float's bits in different integer fields, or "
                                    "in a field on one path only; hint: return the float "
                                    "itself, or write the result through a pointer argument")
                self.punned[inst.name] = pun[0]
                return True, False
            if ty == "i64" and (any(o.value in self.ptrint for o in vals) and all(
                    o.value in self.ptrint or not o.value.startswith("%") for o in vals) or
                    op == "phi" and self._address_web(inst.name)):
                # an address kept as an integer, or a constant one (Rust's Vec: the allocation's
                # address, or a dangling 8 when it is empty): its shadow is an integer too
                self.ptrint.add(inst.name)
                return False, False
            return (fp and any(o.value in self.active for o in vals),
                    isptr and (any(o.value in self.shadowed for o in vals) or
                               self._local_shadowed(inst.name) and self._constant_globals(vals)))
        if op == "bitcast" and inst.ops and inst.ops[0].value in self.punned and is_fp(ty) and \
                (inst.ops[0].value not in self.packed or self.punned[inst.ops[0].value] == ty):
            return True, False                       # i64 copy of a double, viewed as double again
        if op == "bitcast" and inst.ops and is_fp(ty) and inst.ops[0].value in self.unknown_copies:
            # integers read from shadowed memory and viewed as floats: they were float data
            # (Eigen loads packets as <4 x i32> and bitcasts them to <2 x double>)
            self.unknown_copies.discard(inst.ops[0].value)
            self.punned[inst.ops[0].value] = ty
            return True, False
        if op == "bitcast" and inst.ops and inst.ops[0].value in self.active and (
                ty in ("i64", "i32") or ty.startswith("<") and scalar_of(ty) in ("i64", "i32")):
            # a float's bits (a vector's too: what float_bits.py could not turn back into
            # float operations is refused where integer code uses it)
            self.punned[inst.name] = inst.ops[0].ty
            return True, False
        if op == "bitcast" and inst.ops and inst.ops[0].value in self.active and \
                same_floats(ty, inst.ops[0].ty):
            return True, False          # the same floats, another shape (double <-> <1 x double>)
        if op == "getelementptr" or op in ("bitcast", "addrspacecast"):
            return False, isptr and inst.ops[0].value in self.shadowed
        if op == "ptrtoint" and inst.ops and inst.ops[0].value in self.shadowed and \
                ty == "i64":
            self.ptrint.add(inst.name)            # stored as an integer, loaded back as a pointer
            return False, False
        if op in ("add", "sub", "and", "or") and ty == "i64" and \
                inst.ops[0].value in self.ptrint and inst.ops[1].value not in self.ptrint:
            # an offset from such an address, or the address rounded to an alignment (Eigen's
            # handmade aligned malloc for AVX: `(p & -64) + 64`)
            self.ptrint.add(inst.name)
            return False, False
        if op == "inttoptr":
            base = int_pointer_base(self.fn, inst)
            # (an address that may be a shadowed block's: _mark gives the others shadows too)
            return False, base is not None and base[0] in self.shadowed or \
                inst.ops[0].value in self.ptrint or \
                any(s in self.shadowed for s in int_pointer_bases(self.fn, inst.ops[0].value))
        if op == "load":
            src = inst.ops[0].value in self.shadowed
            if ty == "ptr" and not src and inst.ops[0].value.startswith("@") and \
                    self._local_shadowed(inst.name):
                if pinned_constant(self.module, inst.ops[0].value):
                    # a constant descriptor's address read from a global nothing writes, kept
                    # where a shadow is: its shadow is read from the global's (its scratch's)
                    return False, True
            if src and inst.name in self.punned:
                return True, False                  # seen as float data by a later bitcast
            if src and int_bits(ty) and self.types is not None and \
                    not self._tape_slot(inst.ops[0].value):   # (the tape keeps integers as such)
                kind = self.types.content_kind(inst.ops[0].value, inst.md.get("!tbaa"),
                                               int_bits(ty) // 8)
                if kind is None:     # a piece of a typed copy routine's copy (debug info)
                    kind = copied_kind(self.module, inst, int_bits(ty) // 8)
                if kind is None:     # the piece of a variable it is (debug info)
                    kind = valued_kind(self.module, self.fn, inst.name)
                if kind is None:
                    kind = self._stored_kind(inst)
                if kind in (None, "int"):
                    kind = self._holds_floats(inst) or kind
                pun = pun_type(ty, kind)
                if pun and (self._byte_lanes_computed(inst) or self._counter_word(inst) or
                            integer_variant(self.module, self.fn, inst,
                                            self.__dict__.setdefault("_cfg_memo", {}))) or \
                        kind in (None, "double", "float") and self._used_as_count(inst):
                    pun, kind = None, "int"
                if pun:
                    self.punned[inst.name] = pun        # an untyped copy of float data
                    return True, False
                if pun is None and kind in ("double", "float") and \
                        int_bits(ty) < (64 if kind == "double" else 32) and any(
                        not isinstance(u, tuple) and u.op == "store" and
                        u.ops[0].value == inst.name for u in self._uses.get(inst.name, ())):
                    # a byte-by-byte copy's byte: active, so that its store is refused
                    self.float_pieces.add(inst.name)
                    return True, False
                if kind is None and int_bits(ty) % 32 == 0:   # (bytes never hold a float)
                    self.unknown_copies.add(inst.name)
                if ty == "i64" and (kind == "ptr" or self._holds_addresses(inst)):
                    self.ptrint.add(inst.name)
                    return False, False
            if isptr and src and self._underlying(self.fn, inst.ops[0].value) in self._const_slots:
                return False, False     # an enzyme_const pointer reloaded from its spill slot
            if isptr and src and self.const_fields and \
                    field_load(self.module, self.fn, self.const_fields, inst.ops[0].value):
                return False, False     # a constant pointer read from a record's field
            return fp and src, isptr and src
        if op == "alloca":
            return False, self._local_shadowed(inst.name)
        if op == "atomicrmw" and inst.ops:
            return fp and inst.ops[0].value in self.shadowed, False   # the old memory value
        if op == "insertvalue" and is_flat_record(ty) and inst.ops[1].ty == "i64" and \
                lanes_of(self, inst.ops[1].value) is not None:
            raise UserError(f"{located(self.module, self.fn, inst)}: a float's bits packed beside "
                            "other data in one integer are put in a record of several integer "
                            "registers (a record of a float, an integer and more, returned by "
                            "value); hint: return the float itself, or write the record through "
                            "a pointer argument")
        if op in ("extractvalue", "insertvalue"):
            pun = record_pun(self, inst)        # a float's bits in a field of a flat record
            if pun:
                self.punned[inst.name] = pun
                return True, False
        if op in ("extractvalue", "insertvalue", "extractelement", "insertelement", "shufflevector"):
            return fp and self._any_active(inst), isptr and any(
                o.value in self.shadowed for o in inst.ops)
        if op in ("call", "invoke"):
            if self._allocation(inst):
                return False, self._local_shadowed(inst.name) or (
                    inst.callee == "@realloc" and inst.ops[0].value in self.shadowed)
            if is_inactive_call(inst.callee or ""):
                return False, False
            if is_tape_call(inst.callee or ""):      # a slot of the tape: the shadow tape's
                return False, isptr and inst.ops[0].value in self.shadowed
            if is_mirror_call(inst.callee or ""):
                return False, isptr and any(o.value in self.shadowed for o in inst.ops)
            rule = call_rule(inst.callee or "")
            if rule is not None or _libm_out(self.module, inst.callee):
                return fp and self._any_active(inst), False
            if self.module.defines(inst.callee or ""):
                act, sh = callee_info(inst, self)
                if act and not fp and int_bits(ty) and not ty.startswith("<"):
                    # a float's bits returned (callee_summary._callee_summary_once): alone, or packed
                    # beside integer data at the offset the callee's summary found
                    self.punned[inst.name] = packed_type(self.packed[inst.name]) \
                        if inst.name in self.packed else adjoint_type_of(ty)
                if sh and not any(o.value in self.shadowed or o.value in self.active
                                  for o in inst.ops):
                    # fresh memory from a callee (an allocator wrapper): shadowed once active
                    # data may reach it, like a local allocation
                    sh = self._local_shadowed(inst.name)
                return act, sh
            sh = False
            passes = (inst.callee or "").startswith("%") and any(     # an indirect call
                o.value in self.active or o.value in self.shadowed or o.value in self.punned
                for o in inst.ops)
            if fp and not passes and self.reaches_global_user(inst) and \
                    callee_info(inst, self)[0]:
                return True, False     # (a float read from an active global by a target)
            if fp and passes and is_flat_record(ty) and "i64" in ty:
                callee_info(inst, self)   # a float's bits in a field: the targets' record pun
            if passes and (int_bits(ty) in (32, 64) and not ty.startswith("<") or
                           is_flat_record(ty) and not fp):
                if callee_info(inst, self)[0]:   # every target returns a float's bits whole
                    self.punned.setdefault(inst.name, adjoint_type_of(ty))   # (or a record's)
                    return True, False
            if isptr and (inst.callee or "").startswith("%"):
                # a pointer made by a function the call may reach (a stepper's state allocated
                # through its type's function pointer): shadowed as a direct call's would be
                _, sh = callee_info(inst, self)
                if sh and not any(o.value in self.shadowed or o.value in self.active
                                  for o in inst.ops):
                    sh = self._local_shadowed(inst.name)   # fresh memory, as for direct calls
            return fp and (self._any_active(inst) or any(
                o.value in self.shadowed for o in inst.ops)), sh
        return False, False


def _const_spill_slots(fn, arg_act) -> set:
    """Local slots that only ever hold enzyme_const pointer arguments (unoptimized code spills
    every argument to one): a pointer reloaded from one has no shadow, as the argument has
    none, even when the slot gets a shadow (a callee that may write through the reloaded
    pointer marks the slot; a virtual call on a const object then read its shadow: null)."""
    consts = {p.name for p, a in zip(fn.params, arg_act) if a == "const" and p.ty == "ptr"}
    return {s for s, stored in param_spill_slots(fn).items() if set(stored) <= consts} \
        if consts else set()
