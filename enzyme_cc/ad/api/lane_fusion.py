"""Reverse vector mode's N-lane reverse sweep: one run of the reverse function for all lanes.

Reverse vector mode (`reverse_vector.py`) runs the forward sweep once and then, by default, the
reverse function once per lane on the same tape. Each run pops the same tape entries, recomputes
the same primal values and walks the same control flow; only the adjoints differ. This module
derives from a reverse function a fused copy that does the lane-independent work once and the
adjoint work once per lane, side by side in the same blocks (one reverse loop carrying every
lane's adjoints, as Enzyme's vector mode does).

Which values belong to a lane is a taint over the function: the lanes' shadow parameters, every
value computed from one, every load through one, and every local (alloca) that receives one
(adjoint accumulators). Such instructions, and stores and memory intrinsics through lane
pointers, are emitted once per lane (lane k's names get a `.L<k>` suffix); everything else is
emitted once. That is exact when no lane value reaches shared state: the fusion is refused (and
the lanes run one after another as before) when a lane value would be stored into memory that is
not the lane's own, passed to a call that is not a pure function or a memory intrinsic, or decide
a branch. The lanes' shadows are taken to be disjoint, as in Enzyme's vector mode.
"""
from __future__ import annotations

import os
import sys

from enzyme_cc.ir.lexer import LOCAL_NAME, type_size
from enzyme_cc.ir import debug_locs
from enzyme_cc.ir.model import parse_function
from .truncate_ops import LIBM
from ..structure.type_layout import underlying, alloca_align

# intrinsics and libm functions without side effects: a lane's call is the lane's own value
_PURE_INTRINSICS = {"fabs", "sqrt", "fma", "fmuladd", "sin", "cos", "tan", "exp", "exp2", "log",
                    "log2", "log10", "pow", "powi", "copysign", "minnum", "maxnum", "minimum",
                    "maximum", "floor", "ceil", "trunc", "round", "rint", "nearbyint", "asin",
                    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "ldexp"}
_PER_LANE_INTRINSICS = {"memset", "memcpy", "memmove", "lifetime"}   # through the lane's pointer
# helpers that touch memory only through their pointer arguments, all of which must be the lane's
_PER_LANE_HELPERS = ("__enzyme_cc_memcpy_adj_", "__enzyme_cc_records_")
_ALLOCATORS = ("@malloc", "@calloc")


LANE_LOCAL = "@__enzyme_cc_lane_local"


def lane_room(synth) -> tuple[int, int | None]:
    """(lanes, stride) of the shadows of synth's fixed-size locals in a split pair built for
    reverse vector mode of width N: each shadow has room for N lanes, lane k's copy k * stride
    bytes after lane 0's, one stride (the largest local) for all the function's locals, so that a
    pointer into any of them, selected between them or not, finds its lane's copy. (1, None)
    elsewhere."""
    width = synth.gen.in_multi                 # False, True (is 1) or the width
    if width < 2:
        return 1, None
    if not hasattr(synth, "_lane_stride"):
        locals_ = [i for i in synth.fn.insts()
                   if i.op == "alloca" and not i.ops and i.name in synth.act.shadowed]
        sizes = [type_size(i.src_ty, synth.module.named_types) for i in locals_]
        align = max([16] + [alloca_align(i) for i in locals_])
        synth._lane_stride = -(-max(sizes + [1]) // align) * align   # keeps each copy aligned
    return width, synth._lane_stride


def mark_local_shadows(synth, ctx, keys):
    """In the reverse function of such a pair: the shadows of locals that the reverse reads back
    (from the tape or a slot) go through `LANE_LOCAL(p, stride)`, which lane fusion turns into
    lane k's copy p + k * stride and which is p itself otherwise."""
    lanes, stride = lane_room(synth)
    if lanes < 2:
        return
    for k in keys:
        if k[0] == "s" and k in ctx.avail and k[1].startswith("%") and \
                local_shadow(synth.fn, k[1]):
            m = synth.tmp("ll")
            ctx.lines.append(f"{m} = call ptr {LANE_LOCAL}(ptr {ctx.avail[k]}, i64 {stride})")
            ctx.avail[k] = m
            synth.gen.helpers.add(("lanelocal",))


def fuse(gen, rev: str, rev_ret: str, width: int, lane_params: set[int]) -> tuple[str, str] | None:
    """(name, return type) of the fused reverse function of `rev` for `width` lanes, made once
    per (rev, width, lane_params); None when it cannot be fused. lane_params: indices of rev's
    parameters that differ per lane (the shadows). The fused function takes rev's parameters
    followed by lanes 1..width-1's copies of the lane parameters, and returns
    `[width x rev_ret]` (void: void)."""
    if os.environ.get("ENZYME_CC_LANE_FUSION") == "0":    # the lanes one after another (part
        return None                                       # of the AD cache's key: lto/link.py)
    cache = gen.__dict__.setdefault("_lane_fusions", {})
    key = (rev, width, tuple(sorted(lane_params)))
    if key not in cache:
        name = f"{rev}.w{width}" + "".join(f".{i}" for i in sorted(lane_params))
        cache[key] = (name, rev_ret if rev_ret == "void" else f"[{width} x {rev_ret}]")
        made, known = len(gen.out), set(cache)
        try:                              # (a recursive reverse calls its own fused copy)
            ok = _build(gen, rev, rev_ret, width, lane_params, cache[key])
        except _Refused as e:
            ok, why = False, str(e)
        else:
            why = None
        if not ok:                        # callees fused meanwhile may call this one: drop them
            del gen.out[made:]
            for k in set(cache) - known:
                del cache[k]
            cache[key] = None
            if why and os.environ.get("ENZYME_CC_DEBUG"):
                print(f"enzyme-cc: {rev}: lanes run one after another: {why}", file=sys.stderr)
    return cache[key]


class _Refused(Exception):
    """The reverse function cannot run its lanes side by side (the message says why)."""


def _reverse_functions(gen) -> dict[str, str]:
    """Generated reverse functions, split pairs' and indirect calls' dispatchers (which call
    the possible targets' reverse functions): name -> return type."""
    return {v[2]: v[3] for k, v in gen.done.items()
            if len(v) == 4 and (str(k[3]).startswith("split") if len(k) == 4 else
                                k[0] == "indirect")}


def _build(gen, rev, rev_ret, width, lane_params, made) -> bool:
    head = f"define internal {rev_ret} {rev}("
    text = next((t for t in gen.out if t.startswith(head)), None)
    if text is None:
        return False
    lines = text.rstrip("\n").split("\n")
    fn = parse_function(lines, gen.module.named_types)
    revs = _reverse_functions(gen)
    lane, why = lane_values(fn, {fn.params[i].name for i in lane_params}, revs)
    if why:
        raise _Refused(why)
    names = {p.name for p in fn.params} | {i.name for i in fn.insts() if i.name}
    if any(n.startswith('%"') or n in gen.module.named_types or
           any(f"{n}.L{k}" in names for k in range(1, width)) for n in lane):
        raise _Refused("a value name that a lane suffix cannot extend")
    name, ret = made
    extra = [f"{fn.params[i].ty} {fn.params[i].name}.L{k}"
             for k in range(1, width) for i in sorted(lane_params)]
    hdr = lines[0]
    close = _params_end(hdr, len(head))
    params = ", ".join([hdr[len(head):close]] + extra)
    out = [f"define internal {ret} {name}({params}){hdr[close + 1:]}"]
    by_line = {i.line: i for i in fn.insts()}
    skip = {n for i in fn.insts() for n in range(i.line + 1, i.line_end + 1)}
    tmp = [0]
    for n in range(1, len(lines) - 1):
        if n in skip:
            continue
        inst = by_line.get(n)
        raw = "\n".join(lines[n:inst.line_end + 1]) if inst else lines[n]
        if inst is None:
            out.append(raw)
        elif inst.op == "ret" and rev_ret != "void":
            out += _ret(inst, lane, width, rev_ret, tmp)
        elif inst.op == "call" and inst.callee in revs and _per_lane(inst, lane):
            out += _fused_callee(gen, inst, lane, width, revs[inst.callee], tmp)
        elif inst.op == "call" and inst.callee == LANE_LOCAL:
            p, stride = inst.ops[0].value, inst.ops[1].value
            out += [raw] + [f"{inst.name}.L{k} = getelementptr i8, ptr {p}, i64 "
                            f"{k * int(stride)}" for k in range(1, width)]
        elif _per_lane(inst, lane):
            out += [raw] + [_rename(raw, lane, k) for k in range(1, width)]
        else:
            out.append(raw)
    out.append("}")
    # (a copy of the reverse function: the locations stay with the original's subprogram)
    out = [debug_locs.without_subprogram(out[0])] + debug_locs.strip(out[1:])
    gen.out.append("\n".join(out) + "\n")
    return True


def _fused_callee(gen, inst, lane, width, ret_ty, tmp) -> list[str]:
    """A call of another reverse function with lane values: one call of its fused copy."""
    lanes = {k for k, o in enumerate(inst.ops) if o.value in lane}
    fused = fuse(gen, inst.callee, ret_ty, width, lanes)
    if fused is None:
        raise _Refused(f"'{inst.callee[1:]}' cannot run its lanes side by side")
    name, ret = fused
    args = [f"{o.ty} {o.value}" for o in inst.ops] + \
        [f"{inst.ops[i].ty} {_lane_name(inst.ops[i].value, lane, k)}"
         for k in range(1, width) for i in sorted(lanes)]
    call = f"call {ret} {name}({', '.join(args)})"
    if ret == "void" or not inst.name:
        return [call]
    tmp[0] += 1
    r = f"%ad.lf{tmp[0]}"
    return [f"{r} = {call}"] + [f"{_lane_name(inst.name, lane, k)} = extractvalue {ret} {r}, {k}"
                                for k in range(width)]


def _params_end(hdr: str, start: int) -> int:
    depth = 0
    for k in range(start, len(hdr)):
        c = hdr[k]
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            if depth == 0:
                return k
            depth -= 1
    raise ValueError("unbalanced function header")


def _lane_name(v: str, lane: set[str], k: int) -> str:
    return v + f".L{k}" if k and v in lane else v


def _rename(raw: str, lane: set[str], k: int) -> str:
    return LOCAL_NAME.sub(lambda m: _lane_name(m.group(0), lane, k), raw)


def _per_lane(inst, lane: set[str]) -> bool:
    return inst.name in lane or any(o.value in lane for o in inst.ops)


def _ret(inst, lane, width, rev_ret, tmp):
    out, agg = [], "poison"
    for k in range(width):
        tmp[0] += 1
        nxt = f"%ad.lf{tmp[0]}"
        val = _lane_name(inst.ops[0].value, lane, k)
        out.append(f"{nxt} = insertvalue [{width} x {rev_ret}] {agg}, {rev_ret} {val}, {k}")
        agg = nxt
    return out + [f"ret [{width} x {rev_ret}] {agg}"]


def lane_values(fn, lanes: set[str], revs=()) -> tuple[set[str], str | None]:
    """The values of fn that belong to a lane, given its lane parameters, and why the function
    cannot run its lanes side by side (None: it can). revs: the generated reverse functions,
    whose calls take lane values (their fused copies are made when fn's is)."""
    lane = set(lanes)
    changed = True
    while changed:
        changed = False
        for inst in fn.insts():
            uses = [o.value for o in inst.ops if o.value in lane]
            if inst.name in lane:
                continue
            if inst.op == "call" and inst.callee == LANE_LOCAL:    # lane k's copy: p + k stride
                if uses:
                    return lane, f"a local's shadow reached through a lane's pointer ({inst})"
                lane.add(inst.name)
                changed = True
                continue
            if not uses:
                continue
            if inst.op == "alloca":
                return lane, f"a local sized by a lane's value ({inst})"
            if inst.op in ("br", "switch", "indirectbr", "invoke", "resume", "unreachable"):
                return lane, f"a lane's value decides control flow or leaves by an exception ({inst})"
            if inst.op in ("store", "atomicrmw", "cmpxchg"):
                ptr = inst.ops[1].value if inst.op == "store" else inst.ops[0].value
                if ptr in lane:
                    if inst.name:                 # an atomic's old value: the lane's
                        lane.add(inst.name)
                        changed = True
                    continue
                new = _claim_locals(fn, ptr, lane)
                if new is None:
                    return lane, f"a lane's value stored into shared memory ({inst})"
                changed = changed or new
                continue
            if inst.op == "call" and _writes_through_first(inst) and inst.ops[0].value not in lane:
                new = _claim_locals(fn, inst.ops[0].value, lane)     # lane data copied in
                if new is None:
                    return lane, f"a lane's value copied into shared memory ({inst})"
                changed = changed or new
                continue
            if inst.op == "call" and inst.callee not in revs:
                why = _call(inst, lane, fn)
                if why:
                    return lane, why
                if not inst.name:
                    continue
            if inst.name:
                lane.add(inst.name)
                changed = True
    return lane, None


def _claim_locals(fn, ptr: str, lane: set[str]) -> bool | None:
    """Make the locals ptr points into the lane's (each lane gets its own copy): whether that
    added any; None when ptr may point elsewhere."""
    objs = _locals(fn, ptr)
    if objs is None:
        return None
    new = not objs <= lane
    lane |= objs
    return new


def _writes_through_first(inst) -> bool:
    """A memory intrinsic (memcpy, memmove, memset): it writes through its first operand."""
    base = (inst.callee or "")[1:]
    return base.startswith("llvm.") and base[5:].split(".")[0] in ("memset", "memcpy", "memmove")


def _call(inst, lane, fn) -> str | None:
    callee = inst.callee or ""
    if callee == "@free" and inst.ops[0].value in lane:
        objs = _locals(fn, inst.ops[0].value)
        if objs and all(fn.defs[o].op == "call" for o in objs):
            return None                   # a lane's own block (_locals), freed once per lane
    base = callee[1:].strip('"')
    if base.startswith("llvm."):
        kind = base[5:].split(".")[0]     # llvm.exp.f64 -> exp (llvm.experimental.* is not)
        if kind in _PURE_INTRINSICS or base.startswith("llvm.vector.reduce."):
            return None
        ptrs = [o.value for o in inst.ops if o.ty == "ptr"]
        if kind in _PER_LANE_INTRINSICS and ptrs and ptrs[0] in lane:
            return None                   # written through the lane's own pointer
    if base.startswith("__enzyme_cc_add_"):
        return None
    if base.startswith(_PER_LANE_HELPERS) and all(o.value in lane for o in inst.ops
                                                   if o.ty == "ptr"):
        return None
    if base in LIBM or (base.endswith("f") and base[:-1] in LIBM):
        return None
    return f"a lane's value passed to '{base}' ({inst})"


def _locals(fn, ptr: str, seen=None) -> set[str] | None:
    """The locals pointer ptr may point into: allocas, and blocks this function mallocs (the
    adjoint of a memmove's temporary), each of which every lane gets its own copy of (None:
    something else)."""
    seen = set() if seen is None else seen
    if ptr in seen:
        return set()
    seen.add(ptr)
    d = fn.defs.get(ptr)
    op = getattr(d, "op", None)
    if op == "alloca" or (op == "call" and d.callee in _ALLOCATORS):
        return {ptr}
    if op in ("getelementptr", "bitcast", "addrspacecast"):
        return _locals(fn, d.ops[0].value, seen)
    if op in ("phi", "select"):
        found = set()
        for o in d.ops[1:] if op == "select" else d.ops:
            sub = _locals(fn, o.value, seen)
            if sub is None:
                return None
            found |= sub
        return found
    return None


def local_shadow(fn, v: str) -> bool:
    """v's shadow points into the shadow of a fixed-size local of fn. In a split pair built
    `multi` that shadow is freed with the tape and zeroed again by the reverse sweep
    (rules/shadow_rules.py, alloca), so each lane finds it as the forward sweep left it: zero,
    since no forward sweep that writes a shadow pointer is accepted here."""
    seen, todo = set(), [v]
    while todo:
        b = underlying(fn, todo.pop())
        if b in seen:
            continue
        seen.add(b)
        d = fn.defs.get(b)
        op = getattr(d, "op", None)
        if op in ("phi", "select"):
            todo += [o.value for o in (d.ops[1:] if op == "select" else d.ops)]
        elif op != "alloca" or d.ops:
            return False
    return True
