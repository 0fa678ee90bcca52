"""Enzyme's marker calls (`__enzyme_autodiff(fn, [enzyme_dup, x, dx], ...)`) -> derivative requests,
and the rewrite of each call into a call of the generated function."""
from __future__ import annotations

import re
from dataclasses import dataclass

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, tokenize, parse_type, split_fields, float_cast
from .diagnostics import located

MARKERS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const", "enzyme_out", "enzyme_active",
           "enzyme_width", "enzyme_dupv", "enzyme_dupnoneedv", "enzyme_allocated", "enzyme_tape",
           "enzyme_nofree", "enzyme_primal_return", "enzyme_const_return", "enzyme_noret")
_AUTODIFF = re.compile(r"@\"?[\w.$]*__enzyme_(autodiff|fwddiff|augmentfwd|reverse|augmentsize)"
                       r"[\w.$]*\"?\(")
_ANY_MARKER = re.compile(r"@\"?[\w.$]*__enzyme_(batch)[\w.$]*\"?\(")
# marker function -> request mode
MODES = (("__enzyme_autodiff", "reverse"), ("__enzyme_fwddiff", "forward"),
         ("__enzyme_augmentfwd", "augment"), ("__enzyme_reverse", "split_reverse"),
         ("__enzyme_augmentsize", "tape_size"))


@dataclass
class Request:
    caller: object
    inst: object
    fn: str                    # '@f'
    acts: list[str]
    args: list[tuple[str, str]]     # (type, value) for the generated function's parameters
    ret_active: bool
    line: int
    sret: tuple[str, str] | None    # (type, pointer) when the marker returns through sret
    mode: str = "reverse"           # 'reverse' (__enzyme_autodiff) or 'forward' (__enzyme_fwddiff)


def _marker_of(caller, value: str) -> str | None:
    if value.startswith("@"):
        name = value[1:].strip('"')
        return name if name in MARKERS else None
    d = caller.defs.get(value)
    if d is not None and getattr(d, "op", None) == "load" and d.ops[0].value.startswith("@"):
        name = d.ops[0].value[1:].strip('"')
        return name if name in MARKERS else None
    return None


def find_requests(module) -> list[Request]:
    _NAMED.clear()
    _NAMED.update(module.named_types)
    out = []
    for name, (start, end) in module._bodies.items():
        body = "\n".join(module._lines[start:end])
        if _ANY_MARKER.search(body):
            caller = module.function(name)
            inst = next((i for i in caller.insts() if i.op in ("call", "invoke")
                        and "__enzyme_batch" in (i.callee or "")), None)
            raise UserError(f"{located(module, caller, inst)}: __enzyme_batch (vectorizing the "
                            "primal) is not supported; hint: call the function in a loop, or use "
                            "__enzyme_fwddiff with enzyme_width for several tangent directions")
        if not _AUTODIFF.search(body):
            continue
        caller = module.function(name)
        for inst in caller.insts():
            if inst.op in ("call", "invoke") and inst.callee:
                mode = next((m for f, m in MODES if f in inst.callee), None)
                if mode:
                    out.append(_request(module, caller, inst, mode))
    return out


def _request(module, caller, inst, mode) -> Request:
    where = located(module, caller, inst)
    marker = next(f for f, m in MODES if m == mode)
    ops = list(inst.ops)
    sret = None
    if "sret" in inst.toks:
        k = inst.toks.index("sret")
        sty, _ = parse_type(inst.toks, k + 2)
        sret = (sty, ops[0].value)
        ops = ops[1:]
    if not ops:
        raise UserError(f"{where}: __enzyme_autodiff needs the function to differentiate")
    fn_val = ops[0].value
    if not fn_val.startswith("@"):
        raise UserError(f"{where}: the first argument of {inst.callee[1:]} must be a function known "
                        f"at compile time, got '{fn_val}'; hint: pass the function itself, e.g. "
                        "(void *)f, not a pointer chosen at run time")
    target = module.function(fn_val)
    if target is None:
        raise UserError(f"{where}: function '{fn_val[1:]}' has no bitcode; hint: build the object "
                        "that defines it with enzyme-cc (or enzyme-fc)")
    if mode == "tape_size":
        for o in ops[1:]:
            if _marker_of(caller, o.value) is None:
                raise UserError(f"{where}: __enzyme_augmentsize takes the function and activity "
                                f"markers only (enzyme_dup, enzyme_const, ...), got '{o.value}'")
        return Request(caller, inst, fn_val, [], [], False, inst.line, sret, mode)
    if mode == "forward" and len(ops) > 2 and _marker_of(caller, ops[1].value) == "enzyme_width":
        return _vector_request(module, caller, inst, target, ops, where, sret)
    acts, args, k = [], [], 1
    opts: dict = {}
    for p in target.params:
        k = _split_options(caller, ops, k, opts, mode, where, marker)
        if p.ty == "...":
            raise UserError(f"{where}: cannot differentiate variadic function '{fn_val[1:]}'")
        tag = None
        if k < len(ops):
            tag = _marker_of(caller, ops[k].value)
            if tag:
                k += 1
        if tag in ("enzyme_width", "enzyme_dupv", "enzyme_dupnoneedv", "enzyme_primal_return",
                   "enzyme_const_return", "enzyme_noret"):
            raise UserError(f"{where}: '{tag}' is not supported yet in {marker}")
        if k >= len(ops):
            raise UserError(f"{where}: too few arguments to {marker} for "
                            f"'{fn_val[1:]}' (parameter {len(acts) + 1} of {len(target.params)} missing); "
                            "hint: pass every parameter of the function, each pointer followed by "
                            "its shadow unless marked enzyme_const")
        val = ops[k]
        k += 1
        if tag is None:
            tag = "enzyme_dup" if p.ty == "ptr" else "enzyme_out" if is_fp(p.ty) else "enzyme_const"
            if mode == "forward" and is_fp(p.ty):
                tag = "enzyme_dup"
        if mode == "forward" and is_fp(p.ty) and tag in ("enzyme_dup", "enzyme_dupnoneed", "enzyme_out"):
            if tag == "enzyme_out":
                raise UserError(f"{where}: enzyme_out is not valid in __enzyme_fwddiff; pass the "
                                "value and its tangent (enzyme_dup)")
            args.append((p.ty, val))
            if k >= len(ops):
                raise UserError(f"{where}: missing tangent for parameter {len(acts) + 1} of "
                                f"'{fn_val[1:]}'")
            args.append((p.ty, ops[k]))
            k += 1
            acts.append("active")
            continue
        act = {"enzyme_dup": "dup", "enzyme_dupnoneed": "dupnoneed", "enzyme_const": "const",
               "enzyme_out": "active", "enzyme_active": "active"}[tag]
        if mode == "forward" and act == "dupnoneed":
            act = "dup"                # forward mode computes the primal result anyway
        if act == "active" and not is_fp(p.ty):
            raise UserError(f"{where}: parameter {len(acts) + 1} of '{fn_val[1:]}' has type {p.ty}, "
                            "which cannot be active (enzyme_out); hint: use enzyme_const or enzyme_dup")
        if act in ("dup", "dupnoneed") and p.ty != "ptr" and not is_fp(p.ty):
            raise UserError(f"{where}: parameter {len(acts) + 1} of '{fn_val[1:]}' has type {p.ty}; "
                            "enzyme_dup needs a pointer")
        args.append((p.ty, val))
        if act in ("dup", "dupnoneed"):
            if k >= len(ops):
                raise UserError(f"{where}: missing shadow for parameter {len(acts) + 1} of "
                                f"'{fn_val[1:]}'")
            args.append(("ptr", ops[k]))
            k += 1
        acts.append(act)
    ret_active = is_fp(target.ret_ty)
    extra = []
    k = _split_options(caller, ops, k, opts, mode, where, marker)
    if mode == "split_reverse":
        # then the derivative of the return value (active float returns), then the tape
        if ret_active:
            if k < len(ops) and _marker_of(caller, ops[k].value) is None:
                extra.append(("dret", target.ret_ty, ops[k]))
                k += 1
            else:
                raise UserError(f"{where}: {marker} needs the derivative of the return value of "
                                f"'{fn_val[1:]}' before the tape")
        k = _split_options(caller, ops, k, opts, mode, where, marker)
        if "tape" not in opts:
            if k >= len(ops) or ops[k].ty != "ptr":
                raise UserError(f"{where}: {marker} needs the tape returned by __enzyme_augmentfwd "
                                "as its last argument (or enzyme_tape, tape)")
            opts["tape"] = ops[k]
            k += 1
            k = _split_options(caller, ops, k, opts, mode, where, marker)
        extra.append(("tape", "ptr", opts["tape"]))
    if "allocated" in opts and "tape" not in opts:
        raise UserError(f"{where}: enzyme_allocated needs the tape's memory: pass "
                        "enzyme_tape, buffer (a buffer of __enzyme_augmentsize bytes)")
    if k != len(ops):
        raise UserError(f"{where}: too many arguments to {marker} for '{fn_val[1:]}' "
                        f"({len(ops) - 1} given); hint: mark arguments that have no shadow "
                        "with enzyme_const")
    req = Request(caller, inst, fn_val, acts, args, ret_active, inst.line, sret, mode)
    req.extra = extra
    req.opts = opts
    return req


# Our tape is a header {data, top, capacity} (ad/runtime.py) over a growing byte stack; a caller-
# allocated tape (enzyme_allocated) holds that header, so its size does not depend on the function.
TAPE_HEADER_BYTES = 32


def _split_options(caller, ops, k, opts, mode, where, marker) -> int:
    """Consume `enzyme_allocated, size`, `enzyme_tape, tape` and `enzyme_nofree` at ops[k:]."""
    while k < len(ops):
        tag = _marker_of(caller, ops[k].value)
        if tag not in ("enzyme_allocated", "enzyme_tape", "enzyme_nofree"):
            return k
        if mode not in ("augment", "split_reverse"):
            raise UserError(f"{where}: '{tag}' is only valid in __enzyme_augmentfwd and "
                            f"__enzyme_reverse, not in {marker}; hint: split mode runs "
                            "__enzyme_augmentfwd, then __enzyme_reverse with its tape")
        if tag == "enzyme_nofree":
            if mode != "split_reverse":
                raise UserError(f"{where}: enzyme_nofree is only valid in __enzyme_reverse; hint: "
                            "pass it where the tape is consumed")
            opts["nofree"] = True
            k += 1
            continue
        if k + 1 >= len(ops):
            raise UserError(f"{where}: '{tag}' must be followed by a value")
        val = ops[k + 1]
        if tag == "enzyme_allocated":
            if val.value.lstrip("-").isdigit() and int(val.value) < TAPE_HEADER_BYTES:
                raise UserError(f"{where}: the allocated tape has {val.value} bytes, but "
                                f"{TAPE_HEADER_BYTES} are needed; hint: allocate "
                                "__enzyme_augmentsize(f, ...) bytes")
            opts["allocated"] = val
        else:
            if val.ty != "ptr":
                raise UserError(f"{where}: enzyme_tape must be followed by a pointer, got {val.ty}")
            if mode == "augment" and "allocated" not in opts:
                raise UserError(f"{where}: enzyme_tape in __enzyme_augmentfwd needs "
                                "enzyme_allocated, size before it (the buffer's size)")
            opts["tape"] = val
        k += 2
    return k


def _vector_request(module, caller, inst, target, ops, where, sret):
    """`__enzyme_fwddiff(f, enzyme_width, N, ...)`: N tangent directions. Floats take N tangents
    after the value; pointers `enzyme_dup, x, dx_1..dx_N` or `enzyme_dupv, stride, x, dx` (lane k's
    shadow at dx + k*stride bytes). Returns the N tangents of the result."""
    try:
        width = int(ops[2].value)
    except ValueError:
        raise UserError(f"{where}: enzyme_width needs a constant width, got '{ops[2].value}'")
    if width < 1:
        raise UserError(f"{where}: enzyme_width must be at least 1, got {width}")
    args = []           # the generated function's arguments: (type, value text, pre-instructions)
    acts, k = [], 3
    for p in target.params:
        tag = _marker_of(caller, ops[k].value) if k < len(ops) else None
        if tag:
            k += 1
        if k >= len(ops):
            raise UserError(f"{where}: too few arguments to __enzyme_fwddiff for '{target.name[1:]}'")
        if tag is None:
            tag = "enzyme_dup" if p.ty == "ptr" or is_fp(p.ty) else "enzyme_const"
        if tag in ("enzyme_dupv", "enzyme_dupnoneedv"):
            if k + 2 >= len(ops):
                raise UserError(f"{where}: {tag} needs a byte stride, the value and its shadows")
            stride, val, base = ops[k], ops[k + 1], ops[k + 2]
            k += 3
            args.append((p.ty, val.value, []))
            for lane in range(width):
                off, sh = f"%ad.vo{inst.line}.{len(acts)}.{lane}", f"%ad.vs{inst.line}.{len(acts)}.{lane}"
                pre = [f"{off} = mul {stride.ty} {stride.value}, {lane}"]
                if stride.ty != "i64":
                    pre.append(f"{off}.w = sext {stride.ty} {off} to i64")
                    off += ".w"
                pre.append(f"{sh} = getelementptr i8, ptr {base.value}, i64 {off}")
                if p.ty != "ptr":                  # a float: its N tangents are read from memory
                    pre.append(f"{sh}.v = load {p.ty}, ptr {sh}")
                    sh += ".v"
                args.append((p.ty, sh, pre))
            acts.append("dup" if p.ty == "ptr" else "active")
        elif tag in ("enzyme_dup", "enzyme_dupnoneed") and (p.ty == "ptr" or is_fp(p.ty)):
            val = ops[k]
            shadows = ops[k + 1:k + 1 + width]
            if len(shadows) != width:
                raise UserError(f"{where}: parameter {len(acts) + 1} of '{target.name[1:]}' needs "
                                f"{width} shadows/tangents (enzyme_width {width})")
            k += 1 + width
            args.append((p.ty, val.value, []))
            args += [(p.ty, sh.value, []) for sh in shadows]
            acts.append("dup" if p.ty == "ptr" else "active")
        elif tag == "enzyme_const":
            args.append((p.ty, ops[k].value, []))
            k += 1
            acts.append("const")
        else:
            raise UserError(f"{where}: '{tag}' is not valid for parameter {len(acts) + 1} of "
                            f"'{target.name[1:]}' in vector forward mode")
    if k != len(ops):
        raise UserError(f"{where}: too many arguments to __enzyme_fwddiff for '{target.name[1:]}'")
    req = Request(caller, inst, target.name, acts, [], False, inst.line, sret, "forward")
    req.vector_args, req.width = args, width
    return req


def rewrite_vector_call(gen, req, name, rty) -> list[str]:
    """One call of the vector forward derivative; its N tangents packed into the result."""
    inst = req.inst
    lines = [line for _, _, pre in req.vector_args for line in pre]
    text = ", ".join(f"{ty} {v}" for ty, v, _ in req.vector_args)
    n = [0]

    def tmp():
        n[0] += 1
        return f"%ad.vp{req.line}.{n[0]}"
    vals = []                     # (value, type) of every scalar of the N tangents, lane by lane
    if rty == "void":
        lines.append(f"call void {name}({text})")
    else:
        res = f"%ad.vec{req.line}"
        lines.append(f"{res} = call {rty} {name}({text})")
        for path, sty in _leaves(rty):
            vals.append((_extract(lines, tmp, rty, res, path), sty))
    want = req.sret[0] if req.sret else inst.ty
    if not vals or want == "void" or (not inst.name and not req.sret):
        if inst.name:
            lines.append(f"{inst.name} = {_identity(want, '0.0' if is_fp(want) else 'zeroinitializer')}")
        return lines
    slots = _leaves(gen.module.named_types.get(want, want))
    if len(slots) < len(vals):
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_fwddiff returns {want}, "
                        f"which cannot hold {len(vals)} tangents")
    acc = "zeroinitializer"
    for (path, sty), (v, vty) in zip(slots, vals):
        v = _convert(lines, tmp, v, vty, sty)
        acc = v if not path else _insert(lines, tmp, want, acc, path, sty, v)
    if req.sret:
        lines.append(f"store {want} {acc}, ptr {req.sret[1]}")
    else:
        lines.append(f"{inst.name} = {_identity(want, acc)}")
    return lines


def _convert(lines, tmp, val, from_ty, to_ty):
    if from_ty == to_ty:
        return val
    t = tmp()
    if is_fp(from_ty) and is_fp(to_ty):
        op = float_cast(from_ty, to_ty)
    elif from_ty.startswith("i") and to_ty.startswith("i"):
        op = "sext" if int(from_ty[1:]) < int(to_ty[1:]) else "trunc"
    else:
        raise UserError(f"cannot pass a {from_ty} argument as {to_ty}")
    lines.append(f"{t} = {op} {from_ty} {val} to {to_ty}")
    return t


def _leaves(ty):
    """(path, type) of every scalar in a struct/array/vector type, in memory order."""
    ty = _NAMED.get(ty.strip(), ty.strip())
    if ty.startswith("{") or ty.startswith("<{"):
        return [([k] + p, t) for k, f in enumerate(split_fields(ty)) for p, t in _leaves(f)]
    if ty.startswith("[") or (ty.startswith("<") and " x " in ty):
        n, elem = ty[1:-1].split(" x ", 1)
        tag = "v" if ty.startswith("<") else "a"
        return [([(tag, k)] + p, t) for k in range(int(n)) for p, t in _leaves(elem.strip())]
    return [([], ty)]


def rewrite_tape_size(gen, req) -> list[str]:
    """`__enzyme_augmentsize(f, ...)`: the bytes an enzyme_allocated tape needs."""
    inst = req.inst
    if not inst.name:
        return []
    if not inst.ty.startswith("i"):
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_augmentsize "
                        f"must return an integer (size_t), declared as {inst.ty}")
    return [f"{inst.name} = add {inst.ty} 0, {TAPE_HEADER_BYTES}"]


def rewrite_split_call(gen, req, names) -> list[str]:
    """__enzyme_augmentfwd: run the augmented forward on a fresh tape, return the tape (and the
    primal result); __enzyme_reverse: run the reverse on that tape, free it, return adjoints."""
    aug, aug_ret, rev, rev_ret = names
    inst = req.inst
    lines, n = [], [0]

    def tmp():
        n[0] += 1
        return f"%ad.sp{req.line}.{n[0]}"
    args = []
    for pty, op in req.args:
        args.append(f"{pty} {_convert(lines, tmp, op.value, op.ty, pty) if op.ty != pty else op.value}")
    opts = getattr(req, "opts", {})
    if req.mode == "augment":
        if "tape" in opts:                  # enzyme_allocated: the header lives in the caller's buffer
            h = opts["tape"].value
        else:
            h = tmp()
            lines.append(f"{h} = call ptr @malloc(i64 {TAPE_HEADER_BYTES})")
            gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
        lines.append(f"call void @__enzyme_cc_tape_start(ptr {h})")
        call = f"call {aug_ret} {aug}({', '.join(args + ['ptr ' + h])})"
        want = inst.ty
        if aug_ret == "void" or want == "ptr" or not inst.name:
            lines.append(call)
            if inst.name:
                lines.append(f"{inst.name} = getelementptr i8, ptr {h}, i64 0")
            return lines
        r = tmp()
        lines.append(f"{r} = {call}")
        prim = r
        if aug_ret.startswith("{"):
            prim = tmp()
            lines.append(f"{prim} = extractvalue {aug_ret} {r}, 0")
        fields = split_fields(gen.module.named_types.get(want, want))
        a = tmp()
        lines.append(f"{a} = insertvalue {want} poison, ptr {h}, 0")
        if len(fields) > 1:
            pt = gen.module.function(req.fn).ret_ty
            lines.append(f"{inst.name} = insertvalue {want} {a}, {fields[1]} "
                         f"{_convert(lines, tmp, prim, pt, fields[1])}, 1")
        else:
            lines.append(f"{inst.name} = {_identity(want, a)}")
        return lines
    tape = None
    for kind, ty, op in req.extra:
        if kind == "dret":
            args.append(f"{ty} {_convert(lines, tmp, op.value, op.ty, ty)}")
        else:
            tape = op.value
    top = None
    if opts.get("nofree"):                  # keep the tape as it is: it may be reversed again
        top = (tmp(), tmp())
        lines.append(f"{top[0]} = getelementptr i8, ptr {tape}, i64 8")
        lines.append(f"{top[1]} = load i64, ptr {top[0]}")
    lines.append(f"%ad.rv{req.line} = call {rev_ret} {rev}({', '.join(args + ['ptr ' + tape])})"
                 if rev_ret != "void" else f"call void {rev}({', '.join(args + ['ptr ' + tape])})")
    if top:
        lines.append(f"store i64 {top[1]}, ptr {top[0]}")
    else:
        lines.append(f"call void @__enzyme_cc_tape_end(ptr {tape})")
        if "allocated" not in opts:         # the header is ours unless the caller allocated it
            lines.append(f"call void @free(ptr {tape})")
        gen.declare_raw("@free", "declare void @free(ptr)")
    if not inst.name:
        return lines
    if rev_ret == "void":
        zero = "0.0" if is_fp(inst.ty) else "zeroinitializer"
        lines.append(f"{inst.name} = {_identity(inst.ty, zero)}")
        return lines
    res = f"%ad.rv{req.line}"
    if rev_ret == inst.ty:
        lines.append(f"{inst.name} = {_identity(inst.ty, res)}")
        return lines
    if not rev_ret.startswith("{") and is_fp(inst.ty):
        lines.append(f"{inst.name} = {_identity(inst.ty, _convert(lines, tmp, res, rev_ret, inst.ty))}")
        return lines
    raise UserError(f"{located(gen.module, req.caller, inst)}: {inst.callee[1:]} returns {inst.ty}, "
                    f"but the derivatives of '{req.fn[1:]}' have type {rev_ret}")


def rewrite_call(gen, req, name, rty) -> list[str]:
    lines = _rewrite_call(gen, req, name, rty)
    if req.inst.op == "invoke":          # the gradient does not unwind: continue normally
        lines.append(f"br label {req.inst.targets[0]}")
    return lines


def _rewrite_call(gen, req, name, rty) -> list[str]:
    inst = req.inst
    counter = [0]

    def tmp():
        counter[0] += 1
        return f"%ad.mk{req.line}.{counter[0]}"

    lines = []
    args = []
    for pty, op in req.args:
        v = op.value
        args.append(f"{pty} {_convert(lines, tmp, v, op.ty, pty) if op.ty != pty else v}")
    call = f"call {rty} {name}({', '.join(args)})"
    want = req.sret[0] if req.sret else inst.ty
    if want in ("void",) or (not inst.name and not req.sret):
        lines.append(call)
        return lines
    if rty == "void" and not _used(req.caller, inst.name):
        lines.append(call)               # the (unused) result keeps its name, numbering intact
        zero = "0.0" if is_fp(want) else "zeroinitializer"
        lines.append(f"{inst.name} = {_identity(want, zero)}")
        return lines
    if rty == "void":
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_autodiff is declared to "
                        f"return {want}, but '{req.fn[1:]}' has no active (float) argument")
    res = tmp()
    lines.append(f"{res} = {call}")
    got = [([], rty)] if not rty.startswith("{") else \
        [([k], t) for k, t in enumerate(split_fields(rty))]
    want_resolved = gen.module.named_types.get(want, want)
    slots = _leaves(want_resolved)
    if len(slots) < len(got):
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_autodiff returns {want}, "
                        f"which cannot hold the {len(got)} derivatives of '{req.fn[1:]}'")
    acc = "zeroinitializer"
    for k, (path, sty) in enumerate(slots):
        if k < len(got):
            gpath, gty = got[k]
            v = res
            if gpath:
                e = tmp()
                lines.append(f"{e} = extractvalue {rty} {res}, {gpath[0]}")
                v = e
            v = _convert(lines, tmp, v, gty, sty)
        else:
            continue
        if not path:
            acc = v
            continue
        acc = _insert(lines, tmp, want, acc, path, sty, v)
    if req.sret:
        lines.append(f"store {want} {acc}, ptr {req.sret[1]}")
        return lines
    # the original result name must be defined by the last instruction
    last = lines[-1]
    if acc == res:
        lines[-1] = last.replace(f"{res} = ", f"{inst.name} = ", 1)
    elif last.startswith(acc + " = "):
        lines[-1] = inst.name + last[len(acc):]
    else:
        lines.append(f"{inst.name} = {_identity(want, acc)}")
    return lines


def _used(fn, name) -> bool:
    return any(name in i.toks for i in fn.insts() if i.name != name)


_NAMED: dict = {}


def _insert(lines, tmp, ty, agg, path, sty, v):
    """insertvalue/insertelement along a leaf path (struct indices, ('a', k), ('v', k))."""
    ty = ty.strip()
    body = _NAMED.get(ty, ty)
    step, rest = path[0], path[1:]
    if isinstance(step, tuple) and step[0] == "v":
        t = tmp()
        lines.append(f"{t} = insertelement {ty} {agg}, {sty} {v}, i32 {step[1]}")
        return t
    idx = step[1] if isinstance(step, tuple) else step
    if rest:
        sub_ty = split_fields(body)[idx] if body.startswith(("{", "<{")) else \
            body[1:-1].split(" x ", 1)[1].strip()
        cur = tmp()
        lines.append(f"{cur} = extractvalue {ty} {agg}, {idx}")
        v = _insert(lines, tmp, sub_ty, cur, rest, sty, v)
        sty = sub_ty
    t = tmp()
    lines.append(f"{t} = insertvalue {ty} {agg}, {sty} {v}, {idx}")
    return t


def _extract(lines, tmp, ty, agg, path):
    """extractvalue/extractelement along a leaf path (struct indices, ('a', k), ('v', k))."""
    for step in path:
        body = _NAMED.get(ty.strip(), ty.strip())
        t = tmp()
        if isinstance(step, tuple) and step[0] == "v":
            lines.append(f"{t} = extractelement {ty} {agg}, i32 {step[1]}")
        else:
            idx = step[1] if isinstance(step, tuple) else step
            lines.append(f"{t} = extractvalue {ty} {agg}, {idx}")
        ty = split_fields(body)[step] if not isinstance(step, tuple) else \
            body[1:-1].split(" x ", 1)[1].strip()
        agg = t
    return agg


def _identity(ty, v):
    if is_fp(ty):
        return f"fadd {ty} {v}, -0.0" if not ty.startswith("<") else f"fadd {ty} {v}, zeroinitializer"
    return f"select i1 true, {ty} {v}, {ty} {v}"
