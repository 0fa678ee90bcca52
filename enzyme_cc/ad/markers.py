"""Enzyme's marker calls (`__enzyme_autodiff(fn, [enzyme_dup, x, dx], ...)`) -> derivative requests,
and the rewrite of each call into a call of the generated function."""
from __future__ import annotations

import re
from dataclasses import dataclass

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, parse_type
from .diagnostics import located
from .marker_rewrite import _NAMED, TAPE_HEADER_BYTES

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
