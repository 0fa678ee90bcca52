"""Small local arrays a callee only reads, saved whole on the tape at the end of its augmented
forward and restored at the start of its reverse.

Hydrodynamics and finite-element codes gather an element's corner coordinates into local
arrays, pass them to helpers (`hex_volume(px, py, pz, ...)`) and overwrite them for the next
element before any reverse runs: the helper's loads of them cannot be re-read in its reverse,
and tapes each one, in a loop once per iteration (a tetrahedron loop re-reads the same corners
six times). When the caller passes an alloca of known size to a parameter the callee uses for
nothing but address arithmetic and loads, passes it to no other parameter of the call, and never
lets its address escape (so nothing the call runs can write it), the callee's split pair for
that call saves the array's bytes once, and its reverse reads a copy of them: every load through
that parameter is re-executed there instead of taped. The variant is part of the split key
(`-restore:param=bytes`), so other callers keep the plain one.
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from ..structure.call_targets import keep_no_copy
from ..structure.cfg import cyclic_blocks
from ..structure.type_layout import underlying
from .read_only import reloadable

MAX_BYTES = 4096      # a larger array costs more to copy than its loads usually cost to tape
_FP = ("double", "float", "half", "fp128", "x86_fp80", "bfloat")


def restored_args(gen, synth, inst) -> frozenset:
    """{(callee parameter, bytes)} of the call's arguments whose callee split pair restores
    them (see the module docstring); asked by both sweeps of the caller, answered once."""
    if synth is None or synth.mode == "forward" or not inst.callee.startswith("@"):
        return frozenset()
    memo = synth.__dict__.setdefault("_restored_args", {})
    if id(inst) not in memo:
        memo[id(inst)] = _restored_args(gen, synth, inst)
    return memo[id(inst)]


def _restored_args(gen, synth, inst) -> frozenset:
    fn = gen.module.function(inst.callee)
    if fn is None or not fn.blocks:
        return frozenset()
    out = set()
    for p, o in zip(fn.params, inst.ops):
        if p.ty != "ptr" or not o.value.startswith("%"):
            continue
        size = _alloca_bytes(synth.fn, o.value, gen.module.named_types)
        if not size or size > MAX_BYTES or reloadable(gen, synth.fn.name, o.value):
            continue
        if _loaded_bytes(gen, fn, p.name) * 2 >= size and _unchanged_by(gen, synth, o.value, inst):
            out.add((p.name, size))
    return frozenset(out)


def _derived(fn, root: str, users=None) -> set[str]:
    """root and the addresses computed from it (GEPs on it, transitively)."""
    users, derived, todo = users or fn.users(), {root}, [root]
    while todo:
        v = todo.pop()
        for u in users.get(v, ()):
            if u.op == "getelementptr" and u.ops[0].value == v and u.name not in derived:
                derived.add(u.name)
                todo.append(u.name)
    return derived


def _unchanged_by(gen, synth, obj: str, call) -> bool:
    """Nothing the call runs can write local array obj: the call passes it once (no other
    argument points into it), and its address never escapes the caller (_escaping_locals,
    found for every local at once: a C++ objective passes hundreds of locals to calls)."""
    fn = synth.fn
    if sum(underlying(fn, o.value) == obj for o in call.ops if o.ty == "ptr") != 1:
        return False
    escaping = synth.__dict__.get("_escaping_locals")
    if escaping is None:
        escaping = synth.__dict__.setdefault("_escaping_locals", _escaping_locals(gen, fn))
    return obj not in escaping


def _escaping_locals(gen, fn) -> set[str]:
    """The allocas of fn whose address escapes: used (itself or an address computed from it)
    by anything but address arithmetic, loads, stores into it and calls that do not keep it
    (memory intrinsics, `captures(none)` parameters)."""
    users, root_of = fn.users(), {}
    for inst in fn.insts():
        if inst.op == "alloca":
            for v in _derived(fn, inst.name, users):
                root_of.setdefault(v, inst.name)
    escaping = set()
    for inst in fn.insts():
        by_root: dict[str, list[int]] = {}
        for k, o in enumerate(inst.ops):
            if o.value in root_of:
                by_root.setdefault(root_of[o.value], []).append(k)
        for root, used in by_root.items():
            if root not in escaping and not _kept_by(gen, inst, used):
                escaping.add(root)
    return escaping


def _kept_by(gen, inst, used) -> bool:
    """inst's use of a local's addresses at operand positions `used` keeps it local."""
    if inst.op == "getelementptr" and used == [0] or inst.op == "load" and used == [0] or \
            inst.op == "store" and used == [1]:
        return True
    if inst.op != "call" or not (inst.callee or "").startswith("@"):
        return False
    name = inst.callee[1:].strip('"')
    if name.startswith(("llvm.lifetime.", "llvm.memset.", "llvm.memcpy.", "llvm.memmove.")):
        return True
    return keep_no_copy(gen.module, [inst.callee], used)


def _alloca_bytes(fn, v: str, named) -> int | None:
    """The size of the fixed-size local array v is (v itself, not a pointer into it)."""
    d = fn.defs.get(v)
    if getattr(d, "op", None) != "alloca" or d.ops or not getattr(d, "src_ty", None):
        return None
    try:
        return type_size(d.src_ty, named)
    except (ValueError, KeyError):
        return None


def _loaded_bytes(gen, fn, param: str) -> int:
    """Bytes of floating-point values a call loads through `param` (a load in a loop counted
    four times); 0 when the parameter has a use other than address arithmetic and loads.
    Asked once per callee and parameter."""
    memo = gen.__dict__.setdefault("_restore_loaded", {})
    if (fn.name, param) not in memo:
        memo[fn.name, param] = _count_loaded(fn, param)
    return memo[fn.name, param]


def _count_loaded(fn, param: str) -> int:
    derived, cyclic, total = _derived(fn, param), cyclic_blocks(fn), 0
    for b in fn.blocks:
        for inst in b.insts:
            used = [k for k, o in enumerate(inst.ops) if o.value in derived]
            if not used:
                continue
            if inst.op == "getelementptr" and used == [0]:
                continue
            if inst.op == "load" and used == [0] and "volatile" not in inst.flags:
                if inst.ty.split(" x ")[-1].strip(" <>") in _FP:
                    total += type_size(inst.ty) * (4 if b.label in cyclic else 1)
                continue
            return 0
    return total


def restored_root(synth, ptr: str) -> bool:
    """A load through ptr reads an array this split pair restores in its reverse."""
    restored = getattr(synth, "restored", None)
    return bool(restored) and synth.mode == "split" and underlying(synth.fn, ptr) in restored


def save(synth, lines):
    """Before a return of the augmented forward: the restored arrays' bytes onto the tape."""
    for name, size in sorted(synth.restored.items()):
        p = synth.tmp("rsave")
        lines.append(f"{p} = call ptr @__enzyme_cc_push(ptr %ad.tape, i64 {size})")
        lines.append(f"call void @llvm.memcpy.p0.p0.i64(ptr {p}, ptr {synth.r(name)}, "
                     f"i64 {size}, i1 false)")
    if synth.restored:
        _declare_memcpy(synth.gen)


def restore(synth) -> list[str]:
    """At the reverse's entry: each restored parameter's name is a local copy of the bytes the
    augmented forward saved (its pointer argument is renamed: params)."""
    lines = []
    for name, size in sorted(synth.restored.items(), reverse=True):
        p = synth.tmp("rload")
        lines.append(f"{synth.r(name)} = alloca [{size} x i8], align 16")
        lines.append(f"{p} = call ptr @__enzyme_cc_pop(ptr %ad.tape, i64 {size})")
        lines.append(f"call void @llvm.memcpy.p0.p0.i64(ptr {synth.r(name)}, ptr {p}, "
                     f"i64 {size}, i1 false)")
    if lines:
        _declare_memcpy(synth.gen)
    return lines


def params(synth, texts: list[str]) -> list[str]:
    """The reverse's parameter list: a restored parameter's argument under another name."""
    renamed = {synth.r(n) for n in synth.restored}
    return [t + ".ad.unused" if t.startswith("ptr ") and t.split()[-1] in renamed else t
            for t in texts]


def _declare_memcpy(gen):
    gen.declare_raw("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
