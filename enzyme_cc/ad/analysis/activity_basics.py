"""What activity analysis and its users share about values and calls: which types have a
shadow, the allocator and free functions, where an integer used as a pointer comes from, the
float type a punned integer stands for, which instructions run as primal code only, and how much
read-only data a pointer without a shadow reaches, and which objects are std::strings."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import carries_float, int_bits, mixed_record, type_size
from enzyme_cc.rules.libm_out import family
from enzyme_cc.rules.registry import is_inactive_call, is_string_member
from ..structure.cfg import doomed_blocks
from ..structure.type_layout import decompose, underlying


def _libm_out(module, callee) -> bool:
    return family(callee) is not None and not module.defines(callee)

ALLOCATORS = {"@malloc", "@calloc", "@_Znwm", "@_Znam", "@_ZnwmRKSt9nothrow_t", "@_ZnamRKSt9nothrow_t",
              "@_ZnwmSt11align_val_t", "@_ZnamSt11align_val_t", "@aligned_alloc", "@realloc",
              "@memalign", "@valloc"}     # (memalign: FFTW's fftw_malloc)
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


_REPLAYED = ("add", "sub", "and", "or", "xor")


def int_pointer_chain(fn, v: str):
    """For an integer made from one pointer's ptrtoint by add, sub, and, or, xor whose other
    operands are constants, integers made from no address, or the low tag bits of other
    values (`x & C`, C < 4096): FFTW's tagged pointers, `(uintptr_t)p & ~3` and
    `p1 | ((uintptr_t)p2 & 3)`. (P, [(op, the chain's operand position, the other operand,
    type)] from P outwards), else None. The same steps on P's shadow give the shadow (a block
    as aligned as P's, so the tags agree)."""
    steps = []
    for _ in range(16):
        d = fn.defs.get(v)
        op = getattr(d, "op", None)
        if op == "ptrtoint":
            return d.ops[0].value, steps[::-1]
        if op not in _REPLAYED or len(d.ops) != 2:
            return None
        sides = [k for k, o in enumerate(d.ops) if o.value.startswith("%") and
                 _from_pointer(fn, o.value) and not _low_bits(fn, o.value)]
        if len(sides) != 1 or op == "sub" and sides != [0]:
            return None
        k = sides[0]
        steps.append((op, k, d.ops[1 - k].value, d.ty))
        v = d.ops[k].value
    return None


def _from_pointer(fn, v: str, depth: int = 0) -> bool:
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    return op == "ptrtoint" or op in _REPLAYED and depth < 16 and any(
        o.value.startswith("%") and _from_pointer(fn, o.value, depth + 1) for o in d.ops)


def int_pointer_bases(fn, v: str) -> set:
    """The pointers an address rebuilt from the integer v may point into: int_pointer_sources,
    or the one pointer of a tagged address (int_pointer_chain)."""
    chain = int_pointer_chain(fn, v)
    return int_pointer_sources(fn, v) or ({chain[0]} if chain else set())


def _low_bits(fn, v: str) -> bool:
    d = fn.defs.get(v)
    if getattr(d, "op", None) != "and" or len(d.ops) != 2:
        return False
    consts = [o.value for o in d.ops if not o.value.startswith("%")]
    return len(consts) == 1 and consts[0].isdigit() and int(consts[0]) < 4096


def int_pointer_sources(fn, v: str, depth=0, seen=None) -> set | None:
    """The pointers whose ptrtoint the integer v is made from (through phis, selects and integer
    arithmetic; constants add none), or None when some part comes from elsewhere (memory, a
    call, an argument). Phis that feed each other (Rust's `mem::swap` of two Vecs in a loop:
    each address phi takes the other's value) are followed once."""
    if not v.startswith("%"):
        return set()
    seen = set() if seen is None else seen
    if v in seen:
        return set()
    seen.add(v)
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
            s = int_pointer_sources(fn, w, depth + 1, seen)
            if s is None:
                return None
            out |= s
        return out
    return None


def primal_only(ctx, inst) -> bool:
    """Emit `inst` of a block that never reaches a return (an abort, a throw:
    cfg.doomed_blocks) as primal code only, and say so: nothing there needs a derivative
    (Activity.doomed). Lifetime markers are dropped (their alloca may live on the heap here)."""
    if ctx.block.label not in doomed_blocks(ctx.synth.fn):
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
    """A pointer, or a literal record holding one: a record of pointers and floats (`{ ptr,
    double }` returned by value) has a shadow record too, whose pointer fields are the
    shadows (its float fields carry nothing: their derivative is the record's adjoint)."""
    return ty == "ptr" or pointer_aggregate(ty) or mixed_record(ty)


_STRING_TYPE = re.compile(r'alloca %"class\.std::__cxx11::basic_string(?:\.\d+)?"')


def string_objects(module, fn) -> set[str]:
    """Locals that are libstdc++ std::strings (allocas of the string class) handed to no
    function with bitcode (only to string members without bitcode, std::to_string's formatter
    or inactive calls: a callee with bitcode may store the string's buffer address where a
    shadow is kept, as std::map's node does with a moved key), and what a string member returns
    when given one (`_M_replace` returns its `this`). Only whole objects: a string inside a
    record (a map node's key beside its value) shares the record's object."""
    out = set()
    for inst in fn.insts():
        if inst.op == "alloca" and _STRING_TYPE.match(str(inst).split("= ", 1)[-1]):
            out.add(inst.name)
    for inst in fn.insts():
        if inst.op in ("call", "invoke") and not (inst.callee or "").startswith("@llvm.") and \
                not is_inactive_call(inst.callee or ""):
            out -= {underlying(fn, o.value) for o in inst.ops if o.ty == "ptr"}
    for inst in fn.insts():
        if inst.op in ("call", "invoke") and inst.callee and inst.ty == "ptr" and inst.name \
                and is_string_member(inst.callee) and inst.ops and \
                decompose(module, fn, inst.ops[0].value) in ((o, 0) for o in out):
            out.add(inst.name)
    return out
