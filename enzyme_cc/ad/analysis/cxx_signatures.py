"""Pointer parameters whose C++ declaration says what they point to: a function template's
instance names its types in its mangled name (`std::__relocate_a_1<double, double>(double*,
double*, double*, std::allocator<double>&)`), where its body may only copy bytes (libstdc++'s
relocation of a std::vector<double>'s elements, kept as a call by -fno-inline: one memmove).
The demangled parameter list gives `double*`, `float const*`, `double&`,
`std::array<double, 3ul>*`, `std::complex<float>*`: the pointer's memory holds that float, as
a caller's hint would say; `Osc*` points to records of the module's struct type Osc."""
from __future__ import annotations

import re

from ..structure.diagnostics import demangled
from ..structure.type_layout import class_types, layout, named_expand

# (std::array and std::complex over a float hold only that float: a vector of them grows by
# memmove as one of doubles would)
_POINTEE = re.compile(r"^(?:const )?(?:(double|float)|std::array<(double|float), \d+ul>|"
                      r"std::complex<(double|float)>)(?: const)?(?: ?\*| ?&)$")
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
    params = _declared_parameters(module, fn)
    raw = fn.name.lstrip("@").strip('"')
    nested = raw.startswith(("_ZN", "_ZLN"))
    this = fn.params[0] if nested and fn.params else None
    if params is not None and this is not None and this.ty == "ptr" and \
            len(params) == len(fn.params) - 1 and not any("sret" in a for a in this.attrs):
        # a member function's `this`, not in the demangled list: its class, where the module
        # has one struct type by that name (`Hydro::getDtHydro`: the char array beside a
        # double member holds characters)
        owner = _owner(demangled([raw])[0])
        record = _record_type(module, owner + "*") if owner else None
        if record not in (None, _COMPARATOR):
            records[this.name] = record
    if params is None or len(params) < len(fn.params):
        return floats, records
    kinds = [(next(g for g in m.groups() if g) if m else None)
             for m in (_POINTEE.match(t) for t in params)]
    structs = [_record_type(module, t) for t in params]
    for k, p in enumerate(fn.params):
        if p.ty != "ptr":
            continue
        if not nested:      # (a nested name may be a member function: `this` is not listed)
            kind = _agreed(kinds, k, len(fn.params), None)
            if kind is not None:
                floats[p.name] = {"*": kind}
        # (a comparator wrapper, empty when its lambda captures nothing, is not passed at all;
        # else it is a function pointer, whose memory nothing reads as data)
        record = _agreed(structs, k, len(fn.params), _COMPARATOR)
        if nested and record is not None:       # a member's `this` first, or a static one
            record = record if _agreed([None] + structs, k, len(fn.params), _COMPARATOR) == \
                record else None
        if record is not None:
            records[p.name] = record
    return floats, records


def _owner(sig: str) -> str | None:
    """The class of a member function's demangled signature `ns::Cls::name(args)` (no
    template arguments in the qualifier), else None."""
    head = sig[:sig.find("(")] if "(" in sig else ""
    if not head or "<" in head or " " in head:
        return None
    parts = head.split("::")
    return "::".join(parts[:-1]) if len(parts) > 1 else None


def _declared_parameters(module, fn) -> list[str] | None:
    """The parameter types of fn's demangled C++ signature, None for another name."""
    raw = fn.name.lstrip("@").strip('"')
    if not raw.startswith("_Z"):
        return None
    if not module.__dict__.get("_demangled_all"):
        # (one llvm-cxxfilt run for the module's C++ functions)
        demangled([n.lstrip("@").strip('"') for n in module._bodies
                   if n.lstrip("@").strip('"').startswith("_Z")])
        module.__dict__["_demangled_all"] = True
    return _parameters(demangled([raw])[0])


def pointer_holders(module, fn) -> set:
    """Parameters declared as pointers or references to memory that holds a pointer: `T*&`,
    `T**`, or a class every one of whose IR types holds one (`std::unique_ptr<Term>&&`, the
    std::tuple inside it): what a move constructor reads from them is an address (memoized)."""
    memo = module.__dict__.setdefault("_pointer_holders", {})
    if fn.name not in memo:
        memo[fn.name] = _pointer_holders(module, fn)
    return memo[fn.name]


def _pointer_holders(module, fn) -> set:
    params = _declared_parameters(module, fn)
    if params is None:
        return set()
    raw = fn.name.lstrip("@").strip('"')
    if len(params) > len(fn.params):
        # the optimizer drops an unused empty object (`std::allocator<T>&`)
        params = [d for d in params if not _empty_class(module, d)]
    shift = len(fn.params) - len(params)        # a member function's `this` is not listed
    if shift not in (0, 1) or shift and not raw.startswith(("_ZN", "_ZLN")):
        return set()
    return {p.name for p, decl in zip(fn.params[shift:], params)
            if p.ty == "ptr" and _holds_pointer(module, decl)}


_REFERENCE = re.compile(r"^(?:const )?(.+?)(?: const)?(?:&&|&|\*)$")


def _holds_pointer(module, decl: str) -> bool:
    m = _REFERENCE.match(decl.strip())
    if not m:
        return False
    inner = m.group(1).strip()
    if inner.endswith("*"):                      # a pointer's slot
        return True
    found = class_types(module, inner)
    named = module.named_types
    return bool(found) and all("ptr" in layout(named_expand(named[n], named), named).values()
                               for n in found)


def _empty_class(module, decl: str) -> bool:
    """A reference to a class without data: its IR type is a lone byte, or it has none (never
    laid out: `std::allocator<T>`)."""
    m = _REFERENCE.match(decl.strip())
    if not m or m.group(1).strip().endswith("*"):
        return False
    found = class_types(module, m.group(1).strip())
    return all(module.named_types[n].strip() in ("{ i8 }", "{}") for n in found)


def _agreed(declared, k, count, neutral):
    """What declared position k .. k + dropped holds for IR parameter k of `count` (the
    optimizer may have dropped unused parameters anywhere in the list), where all of them
    agree, apart from `neutral` ones; else None."""
    if len(declared) < count:
        return None
    seen = set(declared[k:k + len(declared) - count + 1]) - {neutral}
    return seen.pop() if len(seen) == 1 and None not in seen else None


_RECORD = re.compile(r"^(?:const )?([A-Za-z_][\w:]*)(?: const)? ?[*&]$")
# a vector's iterator passed by value: a pointer to its records (std::sort's helpers)
_ITERATOR = re.compile(r"^__gnu_cxx::__normal_iterator<([A-Za-z_][\w:]*)\*, std::vector<")
_COMPARATOR = "comparator"


def _record_type(module, decl: str):
    """The module's struct type for a declared `T*`/`T&` or vector iterator over T (T not a
    template: clang names every instance of a template alike), where every copy of its IR type
    has one body; _COMPARATOR for libstdc++'s comparator wrappers; or None."""
    if decl.startswith("__gnu_cxx::__ops::"):
        return _COMPARATOR
    m = _RECORD.match(decl) or _ITERATOR.match(decl)
    if not m:
        return None
    found = class_types(module, m.group(1))
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


# members returning a reference to (or a pointer into) a std::vector's records
_ELEMENT_ACCESS = re.compile(
    r"^(?:__gnu_cxx::__normal_iterator<(?P<it>[A-Za-z_][\w:]*)\*, std::vector<[^()]*>::"
    r"operator(?:\*|\[\]|->)|std::vector<(?P<vec>[A-Za-z_][\w:]*), std::allocator<[^()]*>::"
    r"(?:operator\[\]|at|front|back|data))\(")


def returned_record(module, callee: str):
    """The module's struct type of the record a call of `callee` returns a pointer to: a vector
    iterator's `operator*` or a vector's `operator[]` over a non-template T (kept as calls at -O0
    and under -fno-inline: std::sort moves a record between two of their results); or None."""
    raw = callee.lstrip("@").strip('"')
    if not raw.startswith(("_ZNK9__gnu_cxx17__normal_iterator", "_ZN9__gnu_cxx17__normal_iterator",
                           "_ZNSt6vector", "_ZNKSt6vector")):
        return None
    m = _ELEMENT_ACCESS.match(demangled([raw])[0])
    if not m:
        return None
    return _record_type(module, (m.group("it") or m.group("vec")) + "*")

