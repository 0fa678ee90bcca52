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
from .formula import parse

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


_CALLS: dict[str, CallRule] = {}
_INTRINSICS: dict[str, CallRule] = {}
_INACTIVE: set[str] = set()
_loaded = False
_user_files: list[str] = []


def set_user_rule_files(paths: list[str]) -> None:
    global _loaded
    _user_files[:] = paths
    _loaded = False


def _load_file(text: str, where: str):
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as e:
        raise UserError(f"{where}: invalid TOML: {e}")
    for name, spec in data.items():
        if name == "inactive":
            _INACTIVE.update(spec.get("names", []))
            continue
        if not isinstance(spec, dict) or "args" not in spec or "partials" not in spec:
            raise UserError(f"{where}: rule '{name}' needs 'args' and 'partials'")
        unknown = set(spec) - {"args", "partials", "intrinsic", "float_variant"}
        if unknown:
            raise UserError(f"{where}: rule '{name}': unknown key '{sorted(unknown)[0]}'")
        if len(spec["args"]) != len(spec["partials"]):
            raise UserError(f"{where}: rule '{name}': {len(spec['args'])} args but "
                            f"{len(spec['partials'])} partials")
        partials = [None if p == "inactive" else parse(p, f"{where}: rule '{name}'")
                    for p in spec["partials"]]
        rule = CallRule(name, spec["args"], partials, where)
        _CALLS[name] = rule
        if spec.get("float_variant", True):
            _CALLS.setdefault(name + "f", rule)
        if "intrinsic" in spec:
            _INTRINSICS[spec["intrinsic"]] = rule


def _ensure_loaded():
    global _loaded
    if _loaded:
        return
    _CALLS.clear(), _INTRINSICS.clear(), _INACTIVE.clear()
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


def call_rule(callee: str) -> CallRule | None:
    _ensure_loaded()
    name = callee.lstrip("@").strip('"')
    if name.startswith("llvm."):
        return _INTRINSICS.get(intrinsic_base(name))
    return _CALLS.get(name)


def is_inactive_call(callee: str) -> bool:
    _ensure_loaded()
    name = callee.lstrip("@").strip('"')
    return name in _INACTIVE or intrinsic_base(name) in _INACTIVE or \
        (name.startswith("llvm.") and intrinsic_base(name) + ".p0" in _INACTIVE)
