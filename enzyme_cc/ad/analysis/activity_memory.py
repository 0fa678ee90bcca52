"""Activity of memory (a mixin of Activity): which objects may hold active data and need a
shadow (`_mark`, `_mark_objects`: stores of active values, copies, calls writing through their
arguments), and what a load from them reads (floats, addresses, a float's bytes)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import int_bits, scalar_of
from enzyme_cc.rules import call_rule, is_inactive_call
from enzyme_cc.rules.libm_out import active_outputs
from enzyme_cc.rules.registry import is_mirror_call, allocator
from enzyme_cc.rules.tape import is_tape_call
from .copy_types import copy_ranges
from .activity_basics import (ALLOCATORS, _libm_out, has_shadow_type, int_pointer_bases,
                              int_pointer_sources, pointer_aggregate)
from ..structure.type_layout import decompose, global_named, layout, named_expand
from ..structure.fortran_descriptors import has_own_buffer
from ..structure.std_vectors import vector_offsets
from .cxx_signatures import pointer_holders
from ..structure.call_targets import address_taken
from enzyme_cc.rules.call_kinds import ALLOC, MEMCPY, MEMSET
from enzyme_cc.rules.blas import applies, written_arg
from enzyme_cc.rules.mpi import is_mpi, received

_FORK = "@__kmpc_fork_call"     # (parallel/openmp.py's FORK: analysis sits below it)


# deallocations told the size freed (C++'s sized operator delete, Rust's dealloc)
_SIZED_FREES = ("@_ZdlPvm", "@_ZdaPvm", "@_ZdlPvmSt11align_val_t", "@_ZdaPvmSt11align_val_t")


class ActiveMemory:
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
        if o in self._chars:
            return False            # a std::string's memory: characters (Activity._chars)
        if o not in self.active_objects:
            self.active_objects.add(o)
            changed = True
        if v.startswith("@") and (direct or has_own_buffer(self.module, v)):
            # the object written is a mutable global (its address passed on, or joined with
            # another's); a global the pointer was only fetched from is left to shared_globals'
            # address analysis, but for a Fortran module array's descriptor (the base address of
            # an ALLOCATABLE or POINTER's data): its shadow holds the shadow data's address
            changed |= self._global_store(v)
        d = self.fn.defs.get(v)
        op = getattr(d, "op", None)
        if op == "load":
            changed |= self._mark(d.ops[0].value, seen, direct=False)
            src = self._underlying(self.fn, d.ops[0].value)
            if src.startswith("@") and self._holds_vectors(src):
                # a std::vector's buffer: its shadow vector is set up as a derivative starts
                # (api/static_vectors.py), where the global is written in the call tree
                changed |= self._global_store(src)
            for stored in self._stored_in(d.ops[0].value):
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
            for src in int_pointer_bases(self.fn, d.ops[0].value):
                changed |= self._mark(src, seen)
        elif op in ("call", "invoke") and d.callee == "@realloc" and d.ops[0].value.startswith("%"):
            changed |= self._mark(d.ops[0].value, seen)    # the old block's data moves here
        elif op in ("call", "invoke") and self.module.defines(d.callee or ""):
            for x in d.ops:
                if x.ty == "ptr" and x.value.startswith("%"):
                    changed |= self._mark(x.value, seen)
                elif x.ty == "ptr" and self._holds_vectors(global_named(x.value) or ""):
                    # an element of a global std::vector (`work[i]` not inlined): as a load
                    changed |= self._global_store(global_named(x.value))
        return changed

    def _holds_vectors(self, g: str) -> bool:
        if g not in self.module.globals:
            return False
        memo = self.__dict__.setdefault("_vector_globals", {})
        if g not in memo:
            memo[g] = bool(vector_offsets(self.module, g))
        return memo[g]

    def _address_web(self, name: str) -> bool:
        """Integer phis that feed each other (Rust's `mem::swap` of two Vecs in a loop: each
        address phi takes the other's value) carry addresses when everything else entering
        them does: an address kept as an integer (act.ptrint) or a constant (a dangling one)."""
        todo, seen, leaves, phis = [name], set(), [], []
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            d = self.fn.defs.get(v)
            if getattr(d, "op", None) == "phi" and d.ty == "i64" and v not in self.ptrint:
                if id(d) in self.doomed or v in self.punned or v in self.unknown_copies:
                    return False        # (a phi of code that never returns gets no shadow)
                phis.append(v)
                todo.extend(w for w, _ in d.incoming if w.startswith("%"))
            else:
                leaves.append(v)
            if len(seen) > 64:
                return False
        if not (any(v in self.ptrint for v in leaves) and all(v in self.ptrint for v in leaves)):
            return False
        self.ptrint.update(phis)        # each one's shadow names the others': all of them
        return True

    def _joined_copies(self, inst, vals) -> bool:
        """An integer phi/select joining untyped loads from shadowed memory (Rust's enum slot:
        an `Err(x)` payload on one path, another field on the other) is an untyped copy too;
        once a bitcast views it as a float (_infer), it is float data and so are the loads it
        joins. True when inst is such a join."""
        if inst.ty not in ("i64", "i32") or not any(o.value in self.unknown_copies
                                                     for o in vals):
            return False
        loads = [o.value for o in vals if o.value.startswith("%")]
        if not all(getattr(self.fn.defs.get(v), "op", None) == "load" and
                   self.fn.defs[v].ops[0].value in self.shadowed or v in self.unknown_copies
                   for v in loads):
            return False
        if inst.name in self.punned:
            for v in loads:
                if v not in self.punned:
                    self.unknown_copies.discard(v)
                    self.punned[v] = self.punned[inst.name]
        else:
            self.unknown_copies.add(inst.name)
        return True

    def _stored_in(self, ptr: str, depth: int = 0) -> list:
        """The pointers that may have been stored where ptr points: into ptr's object, and
        where ptr was itself loaded from memory, into the objects of the pointers stored
        there (a Vec<Vec<f64>>: the outer buffer's address is loaded from the header, the
        rows' from the outer buffer)."""
        out = list(self._stored_ptrs.get(self._obj(ptr), []))
        d = self.fn.defs.get(self._underlying(self.fn, ptr))
        if depth < 4 and getattr(d, "op", None) == "load":
            for p in self._stored_in(d.ops[0].value, depth + 1):
                out += [x for x in self._stored_ptrs.get(self._obj(p), []) if x not in out]
        return out

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
                elif val.ty == "i64" and val.value.startswith("%") and (
                        getattr(dst, "op", None) != "alloca" or ptr.value in self.shadowed):
                    # an address kept as an integer (libstdc++ relocates a vector's
                    # unique_ptrs so): it escapes as the pointer would, and is loaded back as one
                    for src in int_pointer_sources(self.fn, val.value) or ():
                        if src.startswith("%"):
                            changed |= self._escape(src)
                    d = self.fn.defs.get(val.value)
                    if getattr(d, "op", None) == "load" and self._address_load(d):
                        # an address moved as an integer from other memory (libstdc++ moving a
                        # unique_ptr into a vector's buffer at -Os): read from there, stored
                        # away, also where that memory has no shadow here (callers give one)
                        changed |= self._pointee_escape(d.ops[0].value, set())
            elif op in ("atomicrmw", "cmpxchg") and inst.ops:
                if any(o.value in self.active or o.value in self.shadowed or o.value in
                       self.punned for o in inst.ops[1:]):
                    changed |= self._mark(inst.ops[0].value)   # stores its value operand
            elif op == "ret" and inst.ops and inst.ops[0].ty == "ptr" and inst.ops[0].is_local:
                # returned, not stored away: the caller sees it as the call's result, and marks
                # or lets escape what the call was given through it
                changed |= self._escape(inst.ops[0].value, into=self.returned)
            elif op == "ret" and inst.ops and pointer_aggregate(inst.ops[0].ty):
                # the pointers of a record returned by value (std::get_temporary_buffer's
                # `pair<T *, ptrdiff_t>`): returned as a pointer would be
                d = self.fn.defs.get(inst.ops[0].value)
                if getattr(d, "op", None) == "load":
                    # read whole from a local record (unoptimized code): that record's
                    # shadow holds the pointers' shadows
                    changed |= self._escape(d.ops[0].value)
                for v in _inserted_pointers(self.fn, inst.ops[0].value):
                    changed |= self._escape(v, into=self.returned)
                    d = self.fn.defs.get(v)
                    if getattr(d, "op", None) == "load" and self._obj(d.ops[0].value) in \
                            self._filled_by_calls:
                        # read back from a local record a constructor filled (the pair):
                        # the record's shadow holds the pointer's, which the call copies in
                        changed |= self._escape(d.ops[0].value)
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
                    src = self._underlying(self.fn, inst.ops[1].value) if len(inst.ops) > 1 \
                        else ""
                    if has_own_buffer(self.module, src) and \
                            self._find(self._underlying(self.fn, inst.ops[0].value)) in \
                            self.active_objects:
                        # a module array's descriptor copied into a local one that the code
                        # writes active data through (flang at -O0, for a POINTER's assignment)
                        changed |= self._global_store(src)
                    if len(inst.ops) > 1 and self._copies_pointers_out(inst):
                        changed |= self._pointee_escape(inst.ops[1].value, set())
                    continue
                if c.startswith(("@llvm.memset", "@memset", "@llvm.lifetime", "@free", "@_Zdl",
                                 "@_Zda")) or is_inactive_call(c) or call_rule(c) is not None:
                    continue
                if _libm_out(self.module, c):     # sincos: stores what it computes from x
                    if inst.ops[0].value in self.active:
                        for v in active_outputs(inst):
                            changed |= self._mark(v) | self._global_store(self._underlying(self.fn, v))
                    continue
                if applies(self.module, c):                 # BLAS writes one array argument
                    k = written_arg(c)
                    if k is not None and any(o.value in self.active or o.value in self.shadowed
                                             for o in inst.ops) and inst.ops[k].value.startswith("%"):
                        changed |= self._mark(inst.ops[k].value)
                    continue
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
                writes, escapes, via, via_active = summary if summary is not None else \
                    (None, set(), set(), set())
                if is_mirror_call(c):             # links its pointer arguments to each other
                    escapes = {k for k, o in enumerate(inst.ops) if o.ty == "ptr"}
                joined = returned_params(self.module, c) if inst.ty == "ptr" else set()
                if len(joined) > 1 and any(inst.ops[k].value in self.shadowed for k in joined
                                           if k < len(inst.ops)):
                    # the result may be any of these arguments (std::min's `const T &`): each
                    # needs a shadow, a constant's a zeroed one, where one of them has one
                    escapes = set(escapes) | {k for k in joined if k < len(inst.ops)}
                for k in escapes:                 # the callee keeps the pointer somewhere
                    if inst.ops[k].value.startswith("%"):
                        changed |= self._escape(inst.ops[k].value)
                into_active = bool(via) and (
                    any(o.ty == "ptr" and o.value.startswith("%") and
                        self._obj(o.value) in self.active_objects for o in inst.ops)
                    or self._moves_pointers(inst, via))
                if into_active or via_active:
                    # the callee stores pointers read from these arguments' memory into memory
                    # that holds active data (GSL's subvector view of a work vector, written
                    # through later): their shadows come from these arguments' shadows (not
                    # wherever the destination has a shadow: Rust's index sort by a float key
                    # then gave its indices shadows, and their moves were refused)
                    # (an argument of this function passes the same on to its callers: they
                    # see what its memory holds). via_active: the callee knows the memory
                    # they go to holds active data (a view of an output matrix it writes
                    # through, inside the callee or deeper: GSL's LU_invert into a fresh
                    # matrix); the caller cannot see that memory, and gives shadows outright
                    for k in (via if into_active else via_active):
                        v = inst.ops[k].value
                        u = self._underlying(self.fn, v)
                        if v.startswith("%") and any(p.name == u for p in self.fn.params):
                            changed |= self._pointee_escape(v, set(), into_active or
                                                            k in via_active)
                        elif v.startswith("%") and not self._const_record(v, inst):
                            changed |= self._escape(v)
                # (a parallel region's reads of active globals: its outlined function's)
                reader = inst.ops[2].value if c == _FORK and len(inst.ops) > 2 else c
                if not any(o.value in self.active or o.value in self.shadowed for o in inst.ops) \
                        and reader not in self.global_users and not self.reaches_global_user(inst):
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

    def reaches_global_user(self, inst) -> bool:
        """An indirect call that may reach a function using an active global (a solver calling
        the user's residual, which reads a parameter stored in a global): active data may come
        out of it whatever goes in."""
        return bool(self.global_users) and (inst.callee or "").startswith("%") and any(
            t in self.global_users for t in address_taken(self.module, inst.ty,
                                                          [o.ty for o in inst.ops]))

    def _moves_pointers(self, call, via) -> bool:
        """The callee moves pointers read from the `via` arguments' memory into memory with a
        shadow that holds no active data itself (a vector's buffer of unique_ptrs): their
        shadows must come along, where that memory is known to hold pointers: a parameter's
        whose C++ declaration or callers' accesses say so (its callers decide), or a local
        whose type has a pointer field (a `std::unique_ptr` pushed into the vector under
        -fno-inline; Rust's slots of integers, `[8 x i8]`, are not: its sort's moved indices
        would get shadows)."""
        if not any(o.ty == "ptr" and o.value in self.shadowed for k, o in enumerate(call.ops)
                   if k not in via):
            return False
        params = {p.name for p in self.fn.params}
        for k in via:
            v = call.ops[k].value if k < len(call.ops) else ""
            u = self._underlying(self.fn, v) if v.startswith("%") else None
            d = self.fn.defs.get(u)
            if u in params and (u in pointer_holders(self.module, self.fn) or
                                self.types is not None and
                                "ptr" in self.types.pointee_summary(v).values()) or \
                    getattr(d, "op", None) == "alloca" and \
                    "ptr" in layout(named_expand(d.src_ty, self.module.named_types),
                                    self.module.named_types).values():
                return True
        return False

    def _const_record(self, ptr, call) -> bool:
        """ptr's memory is a local record that only this function's own stores fill, with
        pointers into arguments passed without a shadow (which can never get one), and that no
        call but `call` is given: the pointers a callee reads from it have no shadow to copy
        (flang at -O0: the descriptor of an enzyme_const array's section, the source of the
        runtime's assignment, which copies pointer components of derived types only). A
        pointer without a shadow yet (a fresh allocation) gets one through such a copy. Not in
        a callee summary: callers with a shadow for such an argument learn they must pass it."""
        if self.for_summary:
            return False
        obj = self._obj(ptr)
        stored = self._stored_ptrs.get(obj)
        if getattr(self.fn.defs.get(obj), "op", None) != "alloca" or not stored or \
                obj in self.escaped or obj in self.active_objects:
            return False
        consts = {p.name for p in self.fn.params if p.name not in self.shadowed}
        if any(self._underlying(self.fn, p) not in consts for p in stored):
            return False
        return not any(i is not call and i.op in ("call", "invoke") and
                       not (i.callee or "").startswith("@llvm.") and
                       any(o.ty == "ptr" and o.value.startswith("%") and self._obj(o.value) == obj
                           for o in i.ops) for i in self.fn.insts())

    def _copies_pointers_out(self, inst) -> bool:
        """A copy from memory this function did not allocate (a parameter's, a loaded
        pointer's) into memory outside its locals, of bytes that may hold pointers: they go
        where the caller may read them (`vec![elem; n]` moves `elem`'s header into the last
        row), so the caller must give the source's pointees their shadows (the summary's
        `via`)."""
        dst, src = (self._obj(o.value) for o in inst.ops[:2])
        if getattr(self.fn.defs.get(src), "op", None) == "alloca" or \
                src in self.pointee_escaped:
            return False
        if getattr(self.fn.defs.get(dst), "op", None) == "alloca" and dst not in self.escaped:
            return False
        ranges = copy_ranges(self.module, self.fn, inst, self.types)
        return ranges is None or any(kind not in ("double", "float", "int")
                                     for _, _, kind in ranges)

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
        if not load.ty.startswith("<") or int_bits(scalar_of(load.ty)) >= 32:
            return False
        return any(u.op not in ("store", "bitcast", "shufflevector", "phi", "select", "freeze")
                   for u in self._uses.get(load.name, ()) if not isinstance(u, tuple))

    def _counter_word(self, load) -> bool:
        """An integer word counted up or down in place (a reference count: Rust's `Rc` header
        beside its float value): the load's value is only compared, or changed by a constant and
        stored back where it was read, and nothing typed says a float lies at that very byte
        (a float's bits stepped in place, `u.i++` on a union holding a double, stays refused)."""
        if not int_bits(load.ty) or load.ty.startswith("<"):
            return False
        ptr = load.ops[0].value
        types = self.types
        base, off = decompose(self.module, self.fn, ptr)
        if off is None or types.float_accesses.get(base, {}).get(off) or \
                types.facts.get(base, {}).get(off) in ("double", "float"):
            return False
        uses = self._uses

        def steps(u) -> bool:
            if u.op not in ("add", "sub") or not any(
                    o.value.lstrip("-").isdigit() for o in u.ops):
                return False
            return all(not isinstance(w, tuple) and (
                w.op == "icmp" or w.op == "store" and w.ops[0].value == u.name and
                w.ops[1].value == ptr) for w in uses.get(u.name, []))
        us = uses.get(load.name, [])
        return bool(us) and all(not isinstance(u, tuple) and (u.op == "icmp" or steps(u))
                                for u in us) and any(u.op != "icmp" for u in us)

    def _used_as_count(self, load) -> bool:
        """An integer read from differentiated memory that sizes or indexes memory, directly or
        scaled by a constant (`len << 3` bytes: a Vec<f64>'s clone allocating and copying its
        length's worth), is a count, never a float's bits: a Rust struct's Vec length beside
        its f64 fields, where nothing typed says which bytes are which."""
        todo, seen = [(load.name, 0)], set()
        while todo:
            v, depth = todo.pop()
            if v in seen or depth > 3:
                continue
            seen.add(v)
            for u in self._uses.get(v, ()):
                if isinstance(u, tuple):
                    continue
                at = [k for k, o in enumerate(u.ops) if o.value == v]
                callee = u.callee or ""
                if u.op == "getelementptr" and any(k > 0 for k in at) or \
                        u.op in ("call", "invoke") and (
                            callee.startswith(MEMCPY + MEMSET) and 2 in at or
                            any(k in ALLOC.get(callee, ((),))[0] for k in at) or
                            callee == "@realloc" and 1 in at or
                            (callee in _SIZED_FREES or callee.endswith("__rust_dealloc"))
                            and 1 in at):
                    return True
                if u.op in ("zext", "sext", "trunc") or u.op in ("shl", "mul", "add", "sub") \
                        and any(o.value.lstrip("-").isdigit() for o in u.ops):
                    todo.append((u.name, depth + 1))
        return False

    def _address_load(self, load) -> bool:
        """An i64 load reads an address: taken for one, typed a pointer, or from memory only
        addresses are stored into."""
        if load.name in self.ptrint or self._holds_addresses(load):
            return True
        return self.types is not None and load.ty == "i64" and self.types.content_kind(
            load.ops[0].value, load.md.get("!tbaa"), 8) == "ptr"

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


def returned_params(module, callee: str) -> set:
    """The positions of the pointer parameters a function may return (through selects, phis
    and address arithmetic): a `const T &min(const T &a, const T &b)`. Memoized per module."""
    memo = module.__dict__.setdefault("_returned_params", {})
    if callee not in memo:
        memo[callee] = set()
        fn = module.function(callee) if callee.startswith("@") else None
        if fn is not None and fn.ret_ty == "ptr":
            index = {p.name: k for k, p in enumerate(fn.params)}
            todo = [i.ops[0].value for i in fn.insts() if i.op == "ret" and i.ops]
            seen = set()
            while todo:
                v = todo.pop()
                if v in seen or len(seen) > 64:
                    continue
                seen.add(v)
                if v in index:
                    memo[callee].add(index[v])
                    continue
                d = fn.defs.get(v)
                op = getattr(d, "op", None)
                if op in ("select", "phi"):
                    todo += [o.value for o in (d.ops[1:] if op == "select" else d.ops)]
                elif op in ("getelementptr", "bitcast", "addrspacecast"):
                    todo.append(d.ops[0].value)
    return memo[callee]


def _inserted_pointers(fn, v: str, depth: int = 8):
    """The local pointers an insertvalue chain building record `v` puts in it."""
    d = fn.defs.get(v)
    while depth and getattr(d, "op", None) == "insertvalue":
        x = d.ops[1]
        if x.ty == "ptr" and x.value.startswith("%"):
            yield x.value
        d, depth = fn.defs.get(d.ops[0].value), depth - 1
