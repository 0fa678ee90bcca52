"""Pointer parameters whose C++ declaration says what they point to: a function template's
instance names its types in its mangled name (`std::__relocate_a_1<double, double>(double*,
double*, double*, std::allocator<double>&)`), where its body may only copy bytes (libstdc++'s
relocation of a std::vector<double>'s elements, kept as a call by -fno-inline: one memmove).
The demangled parameter list gives `double*`, `float const*`, `double&`: the pointer's memory
holds that type, as a caller's hint would say; `Osc*` points to records of the module's struct
type Osc."""
from __future__ import annotations

import re

from ..structure.diagnostics import demangled

_POINTEE = re.compile(r"^(?:const )?(double|float)(?: const)?(?: ?\*| ?&)$")
_OPEN, _CLOSE = "(<[", ")>]"


def declared_pointees(module, fn) -> dict:
    """{parameter name: {'*': 'double' or 'float'}} from fn's demangled C++ signature (a free
    function's: a member function's list lacks `this`); memoized per module."""
    return _declared(module, fn)[0]


def declared_records(module, fn) -> dict:
    """{parameter name: the module's struct type} for parameters declared as pointers or
    references to a (non-template) struct or class, `Osc*` in `std::__relocate_a_1<Osc, Osc>(Osc*,
    Osc*, Osc*, std::allocator<Osc>&)`: the records an out-of-line vector growth moves."""
    return _declared(module, fn)[1]


def _declared(module, fn) -> tuple[dict, dict]:
    memo = module.__dict__.setdefault("_declared_pointees", {})
    if fn.name in memo:
        return memo[fn.name]
    memo[fn.name] = floats, records = {}, {}
    raw = fn.name.lstrip("@").strip('"')
    if not raw.startswith("_Z") or raw.startswith(("_ZN", "_ZLN")):
        return floats, records  # (a nested name may be a member function: `this` is not listed)
    if not module.__dict__.get("_demangled_all"):
        # (one llvm-cxxfilt run for the module's C++ functions)
        demangled([n.lstrip("@").strip('"') for n in module._bodies
                   if n.lstrip("@").strip('"').startswith("_Z")])
        module.__dict__["_demangled_all"] = True
    params = _parameters(demangled([raw])[0])
    if params is None or len(params) < len(fn.params):
        return floats, records
    # (the optimizer may have dropped unused parameters, anywhere in the list: parameter k is
    # one of the declared k .. k + dropped, and is hinted where all of those agree)
    dropped = len(params) - len(fn.params)
    kinds = [(m.group(1) if m else None) for m in (_POINTEE.match(t) for t in params)]
    structs = [_record_type(module, t) for t in params]
    for k, p in enumerate(fn.params):
        seen = set(kinds[k:k + dropped + 1])
        if p.ty == "ptr" and len(seen) == 1 and None not in seen:
            floats[p.name] = {"*": seen.pop()}
        seen = set(structs[k:k + dropped + 1])
        if p.ty == "ptr" and len(seen) == 1 and None not in seen:
            records[p.name] = seen.pop()
    return floats, records


_RECORD = re.compile(r"^(?:const )?([A-Za-z_][\w:]*)(?: const)? ?[*&]$")


def _record_type(module, decl: str):
    """The module's struct type for a declared `T*`/`T&` (T not a template: clang names every
    instance of a template alike), where every copy of its IR type has one body; or None."""
    m = _RECORD.match(decl)
    if not m:
        return None
    want = re.compile(r'^%"?(?:struct|class)\.' + re.escape(m.group(1)) + r'(?:\.\d+)?"?$')
    found = [n for n in module.named_types if want.match(n)]
    bodies = {module.named_types[n].strip() for n in found}
    return found[0] if len(bodies) == 1 else None


def _parameters(sig: str) -> list[str] | None:
    """The top-level parameter types of a demangled signature `... name<...>(a, b<c, d>)`."""
    sig = re.sub(r"(?: const| volatile| &&| &)+$", "", sig.strip())
    if not sig.endswith(")"):
        return None
    depth, k = 0, len(sig) - 1
    while k >= 0:
        c = sig[k]
        if c in _CLOSE:
            depth += 1
        elif c in _OPEN:
            depth -= 1
            if depth == 0:
                break
        k -= 1
    if k < 0 or sig[k] != "(":
        return None
    inner, parts, cur, depth = sig[k + 1:-1], [], "", 0
    for c in inner:
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip() and cur.strip() != "void":
        parts.append(cur)
    return [p.strip() for p in parts]
