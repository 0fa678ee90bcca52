"""Mutable globals that carry active data between the functions of a differentiated call tree.

They get a shadow global in every function (Activity's shared_globals), the functions touching
them are differentiated even without active arguments, and each derivative starts from their
shadows as of entry: float bytes zero (the primal values on entry are constants to it), pointer
slots pointing at the shadow of whatever global the primal pointer points into.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

from enzyme_cc.ir.lexer import scalar_of, type_size, carries_float
from ..tape.tape import TAPE_OPS
from ..structure.type_layout import (underlying, global_type, global_named, named_expand, layout)
from ..structure.fortran_descriptors import (flang_descriptor_fields, flang_descriptor_trees,
                                             plain_derived_elements, fortran_descriptor,
                                             has_own_buffer)
from .fixed_point import PREFIX as FP_PREFIX
from .static_vectors import shadow_vector
from .heap_slots import heap_slots, floats_written_through, shadow_of_heap_block
from ..structure.std_vectors import vector_offsets
from enzyme_cc.rules.call_kinds import kind_of
from enzyme_cc.rules.mpi import is_mpi

# a store of a constant (a global's address, maybe a constant GEP of it) into memory
_CONST_PTR_STORE = re.compile(r"store ptr (getelementptr[^,]*\(|)[^%,]*@")


def _carries_data(module, g: str) -> bool:
    if g not in module.globals or module.is_constant_global(g):
        return False
    ty = named_expand(global_type(module, g) or "", module.named_types)
    return carries_float(ty) or "ptr" in ty


def _float_data_targets(module, holder: str, text: str) -> set[str]:
    """The mutable globals holding float data whose addresses `text` (holder's initializer, a
    store) names."""
    return {t for t in re.findall(r"@[-\w.$]+", text) if t != holder and
            _carries_data(module, t) and
            carries_float(named_expand(global_type(module, t) or "", module.named_types))}


def writable_tables(module) -> str | None:
    """The module's text with constant tables of mutable data globals' addresses made mutable
    (None where it has none): `static double *fields[] = {rho, mom};` or a registry of
    `{rho, 1.0}` records that the program never writes, which LLVM marks `constant`. The
    arrays are reached through the table, so their shadows must be too: as a mutable holder
    (address_stores), the table gets a shadow whose pointers the derivative's entry points at
    the arrays' shadows. A constant's shadow is a zeroed scratch, through which the arrays'
    adjoints were lost."""
    lines = []
    for g, line in module.globals.items():
        if not module.is_constant_global(g) or " constant " not in line or \
                g.startswith(("@ad.", "@__enzyme_cc_")):
            continue                # (an earlier round's shadow tables are its own)
        if _float_data_targets(module, g, line.split(" constant ", 1)[1]):
            lines.append(line)
    if not lines:
        return None
    text = module.text
    for line in lines:
        text = text.replace(line, line.replace(" constant ", " global ", 1), 1)
    return text


def address_stores(gen) -> dict[str, set]:
    """Pointer globals -> the mutable data globals whose address the module stores in them
    (`gp = data;` anywhere, also outside the call tree, or a static initializer `*gp = data`)."""
    module = gen.module
    out: dict[str, set] = {}

    def note(holder, text):
        if not holder.startswith("@") or not _carries_data(module, holder) or \
                holder in gen.reg.inactive_globals:
            return
        targets = _float_data_targets(module, holder, text) - gen.reg.inactive_globals
        if targets:
            out.setdefault(holder, set()).update(targets)

    for g, line in module.globals.items():
        init = line.split(" global ", 1)[1] if " global " in line else ""
        note(g, init)
    for f in module._bodies:
        if not _CONST_PTR_STORE.search(gen._body(f)):
            continue
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and not inst.ops[0].is_local:
                h = underlying(fn, inst.ops[1].value)
                if not h.startswith("@"):
                    h = next((t for t in h.split(" ") if t.startswith("@")), h)
                note(h, inst.ops[0].value)
    return out


def find_shared_globals(gen, roots):
    """Mutable globals holding floats or pointers that carry data from one function to another
    in the call trees of the differentiated functions (a simulation's state or its buffers
    set in one function, read in another), and the globals whose address a pointer global read
    there may hold, with that pointer global."""
    reach, access, written = accesses(gen, roots)
    gen.global_reach = reach
    # A global with a shadow of the program's own (enzyme_shadow, __enzyme_shadow, a derivative
    # with enzyme_context) is active wherever it is used.
    shared = {g for g in written if len(access[g]) > 1} | \
        {g for g in access if g in gen.reg.shadows} | gen.persistent
    # A pointer global read in the call tree that may point into a global array: the array's
    # data is reached through it (written in one function, read in another, or set before the
    # derivative starts), so both need shadows everywhere.
    gen.address_targets = {}
    for holder, targets in address_stores(gen).items():
        if holder in access or holder in gen.persistent:
            shared |= {holder} | targets
            gen.address_targets[holder] = targets
    # A pointer global holding heap blocks (heap_slots: a scratch buffer `double *work` the
    # program allocates) whose block the call tree writes float data into: its shadow slot gets
    # a zeroed block of the same size at the derivative's entry.
    for g in sorted(set(access) - shared - set(gen.reg.shadows)):
        if heap_slots(gen.module, g, reach) and floats_written_through(gen.module, g, reach):
            shared.add(g)
    gen.shared_globals = shared
    # the shadow of a global one function writes starts from zero too: an earlier derivative
    # leaves the adjoint of the global's value on entry there (or forward mode its tangent)
    gen.reset_globals = set(written) - shared - set(gen.reg.shadows) - gen.persistent
    users = {f for g in shared for f in access.get(g, ())}
    # a function that communicates over MPI takes part in the derivative's messages whether or
    # not its own arguments are active (rules/mpi.py)
    users |= {f for f in reach if any(is_mpi(c) and kind_of(gen, SimpleNamespace(callee=c)) ==
                                      "mpi" for c in gen._callees(f))}
    changed = True
    while changed:
        new = {f for f in reach if f not in users and _calls(gen, f) & users}
        users |= new
        changed = bool(new)
    gen.global_users = users


def _calls(gen, f: str) -> set:
    """The functions f may call: those it names, and the possible targets of its calls
    through function pointers (a solver calling the user's residual, which reads a parameter
    the caller stored in a global: its adjoint was silently lost)."""
    memo = gen.__dict__.setdefault("_calls_with_targets", {})
    if f not in memo:
        out = set(gen._callees(f))
        if f in gen.module._bodies and _calls_pointer(gen.module, f):
            for inst in gen.module.function(f).insts():
                if inst.op in ("call", "invoke") and (inst.callee or "").startswith("%"):
                    out.update(gen.address_taken(inst.ty, gen.param_types(inst), inst))
        memo[f] = out
    return memo[f]


def _calls_pointer(module, f: str) -> bool:
    lo, hi = module._bodies[f]
    return any(_INDIRECT.search(x) for x in module._lines[lo + 1:hi])


# a call or invoke through a local (a function pointer)
_INDIRECT = re.compile(r"\b(?:call|invoke)\b[^@%]*%[-\w.$]+\(")


def accesses(gen, roots):
    """(functions reached from roots, mutable data global -> functions accessing it, globals
    written there)."""
    module = gen.module
    reach, todo = set(), list(roots)
    while todo:
        f = todo.pop()
        if f in reach or f not in module._bodies or f in TAPE_OPS or f.startswith("@ad.gs."):
            continue            # (the tape's spare buffer is no data: rules/tape.py; nor are an
            #                      inner round's shadow sets: global_shadows_nested.py)
        reach.add(f)
        todo.extend(_calls(gen, f))
    access: dict[str, set] = {}
    written: set[str] = set()
    # Mutable globals the tree loads or stores floats in, whatever their declared type: a byte
    # array (LLVM turns `gp = malloc(32)`, stored once into a global pointer, into a `[32 x i8]`
    # global; a program's own char pool) holds doubles when its accesses say so.
    typed: set[str] = set()
    found = []        # (global, function, written, only if its declared type holds floats)
    for f in reach:
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op == "call" and (inst.callee or "").startswith(FP_PREFIX):
                _fixed_point_states(module, gen, fn, inst, access, written)
                continue
            ptrs = [inst.ops[0].value] if inst.op in ("load", "atomicrmw", "cmpxchg") else \
                [inst.ops[1].value] if inst.op == "store" else []
            if ptrs:
                vty = inst.ty if inst.op == "load" else \
                    inst.ops[0].ty if inst.op == "store" else inst.ops[-1].ty
                g = _global_of(fn, ptrs[0])
                if (carries_float(vty) or vty.startswith("<") and carries_float(scalar_of(vty))) \
                        and g in module.globals and not module.is_constant_global(g):
                    typed.add(g)
            if inst.op == "store" and inst.ops[0].ty == "ptr" and "@" in inst.ops[0].value:
                # a global's address kept in memory (`double *c = U;` swapped with another in a
                # loop) may be written through: the function's access
                found += [(g, f, True, True) for g in _globals_of(fn, inst.ops[0].value)]
            if inst.op in ("call", "invoke"):
                kind = kind_of(gen, inst)
                if kind in ("memcpy", "memset"):
                    ptrs = [inst.ops[0].value]
                    if kind == "memcpy" and len(inst.ops) > 1:    # (the source is read)
                        found += [(g, f, False, False) for g in _globals_of(fn, inst.ops[1].value)]
                elif kind not in ("inactive", "tape"):
                    # a global's address handed to a callee (`fill(garr, ...)`, `&acc`, a fork's
                    # captured global) may be written there: the caller's access
                    ptrs = [o.value for o in inst.ops if o.ty == "ptr"]
            for g in {g for ptr in ptrs for g in _globals_of(fn, ptr)}:
                ty = named_expand(global_type(module, g) or "", module.named_types)
                # (a store of a constant into a pointer global: see address_stores)
                const_ptr = inst.op == "store" and not carries_float(ty) and \
                    not inst.ops[0].is_local
                # a Fortran module array's descriptor only read: its data's adjoints are still
                # written through the shadow descriptor's base, which the entry must set up
                found.append((g, f, inst.op != "load" and not const_ptr or
                              has_own_buffer(module, g), False))
    for g, f, writes, float_only in found:
        if g in gen.reg.inactive_globals:
            continue          # enzyme_inactive: holds no derivative
        if float_only:      # (or a Fortran module array, whose data is behind a pointer)
            data = _carries_data(module, g) and (carries_float(
                named_expand(global_type(module, g) or "", module.named_types)) or
                has_own_buffer(module, g))
        else:
            data = _carries_data(module, g) or g in typed or g in gen.persistent
        if data:
            access.setdefault(g, set()).add(f)
            if writes:
                written.add(g)
    return reach, access, written


def _global_of(fn, ptr: str) -> str:
    """The global ptr points into through GEPs (or a constant expression names), else its
    underlying value."""
    v = underlying(fn, ptr)
    return v if v.startswith("@") else global_named(v) or v


def _globals_of(fn, ptr: str) -> set:
    """The globals a pointer may point into: its own (through GEPs, or a constant expression
    naming one), or those a web of pointer phis/selects joins (`c = s % 2 ? U : V`, double
    buffers swapped in a loop). Each value of the web is visited once: a web of phis that
    reach each other (nested loops over swapped buffers) is walked in linear time."""
    out, seen, todo = set(), set(), [ptr]
    while todo:
        v = underlying(fn, todo.pop())
        if v in seen:
            continue
        seen.add(v)
        if not v.startswith("%"):
            g = global_named(v)
            if g:
                out.add(g)
            continue
        d = fn.defs.get(v)
        if getattr(d, "op", None) in ("phi", "select"):
            todo += [o.value for o in (d.ops[1:] if d.op == "select" else d.ops)
                     if o.ty == "ptr"]
        elif getattr(d, "op", None) == "load" and d.ty == "ptr":
            todo += _local_stores(fn).get(d.ops[0].value, [])
    return out


def _local_stores(fn) -> dict:
    """{alloca: the pointers stored into it} of fn: unoptimized code keeps a pointer in a local
    (`buf = &static_buffer;` at -O0), and what a load from it gives is one of those."""
    cache = fn.__dict__.get("_local_pointer_stores")
    if cache is None:
        cache = {}
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    getattr(fn.defs.get(inst.ops[1].value), "op", None) == "alloca":
                cache.setdefault(inst.ops[1].value, []).append(inst.ops[0].value)
        fn.__dict__["_local_pointer_stores"] = cache
    return cache


def _fixed_point_states(module, gen, fn, inst, access, written):
    """A fixed-point loop reads and writes its states, and its adjoint iteration needs the
    shadow of a global one (which the step may name itself): such a global is shared."""
    states = inst.callee[len(FP_PREFIX):].strip('"').split(".")[1].split("_")
    for o in (inst.ops[int(j)] for j in states):
        g = underlying(fn, o.value) if o.ty == "ptr" else ""
        if not g.startswith("@"):
            g = next((t for t in g.split(" ") if t.startswith("@")), g)
        if g.startswith("@") and _carries_data(module, g) and g not in gen.reg.inactive_globals:
            access.setdefault(g, set()).update((fn.name, inst.callee))
            written.add(g)


def entry_function(gen, name: str) -> str:
    """`void name()`: the shadows of the shared globals as a derivative starts. Float data is
    zeroed; a pointer slot that may hold a global array's address gets the same offset into
    that array's shadow (null when it points elsewhere: a derivative through it faults rather
    than landing in primal memory)."""
    module = gen.module
    body, n = [], [0]

    def tmp():
        n[0] += 1
        return f"%e{n[0]}"

    # the program seeds its own (enzyme_shadow, global_shadows' persistent ones)
    for g in sorted((gen.shared_globals | gen.scratch_globals | gen.reset_globals) -
                    set(gen.reg.shadows) - gen.persistent):
        ty = global_type(module, g)
        size = type_size(ty, module.named_types)
        gen.shadow_global(g)
        lanes = [None] + sorted(x for x in gen.shadow_lanes.get(g, ()) if x is not None)
        targets = sorted(gen.address_targets.get(g, ()))
        slots = [o for o, k in sorted(layout(ty, module.named_types).items()) if k == "ptr"]
        vectors = vector_offsets(module, g) if slots else []
        in_vectors = {v + k for v in vectors for k in (0, 8, 16)}    # (their pointer slots)
        heap = {o: f for o, f in (heap_slots(module, g, gen.global_reach) if slots else {}).items()
                if o not in in_vectors}
        descriptors = flang_descriptor_fields(module, g)    # [(offset, rank)]
        trees = flang_descriptor_trees(module, g)           # [(offset, bytes)]
        records = plain_derived_elements(module, g)        # (its addendum copied too)
        # (POINTERs, or POINTER components, that only ALLOCATE associates)
        owned = fortran_descriptor(module, g) in ("owned", "components")
        if trees:
            gen.declare_raw(_TREE, f"declare void {_TREE}(ptr, ptr, i64)")
            gen.declare_raw(f"{_TREE}_free", f"declare void {_TREE}_free(ptr)")
        for lane in lanes:
            sg = gen.shadow_global(g, *(lane or (None, None))[::-1])
            # the buffers the last call left this shadow
            for at, free in [(at, "@free") for at, _ in descriptors] + sorted(heap.items()) + \
                    [(at, "@_ZdlPv") for at in vectors]:
                body += _free_shadow_buffer(gen, _at(sg, at), tmp, free)
            for at, _ in trees:
                body.append(f"call void {_TREE}_free(ptr {_at(sg, at)})")
            gen.zero_memory(body.append, sg, str(size))
            for at, nbytes in trees:
                body.append(f"call void {_TREE}(ptr {_at(sg, at)}, ptr {_at(g, at)}, "
                            f"i64 {nbytes})")
            for at in vectors:
                body += shadow_vector(gen, _at(g, at), _at(sg, at), tmp)
            for at, rank in descriptors:
                body += _shadow_of_allocated(gen, _at(g, at), _at(sg, at), rank, tmp,
                                             pointer=owned, size=size if records else None)
            for at, free in sorted(heap.items()):
                body += shadow_of_heap_block(gen, _at(g, at), _at(sg, at), tmp, free)
            for off in [o for o in slots if o not in heap and o not in in_vectors] \
                    if targets else ():
                p, pi = tmp(), tmp()
                body += [f"{p} = load ptr, ptr getelementptr (i8, ptr {g}, i64 {off})",
                         f"{pi} = ptrtoint ptr {p} to i64"]
                cur = "null"
                for t in targets:
                    d, inside, sh, sel = tmp(), tmp(), tmp(), tmp()
                    tsize = type_size(global_type(module, t), module.named_types)
                    body += [f"{d} = sub i64 {pi}, ptrtoint (ptr {t} to i64)",
                             f"{inside} = icmp ult i64 {d}, {tsize}",
                             f"{sh} = getelementptr i8, ptr {gen.shadow_global(t, *(lane or (None, None))[::-1])}, i64 {d}",
                             f"{sel} = select i1 {inside}, ptr {sh}, ptr {cur}"]
                    cur = sel
                body.append(f"store ptr {cur}, ptr getelementptr (i8, ptr {sg}, i64 {off})")
    return f"define internal void {name}() {{\n" + "\n".join(body + ["ret void"]) + "\n}"


# the shadow of an allocatable array of derived type with allocatable components: a tree of
# buffers (rules/fortran_shadow.c, linked in after AD)
_TREE = "@__enzyme_cc_fortran_shadow_tree"
_FLOAT_TYPES = (27, 28, 34, 35)     # flang's real(4), real(8), complex(4), complex(8)
_DERIVED = 42


def _at(g: str, off: int) -> str:
    """The address `off` bytes into global g, as a constant."""
    return f"getelementptr (i8, ptr {g}, i64 {off})" if off else g


def _free_shadow_buffer(gen, sg: str, tmp, free: str = "@free") -> list[str]:
    """The buffer an earlier derivative call left the shadow descriptor sg freed: the one its
    entry gave it (_shadow_of_allocated), or one its shadow ALLOCATE or assignment made. Only
    derivatives write these descriptors, and a derivative that deallocated the array left a
    null base."""
    gen.declare_raw(free, f"declare void {free}(ptr)")
    p = tmp()
    return [f"{p} = load ptr, ptr {sg}", f"call void {free}(ptr {p})"]


def _shadow_of_allocated(gen, g: str, sg: str, rank: int, tmp,
                         pointer: bool = False, size: int | None = None) -> list[str]:
    """A module allocatable array of reals the program allocated before the derivative starts
    (`allocate(work(n))` in the main program, written or read in the differentiated code; also
    an allocatable component of a module variable of derived type): its shadow descriptor (at
    sg; the primal's at g) gets the same shape and a zeroed buffer of its own, where it had none
    and the derivative went through a null base. The next derivative call's entry frees it
    (_free_shadow_buffer). pointer: also a POINTER's that only ALLOCATE associates
    (fortran_descriptors.fortran_descriptor). size: the whole descriptor's bytes, for an array of a
    derived type whose elements hold no pointers (plain_derived_elements): its addendum (the
    type's description) is copied too."""
    codes = _FLOAT_TYPES + ((_DERIVED,) if size else ())
    size = size or 24 + 24 * rank
    gen.declare_raw("@calloc", "declare noalias ptr @calloc(i64, i64)")
    gen.declare_raw("@llvm.memcpy.p0.p0.i64",
                    "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
    b, a, t, ok = tmp(), tmp(), tmp(), tmp()
    label = tmp()[2:]                   # (a fresh number for the labels)
    yes, done = f"fdesc.alloc.{label}", f"fdesc.done.{label}"
    out = [f"{b} = load ptr, ptr {g}", f"{a} = load i8, ptr {_at(g, 22)}",
           f"{t} = load i8, ptr {_at(g, 21)}"]
    conds = [f"icmp ne ptr {b}, null", f"icmp eq i8 {a}, 2"]
    if pointer:                             # (attribute 1 or 2)
        conds[1:] = [f"icmp ule i8 {a}, 2", f"icmp ne i8 {a}, 0"]
    kinds = []
    for code in codes:
        c = tmp()
        out.append(f"{c} = icmp eq i8 {t}, {code}")
        kinds.append(c)
    anyf = kinds[0]
    for c in kinds[1:]:
        n = tmp()
        out.append(f"{n} = or i1 {anyf}, {c}")
        anyf = n
    prev = anyf
    for c in conds:
        x, n = tmp(), tmp()
        out += [f"{x} = {c}", f"{n} = and i1 {prev}, {x}"]
        prev = n
    out += [f"{ok} = freeze i1 {prev}", f"br i1 {ok}, label %{yes}, label %{done}", f"{yes}:",
            f"call void @llvm.memcpy.p0.p0.i64(ptr {sg}, ptr {g}, i64 {size}, i1 false)"]
    n = tmp()
    out.append(f"{n} = load i64, ptr {_at(g, 8)}")
    for dim in range(rank):
        e, m = tmp(), tmp()
        out += [f"{e} = load i64, ptr {_at(g, 24 + 24 * dim + 8)}",
                f"{m} = mul i64 {n}, {e}"]
        n = m
    buf = tmp()
    out += [f"{buf} = call ptr @calloc(i64 {n}, i64 1)", f"store ptr {buf}, ptr {sg}",
            f"br label %{done}", f"{done}:"]
    return out
