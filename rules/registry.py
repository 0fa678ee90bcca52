"""The rule registry: instruction rules register themselves here; library rules come from TOML.

REVERSE[opcode](ctx, inst, d)  emits the adjoint of `inst` into the current reverse block; `d` is
                               the SSA name of the result's adjoint (None when the result is inactive).
FORWARD[opcode](ctx, inst)     emits what the forward sweep needs beside the primal instruction
                               (shadow pointers, shadow allocations); returns False to drop the primal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import tomli

from enzyme_cc.errors import UserError
from .formula import parse, check
from .fortran_catalog import inactive as fortran_inactive
from enzyme_cc.ad.parallel.openmp import KEPT

REVERSE: dict = {}
FORWARD: dict = {}
TANGENT: dict = {}      # forward mode: TANGENT[opcode](ctx, inst) -> tangent value name


def reverse(*ops):
    def deco(fn):
        for op in ops:
            REVERSE[op] = fn
        return fn
    return deco


def tangent(*ops):
    def deco(fn):
        for op in ops:
            TANGENT[op] = fn
        return fn
    return deco


def forward(*ops):
    def deco(fn):
        for op in ops:
            FORWARD[op] = fn
        return fn
    return deco


@dataclass
class CallRule:
    name: str
    args: list[str]
    partials: list            # ast nodes, or None for an inactive (integer) argument
    source: str
    intrinsic: str | None = None      # the LLVM intrinsic (base name) it also covers


_CALLS: dict[str, CallRule] = {}
_INTRINSICS: dict[str, CallRule] = {}
_INACTIVE: set[str] = set()
# functions that only relink pointers among their arguments' memory (container node links): the
# shadow structure follows by calling the same function on the shadows
_MIRROR: set[str] = set()
_loaded = False
_user_files: list[str] = []


def set_user_rule_files(paths: list[str]) -> None:
    global _loaded
    _user_files[:] = paths
    _loaded = False


_RULE_KEYS = ("args", "partials", "intrinsic", "float_variant")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _line_of(text: str, table: str, key: str | None = None) -> int | None:
    """The line of `[table]` (or of `key = ...` inside it) in a rule file, for messages."""
    lines = text.splitlines()
    head = re.compile(r"\s*\[\s*(\"?)" + re.escape(table) + r"\1\s*\]")
    for i, line in enumerate(lines):
        if head.match(line):
            if key is None:
                return i + 1
            for j in range(i + 1, len(lines)):
                if re.match(r"\s*\[", lines[j]):
                    break
                if re.match(r"\s*" + re.escape(key) + r"\s*=", lines[j]):
                    return j + 1
            return i + 1
    return None


def _load_file(text: str, where: str):
    """Reads one rule file into the tables. Within a file an explicitly named rule wins over the
    float variant of another (`[sinf]` over `[sin]`'s); a later file overrides an earlier one
    (user files are loaded after stdlib_rules/, so a user's rule for `sin` replaces ours)."""
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as e:
        raise UserError(f"{where}: invalid TOML: {e}")

    def err(name, msg, key=None):
        line = _line_of(text, name, key)
        raise UserError(f"{where}{f':{line}' if line else ''}: {msg}")

    explicit: dict[str, CallRule] = {}
    variants: dict[str, CallRule] = {}
    intrinsics: dict[str, CallRule] = {}
    inactive: set[str] = set()
    mirror: set[str] = set()
    for name, spec in data.items():
        if name in ("inactive", "mirror"):
            if not isinstance(spec, dict):
                err(name, f"'{name}' must be a table with a 'names' list")
            for k in spec:
                if k != "names":
                    err(name, f"[{name}]: unknown key '{k}' (known: names)", k)
            names = spec.get("names", [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                err(name, f"[{name}]: 'names' must be a list of strings", "names")
            (inactive if name == "inactive" else mirror).update(names)
            continue
        rname = f"rule '{name}'"
        if not isinstance(spec, dict):
            err(name, f"'{name}' must be a table ([{name}] with args and partials)")
        unknown = [k for k in spec if k not in _RULE_KEYS]
        if unknown:
            err(name, f"{rname}: unknown key '{unknown[0]}' (known: {', '.join(_RULE_KEYS)})",
                unknown[0])
        for k in ("args", "partials"):
            if k not in spec:
                err(name, f"{rname} needs '{k}'")
            if not isinstance(spec[k], list) or not all(isinstance(v, str) for v in spec[k]):
                err(name, f"{rname}: '{k}' must be a list of strings", k)
        args, partials = spec["args"], spec["partials"]
        for arg in args:
            if not _IDENT.match(arg) or arg in ("r", "where", "float"):
                err(name, f"{rname}: '{arg}' cannot name an argument", "args")
        if len(set(args)) != len(args):
            err(name, f"{rname}: an argument name appears twice", "args")
        if len(args) != len(partials):
            err(name, f"{rname}: {len(args)} args but {len(partials)} partials", "partials")
        if "intrinsic" in spec and (not isinstance(spec["intrinsic"], str) or
                                    not spec["intrinsic"].startswith("llvm.")):
            err(name, f"{rname}: 'intrinsic' must be a string naming an LLVM intrinsic "
                      "(\"llvm.NAME\")", "intrinsic")
        if not isinstance(spec.get("float_variant", True), bool):
            err(name, f"{rname}: 'float_variant' must be true or false", "float_variant")
        compiled = []
        for arg, p in zip(args, partials):
            if p.strip() == "inactive":
                compiled.append(None)
                continue
            line = _line_of(text, name, "partials")
            ctx = f"{where}{f':{line}' if line else ''}: {rname}, partial for '{arg}'"
            node = parse(p, ctx)
            check(node, set(args) | {"r"}, ctx)
            compiled.append(node)
        intr = intrinsic_base(spec["intrinsic"]) if "intrinsic" in spec else None
        old = _CALLS.get(name)
        if intr is None and old is not None and old.name == name and old.intrinsic and \
                len(old.args) == len(args):
            # overriding a rule (ours for sin) overrides it everywhere it applied: llvm.sin too
            intr = old.intrinsic
        rule = CallRule(name, args, compiled, where, intr)
        explicit[name] = rule
        if spec.get("float_variant", True):
            variants[name + "f"] = rule
            if where == "stdlib_rules/libm.toml":
                variants[name + "l"] = rule    # C's long double version (expl, powl, ...)
        if intr:
            intrinsics[intr] = rule
    _CALLS.update(variants)
    _CALLS.update(explicit)
    _INTRINSICS.update(intrinsics)
    _INACTIVE.difference_update(variants, explicit, intrinsics)
    for n in inactive | mirror:
        _CALLS.pop(n, None), _INTRINSICS.pop(n, None)
    _INACTIVE.difference_update(mirror)
    _MIRROR.difference_update(inactive)
    _INACTIVE.update(inactive)
    _MIRROR.update(mirror)


def _ensure_loaded():
    global _loaded
    if _loaded:
        return
    _CALLS.clear(), _INTRINSICS.clear(), _INACTIVE.clear(), _MIRROR.clear()
    pkg = resources.files("enzyme_cc.stdlib_rules")
    for f in sorted(pkg.iterdir(), key=lambda p: p.name):
        if f.name.endswith(".toml"):
            _load_file(f.read_text(), f"stdlib_rules/{f.name}")
    for path in _user_files:
        try:
            text = open(path).read()
        except OSError as e:
            raise UserError(f"cannot read rule file '{path}': {e.strerror}")
        _load_file(text, path)
    _loaded = True


_TYPE_SUFFIX = re.compile(r"(\.(f16|f32|f64|f80|f128|i\d+|p0|v\d+f\d+|v\d+i\d+))+$")


def intrinsic_base(name: str) -> str:
    """'llvm.sin.f64' -> 'llvm.sin'; 'llvm.powi.f64.i32' -> 'llvm.powi'."""
    return _TYPE_SUFFIX.sub("", name)


# Per-module overrides from in-source registrations (enzyme_cc.ad.api.registrations).
_module_inactive: set[str] = set()
_module_like: dict[str, str] = {}


_module_alloc: dict[str, tuple] = {}      # '@myalloc' -> (size argument index, '@myfree')


def set_module_registrations(inactive: set, like: dict, alloc_like: dict | None = None) -> None:
    _module_alloc.clear()
    _module_alloc.update(alloc_like or {})
    _module_inactive.clear()
    _module_inactive.update(n.lstrip("@").strip('"') for n in inactive)
    _module_like.clear()
    _module_like.update({k.lstrip("@").strip('"'): v for k, v in like.items()})


def call_rule(callee: str) -> CallRule | None:
    _ensure_loaded()
    name = callee.lstrip("@").strip('"')
    name = _module_like.get(name, name)
    if name.startswith("llvm."):
        return _INTRINSICS.get(intrinsic_base(name))
    return _CALLS.get(name)


def is_mirror_call(callee: str) -> bool:
    _ensure_loaded()
    return callee.lstrip("@").strip('"') in _MIRROR


# generated runtime helpers that only keep blocks alive until a gradient ends (a higher-order
# round differentiating a gradient carries no derivative through them)
_RUNTIME_INACTIVE = {"__enzyme_cc_defer_free", "__enzyme_cc_free_deferred"}
# libstdc++'s std::string and std::wstring members (explicitly instantiated in the shared
# library, so a call to one has no bitcode: _M_replace, _M_append, _M_assign, compare, find...):
# character data, which never carries a derivative (Enzyme treats them as inactive too)
_STRING_MEMBERS = tuple(f"_ZN{k}St7__cxx1112basic_stringI{c}St11char_traitsI{c}ESaI{c}EE"
                        for k in ("", "K") for c in ("c", "w")) + (
    # std::to_string / to_wstring of a float: a variadic template formatting it with vsnprintf
    # (its bitcode reads the value through a va_list)
    "_ZN9__gnu_cxx12__to_xstringINSt7__cxx1112basic_stringI",)


def is_string_member(callee: str) -> bool:
    """A libstdc++ std::string / std::wstring member (or std::to_string's formatter) without
    bitcode: its `this` (or sret) object is a string."""
    return callee.lstrip("@").strip('"').startswith(_STRING_MEMBERS)


def is_inactive_call(callee: str) -> bool:
    _ensure_loaded()
    name = callee.lstrip("@").strip('"')
    return name in _INACTIVE or name in _RUNTIME_INACTIVE or name in KEPT or name in _module_inactive or intrinsic_base(name) in _INACTIVE or \
        (name.startswith("llvm.") and intrinsic_base(name) + ".p0" in _INACTIVE) or \
        fortran_inactive(name) or name.startswith(_STRING_MEMBERS)


def allocator(callee: str):
    """(size argument index, deallocation function) of a registered allocation-like function."""
    return _module_alloc.get(callee)


def is_deallocator(callee: str) -> bool:
    return any(f == callee for _, f in _module_alloc.values())
