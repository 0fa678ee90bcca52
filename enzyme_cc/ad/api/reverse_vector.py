"""Reverse vector mode: `__enzyme_autodiff(f, enzyme_width, N, ...)`, N adjoint seeds at once.

One augmented forward sweep runs the primal once and fills the tape; then one run of the lane-fused
reverse function carries all N lanes' adjoints (`lane_fusion.py`), or, where that is refused, the
reverse sweep runs N times on that tape (its top restored after each, as `enzyme_nofree` does),
lane k with the k-th shadows. This is exact when the forward sweep keeps nothing that belongs to
one lane (the shadows of fixed-size locals have a copy per lane: `lane_fusion.lane_room`):
`lane_hazard` (computed per split function, callees included) names what would be lane 0's
(shadow pointers taped in the forward sweep, shadows of allocations, pointers written into
shadow memory, shadow globals, library calls with their own tapes); such requests are refused.

Arguments, as Enzyme's: a float is active (its N adjoints are returned), `enzyme_dup, p, dp_1,
..., dp_N` or `enzyme_dupv, stride, p, dp` (lane k's shadow at dp + k*stride bytes), `enzyme_const,
v`. A float result is seeded with 1.0 in every lane. The result is Enzyme's `{[N x T] per active
argument}`, packed into the declared return type in that order.
"""
from __future__ import annotations

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, float_cast, one_of
from ..structure.diagnostics import declared_name, located, source_of
from . import lane_fusion
from .lane_fusion import local_shadow
from ..analysis.activity_basics import ALLOCATORS, has_shadow_type
from .checkpoint import is_wrapper
from ..analysis.copy_types import copy_ranges
from .marker_args import _marker_of, constant_width
from .marker_values import TAPE_HEADER_BYTES, _extract, _leaves, _pack
from enzyme_cc.rules.call_kinds import kind_of
from ..parallel.openmp import FORK_PREFIX

_ALLOWED_KINDS = ("rule", "libm_out", "inactive", "diff", "memset", "unknown")


def lane_hazard(synth) -> str | None:
    """What in synth's split pair belongs to lane 0 only (None: nothing)."""
    ckpt = {i.line for i in synth.fn.insts() if i.op == "call" and is_wrapper(i.callee)}
    for plan in synth.plan.values():
        for (kind, v), how in plan:
            if kind == "ctape" and v not in ckpt:    # a checkpointed loop's run is reversed again
                return _ctape_hazard(synth.fn, v)
            if kind == "s" and isinstance(v, str) and v.startswith("%") and how in ("tape", "slot", "hoist", "iter") \
                    and not local_shadow(synth.fn, v):
                return _shadow_hazard(synth, v)
    if synth.act.global_shadows:
        return "a global with a shadow (one shadow, not one per lane)"
    for inst in synth.fn.insts():
        # the forward sweep writes shadow pointers (lane 0's) only through these
        if inst.op == "store" and inst.ops[1].value in synth.act.shadowed and \
                (has_shadow_type(inst.ops[0].ty) or inst.ops[0].value in synth.act.ptrint):
            return f"a pointer stored into memory with a shadow ({inst})"
        if inst.op in ("call", "invoke") and kind_of(synth.gen, inst) == "memcpy" and \
                len(inst.ops) >= 3 and inst.ops[0].value in synth.act.shadowed and \
                inst.ops[1].value in synth.act.shadowed:
            # (not gen.copy_ranges: an unknown type here is a hazard, not an error of its own)
            ranges = copy_ranges(synth.gen.module, synth.fn, inst, synth.types) or [(0, 0, None)]
            if any(k in ("ptr", None) for _, _, k in ranges):
                return f"pointers copied into memory with a shadow ({inst})"
        if inst.op in ("call", "invoke") and inst.callee:
            kind = kind_of(synth.gen, inst)
            involved = any(o.value in synth.act.shadowed or o.value in synth.act.active
                           for o in inst.ops) or (inst.name in synth.act.shadowed)
            if kind == "memcpy" and len(inst.ops) >= 3 and \
                    all(o.value in synth.act.shadowed for o in inst.ops[:2]):
                continue     # float data: the forward sweep leaves the shadows (pointers: above)
            if involved and kind not in _ALLOWED_KINDS:
                return f"a call of '{inst.callee[1:]}' ({kind})"
    return None


def _shadow_hazard(synth, v: str) -> str:
    """What a shadow the forward sweep makes (one lane's) is, for the message: a heap block's
    with the allocation's source line, else the value's."""
    d = synth.fn.defs.get(v)
    src = source_of(synth.gen.module, getattr(d, "md", {}).get("!dbg"))
    at = f" ({src})" if src else ""
    if getattr(d, "op", None) in ("call", "invoke") and d.callee in ALLOCATORS:
        return (f"a heap block allocated by '{d.callee[1:]}'{at}, whose shadow the forward "
                "sweep allocates once (one lane's)")
    name = declared_name(synth.gen.module, synth.fn.name, v)
    if getattr(d, "op", None) == "alloca" and name:
        return (f"the local '{name}'{at}, whose shadow the forward sweep allocates once (one "
                "lane's)")
    return f"the shadow of '{v}'{at} is made by the forward sweep"


def _ctape_hazard(fn, line) -> str:
    """What a call whose reverse reads its own tape is, for the message."""
    call = next((i for i in fn.insts() if i.line == line), None)
    if call is not None and (call.callee or "").startswith(FORK_PREFIX):
        return ("an OpenMP parallel region (its reverse reads what each thread's forward sweep "
                "taped, for one lane)")
    return "a library call whose reverse reads data the forward sweep copied"


def split_tree(gen, key, seen=None):
    """The split pair `key` and every split pair it calls, depth first, each once."""
    seen = seen if seen is not None else set()
    if key in seen:
        return
    seen.add(key)
    yield key
    for c in gen.split_info.get(key, (None, ()))[1]:
        yield from split_tree(gen, c, seen)


def hazard_of(gen, key) -> str | None:
    """The hazard of a generated split pair or of any split function it calls."""
    for k in split_tree(gen, key):
        own = gen.split_info.get(k, (None, ()))[0]
        if own:
            return f"'{k[0][1:]}': {own}"
    return None


def parse(module, caller, inst, target, ops, where, opts):
    """ops: [fn, enzyme_width, N, args...] -> (width, acts, lanes of (type, value, pre) argument
    lists: lane k's shadows), each lane's list being the split functions' arguments."""
    width = constant_width(ops, where)
    if opts.get("primal"):
        raise UserError(f"{where}: enzyme_primal_return with enzyme_width in __enzyme_autodiff is "
                        "not supported; hint: compute the primal with a plain call")
    lanes = [[] for _ in range(width)]
    pre, acts, k = [], [], 3
    name = target.name[1:]
    for p in target.params:
        tag = _marker_of(caller, ops[k].value) if k < len(ops) else None
        if tag:
            k += 1
        if k >= len(ops):
            raise UserError(f"{where}: too few arguments to __enzyme_autodiff for '{name}' "
                            f"(parameter {len(acts) + 1} missing)")
        if tag is None:
            tag = "enzyme_dup" if p.ty == "ptr" else "enzyme_out" if is_fp(p.ty) else "enzyme_const"
        if tag in ("enzyme_dupv", "enzyme_dupnoneedv") and p.ty == "ptr":
            if k + 2 >= len(ops):
                raise UserError(f"{where}: {tag} needs a byte stride, the pointer and its shadows")
            stride, val, base = ops[k], ops[k + 1], ops[k + 2]
            k += 3
            for lane in range(width):
                off, sh = f"%ad.rvo{inst.line}.{len(acts)}.{lane}", f"%ad.rvs{inst.line}.{len(acts)}.{lane}"
                pre.append(f"{off} = mul {stride.ty} {stride.value}, {lane}")
                if stride.ty != "i64":
                    pre.append(f"{off}.w = sext {stride.ty} {off} to i64")
                    off += ".w"
                pre.append(f"{sh} = getelementptr i8, ptr {base.value}, i64 {off}")
                lanes[lane] += [("ptr", val.value), ("ptr", sh)]
            acts.append("dup")
        elif tag in ("enzyme_dup", "enzyme_dupnoneed") and p.ty == "ptr":
            val, shadows = ops[k], ops[k + 1:k + 1 + width]
            if len(shadows) != width:
                raise UserError(f"{where}: parameter {len(acts) + 1} of '{name}' needs {width} "
                                f"shadows (enzyme_width {width})")
            k += 1 + width
            for lane in range(width):
                lanes[lane] += [("ptr", val.value), ("ptr", shadows[lane].value)]
            acts.append("dup")
        elif tag in ("enzyme_out", "enzyme_active") and is_fp(p.ty):
            val = _same_type(pre, ops[k], p.ty, inst, len(acts))     # one value for every lane
            for lane in range(width):
                lanes[lane].append((p.ty, val))
            k += 1
            acts.append("active")
        elif tag == "enzyme_const":
            val = _same_type(pre, ops[k], p.ty, inst, len(acts))
            for lane in range(width):
                lanes[lane].append((p.ty, val))
            k += 1
            acts.append("const")
        else:
            raise UserError(f"{where}: '{tag}' is not valid for parameter {len(acts) + 1} of "
                            f"'{name}' ({p.ty}) in reverse vector mode")
    if k != len(ops):
        raise UserError(f"{where}: too many arguments to __enzyme_autodiff for '{name}' "
                        f"({len(ops) - 1} given)")
    return width, acts, lanes, pre


def _same_type(pre, op, ty, inst, idx):
    if op.ty == ty:
        return op.value
    t = f"%ad.rvc{inst.line}.{idx}"
    if is_fp(op.ty) and is_fp(ty):
        pre.append(f"{t} = {float_cast(op.ty, ty)} {op.ty} {op.value} to {ty}")
    elif op.ty.startswith("i") and ty.startswith("i"):
        pre.append(f"{t} = {'sext' if int(op.ty[1:]) < int(ty[1:]) else 'trunc'} {op.ty} "
                   f"{op.value} to {ty}")
    else:
        raise UserError(f"cannot pass a {op.ty} argument as {ty}")
    return t


def rewrite(gen, req, names) -> list[str]:
    """The augmented forward once, then the lane-fused reverse once (or, where fusion is refused,
    the reverse once per lane on the same tape)."""
    aug, aug_ret, rev, rev_ret = names
    inst, lines, n = req.inst, list(req.vector_pre), [0]
    where = located(gen.module, req.caller, inst)
    hazard = hazard_of(gen, req.split_key)
    if hazard:
        raise UserError(f"{where}: enzyme_width in __enzyme_autodiff runs one forward sweep and "
                        f"{req.width} reverse sweeps, which needs a forward sweep that keeps "
                        f"nothing of one lane, but {hazard}; hint: call __enzyme_autodiff once "
                        "per seed, or use __enzyme_fwddiff with enzyme_width")

    def tmp():
        n[0] += 1
        return f"%ad.rw{req.line}.{n[0]}"
    gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
    gen.declare_raw("@free", "declare void @free(ptr)")
    h = tmp()
    lines += [f"{h} = call ptr @malloc(i64 {TAPE_HEADER_BYTES})",
              f"call void @__enzyme_cc_tape_start(ptr {h})"]
    first = ", ".join(f"{t} {v}" for t, v in req.lanes[0])
    call = f"call {aug_ret} {aug}({first}, ptr {h})" if first else f"call {aug_ret} {aug}(ptr {h})"
    lines.append(call if aug_ret == "void" else f"{tmp()} = {call}")
    ret = gen.module.function(req.fn).ret_ty
    dret = [(ret, one_of(ret))] if req.ret_active else []
    fused = lane_fusion.fuse(gen, rev, rev_ret, req.width, _lane_params(req.acts))
    if fused:
        per_lane = _fused_call(req, lines, tmp, fused, rev_ret, dret, h)
    else:
        per_lane = _lanes_in_turn(req, lines, tmp, rev, rev_ret, dret, h)
    lines += [f"call void @__enzyme_cc_tape_end(ptr {h})", f"call void @free(ptr {h})"]
    # Enzyme's layout: each active argument's N adjoints together
    vals = [per_lane[lane][j] for j in range(len(per_lane[0])) for lane in range(req.width)]
    lines = _pack(gen, req, lines, tmp, vals, "adjoints")
    if inst.op == "invoke":
        lines.append(f"br label {inst.targets[0]}")
    return lines


def _lane_params(acts) -> set[int]:
    """Indices of the split functions' parameters that differ per lane: the shadows."""
    out, k = set(), 0
    for a in acts:
        if a == "dup":
            out.add(k + 1)
        k += 2 if a == "dup" else 1
    return out


def _leaf_values(lines, tmp, rev_ret, value) -> list:
    """[(value, type)] of the float leaves of one lane's reverse result."""
    return [(_extract(lines, tmp, rev_ret, value, p), t) for p, t in _leaves(rev_ret)]


def _fused_call(req, lines, tmp, fused, rev_ret, dret, h):
    """One call of the fused reverse (lane_fusion.py): every lane in one run."""
    name, ret = fused
    lane_params = sorted(_lane_params(req.acts))
    extra = [req.lanes[lane][i] for lane in range(1, req.width) for i in lane_params]
    args = ", ".join(f"{t} {v}" for t, v in req.lanes[0] + dret + [("ptr", h)] + extra)
    if ret == "void":
        lines.append(f"call void {name}({args})")
        return [[] for _ in range(req.width)]
    r = tmp()
    lines.append(f"{r} = call {ret} {name}({args})")
    per_lane = []
    for lane in range(req.width):
        one = tmp()
        lines.append(f"{one} = extractvalue {ret} {r}, {lane}")
        per_lane.append(_leaf_values(lines, tmp, rev_ret, one))
    return per_lane


def _lanes_in_turn(req, lines, tmp, rev, rev_ret, dret, h):
    """The reverse once per lane on the same tape, its top restored after each."""
    per_lane = []
    for lane in range(req.width):
        top = tmp()
        lines.append(f"{top} = call i64 @__enzyme_cc_tape_top(ptr {h})")
        args = ", ".join(f"{t} {v}" for t, v in req.lanes[lane] + dret + [("ptr", h)])
        if rev_ret == "void":
            lines.append(f"call void {rev}({args})")
            per_lane.append([])
        else:
            r = tmp()
            lines.append(f"{r} = call {rev_ret} {rev}({args})")
            per_lane.append(_leaf_values(lines, tmp, rev_ret, r))
        lines.append(f"call void @__enzyme_cc_tape_settop(ptr {h}, i64 {top})")
    return per_lane
