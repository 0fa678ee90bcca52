"""Activity analysis: which float values carry a derivative, which pointers need a shadow.

Forward propagation to a fixed point (phis make it iterative): a float is active when it depends
on an active input or is read from memory that has a shadow; a pointer has a shadow when it is
derived from a duplicated argument, a local allocation, or is read from shadowed memory.
Integers never carry a derivative (seeds/001, section 2).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import (adjoint_type_of, carries_float, int_bits, is_fp,  # noqa: F401
                                 scalar_of)
from .debug_types import copied_kind
from .type_layout import global_named
from .unionfind import UnionFind
from .diagnostics import located
from enzyme_cc.errors import UserError
from .enum_arms import integer_variant
from .packed_bits import (PACKING_OPS, adjoint_type as packed_type, is_flat_record, lanes_of,
                          packed_lane, param_lanes, record_pun)
from enzyme_cc.rules import is_inactive_call, call_rule
from enzyme_cc.rules.registry import is_mirror_call
from enzyme_cc.rules.tape import is_tape_call
from enzyme_cc.rules.libm_out import family, active_outputs


def _libm_out(module, callee) -> bool:
    return family(callee) is not None and not module.defines(callee)

ALLOCATORS = {"@malloc", "@calloc", "@_Znwm", "@_Znam", "@_ZnwmRKSt9nothrow_t", "@_ZnamRKSt9nothrow_t",
              "@_ZnwmSt11align_val_t", "@_ZnamSt11align_val_t", "@aligned_alloc", "@realloc"}
# (realloc: the result always gets a shadow, even when growing from NULL)
FREES = {"@free", "@_ZdlPv", "@_ZdaPv", "@_ZdlPvm", "@_ZdaPvm", "@_ZdlPvSt11align_val_t",
         "@_ZdlPvmSt11align_val_t", "@_ZdaPvSt11align_val_t"}


def int_pointer_base(fn, inst):
    """For `inttoptr (ptrtoint P [+ X])` (C++ member-pointer calls adjust `this` this way):
    (P, X or None), else None."""
    d = fn.defs.get(inst.ops[0].value)
    off = None
    if getattr(d, "op", None) == "add" and len(d.ops) == 2:
        for a, b in (d.ops, d.ops[::-1]):
            da = fn.defs.get(a.value)
            if getattr(da, "op", None) == "ptrtoint":
                return da.ops[0].value, b.value
        return None
    if getattr(d, "op", None) == "ptrtoint":
        return d.ops[0].value, off
    return None


def int_pointer_sources(fn, v: str, depth=0) -> set | None:
    """The pointers whose ptrtoint the integer v is made from (through phis, selects and integer
    arithmetic; constants add none), or None when some part comes from elsewhere (memory, a
    call, an argument)."""
    if not v.startswith("%"):
        return set()
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if depth > 16 or op is None:
        return None
    if op == "ptrtoint":
        return {d.ops[0].value}
    if op in ("phi", "select", "add", "sub", "and", "or"):
        vals = [w for w, _ in d.incoming] if op == "phi" else \
            [o.value for o in (d.ops[1:] if op == "select" else d.ops)]
        out = set()
        for w in vals:
            s = int_pointer_sources(fn, w, depth + 1)
            if s is None:
                return None
            out |= s
        return out
    return None


def primal_only(ctx, inst) -> bool:
    """Emit `inst` of a block ending in `unreachable` (an abort, a throw: the program never
    returns through it) as primal code only, and say so: nothing there needs a derivative
    (Activity.doomed). Lifetime markers are dropped (their alloca may live on the heap here)."""
    if ctx.block.term.op != "unreachable":
        return False
    if not (inst.callee or "").startswith("@llvm.lifetime.") and \
            not ctx.synth.noneed.drops_primal(inst):
        ctx.lines.append(ctx.synth.print_primal(inst))
    return True


def pun_type(ty: str, kind) -> str | None:
    """The float type an integer (vector) load of `kind` data stands for: i64 of a double is a
    double, i64 of floats is < 2 x float >, < 4 x i32 > of doubles is < 2 x double >."""
    width = {"double": 64, "float": 32}.get(kind)
    bits = int_bits(ty)
    if not width or not bits or bits % width:
        return None
    return kind if bits == width else f"< {bits // width} x {kind} >"


def integer_only(fn, v: str, punned=()) -> bool:
    """Every access through pointer v (and the GEPs, selects and phis made from it) in fn loads
    or stores integers that carry no float (a Fortran INTEGER or LOGICAL passed by reference:
    LAPACK's dimensions). Such memory holds no derivative whatever pointers join it; a call or
    any other use of the pointer says nothing, so it answers False."""
    users: dict = {}
    for inst in fn.insts():
        for o in [o.value for o in inst.ops] + [w for w, _ in inst.incoming]:
            users.setdefault(o, []).append(inst)
    seen, todo = {v}, [v]
    while todo:
        p = todo.pop()
        for u in users.get(p, []):
            if u.op in ("getelementptr", "select", "phi") and u.ty == "ptr":
                if u.op == "select" and u.ops[0].value == p:
                    return False
                if u.name not in seen:
                    seen.add(u.name)
                    todo.append(u.name)
            elif u.op == "load" and int_bits(u.ty) and u.name not in punned:
                continue
            elif u.op == "store" and u.ops[1].value == p and u.ops[0].value != p and \
                    int_bits(u.ops[0].ty) and u.ops[0].value not in punned:
                continue
            elif u.op == "icmp":
                continue
            else:
                return False
    return True


def read_only_extent(module, fn, v: str) -> int | None:
    """Bytes past v that the code reads through v, when every use of v (and of the GEPs,
    selects and phis made from it) is a load of a non-pointer at a constant offset or a
    comparison: the captured address of an enzyme_const scalar that a select joins with active
    memory. None for anything else (a store, a call, a variable index, a pointer load)."""
    from .type_layout import decompose
    from enzyme_cc.ir.lexer import type_size
    users: dict = {}
    for inst in fn.insts():
        for o in [o.value for o in inst.ops] + [w for w, _ in inst.incoming]:
            users.setdefault(o, []).append(inst)
    seen, todo, extent = {v}, [v], 0
    while todo:
        p = todo.pop()
        for u in users.get(p, []):
            if u.op in ("getelementptr", "select", "phi") and u.ty == "ptr" and \
                    not (u.op == "select" and u.ops[0].value == p):
                if u.name not in seen:
                    seen.add(u.name)
                    todo.append(u.name)
            elif u.op == "load" and u.ty != "ptr" and not has_shadow_type(u.ty):
                base, off = decompose(module, fn, u.ops[0].value)
                if off is None or base not in seen:
                    return None
                extent = max(extent, off + type_size(u.ty, module.named_types))
            elif u.op != "icmp":
                return None
    return extent


def pointer_aggregate(ty: str) -> bool:
    """A literal struct/array of pointers and integers (no floats), like the `{ ptr, ptr }` of a
    returned std::pair of iterators: its shadow is the same aggregate of shadow pointers."""
    return ty.startswith(("{", "[", "<{")) and "ptr" in ty and not carries_float(ty)


def has_shadow_type(ty: str) -> bool:
    return ty == "ptr" or pointer_aggregate(ty)


class Activity:
    def __init__(self, fn, module, arg_act: list[str], callee_info, types=None, callee_writes=None,
                 shared_globals=(), inactive_globals=(), global_users=()):
        """arg_act per param: 'active', 'dup', 'dupnoneed', 'const'.
        callee_info(inst) -> (result_active, result_shadowed) for calls to functions with bitcode."""
        self.fn, self.module = fn, module
        # instructions of blocks that end in `unreachable` (a call of a noreturn function: an
        # abort, a throw): the program never returns through them, so nothing there needs a
        # derivative, and they run as primal code (rules/calls.py call_kind)
        self.doomed = {id(i) for b in fn.blocks if b.term.op == "unreachable" for i in b.insts}
        self.active: set[str] = set()     # active float/aggregate values (original names)
        self.shadowed: set[str] = set()   # pointer values with a shadow
        self.punned: dict[str, str] = {}  # integer values that carry float data -> float type
        # i64 values that hold floats' 32 bits beside integer data or each other (a `{float,
        # int}` record, a Rust `[f32; 2]` passed in one register): the floats' bit offsets
        self.packed: dict[str, frozenset] = {}
        self.ptrint: set[str] = set()     # integer values that carry a pointer (shadow as int too)
        self.unknown_copies: set[str] = set()   # integers read from active memory, type unknown
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
        from .type_layout import underlying
        self._underlying = underlying
        # one object per class: phi/select joins, and a realloc'd block with its old block (the
        # data, hence its shadow, moves over)
        from .type_layout import same_memory
        for a, b in same_memory(fn):
            self._union(a, b)
        # code pointers (used only as the callee of calls) carry no shadow: indirect calls
        # dispatch on the primal function pointer
        uses: dict[str, list] = {}
        for inst in fn.insts():
            for o in inst.ops:
                uses.setdefault(o.value, []).append(inst)
            if inst.op in ("call", "invoke") and inst.callee and inst.callee.startswith("%"):
                uses.setdefault(inst.callee, []).append(("callee", inst))
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
                    from .type_layout import underlying
                    changed |= self._global_store(underlying(fn, inst.ops[1].value))

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
        return changed

    def _pointee_escape(self, ptr: str, seen: set) -> bool:
        """A pointer read from ptr's memory escapes: note that memory's object, and where ptr
        was itself reloaded from a local spill slot (unoptimized code), the pointers stored
        there (the parameter it came in)."""
        u = self._underlying(self.fn, ptr)
        if u in seen:
            return False
        seen.add(u)
        o, changed = self._find(u), False
        if o not in self.pointee_escaped:
            self.pointee_escaped.add(o)
            changed = True
        d = self.fn.defs.get(u)
        if getattr(d, "op", None) == "load":
            for stored in self._stored_ptrs.get(self._obj(d.ops[0].value), []):
                changed |= self._pointee_escape(stored, seen)
        return changed

    def into_inactive_global(self, ptr: str) -> bool:
        """Does ptr point into a global marked enzyme_inactive (whose derivative is dropped)?"""
        return self._underlying(self.fn, ptr) in self.inactive_globals

    def _constant_floats(self, vals) -> bool:
        """A choice between constant globals holding floats (a `cond ? &T0 : &T1` type
        descriptor): stored where a shadow is kept, its shadow chooses between their zeroed
        scratches (a null one would fault where a derivative reads through it)."""
        from .type_layout import constant_float_global
        consts = [o.value for o in vals if o.value not in ("null", "undef", "poison")]
        return bool(consts) and all(not v.startswith("%") and
                                    constant_float_global(self.module, v) for v in consts)

    def _local_shadowed(self, v: str) -> bool:
        o = self._obj(v)
        return o in self.active_objects or o in self.escaped or o in self.returned

    def _obj(self, ptr: str) -> str:
        return self._find(self._underlying(self.fn, ptr))

    def _mark(self, ptr, seen=None, direct=True) -> bool:
        """Active data may be written at ptr: its object needs a shadow, and so does whatever
        the pointer itself was fetched from (memory holding it, the call returning it).
        direct: ptr points into the object written (not only into memory that held it)."""
        seen = set() if seen is None else seen
        v = self._underlying(self.fn, ptr)
        if v in seen:
            return False
        seen.add(v)
        changed = False
        o = self._find(v)
        if o not in self.active_objects:
            self.active_objects.add(o)
            changed = True
        if direct and v.startswith("@"):
            # the object written is a mutable global (its address passed on, or joined with
            # another's); a global the pointer was only fetched from is left to shared_globals'
            # address analysis
            changed |= self._global_store(v)
        d = self.fn.defs.get(v)
        op = getattr(d, "op", None)
        if op == "load":
            changed |= self._mark(d.ops[0].value, seen, direct=False)
            for stored in self._stored_ptrs.get(self._obj(d.ops[0].value), []):
                changed |= self._mark(stored, seen, direct)
        elif op in ("phi", "select", "insertvalue"):
            for x in (d.ops[1:] if op == "select" else d.ops):
                if x.value.startswith("%") and has_shadow_type(x.ty):
                    changed |= self._mark(x.value, seen, direct)
                elif direct and x.ty == "ptr" and "@" in x.value:     # a global joined in
                    changed |= self._global_store(global_named(x.value) or "")
        elif op == "extractvalue" and d.ops[0].value.startswith("%"):
            changed |= self._mark(d.ops[0].value, seen, direct)
        elif op == "inttoptr":          # an address rebuilt from an integer: its pointers
            for src in int_pointer_sources(self.fn, d.ops[0].value) or ():
                changed |= self._mark(src, seen)
        elif op in ("call", "invoke") and d.callee == "@realloc" and d.ops[0].value.startswith("%"):
            changed |= self._mark(d.ops[0].value, seen)    # the old block's data moves here
        elif op in ("call", "invoke") and self.module.defines(d.callee or ""):
            for x in d.ops:
                if x.ty == "ptr" and x.value.startswith("%"):
                    changed |= self._mark(x.value, seen)
        return changed

    def _mark_objects(self, callee_info) -> bool:
        """One pass of the local-memory activity rules; True when something changed."""
        changed = False
        for inst in self.fn.insts():
            if id(inst) in self.doomed:
                continue
            op = inst.op
            if op == "store":
                val, ptr = inst.ops
                if val.value in self.active or val.value in self.shadowed or \
                        val.value in self.ptrint:    # (an address kept as an integer: its shadow)
                    changed |= self._mark(ptr.value)
                dst = self.fn.defs.get(self._underlying(self.fn, ptr.value))
                if val.ty == "ptr" and val.value.startswith("%") and (
                        getattr(dst, "op", None) != "alloca" or ptr.value in self.shadowed):
                    # escapes: may be written through elsewhere (spilling to a local is not,
                    # unless that local has a shadow, which must hold this pointer's)
                    changed |= self._escape(val.value)
            elif op in ("atomicrmw", "cmpxchg") and inst.ops:
                if any(o.value in self.active or o.value in self.shadowed or o.value in
                       self.punned for o in inst.ops[1:]):
                    changed |= self._mark(inst.ops[0].value)   # stores its value operand
            elif op == "ret" and inst.ops and inst.ops[0].ty == "ptr" and inst.ops[0].is_local:
                # returned, not stored away: the caller sees it as the call's result, and marks
                # or lets escape what the call was given through it
                changed |= self._escape(inst.ops[0].value, into=self.returned)
            elif op in ("phi", "select") and inst.ty == "ptr" and inst.name in self.shadowed:
                # a pointer reloaded from a local slot joined with shadowed ones (posix_memalign's
                # result beside malloc's and realloc's in Rust's allocation paths): the slot
                # gets a shadow, which holds the pointer's
                for slot in self._unshadowed_slots(inst):
                    changed |= self._mark(slot)
            elif op in ("call", "invoke") and inst.callee:
                c = inst.callee
                if c.startswith(("@llvm.memcpy", "@llvm.memmove", "@memcpy", "@memmove")):
                    if len(inst.ops) > 1 and inst.ops[1].value in self.shadowed:
                        changed |= self._mark(inst.ops[0].value)
                    elif len(inst.ops) > 1 and inst.ops[0].value in self.shadowed and (
                            self._stored_ptrs.get(self._obj(inst.ops[1].value)) or
                            self._obj(inst.ops[1].value) in self._filled_by_calls):
                        # pointers copied into shadowed memory (a record built in a local, an
                        # array descriptor): the source needs a shadow to carry theirs along
                        changed |= self._escape(inst.ops[1].value)
                    continue
                if c.startswith(("@llvm.memset", "@memset", "@llvm.lifetime", "@free", "@_Zdl",
                                 "@_Zda")) or is_inactive_call(c) or call_rule(c) is not None:
                    continue
                if _libm_out(self.module, c):     # sincos: stores what it computes from x
                    if inst.ops[0].value in self.active:
                        for v in active_outputs(inst):
                            changed |= self._mark(v) | self._global_store(self._underlying(self.fn, v))
                    continue
                from enzyme_cc.rules.blas import applies, written_arg
                if applies(self.module, c):                 # BLAS writes one array argument
                    k = written_arg(c)
                    if k is not None and any(o.value in self.active or o.value in self.shadowed
                                             for o in inst.ops) and inst.ops[k].value.startswith("%"):
                        changed |= self._mark(inst.ops[k].value)
                    continue
                from enzyme_cc.rules.mpi import is_mpi, received
                if is_mpi(c) and not self.module.defines(c):   # float data from another rank
                    for k in received(inst):
                        v = inst.ops[k].value
                        changed |= self._global_store(self._underlying(self.fn, v))
                        if v.startswith("%"):     # (a global buffer: as an active store's)
                            changed |= self._mark(v)
                    continue
                if is_tape_call(c):
                    # the outer derivative keeps a shadow tape: the header gets a shadow
                    changed |= self._escape(inst.ops[0].value)
                    continue
                summary = self.callee_writes(inst, self) if self.callee_writes else None
                writes, escapes, via = summary if summary is not None else (None, set(), set())
                if is_mirror_call(c):             # links its pointer arguments to each other
                    escapes = {k for k, o in enumerate(inst.ops) if o.ty == "ptr"}
                for k in escapes:                 # the callee keeps the pointer somewhere
                    if inst.ops[k].value.startswith("%"):
                        changed |= self._escape(inst.ops[k].value)
                if via and any(o.ty == "ptr" and o.value.startswith("%") and
                               self._obj(o.value) in self.active_objects for o in inst.ops):
                    # the callee stores pointers read from these arguments' memory into memory
                    # that holds active data (GSL's subvector view of a work vector, written
                    # through later): their shadows come from these arguments' shadows
                    for k in via:
                        if inst.ops[k].value.startswith("%"):
                            changed |= self._escape(inst.ops[k].value)
                if not any(o.value in self.active or o.value in self.shadowed for o in inst.ops) \
                        and c not in self.global_users:
                    continue                  # nothing active goes in: nothing active comes out
                for k, o in enumerate(inst.ops):
                    if o.ty == "ptr" and not o.value.startswith("%") and \
                            (writes is None or k in writes):
                        # a global the callee may store active data into (`&g` passed on, a
                        # reduction into a global: the fork hands the region its address)
                        changed |= self._global_store(global_named(o.value) or "")
                    if o.ty == "ptr" and o.value.startswith("%") and (writes is None or k in writes):
                        changed |= self._mark(o.value)    # the callee may store active data
                        obj = self._obj(o.value)
                        if getattr(self.fn.defs.get(obj), "op", None) == "alloca":
                            # also through the pointers a local record holds (a Fortran array
                            # descriptor handed to the runtime's assignment: it writes the
                            # elements its base address points to)
                            for stored in self._stored_ptrs.get(obj, []):
                                changed |= self._mark(stored)
        return changed

    def _stores_into(self, load) -> list:
        by_obj = self.__dict__.get("_stores_by_obj")
        if by_obj is None:
            by_obj = self._stores_by_obj = {}
            for i in self.fn.insts():
                if i.op == "store":
                    by_obj.setdefault(self._obj(i.ops[1].value), []).append(i)
        return by_obj.get(self._obj(load.ops[0].value), [])

    def _holds_floats(self, load):
        """The float kind ('double', 'float') an integer load from a local slot reads when
        every store into the slot stores a float of that width or integers that hold one (an
        enum's payload copied through an i64 slot: Rust's `Shape::Rect(a, b)`), and nothing
        else writes it; else None."""
        obj = self._obj(load.ops[0].value)
        if getattr(self.fn.defs.get(obj), "op", None) != "alloca" or obj in self.escaped:
            return None
        kinds = set()
        for st in self._stores_into(load):
            v, vty = st.ops[0].value, st.ops[0].ty
            kinds.add(vty if vty in ("double", "float") else None if v in self.packed else
                      {"double": "double", "float": "float"}.get(self.punned.get(v)))
        copies = self._float_copies_into(obj, int_bits(load.ty) // 8)
        kinds |= {k for k, _ in copies}
        if len(kinds) != 1 or None in kinds or int_bits(load.ty) != (64 if "double" in kinds
                                                                    else 32):
            return None
        touched = self.__dict__.setdefault("_touched_by_calls", None)
        if touched is None:
            touched = self._touched_by_calls = {}
            for i in self.fn.insts():
                if i.op in ("call", "invoke") and not (i.callee or "").startswith(
                        ("@llvm.lifetime", "@llvm.experimental")):
                    for o in i.ops:
                        if o.ty == "ptr" and o.value.startswith("%"):
                            touched.setdefault(self._obj(o.value), set()).add(id(i))
        return None if touched.get(obj, set()) - {id(c) for _, c in copies} else kinds.pop()

    def _float_copies_into(self, obj, size) -> list:
        """(float kind, call) for each memcpy of `size` bytes into local slot obj from memory
        whose type says it holds that float (unoptimized code's `memcpy(&bits, &x, 8)`)."""
        by_obj = self.__dict__.get("_copies_by_obj")
        if by_obj is None:
            by_obj = self._copies_by_obj = {}
            for i in self.fn.insts():
                if i.op == "call" and (i.callee or "").startswith(("@llvm.memcpy", "@memcpy")) \
                        and len(i.ops) > 2:
                    by_obj.setdefault(self._obj(i.ops[0].value), []).append(i)
        out = []
        for i in by_obj.get(obj, []):
            kind = self.types.content_kind(i.ops[1].value, None, size) \
                if self.types is not None and i.ops[2].value == str(size) else None
            out.append((kind if kind in ("double", "float") else None, i))
        return out

    def _byte_lanes_computed(self, load) -> bool:
        """A load of a vector of bytes (or 16-bit lanes) that is compared or computed on lane by
        lane: control bytes (a hash table's group of tags, Rust's hashbrown), never float data,
        whatever the memory around them holds; a float copied as bytes is only stored."""
        from enzyme_cc.ir.lexer import scalar_of
        if not load.ty.startswith("<") or int_bits(scalar_of(load.ty)) >= 32:
            return False
        return any(u.op not in ("store", "bitcast", "shufflevector", "phi", "select", "freeze")
                   for u in self.fn.insts() if any(o.value == load.name for o in u.ops))

    def _holds_addresses(self, load) -> bool:
        """Every store into the memory an i64 load reads stores an address: a pointer, or an
        integer that carries one (Rust keeps a zipped iterator's element pointers as integers
        in slots it also stores pointers to)."""
        stores = self._stores_into(load)
        return bool(stores) and any(i.ops[0].value in self.ptrint for i in stores) and all(
            i.ops[0].ty == "ptr" or i.ops[0].value in self.ptrint for i in stores)

    def _unshadowed_slots(self, join, seen=None):
        """The local slots (allocas) that pointers without a shadow joined by phi/select
        `join` are loaded from, and the fresh blocks (allocas, allocator calls) joined in
        directly, through nested joins: Eigen's temporary is the operand's own data, a stack
        block or a heap block, by its size."""
        seen = set() if seen is None else seen
        for x in join.ops[1:] if join.op == "select" else join.ops:
            d = self.fn.defs.get(x.value)
            op = getattr(d, "op", None)             # (a parameter has none)
            if x.value in self.shadowed or op is None or x.value in seen:
                continue
            seen.add(x.value)
            if op in ("phi", "select") and d.ty == "ptr":
                yield from self._unshadowed_slots(d, seen)
            elif op == "load" and getattr(self.fn.defs.get(
                    self._underlying(self.fn, d.ops[0].value)), "op", None) == "alloca":
                yield d.ops[0].value
            elif self._fresh_block(d):
                yield x.value
            elif op == "inttoptr":
                # a fresh block's address rounded to an alignment as an integer (Eigen's
                # aligned stack temporary under AVX-512): the block gets the shadow, and the
                # rounded address its shadow rounded the same way
                yield from (src for src in int_pointer_sources(self.fn, d.ops[0].value) or ()
                            if self._fresh_block(self.fn.defs.get(src)))

    def _fresh_block(self, d) -> bool:
        """d makes a fresh block: an alloca, or a call of an allocator."""
        op = getattr(d, "op", None)
        return op == "alloca" or op in ("call", "invoke") and self._allocation(d)

    @staticmethod
    def _allocation(call) -> bool:
        """A call that returns a fresh block: malloc and the allocators with rules."""
        from enzyme_cc.rules.registry import allocator
        from enzyme_cc.rules.calls import ALLOC
        c = call.callee or ""
        return c in ALLOCATORS or c in ALLOC or bool(allocator(c))

    def _stored_kind(self, load):
        """The kind of data an untyped integer load moves, from where it is stored: the pieces
        of a struct copy (SROA) read through a walking pointer and written to a typed element
        (std::sort's moves): one kind at every store that knows one, else None."""
        size = int_bits(load.ty) // 8
        kinds = {self.types.content_kind(i.ops[1].value, i.md.get("!tbaa"), size)
                 for i in self.fn.insts()
                 if i.op == "store" and i.ops[0].value == load.name}
        kinds.discard(None)
        return kinds.pop() if len(kinds) == 1 else None

    def _tape_slot(self, ptr: str) -> bool:
        d = self.fn.defs.get(self._underlying(self.fn, ptr))
        return getattr(d, "op", None) == "call" and is_tape_call(d.callee or "")

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
            if ty == "i64" and any(o.value in self.ptrint for o in vals) and \
                    all(o.value in self.ptrint or not o.value.startswith("%") for o in vals):
                # an address kept as an integer, or a constant one (Rust's Vec: the allocation's
                # address, or a dangling 8 when it is empty): its shadow is an integer too
                self.ptrint.add(inst.name)
                return False, False
            return (fp and any(o.value in self.active for o in vals),
                    isptr and (any(o.value in self.shadowed for o in vals) or
                               self._local_shadowed(inst.name) and self._constant_floats(vals)))
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
            return False, base is not None and base[0] in self.shadowed or \
                inst.ops[0].value in self.ptrint
        if op == "load":
            src = inst.ops[0].value in self.shadowed
            if ty == "ptr" and not src and inst.ops[0].value.startswith("@") and \
                    self._local_shadowed(inst.name):
                from .type_layout import pinned_constant
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
                if kind is None:
                    kind = self._stored_kind(inst)
                if kind in (None, "int"):
                    kind = self._holds_floats(inst) or kind
                pun = pun_type(ty, kind)
                if pun and (self._byte_lanes_computed(inst) or integer_variant(
                        self.module, self.fn, inst, self.__dict__.setdefault("_cfg_memo", {}))):
                    pun, kind = None, "int"
                if pun:
                    self.punned[inst.name] = pun        # an untyped copy of float data
                    return True, False
                if kind is None and int_bits(ty) % 32 == 0:   # (bytes never hold a float)
                    self.unknown_copies.add(inst.name)
                if ty == "i64" and (kind == "ptr" or self._holds_addresses(inst)):
                    self.ptrint.add(inst.name)
                    return False, False
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
