"""Enzyme's pseudo-dense pointers: `p = __enzyme_todense(load_fn, store_fn, extra...)` (and
`__enzyme_post_sparse_todense`, the same for enzyme-cc, which has no automatic loop
sparsification to run first) is a pointer with no memory behind it. After AD every load through
it (or through a pointer derived from it by GEPs, casts, phis and selects) becomes
`load_fn(byte offset from p, extra...)` and every store of v becomes
`store_fn(v, byte offset from p, extra...)`, as in Enzyme's LowerSparsification. Passed as the
shadow of an argument, it turns the derivative's shadow accesses into those calls: a Hessian
column written through it becomes user calls that record (row, col, value) entries.

The derivative code that touches such a pointer must be in the function that made it, so the
functions it is passed to are inlined first (forced `alwaysinline`, one round per call depth);
a use we cannot lower (a call that cannot be inlined, memset/memcpy, storing the pointer) is an
error naming it.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import type_size
from enzyme_cc.ir.model import parse_header, parse_module
from ..structure.diagnostics import located

_TODENSE = re.compile(r"__enzyme_(?:post_sparse_)?todense")
_CALL = re.compile(r'@"?[\w.$]*__enzyme_(?:post_sparse_)?todense[\w.$]*"?\(')
_NAME_CHARS = r"[-\w.$]"
MAX_ROUNDS = 16


def has_todense(text: str) -> bool:
    return bool(_CALL.search(text))


def _is_todense(inst) -> bool:
    return inst.op in ("call", "invoke") and bool(inst.callee) and \
        bool(_TODENSE.search(inst.callee)) and inst.callee.startswith("@")


def _plain(callee: str) -> str:
    m = _TODENSE.search(callee)
    return m.group(0) if m else callee


class _Flow:
    """The values of one function derived from its todense calls, with their source call."""

    def __init__(self, fn):
        self.fn = fn
        users = fn.users()
        self.src: dict[str, object] = {}        # derived value -> the todense call
        self.loads, self.stores, self.geps = [], [], []
        self.escapes: list[tuple[object, object]] = []   # (inst, call) we cannot lower here
        self.mixed: list[tuple[object, object]] = []
        for call in [i for i in fn.insts() if _is_todense(i)]:
            if call.name is None:
                continue
            work = [call.name]
            self.src[call.name] = call
            while work:
                v = work.pop()
                for u in users.get(v, []):
                    self._use(u, v, call, work)

    def _derive(self, u, call, work):
        if u.name in self.src:
            if self.src[u.name] is not call:
                self.mixed.append((u, call))
            return
        self.src[u.name] = call
        work.append(u.name)

    def _use(self, u, v, call, work):
        op = u.op
        if op == "getelementptr" and u.ops[0].value == v and u.ops[0].ty == "ptr":
            self.geps.append(u)
            self._derive(u, call, work)
        elif op in ("bitcast", "addrspacecast", "phi", "freeze") or \
                op == "select" and u.ops[0].value != v:
            self._derive(u, call, work)
        elif op in ("ptrtoint", "icmp"):
            pass                              # offsets from a null base: consistent values
        elif op == "load" and u.ops[0].value == v:
            self.loads.append((u, call))
        elif op == "store" and u.ops[1].value == v and u.ops[0].value != v:
            self.stores.append((u, call))
        elif op == "call" and u.callee and u.callee.startswith("@llvm.lifetime."):
            pass
        else:
            self.escapes.append((u, call))


def _callee_of_escape(module, inst, flow) -> str | None:
    """The defined function whose inlining would bring this use into the todense call's function."""
    if inst.op != "call" or not inst.callee or not inst.callee.startswith("@"):
        return None
    if _is_todense(inst) or inst.callee.startswith("@llvm."):
        return None
    return inst.callee if module.defines(inst.callee) else None


def _force_inline(text: str, names: set[str]) -> str:
    """`alwaysinline` on the functions `names` (dropping noinline/optnone from their attributes)."""
    module = parse_module(text)
    lines = text.split("\n")
    next_id = 1 + max([int(k[1:]) for k in module.attr_groups if k[1:].isdigit()] or [0])
    new_groups = []
    for name in names:
        start = module._bodies[name][0]
        j = start
        while not lines[j].rstrip().endswith("{"):
            j += 1
        header = " ".join(lines[start:j + 1])
        m = re.search(r"\s(#\d+)\s*(?:[^{]*)\{\s*$", header)
        attrs = module.attr_groups.get(m.group(1), "{ }") if m else "{ }"
        body = re.sub(r"\b(noinline|optnone)\b", "", attrs.strip()[1:-1])
        group = f"#{next_id}"
        next_id += 1
        new_groups.append(f"attributes {group} = {{ alwaysinline {body} }}")
        if m:
            header = header[:m.start(1)] + group + header[m.end(1):]
        else:
            # (before the metadata attachments: a derivative's `!dbg` subprogram)
            header = re.sub(r"((?:\s+!\w+ !\d+)*)\s*\{\s*$", lambda h: f" {group}{h.group(1)} {{",
                            header.rstrip())
        header = re.sub(r"\)\s+noinline\b", ")", header)
        lines[start:j + 1] = [header]
        module = None
        text = "\n".join(lines)
        module = parse_module(text)
        lines = text.split("\n")
    return "\n".join(lines + new_groups)


def lower(text: str, cleanup) -> str:
    """Lower every todense pointer of the module `text`; `cleanup(text) -> text` runs LLVM's
    always-inliner and SROA (so pointers kept in allocas become SSA values again)."""
    if not has_todense(text):
        return text
    text = cleanup(_hoist_allocas(text))
    for _ in range(MAX_ROUNDS):
        module = parse_module(text)
        targets = set()
        for name in list(module._bodies):
            fn = module.function(name)
            if not any(_is_todense(i) for i in fn.insts()):
                continue
            fn.index()
            flow = _Flow(fn)
            for inst, _ in flow.escapes:
                callee = _callee_of_escape(module, inst, flow)
                if callee and callee != name:
                    targets.add(callee)
        if not targets:
            break
        text = cleanup(_force_inline(text, targets))
    return _lower_module(parse_module(text))


def _hoist_allocas(text: str) -> str:
    """Fixed-size named allocas of an entry block to its top (unnamed ones keep their number). Generated code starts its tape before
    its allocas; once the tape helper is inlined there, they would sit in a later block, where
    the inliner leaves them dynamic and SROA cannot promote the shadow pointers they hold."""
    module = parse_module(text)
    lines = module._lines[:]
    for name in module._bodies:
        entry = module.function(name).blocks[0]
        first = entry.insts[0].line
        moved = [i.line for i in entry.insts if i.op == "alloca" and i.line > first and
                 not i.name[1:].isdigit() and not re.search(r",\s*i\d+\s+%", lines[i.line])]
        if not moved:
            continue
        taken = [lines[k] for k in moved]
        for k in reversed(moved):
            del lines[k]
        lines[first:first] = taken
    return "\n".join(lines)


def _fn_sig(module, name: str):
    """(return type, parameter types) of a defined or declared function."""
    fn = module.function(name)
    if fn is not None:
        return fn.ret_ty, [p.ty for p in fn.params]
    line = module.declarations.get(name)
    if line is None:
        return None
    hdr = parse_header(line, module.named_types)
    return hdr[1], [p.ty for p in hdr[3]]


def _callback(module, fn, call, k: int, role: str) -> str:
    val = call.ops[k].value if len(call.ops) > k else ""
    if not val.startswith("@") or _fn_sig(module, val) is None:
        raise UserError(f"{located(module, fn, call)}: the {role} function of "
                        f"{_plain(call.callee)} (argument {k + 1}) must be a function named "
                        "directly; hint: pass (void *)my_function")
    return val


def _lower_module(module) -> str:
    lines = module._lines[:]
    edits: dict[int, list[str]] = {}
    counter = [0]

    def fresh(tag):
        counter[0] += 1
        return f"%td.{tag}{counter[0]}"

    for name in list(module._bodies):
        fn = module.function(name)
        calls = [i for i in fn.insts() if _is_todense(i)]
        if not calls:
            continue
        fn.index()
        flow = _Flow(fn)
        for inst, call in flow.escapes:
            what = _callee_of_escape(module, inst, flow)
            if what:
                hint = f"'{what[1:]}' could not be inlined into '{name[1:]}' (recursion?)"
            elif inst.op == "store":
                hint = ("the pointer itself is stored to memory (a variable, or the tape of a "
                        "derivative that keeps it for its reverse sweep), where its accesses "
                        "cannot be followed; keep the pre-AD optimization on (not "
                        "ENZYME_CC_PREOPT=0) so such pointers stay in registers")
            else:
                hint = ("only loads, stores, GEPs, casts, phis, selects and compares of such a "
                        "pointer can be lowered")
            raise UserError(f"{located(module, fn, inst)}: this use of the pointer made by "
                            f"{_plain(call.callee)} cannot become calls of its load/store "
                            f"functions; hint: {hint}")
        for inst, call in flow.mixed:
            raise UserError(f"{located(module, fn, inst)}: this value may come from two "
                            f"different {_plain(call.callee)} pointers; hint: access each "
                            "one separately")
        for inst in fn.insts():
            if inst.op in ("phi", "select") and inst.name in flow.src:
                vals = [v for v, _ in inst.incoming] if inst.op == "phi" else \
                    [o.value for o in inst.ops[1:3]]
                for v in vals:
                    if v not in flow.src and v not in ("null", "undef", "poison"):
                        raise UserError(f"{located(module, fn, inst)}: this pointer is either "
                                        f"a {_plain(flow.src[inst.name].callee)} pointer or "
                                        "ordinary memory; hint: keep the two apart")
        info = {}
        for call in calls:
            load_fn = _callback(module, fn, call, 0, "load")
            store_fn = _callback(module, fn, call, 1, "store")
            extra = [f"{o.ty} {o.value}" for o in call.ops[2:]]
            info[id(call)] = (load_fn, store_fn, call.ops[2:], extra)
        for inst, call in flow.loads:
            load_fn, _, ops, extra = info[id(call)]
            ret, params = _fn_sig(module, load_fn)
            _check_extra(module, fn, inst, call, load_fn, params[1:], ops)
            off = fresh("off")
            dbg = f", !dbg {inst.md['!dbg']}" if "!dbg" in inst.md else ""
            out = [f"  {off} = ptrtoint ptr {inst.ops[0].value} to i64",
                   *_offset_arg(params[0], off, fresh, module, fn, inst, load_fn)]
            arg = out[-1].split(" = ")[0].strip() if len(out) > 1 else off
            args = ", ".join([f"{params[0]} {arg}"] + extra)
            if ret == inst.ty:
                out.append(f"  {inst.name} = call {ret} {load_fn}({args}){dbg}")
            else:
                _same_size(module, fn, inst, ret, inst.ty, load_fn, "returns")
                tmp = fresh("ld")
                out += [f"  {tmp} = call {ret} {load_fn}({args}){dbg}",
                        f"  {inst.name} = bitcast {ret} {tmp} to {inst.ty}"]
            edits[inst.line] = out
        for inst, call in flow.stores:
            _, store_fn, ops, extra = info[id(call)]
            ret, params = _fn_sig(module, store_fn)
            if len(params) < 2:
                raise UserError(f"{located(module, fn, inst)}: the store function "
                                f"'{store_fn[1:]}' of {_plain(call.callee)} must take the "
                                "value and the byte offset first")
            _check_extra(module, fn, inst, call, store_fn, params[2:], ops)
            val_ty, val = inst.ops[0].ty, inst.ops[0].value
            off = fresh("off")
            dbg = f", !dbg {inst.md['!dbg']}" if "!dbg" in inst.md else ""
            out = [f"  {off} = ptrtoint ptr {inst.ops[1].value} to i64",
                   *_offset_arg(params[1], off, fresh, module, fn, inst, store_fn)]
            arg = out[-1].split(" = ")[0].strip() if len(out) > 1 else off
            if val_ty != params[0]:
                _same_size(module, fn, inst, params[0], val_ty, store_fn, "takes")
                cast = fresh("v")
                out.append(f"  {cast} = bitcast {val_ty} {val} to {params[0]}")
                val = cast
            args = ", ".join([f"{params[0]} {val}", f"{params[1]} {arg}"] + extra)
            res = "" if ret == "void" else f"{fresh('st')} = "
            out.append(f"  {res}call {ret} {store_fn}({args}){dbg}")
            edits[inst.line] = out
        for gep in flow.geps:      # no allocation behind a null base: no inbounds/nuw claims
            lines[gep.line] = re.sub(r"= getelementptr((?:\s+(?:inbounds|nuw|nusw|"
                                     r"inrange\([^)]*\)))+)\s", "= getelementptr ",
                                     lines[gep.line])
        for call in calls:      # the pointer itself: a null base (keeps an unnamed %N's slot)
            edits[call.line] = [f"  {call.name} = getelementptr i8, ptr null, i64 0"]
    for k in sorted(edits, reverse=True):
        lines[k:k + 1] = edits[k]
    return "\n".join(lines)


def _offset_arg(ty, off, fresh, module, fn, inst, callee):
    if ty == "i64":
        return []
    if not re.fullmatch(r"i\d+", ty):
        raise UserError(f"{located(module, fn, inst)}: the byte offset parameter of "
                        f"'{callee[1:]}' has type {ty}; hint: declare it int64_t or size_t")
    return [f"  {fresh('o')} = trunc i64 {off} to {ty}"]


def _same_size(module, fn, inst, a, b, callee, verb):
    if type_size(a, module.named_types) != type_size(b, module.named_types) or \
            "x ptr" in a + b:
        raise UserError(f"{located(module, fn, inst)}: '{callee[1:]}' {verb} {a}, but the "
                        f"access through the todense pointer is a {b}; hint: use load/store "
                        "functions of the pointer's element type")


def _check_extra(module, fn, inst, call, callee, params, ops):
    got = [o.ty for o in ops]
    if got != list(params):
        raise UserError(f"{located(module, fn, call)}: {_plain(call.callee)} passes "
                        f"({', '.join(got)}) after the two functions, but '{callee[1:]}' takes "
                        f"({', '.join(params)}) after the value/offset; hint: cast each extra "
                        "argument to the parameter's type")
