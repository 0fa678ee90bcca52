"""Enzyme's in-source conventions, read from the module's globals:

  void *__enzyme_inactivefn[]            = {(void*)f, ...};       calls to f carry no derivative
  void *__enzyme_function_like[2]        = {(void*)f, (void*)"log"};  f differentiates like log
  void *__enzyme_register_gradient_X[3]  = {(void*)f, (void*)aug, (void*)rev};
  void *__enzyme_register_derivative_X[2] = {(void*)f, (void*)fwd};
  void *__enzyme_inactive_global[]       = {(void*)&g};           loads of g are constants
  void *__enzyme_allocation_like[4]      = {(void*)myalloc, (void*)SIZE_ARG_INDEX, (void*)"",
                                            (void*)myfree};       an allocator and its free
  __attribute__((annotate("enzyme_inactive"))) / annotate("enzyme_function_like=log") on f.

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


def _annotations(module, line, reg):
    for m in re.finditer(r"\{\s*ptr (@[-\w.$\"]+), ptr (@[-\w.$\"]+)", line):
        fn, text = m.group(1), _string(module, m.group(2)) or ""
        if text == "enzyme_inactive":
            reg.inactive.add(fn)
        elif text.startswith("enzyme_function_like="):
            reg.like[fn] = text.split("=", 1)[1]


def keep_registered_calls(text: str) -> str:
    """Mark every function with a registration `noinline` before the pre-AD optimization, so
    that inlining does not erase the calls whose derivative the user defined."""
    from enzyme_cc.ir.model import parse_module
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
            depth, j = 0, at + len(name)
            while j < len(line):
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                if depth == 0:
                    break
                j += 1
            lines[k] = line[:j + 1] + " noinline" + line[j + 1:]
            break
    return "\n".join(lines)
