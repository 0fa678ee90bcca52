"""Enzyme's marker calls (`__enzyme_autodiff(fn, [enzyme_dup, x, dx], ...)`) -> derivative requests,
and the rewrite of each call into a call of the generated function."""
from __future__ import annotations

import re
from dataclasses import dataclass

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, parse_type, scalar_of, type_size, carries_float
from ..structure.diagnostics import free_function_name, from_fortran, located
from ..structure.type_layout import named_expand
from .marker_args import MARKERS, _marker_of, constant_width, refuse_misspelt_markers
from .marker_values import _NAMED, TAPE_HEADER_BYTES
from enzyme_cc.ir.model import Operand, parse_module
from .global_addresses import context_width
from .marker_targets import _integer_memory, _known_functions, refuse_unknown_function
from . import reverse_vector

# return options (anywhere among the arguments; Enzyme's C++ header passes them first)
RET_ACTIVITY = ("enzyme_const_return", "enzyme_active_return", "enzyme_dup_return")
RET_USED = ("enzyme_primal_return", "enzyme_noret")
# the entry points that request a derivative (their calls become requests)
DERIVATIVE_MARKERS = r"__enzyme_(?:autodiff|fwddiff|augmentfwd|reverse|augmentsize|error_estimate)"
_AUTODIFF = re.compile(r"@\"?[\w.$]*" + DERIVATIVE_MARKERS + r"[\w.$]*\"?\(")
# any other call of an Enzyme entry point (ProbProg's __enzyme_likelihood, ...): our
# own runtime helpers are __enzyme_cc_*; todense pointers are lowered after AD (ad/api/sparse.py);
# __enzyme_fprt_* is the truncation runtime (ad/api/truncate.py, supplied at link time)
_OTHER_MARKER = re.compile(r"@\"?([\w.$]*__enzyme_(?!cc_|todense|post_sparse_todense|fprt_)\w+)\"?\(")
GLOBAL_API = ("__enzyme_context", "__enzyme_shadow", "__enzyme_zero_shadows")
# marker function -> request mode
MODES = (("__enzyme_autodiff", "reverse"), ("__enzyme_fwddiff", "forward"),
         ("__enzyme_augmentfwd", "augment"), ("__enzyme_reverse", "split_reverse"),
         ("__enzyme_augmentsize", "tape_size"))
# __enzyme_error_estimate(f, x, err_x, ...): forward mode whose tangents are error estimates
ERROR_MARKER = "__enzyme_error_estimate"


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


def find_requests(module) -> list[Request]:
    _NAMED.clear()
    _NAMED.update(module.named_types)
    out = []
    for name, (start, end) in module._bodies.items():
        body = "\n".join(module._lines[start:end])
        _unknown_markers(module, name, body)
        if not _AUTODIFF.search(body):
            continue
        caller = module.function(name)
        for inst in caller.insts():
            if inst.op in ("call", "invoke") and inst.callee:
                mode = next((m for f, m in MODES if f in inst.callee), None)
                if mode:
                    refuse_misspelt_markers(caller, inst, located(module, caller, inst))
                    out.append(_request(module, caller, inst, mode))
                elif ERROR_MARKER in inst.callee:
                    out.append(_error_request(module, caller, inst))
    return out


def _unknown_markers(module, name, body):
    """A call of an Enzyme entry point that enzyme-cc does not implement would otherwise be an
    undefined symbol at link time: name it, with the call's source line."""
    for m in _OTHER_MARKER.finditer(body):
        callee = m.group(1)
        if _AUTODIFF.match(m.group(0)) or module.defines("@" + callee) or \
                re.search(r"__enzyme_(iter|double|float|integer|pointer)$", callee) or \
                callee in GLOBAL_API:     # ad/api/fixed_point.py, ad/api/global_shadows.py
            continue
        caller = module.function(name)
        inst = next((i for i in caller.insts() if i.op in ("call", "invoke")
                     and (i.callee or "").lstrip("@").strip('"') == callee), None)
        if inst is None:            # named, not called (e.g. its address taken)
            continue
        plain = free_function_name(callee) or callee     # (a C++ declaration's mangled name)
        raise UserError(f"{located(module, caller, inst)}: '{plain}' is an Enzyme entry point that "
                        "enzyme-cc does not support; hint: the supported ones are __enzyme_autodiff, "
                        "__enzyme_fwddiff, __enzyme_augmentfwd, __enzyme_reverse, "
                        "__enzyme_augmentsize, __enzyme_error_estimate, __enzyme_fixed_point, "
                        "__enzyme_iter, __enzyme_context, __enzyme_shadow, __enzyme_zero_shadows, "
                        "__enzyme_todense, __enzyme_batch, __enzyme_truncate_mem_func, "
                        "__enzyme_truncate_op_func, __enzyme_truncate_mem_value, "
                        "__enzyme_expand_mem_value and the type annotations __enzyme_double, "
                        "__enzyme_float, __enzyme_integer, __enzyme_pointer")


# such an entry point named other than as a callee (its address kept in a function pointer)
MARKER_VALUE = re.compile(r"@([\w.$]*" + DERIVATIVE_MARKERS + r"\w*)\b(?!\()")


_DEBUG_MARKER_VALUE = re.compile(r"(#dbg_(?:value|declare|assign)\(ptr )@[\w.$]*" +
                                 DERIVATIVE_MARKERS + r"\w*\b(?!\()")


def drop_debug_uses(text: str) -> str:
    """A local function pointer holding a marker (`double (*grad)(void *, ...) =
    __enzyme_autodiff;`) keeps, under -g, a debug record of the marker's address after its
    calls are rewritten: the variable now holds nothing (poison), so no symbol is left for the
    debug info to name."""
    return _DEBUG_MARKER_VALUE.sub(r"\1poison", text) if "#dbg_" in text else text


_MARKER_TAG_DECL = re.compile(r"^@(" + "|".join(MARKERS) + r") = external (?:[\w ]*?)global "
                              r"(i32|i64)(?:, align \d+)?$", re.M)


def define_marker_tags(text: str) -> str:
    """The activity tags the program only declares (`extern int enzyme_dup;`) defined weak, once
    every marker call is rewritten: a load of one left behind (unoptimized code instrumented by
    -fsanitize=address keeps it, dead) would be an undefined symbol at link time. A definition
    of the program's own wins."""
    return _MARKER_TAG_DECL.sub(r"@\1 = weak global \2 0", text)


def refuse_marker_values(text: str):
    """After every marker call is rewritten: a marker still named is used as a value (stored in
    a function pointer the optimizer could not resolve, e.g. a global or a volatile local), which
    would be an undefined symbol at link time. Enzyme resolves direct calls only; say so."""
    if not MARKER_VALUE.search(text):       # (one scan; the lines only where there is one)
        return
    defined = set(re.findall(r"^define [^\n]*?@([\w.$]+)\(", text, re.M))
    where = None
    for line in text.splitlines():
        if line.startswith("define "):
            where = line.split("@", 1)[1].split("(", 1)[0]
        elif line.startswith("}"):
            where = None
        if line.startswith("declare ") or line.lstrip().startswith(";"):
            continue
        m = MARKER_VALUE.search(line)
        if not m or m.group(1) in defined:      # (a function of the program's own is no marker)
            continue
        name = m.group(1)
        if where is None:
            at = "in the initializer of global '" + line.split("=", 1)[0].strip()[1:] + "'"
        else:                                   # the error path only: parse for the location
            module = parse_module(text)
            fn = module.function("@" + where)
            inst = next((i for i in fn.insts() if "@" + name in str(i)), None)
            at = located(module, fn, inst)
        raise UserError(f"{at}: '{name}' is used as a value, not called: enzyme-cc "
                        "differentiates calls of the marker itself; hint: call it directly, "
                        f"e.g. {name}((void *)f, ...), not through a function pointer kept in a "
                        "global or volatile variable")


def _error_request(module, caller, inst) -> Request:
    """`__enzyme_error_estimate`: a forward-mode request (same arguments as __enzyme_fwddiff, the
    tangent seeds being the inputs' errors) whose derivatives are built in error mode."""
    req = _request(module, caller, inst, "forward", ERROR_MARKER)
    where = located(module, caller, inst)
    if getattr(req, "width", 1) > 1 or req.context is not None or \
            getattr(req, "opts", {}).get("primal") or getattr(req, "opts", {}).get("ret"):
        raise UserError(f"{where}: {ERROR_MARKER} takes the function and its arguments (each float "
                        "followed by its error, each pointer by its shadow) only; enzyme_width, "
                        "enzyme_context and return options are not supported there; hint: use "
                        "one call per input error")
    req.error = True
    return req


def _request(module, caller, inst, mode, marker=None) -> Request:
    where = located(module, caller, inst)
    marker = marker or next(f for f, m in MODES if m == mode)
    ops = list(inst.ops)
    sret = None
    if "sret" in inst.toks:
        k = inst.toks.index("sret")
        sty, _ = parse_type(inst.toks, k + 2)
        sret = (sty, ops[0].value)
        ops = ops[1:]
    if not ops:
        raise UserError(f"{where}: __enzyme_autodiff needs the function to differentiate")
    # enzyme_nocache before an argument promises it is unchanged between the augmented forward
    # and the reverse, so Enzyme need not cache it: a hint, as what is taped is decided here
    ops = [o for o in ops if _marker_of(caller, o.value, ("enzyme_nocache",)) is None]
    fn_val = ops[0].value
    candidates = _known_functions(module, caller, fn_val) if not fn_val.startswith("@") else None
    if candidates == []:
        # a parameter of a function nothing in the program calls (a helper LLVM inlined into
        # every caller, its external copy left): no derivative to build; reached from outside
        # the program, it stops with a message (marker_calls.MarkerCalls.run)
        return Request(caller, inst, None, [], [], False, inst.line, None, "unreached")
    if candidates:
        # a select/phi of known functions (clang merges the calls of an if/else into one):
        # one derivative per candidate, dispatched on the pointer (marker_calls.MarkerCalls.run)
        fn_val = candidates[0]
        first = module.function(fn_val)
        for c in candidates[1:]:
            other = module.function(c)
            if [p.ty for p in other.params] != [p.ty for p in first.params] or \
                    other.ret_ty != first.ret_ty:
                raise UserError(f"{where}: the function passed to {inst.callee[1:]} is one of "
                                f"{', '.join(repr(x[1:]) for x in candidates)}, which have different "
                                "signatures; hint: call the marker once per function")
        if mode not in ("reverse", "forward"):
            raise UserError(f"{where}: the function passed to {inst.callee[1:]} is chosen at run time "
                            f"among {', '.join(repr(x[1:]) for x in candidates)}; this is supported "
                            "by __enzyme_autodiff and __enzyme_fwddiff only; hint: call the marker "
                            "once per function")
    if not fn_val.startswith("@"):
        refuse_unknown_function(module, caller, inst)
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
    opts: dict = {}
    k = _split_options(caller, ops, 1, opts, mode, where, marker)
    ctx_width = _context_width(caller, opts, ops, k, mode, where)
    if ctx_width > 1 and (k >= len(ops) or _marker_of(caller, ops[k].value) != "enzyme_width"):
        # a context of width N states the width of the derivatives called with it
        ops = ops[:k] + [Operand("ptr", "@enzyme_width"), Operand("i32", str(ctx_width))] + ops[k:]
    if mode == "forward" and len(ops) > k + 1 and _marker_of(caller, ops[k].value) == "enzyme_width":
        if opts.get("primal") or opts.get("ret") == "enzyme_const_return":
            raise UserError(f"{where}: enzyme_primal_return / enzyme_const_return are not supported "
                            "yet with enzyme_width; hint: compute the primal with a plain call")
        req = _vector_request(module, caller, inst, target, ops[:1] + ops[k:], where, sret)
        req.candidates = (candidates, ops[0]) if candidates else None
        req.context = opts.get("context")
        if req.context is not None and ctx_width and ctx_width != req.width:
            raise UserError(f"{where}: enzyme_width {req.width}, but the context has width "
                            f"{ctx_width} (__enzyme_context({ctx_width}))")
        return req
    if mode == "reverse" and len(ops) > k + 1 and _marker_of(caller, ops[k].value) == "enzyme_width":
        width, acts, lanes, pre = reverse_vector.parse(module, caller, inst, target, ops[:1] + ops[k:],
                                                       where, opts)
        req = Request(caller, inst, fn_val, acts, [], _return_activity(target, opts, mode, where,
                                                                       marker), inst.line, sret, mode)
        if candidates:
            raise UserError(f"{where}: enzyme_width with a function chosen at run time is not "
                            "supported; hint: call the marker once per function")
        req.candidates, req.width, req.lanes, req.vector_pre = None, width, lanes, pre
        req.reverse_vector, req.opts = True, opts
        return req
    # enzyme_interleave: the primal arguments (with their markers) first, then every shadow in
    # argument order after the enzyme_interleave marker (Enzyme's C++ header passes them so)
    inter = next((j for j in range(1, len(ops)) if _marker_of(caller, ops[j].value)
                  == "enzyme_interleave"), None)
    shadows = ops[inter + 1:] if inter is not None else None
    if inter is not None:
        ops = ops[:inter]

    def shadow(k, what):
        """The shadow (or tangent) of the current parameter: ops[k] or the next interleaved one."""
        if shadows is not None:
            if not shadows:
                raise UserError(f"{where}: missing {what} for parameter {len(acts) + 1} of "
                                f"'{fn_val[1:]}' after enzyme_interleave")
            return shadows.pop(0), k
        if k >= len(ops):
            raise UserError(f"{where}: missing {what} for parameter {len(acts) + 1} of "
                            f"'{fn_val[1:]}'")
        return ops[k], k + 1
    acts, args = [], []
    sret_at = _sret_param(target)
    if sret_at is not None and mode != "forward":
        raise UserError(f"{where}: '{fn_val[1:]}' returns a struct through a hidden pointer (sret); "
                        f"{marker} of such a function is not supported (its result cannot be active, "
                        "and the object would be built and never destroyed); hint: pass the result "
                        "as a Duplicated pointer or reference argument, or use __enzyme_fwddiff")
    for i, p in enumerate(target.params):
        if sret_at is not None and i == sret_at[0]:
            slot = (len(acts), len(args))        # filled in once the return options are known
            acts.append(None)
            continue
        k = _split_options(caller, ops, k, opts, mode, where, marker)
        if p.ty == "...":
            raise UserError(f"{where}: cannot differentiate variadic function '{fn_val[1:]}'")
        tag = None
        if k < len(ops):
            tag = _marker_of(caller, ops[k].value)
            if tag:
                k += 1
        if tag in ("enzyme_width", "enzyme_dupv", "enzyme_dupnoneedv", "enzyme_interleave"):
            raise UserError(f"{where}: '{tag}' is not supported yet in {marker}")
        if k >= len(ops):
            rest = target.params[len(acts):]
            # flang's hidden CHARACTER lengths (a bind(c) procedure compiled without -g is known
            # as Fortran by nothing else)
            fortran = from_fortran(module, target)
            hidden = all(q.ty == "i64" for q in rest)
            raise UserError(f"{where}: too few arguments to {marker} for "
                            f"'{fn_val[1:]}' (parameter {len(acts) + 1} of "
                            f"{len(target.params)} missing"
                            + ("; " + ("" if fortran else "if it is Fortran, ") + "the missing "
                               "ones may be flang's hidden lengths of its CHARACTER dummies, "
                               "integers by value after the arguments" if hidden else "")
                            + "); hint: pass every parameter of the function, each pointer "
                            "followed by its shadow unless marked enzyme_const" +
                            (" (a length: enzyme_const, (long)len)" if hidden else "") +
                            _split_struct_hint(target))
        val = ops[k]
        k += 1
        if "byval" in p.attrs and _passed_by_value(module, inst, val.value) and \
                not _copy_will_do(module, p, tag):
            ty = re.sub(r"^%(struct|class|union)\.(.*?)(\.\d+)?$", r"\1 \2", _byval_type(p) or "?")
            raise UserError(f"{where}: parameter {len(acts) + 1} of '{fn_val[1:]}' is a struct "
                            f"passed by value in memory ({ty}), and {marker} was given the struct "
                            "itself; hint: pass its address, followed by its shadow's "
                            "(`enzyme_dup, &s, &ds`: the derivative is added into ds), or "
                            "`enzyme_const, &s`")
        if tag is None and p.ty == "ptr" and (k >= len(ops) or ops[k].ty != "ptr") and \
                _integer_memory(module, caller, val.value):
            # no shadow follows, and the memory holds integers (`int len[10]` passed as
            # `&len`): no derivative, as Enzyme's type analysis decides
            tag = "enzyme_const"
        if tag is None:
            tag = "enzyme_dup" if p.ty == "ptr" else "enzyme_out" if is_fp(p.ty) else "enzyme_const"
            if mode == "forward" and is_fp(p.ty):
                tag = "enzyme_dup"
        if mode == "forward" and is_fp(p.ty) and tag in ("enzyme_dup", "enzyme_dupnoneed", "enzyme_out"):
            if tag == "enzyme_out":
                raise UserError(f"{where}: enzyme_out is not valid in __enzyme_fwddiff; pass the "
                                "value and its tangent (enzyme_dup)")
            args.append((p.ty, val))
            tan, k = shadow(k, "tangent")
            args.append((p.ty, tan))
            acts.append("active")
            continue
        act = {"enzyme_dup": "dup", "enzyme_dupnoneed": "dupnoneed", "enzyme_const": "const",
               "enzyme_out": "active", "enzyme_active": "active"}[tag]
        if act == "active" and not is_fp(p.ty):
            raise UserError(f"{where}: parameter {len(acts) + 1} of '{fn_val[1:]}' has type {p.ty}, "
                            "which cannot be active (enzyme_out); hint: use enzyme_const or enzyme_dup")
        if act in ("dup", "dupnoneed") and p.ty != "ptr":
            raise UserError(f"{where}: parameter {len(acts) + 1} of '{fn_val[1:]}' has type {p.ty}; "
                            f"{tag} needs a pointer (a float passed by value is enzyme_out in "
                            f"{marker}: its derivative is returned); hint: pass it by pointer or "
                            "reference, or mark it enzyme_out" +
                            (_split_struct_hint(target) if is_fp(scalar_of(p.ty)) else ""))
        args.append((p.ty, val))
        if act in ("dup", "dupnoneed"):
            sh, k = shadow(k, "shadow")
            args.append(("ptr", sh))
        acts.append(act)
    if shadows:
        raise UserError(f"{where}: {len(shadows)} more value(s) after enzyme_interleave than "
                        f"'{fn_val[1:]}' has duplicated parameters")
    k = _split_options(caller, ops, k, opts, mode, where, marker)
    sret_slots = None
    if sret_at is not None:
        act, slot_args, sret_slots = _sret_slots(target, sret_at, sret, opts, inst.line, where, marker)
        acts[slot[0]] = act
        args[slot[1]:slot[1]] = slot_args
        sret = None                   # the function builds the marker's result itself
        opts.pop("ret", None)
        opts.pop("primal", None)
    ret_active = _return_activity(target, opts, mode, where, marker)
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
            if k >= len(ops) or ops[k].ty not in ("ptr", "i64"):      # (i64: Rust's usize)
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
                        "with enzyme_const" + _split_struct_hint(target))
    req = Request(caller, inst, fn_val, acts, args, ret_active, inst.line, sret, mode)
    req.candidates = (candidates, ops[0]) if candidates else None
    req.extra = extra
    req.opts = opts
    req.context = opts.get("context")
    req.sret_slots = sret_slots
    if mode == "forward":     # what the call returns: (the primal result?, its tangent?)
        const = opts.get("ret") == "enzyme_const_return"
        # (a constant result has no tangent: the call returns the primal, unless enzyme_noret)
        req.returns = (bool(opts.get("primal", const)), not const)
    return req


def _context_width(caller, opts, ops, k, mode, where) -> int:
    """The width of the context given with enzyme_context when known at link time (0: not
    known; the derivative then checks it at run time)."""
    if "context" not in opts:
        return 0
    w = context_width(caller, opts["context"].value) or 0
    if w > 1 and mode != "forward":
        raise UserError(f"{where}: the context has width {w} (__enzyme_context({w})), but "
                        "enzyme_width is not supported in reverse mode yet; hint: use a context "
                        "of width 1")
    return w


def _copy_will_do(module, p, tag) -> bool:
    """A struct the marker call is given by value (the copy C makes for a variadic call, in
    memory: `byval(T)`), for a parameter the function takes by value in memory too: the copy
    is the function's own, so the derivative can take it as the function would. So for
    enzyme_const, and for enzyme_dup where the shadow copy's pointers are what carries the
    derivative (XSBench's `SimulationData`: the struct holds no float, its arrays' shadows are
    the program's): a derivative of float fields would be added into the shadow's copy and
    lost, which is refused."""
    if tag == "enzyme_const":
        return True
    if tag not in ("enzyme_dup", "enzyme_dupnoneed"):
        return False
    ty = _byval_type(p)
    return ty is not None and not carries_float(named_expand(ty, module.named_types))


def _byval_type(p) -> str | None:
    """The type T of a parameter's `byval(T)`, or None."""
    return p.attrs[p.attrs.index("byval") + 2] if "(" in p.attrs else None


def _passed_by_value(module, inst, v: str) -> bool:
    """The marker call passes v as a struct copied in memory (`byval(T)`): a C struct argument
    given by value to the variadic marker."""
    line = module._lines[inst.line] if 0 <= inst.line < len(module._lines) else ""
    return re.search(r"byval\([^()]*\)[^,()]*?\s" + re.escape(v) + r"(?![-\w.$])", line) is not None


def _sret_param(target):
    """(index, type) of the function's hidden result pointer (`sret(T)`), or None."""
    for i, p in enumerate(target.params):
        if "sret" in p.attrs:
            j = p.attrs.index("sret")
            if j + 2 < len(p.attrs) and p.attrs[j + 1] == "(":
                return i, p.attrs[j + 2]
    return None


def _sret_slots(target, sret_at, sret, opts, line, where, marker):
    """__enzyme_fwddiff of a function returning a struct through sret: the marker's own result
    (also returned through sret) holds the objects the function builds: {primal, tangent} with
    enzyme_dup_return or enzyme_primal_return, the tangent alone by default (as for any other
    result: a silent primal was returned before) or with enzyme_noret, the primal alone with
    enzyme_const_return. The sret parameter becomes a
    duplicated pointer into that memory (the primal, when not returned, into a stack temporary
    that is dropped without destruction; the tangent of a const return likewise: the function
    still writes one). Returns (activity, [(type, operand)], slot plan)."""
    ty = sret_at[1]
    size = type_size(ty, _NAMED)
    name = target.name[1:]
    # as for any other result: the tangent unless asked otherwise (enzyme_const_return: the
    # primal alone; enzyme_dup_return or enzyme_primal_return: both, enzyme_noret: no primal)
    tangent = opts.get("ret") != "enzyme_const_return"
    primal = opts.get("primal", opts.get("ret") == "enzyme_dup_return") if tangent else True
    if opts.get("ret") == "enzyme_active_return":
        raise UserError(f"{where}: enzyme_active_return, but '{name}' returns a struct (through a "
                        "hidden sret pointer); hint: use enzyme_dup_return in __enzyme_fwddiff")
    need = size * (int(primal) + int(tangent))
    if sret is None or type_size(sret[0], _NAMED) < need:
        what = "{primal, tangent}" if primal and tangent else "the tangent" if tangent else "the primal"
        raise UserError(f"{where}: '{name}' returns {ty} through a hidden pointer (sret), so {marker} "
                        f"must be declared to return {what} as a struct of {need} bytes"
                        f"{'' if sret is None else ', not ' + sret[0]}; hint: declare the marker "
                        "with that return type (e.g. struct { T primal; T tangent; })")
    p, sh = f"%ad.sret{line}.p", f"%ad.sret{line}.s"
    plan = {"ptr": sret[1], "ty": ty, "size": size, "primal": p, "shadow": sh,
            "temp_primal": not primal, "temp_shadow": not tangent, "shadow_at": size if primal else 0}
    return "dup", [("ptr", Operand("ptr", p)), ("ptr", Operand("ptr", sh))], plan


def _return_activity(target, opts, mode, where, marker) -> bool:
    """Check enzyme_{const,active,dup}_return and enzyme_primal_return against the function's
    result and the mode; returns whether a float result is active (seeded) in reverse mode."""
    ret, tag, name = target.ret_ty, opts.get("ret"), target.name[1:]
    if tag == "enzyme_active_return" and not is_fp(ret):
        raise UserError(f"{where}: enzyme_active_return, but '{name}' returns {ret}; only float "
                        "results can be active; hint: use enzyme_const_return")
    if tag == "enzyme_dup_return" and mode != "forward":
        raise UserError(f"{where}: enzyme_dup_return (a result with a shadow) is not supported yet "
                        f"in {marker}; hint: return the result through a pointer argument "
                        "marked enzyme_dup")
    if tag == "enzyme_dup_return" and not carries_float(ret):
        raise UserError(f"{where}: enzyme_dup_return, but '{name}' returns {ret}, which has no "
                        "tangent here; hint: use enzyme_const_return")
    return is_fp(ret) and tag != "enzyme_const_return"


def _split_options(caller, ops, k, opts, mode, where, marker) -> int:
    """Consume `enzyme_allocated, size`, `enzyme_tape, tape`, `enzyme_nofree` and the return
    options (RET_ACTIVITY, RET_USED) at ops[k:]."""
    while k < len(ops):
        tag = _marker_of(caller, ops[k].value)
        if tag in RET_ACTIVITY or tag in RET_USED:
            if tag in RET_ACTIVITY:
                opts["ret"] = tag
            else:
                opts["primal"] = tag == "enzyme_primal_return"
            k += 1
            continue
        if tag == "enzyme_context":
            if mode not in ("reverse", "forward"):
                raise UserError(f"{where}: enzyme_context is supported in __enzyme_autodiff and "
                                f"__enzyme_fwddiff, not yet in {marker}")
            if k + 1 >= len(ops) or ops[k + 1].ty != "ptr":
                raise UserError(f"{where}: enzyme_context must be followed by a context made by "
                                "__enzyme_context(width)")
            opts["context"] = ops[k + 1]
            k += 2
            continue
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
    width = constant_width(ops, where)
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
            acts.append(("dupnoneed" if "noneed" in tag else "dup") if p.ty == "ptr" else "active")
        elif tag in ("enzyme_dup", "enzyme_dupnoneed") and (p.ty == "ptr" or is_fp(p.ty)):
            val = ops[k]
            shadows = ops[k + 1:k + 1 + width]
            got = next((j for j, o in enumerate(shadows) if _marker_of(caller, o.value)),
                       len(shadows))           # (a marker is never a shadow)
            if got != width:
                leaf = "; one shadow holding each element's N tangents side by side (Enzyme's " \
                    "-enzyme-vectorize-at-leaf-nodes layout) is not supported" \
                    if got == 1 and p.ty == "ptr" else ""
                raise UserError(f"{where}: parameter {len(acts) + 1} of '{target.name[1:]}' needs "
                                f"{width} shadows/tangents (enzyme_width {width}), got {got}{leaf}; "
                                "hint: pass one shadow per lane after the value, or enzyme_dupv, "
                                "stride, x, dx with lane k's copy at dx + k*stride bytes")
            k += 1 + width
            args.append((p.ty, val.value, []))
            args += [(p.ty, sh.value, []) for sh in shadows]
            acts.append(("dupnoneed" if "noneed" in tag else "dup") if p.ty == "ptr" else "active")
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


def _split_struct_hint(target) -> str:
    """Where the function takes floats by value: how a small struct argument is given (the ABI
    splits one of 16 bytes or fewer into registers, so the function's parameters are its fields,
    or for two floats one <2 x float>)."""
    tys = [p.ty for p in target.params]
    if "<2 x float>" in tys:
        return ("; a struct of two floats or a float complex taken by value is one argument "
                "(<2 x float>): give it itself, followed by its tangent or derivative's value")
    if any(is_fp(t) for t in tys):
        return ("; a struct of 16 bytes or fewer taken by value arrives as its fields: give the "
                "struct itself (not its address), as you would call the function")
    return ""


def drop_unwind_edge(lines: list[str], req):
    """A marker invoke rewritten as call + br no longer reaches its landing pad: drop its
    block's incoming values from the landing pad's phis (a phi left with none is in a block
    nothing reaches any more)."""
    block = next(b for b in req.caller.blocks if b.term is req.inst)
    pad = req.caller.block(req.inst.targets[1])
    pair = re.compile(r",?\s*\[[^\[\]]*,\s*" + re.escape(block.label) + r"\s*\]")
    for phi in pad.phis:
        if not lines[phi.line]:
            continue                          # (moved below the landingpad by an earlier call)
        text = pair.sub("", lines[phi.line], count=1)
        text = re.sub(r"phi\s+(.*?)\s*,\s*\[", r"phi \1 [", text, count=1) \
            if re.search(r"phi\s+[^\[]*,\s*\[", text) else text
        if "[" not in text:
            # a value for the unreachable block's users, after its landingpad (which must come
            # first after the phis)
            lp = next((i for i in pad.insts if i.op == "landingpad"), None)
            if lp is not None:
                end = lp.line               # (its clauses may follow on lines of their own)
                while end + 1 < len(lines) and \
                        lines[end + 1].strip().startswith(("cleanup", "catch ", "filter ")):
                    end += 1
                lines[end] += f"\n{phi.name} = freeze {phi.ty} poison"
                text = ""
            else:
                text = f"{phi.name} = freeze {phi.ty} poison"
        lines[phi.line] = text

