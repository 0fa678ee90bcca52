"""Enzyme's in-source conventions, read from the module's globals:

  void *__enzyme_inactivefn[]            = {(void*)f, ...};       calls to f carry no derivative
  void *__enzyme_function_like[2]        = {(void*)f, (void*)"log"};  f differentiates like log
  void *__enzyme_register_gradient_X[3]  = {(void*)f, (void*)aug, (void*)rev};
  void *__enzyme_register_derivative_X[2] = {(void*)f, (void*)fwd};
  void *__enzyme_inactive_global[]       = {(void*)&g};           loads of g are constants
  void *__enzyme_allocation_like[4]      = {(void*)myalloc, (void*)SIZE_ARG_INDEX, (void*)"",
                                            (void*)myfree};       an allocator and its free
  __attribute__((annotate("enzyme_inactive"))) / annotate("enzyme_function_like=log") on f.

Enzyme's source attributes (__attribute__((enzyme_inactive)), [[enzyme::function_like("log")]],
enzyme_shadow(g_shadow), ...) reach the IR as annotations made by our clang plugin
(enzyme_cc/plugin/enzyme_attributes.cpp); ANNOTATIONS says what each one means here.

Custom gradient ABI (reverse): aug takes f's arguments, each pointer argument followed by its
shadow; it returns f's result (or, declared `struct {void *tape; T result;}`, a tape too; a void f
may return a `void*` tape). rev takes the same arguments, then the derivative of f's float
result (if any), then the tape (if aug returns one), and returns the adjoints of f's float
arguments (one: a float; several: a struct in argument order). Custom derivative (forward): fwd
takes f's arguments, each float or pointer argument followed by its tangent/shadow, and returns the
tangent of f's result.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import fn_attr_position
from enzyme_cc.ir.model import parse_module

_REF = re.compile(r"(@[-\w.$]+|@\"[^\"]+\")")
_CSTR = re.compile(r'c"((?:[^"\\]|\\[0-9A-Fa-f]{2})*)"')


@dataclass
class Registrations:
    inactive: set = field(default_factory=set)          # '@f'
    like: dict = field(default_factory=dict)            # '@f' -> 'log'
    gradient: dict = field(default_factory=dict)        # '@f' -> ('@aug', '@rev')
    derivative: dict = field(default_factory=dict)      # '@f' -> '@fwd'
    inactive_globals: set = field(default_factory=set)
    alloc_like: dict = field(default_factory=dict)      # '@alloc' -> (size argument index, '@free')
    shadows: dict = field(default_factory=dict)         # '@g' -> '@g_shadow' (enzyme_shadow)


def _string(module, name: str) -> str | None:
    m = _CSTR.search(module.globals.get(name, ""))
    if not m:
        return None
    raw = re.sub(r"\\([0-9A-Fa-f]{2})", lambda h: chr(int(h.group(1), 16)), m.group(1))
    return raw.rstrip("\0")


def _refs(line: str) -> list[str]:
    init = line.split("=", 1)[1]
    return [r for r in _REF.findall(init)]


def read_registrations(module) -> Registrations:
    reg = Registrations()
    for name, line in module.globals.items():
        bare = name[1:].strip('"')
        if not bare.startswith("__enzyme_"):
            if bare == "llvm.global.annotations":
                _annotations(module, line, reg)
            continue
        refs = _refs(line)
        if bare.startswith("__enzyme_inactivefn"):
            reg.inactive.update(refs)
        elif bare.startswith("__enzyme_function_like") and len(refs) >= 2:
            target = _string(module, refs[1])
            if target:
                reg.like[refs[0]] = target
        elif bare.startswith("__enzyme_register_gradient") and len(refs) >= 3:
            reg.gradient[refs[0]] = (refs[1], refs[2])
        elif bare.startswith("__enzyme_register_derivative") and len(refs) >= 2:
            reg.derivative[refs[0]] = refs[1]
        elif bare.startswith("__enzyme_inactive_global"):
            reg.inactive_globals.update(refs)
        elif bare.startswith("__enzyme_allocation_like"):
            init = line.split("=", 1)[1]
            m = re.search(r"\[\s*ptr (@[-\w.$\"]+),\s*ptr (null|inttoptr \(i64 (\d+) to ptr\)),"
                          r"\s*ptr [^,]+,\s*ptr (@[-\w.$\"]+)", init)
            if m:
                reg.alloc_like[m.group(1)] = (int(m.group(3) or 0), m.group(4))
    return reg


# Annotation text -> what it makes of the annotated function or global. The hints change no
# derivative value: enzyme-cc's analyses need no help to get them right.
# enzyme_sparse_accumulate marks a function that records entries for a __enzyme_todense store
# function (ad/api/sparse.py); Enzyme's loop sparsification uses it to skip zero entries, enzyme-cc
# evaluates the loops densely, which gives the same entries.
HINTS = ("enzyme_nofree", "enzyme_shouldrecompute", "enzyme_elementwise_read", "enzyme_ta_norecur",
         "enzyme_sparse_accumulate")
_ENTRY = re.compile(r"\{\s*ptr (@[-\w.$\"]+), ptr (@[-\w.$\"]+), ptr [^,]+, i32 (\d+), "
                    r"ptr (null|@[-\w.$\"]+)\s*\}")
_REGISTER = "enzyme_cc_register:"


def _annotations(module, line, reg):
    for m in _ENTRY.finditer(line):
        sym, text, args = m.group(1), _string(module, m.group(2)) or "", m.group(4)
        if text.startswith(_REGISTER):      # a registration variable holding the symbol's address
            targets = _refs(module.globals.get(sym, "= "))
            if not targets:
                continue
            sym, text = targets[0], text[len(_REGISTER):]
        is_fn = sym in module.declarations or module.defines(sym)
        if text in ("enzyme_inactivefn", "enzyme_inactivenoblockfn") or \
                text == "enzyme_inactive" and is_fn:
            reg.inactive.add(sym)
        elif text == "enzyme_inactive":
            reg.inactive_globals.add(sym)
        elif text.startswith("enzyme_function_like="):
            reg.like[sym] = text.split("=", 1)[1]
        elif text == "enzyme_shadow":
            shadow = _refs(module.globals.get(args, "= ")) if args != "null" else []
            if not shadow:
                raise UserError(f"enzyme_shadow on '{sym[1:]}' names no global variable")
            reg.shadows[sym] = shadow[0]
        elif text.startswith("enzyme_") and text not in HINTS:
            raise UserError(f"unknown Enzyme annotation '{text}' on '{sym[1:]}' (line "
                            f"{m.group(3)}); enzyme-cc knows enzyme_inactive, enzyme_inactivefn, "
                            f"enzyme_function_like=NAME, enzyme_shadow and the hints "
                            f"{', '.join(HINTS)}")


# A registration variable holds the address of a marked declaration only to tell the AD about it
_REGISTRATION_VAR = re.compile(r'^(@[\w.$]*__enzyme_cc_register_\d+ = internal global ptr )[^,\n]+',
                               re.M)


def drop_references(text: str) -> str:
    """Once the AD is done the registration variables hold null, so that a declaration nothing
    else references (an enzyme_inactive extern global the optimizer dropped) needs no definition."""
    return _REGISTRATION_VAR.sub(r"\1null", text)


def keep_registered_calls(text: str) -> str:
    """Mark every function with a registration `noinline` before the pre-AD optimization, so
    that inlining does not erase the calls whose derivative the user defined."""
    reg = read_registrations(parse_module(text))
    names = reg.inactive | set(reg.like) | set(reg.gradient) | set(reg.derivative) | \
        set(reg.alloc_like) | {f for _, f in reg.alloc_like.values()}
    if not names:
        return text
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if not line.startswith("define "):
            continue
        for name in names:
            at = line.find(name + "(")
            if at < 0:
                continue
            at = fn_attr_position(line, at + len(name))
            lines[k] = line[:at] + " noinline" + line[at:]
            break
    return "\n".join(lines)
