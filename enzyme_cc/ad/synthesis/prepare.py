"""Preprocessing of a function before synthesis (on our private copy; the primal is untouched).

Exception edges: an `invoke` becomes a call followed by a branch to its normal destination, and the
landing-pad code, now unreachable, is dropped. If the callee throws while a gradient runs, the
exception leaves the gradient function: derivatives of exceptional paths are not computed
(seeds/001, section 2, "Limitations").
"""
from enzyme_cc.ir.model import parse_inst
import re

from ..structure.float_bits import rewrite_sign_bits
from ..structure.poison_lanes import define_poison_lanes

from enzyme_cc.ir.lexer import join, tokenize, parse_type, parse_value, type_size, \
    type_align
from ..tape.complex_libm import COMPLEX
from ..structure.type_layout import decompose
from ..structure.cfg import dominators


def prepare(fn, module=None):
    if getattr(fn, "_prepared", False):
        return fn
    if module is not None:
        _materialize_global_geps(fn, module)
        _resolve_global_callees(fn, module)
    for inst in fn.insts():
        if inst.op in ("call", "invoke") and inst.callee in COMPLEX:
            new = COMPLEX[inst.callee][0]
            inst.toks = [new if t == inst.callee else t for t in inst.toks]
            inst.callee = new
    for b in fn.blocks:
        t = b.term
        if t.op == "invoke":
            toks = list(t.toks)
            k = toks.index("invoke")
            cut = len(toks) - 1 - toks[::-1].index("to")
            normal = t.targets[0]
            call = parse_inst(join(toks[:k] + ["call"] + toks[k + 1:cut]))
            call.line, call.md = t.line, t.md
            br = parse_inst(f"br label {normal}")
            br.line = t.line
            b.insts[-1:] = [call, br]
    fn.index()
    _forward_stored_pointers(fn)
    rewrite_sign_bits(fn, module)
    define_poison_lanes(fn)
    _reduce_critical(fn)
    reach, todo = set(), [fn.blocks[0].label]
    while todo:
        lab = todo.pop()
        if lab in reach:
            continue
        reach.add(lab)
        todo.extend(fn.block(lab).term.targets)
    if len(reach) != len(fn.blocks):
        fn.blocks = [b for b in fn.blocks if b.label in reach]
        for b in fn.blocks:
            for i, inst in enumerate(b.insts):
                if inst.op == "phi" and any(lab not in reach for _, lab in inst.incoming):
                    inc = [(v, lab) for v, lab in inst.incoming if lab in reach]
                    flags = " ".join(inst.flags)
                    text = f"{inst.name} = phi {flags} {inst.ty} " + ", ".join(
                        f"[ {v}, {lab} ]" for v, lab in inc)
                    new = parse_inst(text)
                    new.line, new.md = inst.line, inst.md
                    b.insts[i] = new
        fn.index()
    # unique predecessors (a switch or br may name the same successor twice)
    for b in fn.blocks:
        seen, uniq = set(), []
        for p in b.preds:
            if p.label not in seen:
                seen.add(p.label)
                uniq.append(p)
        b.preds = uniq
    fn._prepared = True
    return fn


def _forward_stored_pointers(fn):
    """`store double %a, ptr %s; store ptr %p, ptr %s+8; %v = load <2 x double>, ptr %s` and
    later `inttoptr (extractelement (bitcast %v to <2 x i64>), 1)`: SROA's view of a small
    record (Eigen's scalar times a mapped vector) as one vector register. The pointer lane is
    the stored pointer itself: it becomes `getelementptr i8, ptr %p, i64 0`, whose shadow is
    %p's, where an address rebuilt from float data would have none."""
    dom: dict = {}                       # the dominators, computed once if a lane needs them
    for b in fn.blocks:
        for k, inst in enumerate(b.insts):
            if inst.op != "inttoptr" or not inst.ops[0].is_local:
                continue
            src = _stored_pointer_lane(fn, inst.ops[0].value, dom)
            if src is None:
                continue
            new = parse_inst(f"{inst.name} = getelementptr i8, ptr {src}, i64 0")
            new.line, new.line_end, new.md = inst.line, inst.line_end, inst.md
            new.block = b
            b.insts[k] = new
            fn.defs[inst.name] = new


def _loaded_lane(fn, v):
    """(the load, the byte offset) of the 8 bytes the i64 v takes from a vector loaded from
    memory: a lane extracted from it viewed as i64s, or bits shifted down from it viewed as one
    wide integer (SROA's <8 x float> holding an Eigen evaluator's float and pointer)."""
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if op == "extractelement" and len(d.ops) >= 2 and d.ops[1].value.isdigit():
        vec, lanes64 = fn.defs.get(d.ops[0].value), r"<\s*\d+\s*x\s*(i64|double|ptr)\s*>"
        if getattr(vec, "op", None) == "bitcast" and re.fullmatch(lanes64, vec.ty or ""):
            vec, lanes64 = fn.defs.get(vec.ops[0].value), r"<.*>"   # (<4 x float> as <2 x i64>)
        if getattr(vec, "op", None) == "load" and re.fullmatch(lanes64, vec.ty or ""):
            return vec, 8 * int(d.ops[1].value)
        return None
    if op != "trunc" or d.ty != "i64":
        return None
    wide, off = fn.defs.get(d.ops[0].value), 0
    if getattr(wide, "op", None) == "lshr" and not wide.ops[1].is_local and \
            wide.ops[1].value.isdigit() and int(wide.ops[1].value) % 8 == 0:
        off = int(wide.ops[1].value) // 8
        wide = fn.defs.get(wide.ops[0].value)
    if getattr(wide, "op", None) != "bitcast" or not re.fullmatch(r"i\d+", wide.ty or ""):
        return None
    vec = fn.defs.get(wide.ops[0].value)
    if getattr(vec, "op", None) != "load" or not (vec.ty or "").startswith("<"):
        return None
    return vec, off


def _stored_pointer_lane(fn, v, dom):
    """The pointer stored into the 8 bytes that the i64 v takes from a vector loaded from a
    local slot (_loaded_lane): the last write of those bytes before the load in its block, else
    the slot's only write of them where it dominates the load (SROA's record set up before the
    loop that reads it)."""
    found = _loaded_lane(fn, v)
    if found is None:
        return None
    vec, lane = found
    slot = vec.ops[0].value
    if getattr(fn.defs.get(slot), "op", None) != "alloca":
        return None
    insts = vec.block.insts
    for i in reversed(insts[:insts.index(vec)]):      # the last write of the lane decides
        if i.op == "store":
            off = _slot_offset(fn, i.ops[1].value, slot)
            if off is None:
                if _may_alias_slot(fn, i.ops[1].value, slot):
                    break            # (unless the slot's address goes nowhere: below)
            elif off == lane:
                return i.ops[0].value if i.ops[0].ty == "ptr" and i.ops[0].is_local else None
            elif off < lane + 8 and lane < off + _size(i.ops[0].ty):
                return None              # a wider or overlapping store covers the lane
        elif i.op in ("call", "invoke") and not (i.callee or "").startswith("@llvm.lifetime"):
            break                    # (the slot's one store, if its address goes nowhere)
    return _only_lane_store(fn, slot, lane, vec, dom)


def _only_lane_store(fn, slot, lane, load, dom):
    """The pointer of the slot's one store to the 8 bytes at offset lane, when the slot's
    address goes nowhere but into loads, stores and lifetime markers, the store dominates the
    load, and no path from the store to the load makes a new pointer without storing it. dom:
    the function's dominators, filled on first use."""
    addrs, found = {slot}, []
    for i in fn.insts():
        if i.op == "getelementptr" and i.ops[0].value == slot:
            if _slot_offset(fn, i.name, slot) is None:
                return None
            addrs.add(i.name)
    for i in fn.insts():
        used = [k for k, o in enumerate(i.ops) if o.value in addrs]
        if not used or i.op == "getelementptr" and i.ops[0].value == slot:
            continue
        if i.op == "load" or i.op == "call" and (i.callee or "").startswith("@llvm.lifetime"):
            continue
        if i.op != "store" or used != [1]:
            return None                          # the address escapes, or is stored
        off = _slot_offset(fn, i.ops[1].value, slot)
        if off < lane + 8 and lane < off + _size(i.ops[0].ty):
            found.append(i)
    if len(found) != 1 or _slot_offset(fn, found[0].ops[1].value, slot) != lane:
        return None
    store = found[0]
    p = store.ops[0]
    d = fn.defs.get(p.value)
    if p.ty != "ptr" or not p.is_local:
        return None
    if store.block is load.block:
        ins = store.block.insts
        return p.value if ins.index(store) < ins.index(load) else None
    if getattr(d, "block", None) not in (None, store.block) and \
            _redefined_between(fn, store.block.label, d.block.label, load.block.label):
        return None
    if not dom:
        dom.update(dominators(fn))
    return p.value if store.block.label in dom[load.block.label] else None


def _redefined_between(fn, store: str, define: str, load: str) -> bool:
    """Some path from block `store` to block `load` runs block `define` again without
    passing `store` (the slot would hold the previous pointer)."""
    def reach(starts):
        seen, todo = set(), list(starts)
        while todo:
            lab = todo.pop()
            if lab not in seen and lab != store:
                seen.add(lab)
                todo.extend(fn.block(lab).term.targets)
        return seen
    return define in reach(fn.block(store).term.targets) and \
        load in reach(fn.block(define).term.targets) | {define}


def _slot_offset(fn, ptr, slot):
    """The constant byte offset of ptr into alloca slot (ptr itself: 0), else None."""
    if ptr == slot:
        return 0
    d = fn.defs.get(ptr)
    if getattr(d, "op", None) == "getelementptr" and d.src_ty == "i8" and len(d.ops) == 2 and \
            d.ops[0].value == slot and d.ops[1].value.lstrip("-").isdigit():
        return int(d.ops[1].value)
    return None


def _may_alias_slot(fn, ptr, slot):
    """A store through ptr may write alloca slot unless ptr is another alloca."""
    return getattr(fn.defs.get(ptr), "op", None) != "alloca"


def _size(ty):
    try:
        return type_size(ty)
    except ValueError:
        return 1 << 30


def _reduce_critical(fn):
    """Derivatives run OpenMP reductions on libomp's critical method (ad/parallel/openmp.py: the reduce
    call answers 1): the switch on its answer goes to the critical-method block, and the
    atomic-method block (compare-and-swap loops for * and max) drops out as unreachable."""
    for b in fn.blocks:
        t = b.term
        d = fn.defs.get(t.ops[0].value) if t.op == "switch" and t.ops else None
        if getattr(d, "op", None) != "call" or d.callee not in ("@__kmpc_reduce",
                                                                "@__kmpc_reduce_nowait"):
            continue
        toks = t.toks
        k = next((k for k in range(toks.index("[") + 1, len(toks) - 1)
                  if toks[k] == "1" and toks[k - 1] == t.ops[0].ty), None)
        target = next(x for x in toks[k:] if x.startswith("%")) if k is not None else \
            t.targets[0]
        br = parse_inst(f"br label {target}")
        br.line, br.md = t.line, t.md
        b.insts[-1] = br
    fn.index()


def _materialize_global_geps(fn, module):
    """`store double %v, ptr getelementptr (i8, ptr @g, i64 56)`: a constant-expression address
    into a mutable global becomes a GEP instruction before its user, so the address gets a
    shadow (the same offset into the global's shadow) like any other pointer."""
    n = 0
    for b in fn.blocks:
        out = []
        for inst in b.insts:
            if inst.op != "phi":
                for o in list(inst.ops):
                    toks = o.value.split(" ")
                    gs = [t for t in toks if t.startswith("@")]
                    if toks[0] != "getelementptr" or "(" not in toks or len(gs) != 1 or \
                            gs[0] not in module.globals or module.is_constant_global(gs[0]):
                        continue
                    k = toks.index("(")
                    if toks[-1] != ")" or "(" in toks[k + 1:]:
                        continue                  # nested constant expressions stay as they are
                    n += 1
                    name = f"%ad.ce.{n}"
                    gep = parse_inst(f"{name} = " + join(toks[:k] + toks[k + 1:-1]))
                    gep.line, gep.line_end = inst.line, inst.line
                    out.append(gep)
                    itoks = list(inst.toks)
                    for j in range(len(itoks) - len(toks) + 1):
                        if itoks[j:j + len(toks)] == toks:
                            itoks[j:j + len(toks)] = [name]
                            break
                    new = parse_inst(join(itoks))
                    new.line, new.line_end, new.md = inst.line, inst.line_end, inst.md
                    inst = new
            out.append(inst)
        b.insts = out
    if n:
        fn.index()


def _resolve_global_callees(fn, module):
    """`call %fp(...)` with %fp loaded from a global whose initializer holds a known function at
    that offset, and which no instruction of the (whole-program) module ever writes or lets
    escape: the call is a direct call of that function (a table of allocator/deallocator
    pointers, Enzyme's metamalloc test). Rules then apply to it (malloc, free, ...)."""
    changed = False
    for inst in fn.insts():
        if inst.op not in ("call", "invoke") or not (inst.callee or "").startswith("%"):
            continue
        d = fn.defs.get(inst.callee)
        if getattr(d, "op", None) != "load" or d.ty != "ptr":
            continue
        base, off = decompose(module, fn, d.ops[0].value)
        if off is None or not base.startswith("@") or not _read_only_global(module, base):
            continue
        target = global_init_at(module, base, off)
        if target is None or not target.startswith("@") or target in module.globals:
            continue
        inst.toks = [target if t == inst.callee else t for t in inst.toks]
        inst.callee = target
        changed = True
    if changed:
        fn.index()


def _read_only_global(module, g) -> bool:
    """The global is constant, or every use of it in the module is the address of a load."""
    if module.is_constant_global(g):
        return True
    cache = module.__dict__.setdefault("_read_only_globals", {})
    if g not in cache:
        pat = re.compile(re.escape(g) + r"(?![-\w.$])")
        ok = True
        for line in module.text.split("\n"):
            if not pat.search(line) or line.startswith(g + " ") or line.startswith(g + "="):
                continue
            body = line.split("=", 1)[1].strip() if "=" in line.split("load", 1)[0] else ""
            if not body.startswith("load "):
                ok = False
                break
            toks = tokenize(body)
            k = toks.index(",") if "," in toks else len(toks)
            if any(pat.fullmatch(t) for t in toks[:k]) or sum(bool(pat.fullmatch(t))
                                                               for t in toks) != 1:
                ok = False            # named in the loaded type or more than once
                break
        cache[g] = ok
    return cache[g]


def global_init_at(module, g, off):
    """The scalar initializer value at byte offset `off` of global g, or None."""
    toks = tokenize(module.globals.get(g, ""))
    for k, t in enumerate(toks):
        if t in ("global", "constant"):
            try:
                ty, j = parse_type(toks, k + 1)
                val, _ = parse_value(toks, j)
                return _init_at(module.named_types, ty, val, off)
            except (ValueError, IndexError):
                return None
    return None


def _init_at(named, ty, val, off):
    ty = named.get(ty.strip(), ty).strip()
    if val in ("zeroinitializer", "null", "undef", "poison"):
        return None
    if ty.startswith(("{", "<{", "[")):
        toks = tokenize(val)
        if toks[0] not in ("{", "<", "["):
            return None
        i, end = (2, len(toks) - 2) if toks[0] == "<" else (1, len(toks) - 1)
        items = []
        while i < end:
            fty, i = parse_type(toks, i)
            fval, i = parse_value(toks, i)
            items.append((fty, fval))
            if i < end and toks[i] == ",":
                i += 1
        pos = 0
        for fty, fval in items:
            if not ty.startswith(("<{", "[")):
                a = type_align(fty, named)
                pos = (pos + a - 1) // a * a
            size = type_size(fty, named)
            if pos <= off < pos + size:
                return _init_at(named, fty, fval, off - pos)
            pos += size
        return None
    return val if off == 0 else None
