"""Functions with a registration (a custom gradient or forward derivative, enzyme_inactivefn,
enzyme_function_like) where no direct call names them: the target of an indirect call, or the
function handed to a marker itself. A direct call applies the registration (rules/calls.py);
these places differentiate a function. Each such function gets a wrapper whose body is the
direct call, and the wrapper is differentiated in its place, so the registration applies
wherever the function is reached, as Enzyme's derivative builders apply it.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.model import parse_module
from .registrations import read_registrations

# the registration globals and annotations read_registrations knows
_MAY_REGISTER = re.compile(r"@\"?(__enzyme_register_|__enzyme_inactivefn|__enzyme_function_like"
                           r"|llvm\.global\.annotations)")
# parameter attributes a call site repeats (the ABI of small integers); a by-value aggregate
# (byval, sret, inalloca) would need its copy made by the wrapper: no wrapper then
_KEPT = ("zeroext", "signext", "inreg", "noundef")
_AGGREGATE = ("byval", "sret", "inalloca", "preallocated")
PREFIX = "ad.rule."


def add_wrappers(text: str) -> str:
    """text with a wrapper `@"ad.rule.<f>"` for every defined function with a registration."""
    if not _MAY_REGISTER.search(text):
        return text
    module = parse_module(text)
    reg = read_registrations(module)
    out = []
    for f in sorted(_registered(reg)):
        fn = module.function(f) if module.defines(f) else None
        if fn is None or "..." in fn.header.split(f, 1)[-1].split(")")[0] or \
                any(a.split("(")[0] in _AGGREGATE for p in fn.params for a in p.attrs):
            continue
        params = [f"{p.ty}{''.join(' ' + a for a in p.attrs if a in _KEPT)} %p{k}"
                  for k, p in enumerate(fn.params)]
        call = f"call {fn.cconv + ' ' if fn.cconv else ''}{fn.ret_ty} {f}({', '.join(params)})"
        body = [f"  {call}", "  ret void"] if fn.ret_ty == "void" else \
            [f"  %r = {call}", f"  ret {fn.ret_ty} %r"]
        out += [f"define internal {fn.ret_ty} {wrapper_name(f)}({', '.join(params)}) noinline {{",
                "entry:", *body, "}"]
    return text + "\n" + "\n".join(out) + "\n" if out else text


def _registered(reg) -> set:
    """The functions whose registration a direct call applies."""
    return set(reg.gradient) | set(reg.derivative) | reg.inactive | set(reg.like)


def wrapper_name(f: str) -> str:
    return '@"' + PREFIX + f[1:].strip('"') + '"'


def with_rules(gen, f: str, where: str = "") -> str:
    """The function to differentiate for f: its wrapper where f has a registration."""
    w = wrapper_name(f)
    if gen.module.defines(w):
        return w
    own = gen.__dict__.get("_own_registered")       # (the program's own, not Generator.reg's
    if own is None:                                 # additions: loggers, Rust's formatting)
        own = gen._own_registered = _registered(read_registrations(gen.module))
    if not gen.module.defines(f) or f not in own:
        return f         # (no body: the call of a declaration says what is missing)
    raise UserError(f"{where or 'a derivative'}: '{f[1:]}' has a registered derivative, but it "
                    "is reached through a function pointer (or handed to the marker) and takes "
                    "a struct by value or a variable argument list, which enzyme-cc cannot wrap; "
                    f"hint: call '{f[1:]}' directly, or pass the struct through a pointer")
