"""Functions whose calls carry no derivative by what their code does: an error reporter such
as SUNDIALS' `cvProcessError(mem, code, module, fn, fmt, ...)`, which formats its variadic
arguments into a local buffer and passes the text to an error handler that prints it.

A variadic function cannot be differentiated (its arguments are read through a va_list), but
where its code touches nothing a derivative lives in, its calls need none: the forward sweep
runs it as it is, the reverse sweep skips it, as for printf. The function is inert when it
returns no float and no pointer, and neither it nor anything it may call (its callees with
bitcode, the address-taken functions of an indirect call's type, library functions that carry
no derivative) stores a float or a pointer outside its own stack frame, or an integer into
memory whose declared type is not an integer (an integer store may move a float's bits), or
copies or sets memory outside its frame. Values it reads, active ones included, then reach
nothing but text, integers and its own locals, which die with it."""
from __future__ import annotations

from enzyme_cc.ir.lexer import carries_float, int_bits
from enzyme_cc.rules.registry import is_inactive_call
from ..structure.local_slots import reloaded_param
from ..structure.type_layout import underlying
from .typeinfo import TypeInfo

_FRAME_ONLY = ("@llvm.memcpy", "@llvm.memmove", "@llvm.memset", "@memcpy", "@memmove", "@memset")
_HARMLESS = ("@llvm.va_start", "@llvm.va_end", "@llvm.va_copy", "@llvm.lifetime.", "@llvm.dbg.",
             "@llvm.assume", "@llvm.expect", "@llvm.stacksave", "@llvm.stackrestore")


def inert(gen, name: str) -> bool:
    """Calls of `name` (a function with bitcode) carry no derivative (see the module doc)."""
    return blocker(gen, name) is None


def blocker(gen, name: str):
    """None when `name` is inert; else (function, instruction) that makes it not so: a store or
    call there (or, with instruction None, the function's float or pointer result)."""
    memo = gen.__dict__.setdefault("_inert", {})
    if name not in memo:
        memo[name] = None           # a recursive call is judged by the rest of the cycle
        fn = gen.module.function(name)
        memo[name] = (fn, None) if fn is None or fn.ret_ty == "ptr" or \
            carries_float(fn.ret_ty) else _body_blocker(gen, fn)
    return memo[name]


def reads_only(gen, name: str) -> bool:
    """`name`'s code stores nothing outside its frame, as an inert function's, whatever it
    returns (an accessor returning an address into its argument: shadow_demand.py); what its
    callees store into its frame counts as its own (std::vector::begin constructing the
    iterator it returns in a local)."""
    return param_writes(gen, name) == set()


def param_writes(gen, name: str):
    """The positions of the parameters through which `name`'s code (its callees' included)
    may store, where it stores nowhere else outside its frame (as an inert function); None
    otherwise."""
    memo = gen.__dict__.setdefault("_param_writes", {})
    if name not in memo:
        fn = gen.module.function(name)
        memo[name] = set()          # (a recursive call: judged by the rest of the cycle)
        if fn is None:
            memo[name] = None
        else:
            written: set = set()
            found = _body_blocker(gen, fn, _through_params, written)
            memo[name] = None if found is not None else written
    return memo[name]


def _through_params(gen, name, inst, in_frame):
    """A call stores only into the caller's frame or parameters: the callee's own parameter
    writes map to arguments that are there."""
    w = param_writes(gen, name)
    if w is None or any(k >= len(inst.ops) or not in_frame(inst.ops[k].value) for k in w):
        return gen.module.function(name), None
    return None


def _inert_callee(gen, name, inst, in_frame):
    return blocker(gen, name)


def _body_blocker(gen, fn, judge=None, written=None):
    """The first store or call of fn that makes it not inert, or None; `judge(gen, name, inst,
    in_frame)` decides fn's calls of functions with bitcode (`blocker` by default). written:
    where given, stores through fn's parameters are allowed and their positions put there."""
    frame = {i.name for i in fn.insts() if i.op == "alloca"}
    params = {p.name: k for k, p in enumerate(fn.params)} if written is not None else {}
    types = None

    def in_frame(ptr: str) -> bool:
        u = underlying(fn, ptr)
        u = params and reloaded_param(fn, u) or u       # (unoptimized code's spilled `this`)
        if u in params:
            written.add(params[u])
            return True
        return u in frame

    for inst in fn.insts():
        if inst.op in ("store", "atomicrmw", "cmpxchg"):
            # (store value, ptr; atomicrmw ptr, value; cmpxchg ptr, expected, new)
            v, ptr = (inst.ops[0], inst.ops[1]) if inst.op == "store" else (inst.ops[-1], inst.ops[0])
            if in_frame(ptr.value):
                continue
            bits = int_bits(v.ty)
            if not bits or carries_float(v.ty):
                return fn, inst         # a float, a pointer or an aggregate leaves the frame
            if bits >= 32:
                if types is None:
                    types = TypeInfo(gen.module, fn, {})
                if types.content_kind(ptr.value, inst.md.get("!tbaa"), bits // 8) != "int":
                    return fn, inst
        elif inst.op in ("call", "invoke"):
            found = _call_blocker(gen, fn, inst, in_frame, judge or _inert_callee)
            if found is not None:
                return found
    return None


def _call_blocker(gen, fn, inst, in_frame, judge):
    c = inst.callee or ""
    if c.startswith(_HARMLESS):
        return None
    if c.startswith(_FRAME_ONLY):
        return None if inst.ops and in_frame(inst.ops[0].value) else (fn, inst)
    if c.startswith("%"):
        targets = gen.address_taken(inst.ty, [o.ty for o in inst.ops], inst)
        return next((b for b in map(lambda t: judge(gen, t, inst, in_frame), targets) if b),
                    None)
    if gen.module.defines(c):
        return judge(gen, c, inst, in_frame)
    return None if is_inactive_call(c) else (fn, inst)
