"""Enzyme's truncation API: run a function with its floating-point values in a lower precision.

`__enzyme_truncate_op_func(f, from, to)` / `(f, from, exponent, significand)` and
`__enzyme_truncate_mem_func(...)` return a copy of f (and of every function it calls) in which
each operation on `from`-bit floats (64: double, 32: float) is computed in the target format
(widths 16/32/64 name IEEE half/single/double; the 4-argument form gives the exponent and
significand widths). The modes differ in what a `from` value holds:

- op mode: a value is an ordinary `from` float; every operation rounds its operands to the
  target, computes there and widens the result back (values in memory stay full width);
- mem mode: a value (argument, result, memory) holds the target representation:
  `__enzyme_truncate_mem_value(x, from, to)` makes one, `__enzyme_expand_mem_value` reads it.

Targets of Enzyme's own widths (float 8/23, half 5/10) are computed inline with
fptrunc/fpext and arithmetic of that type; a mem-mode value keeps the narrow float's bits in the
low bits of the `from` slot (upper bits zero). Every other target calls Enzyme's runtime ABI,
`__enzyme_fprt_<from>_<kind>_<op>(operands..., i64 exponent, i64 significand, i64 mode,
ptr loc)` (mode 1: mem, 2: op), which `<enzyme/fprt/mpfr.h>` implements with MPFR (in mem
mode a value is a pointer to an MPFR number); the link step supplies it when the program does
not. A program that defines its own (non-weak) `__enzyme_fprt_<from>_*` functions gets runtime
calls for every target of that type, as in Enzyme, so its implementation is honoured.

Lowered before AD (like ad/api/batch.py): the marker call becomes the clone's address.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from ..structure.diagnostics import located, source_of
from .truncate_clone import _Clone, _identity_of as _identity_v
from .truncate_ops import IEEE, MEM, NATIVE, OP, _Body, line_of
from enzyme_cc.ir.lexer import c_string
from enzyme_cc.ir.model import parse_module

_CALL = re.compile(r"@\"?[\w.$]*__enzyme_(truncate_(mem|op)_func|truncate_mem_value|"
                   r"expand_mem_value)[\w.$]*\"?\(")
_HINT = ("call __enzyme_truncate_op_func((void *)f, 64, 32) or (f, 64, exponent_bits, "
         "significand_bits) with constant widths and a function defined in the program")


class Truncation:
    def __init__(self, mode, from_bits, to, where, user_fprt):
        if from_bits not in (32, 64):
            raise UserError(f"{where}: truncation from a {from_bits}-bit float is not supported "
                            f"(only from 64, double, or 32, float); hint: {_HINT}")
        self.mode, self.from_ty = mode, NATIVE[IEEE[from_bits]]
        self.tag = f"{from_bits}_{IEEE[from_bits][1]}"
        self.exp, self.sig = to
        if not (1 < self.exp and 1 < self.sig) or (self.exp, self.sig) >= IEEE[from_bits] \
                or self.exp > IEEE[from_bits][0] or self.sig > IEEE[from_bits][1]:
            raise UserError(f"{where}: cannot truncate {from_bits}-bit floats to {self.exp} "
                            f"exponent and {self.sig} significand bits (the target must be "
                            f"narrower than the source); hint: {_HINT}")
        native = NATIVE.get(to)
        self.native = None if user_fprt else native
        if mode == MEM and not self.native and self.from_ty != "double":
            raise UserError(f"{where}: mem-mode truncation of floats through the runtime needs "
                            "64-bit values (a float cannot hold the runtime's pointer); hint: "
                            "use __enzyme_truncate_op_func, or truncate doubles")

    @property
    def key(self):
        return (self.mode, self.tag, self.exp, self.sig, self.native)

    def label(self):
        return f"{'mem' if self.mode == MEM else 'op'}_{self.tag}to{self.exp}_{self.sig}"


# truncated copy -> the marker call that made it (for errors about its derivative)
MADE_AT: dict[str, str] = {}


def lower(text: str) -> str:
    """Rewrite every truncation marker call; returns the module text with the clones added."""
    MADE_AT.clear()
    if not _CALL.search(text):
        return text
    return _Lowering(parse_module(text)).run()


def refuse_derivative(fn):
    """Only op-mode copies computing in an LLVM type are differentiable (fptrunc/fpext and the
    narrow arithmetic have rules); a mem-mode value is a bit pattern, and the runtime's
    operations have no derivatives."""
    name = fn.name
    if not name.startswith('@"__enzyme_cc_trunc.'):
        return
    mem = name.startswith('@"__enzyme_cc_trunc.mem_')
    runtime = next((i for i in fn.insts() if i.op == "call" and
                    (i.callee or "").startswith("@__enzyme_fprt_")), None)
    if mem or runtime:
        plain = name[2:-1].split(".", 2)[2]
        why = ("mem-mode values are bit patterns of the narrow format" if mem else
               "it computes through the truncation runtime (a format without an LLVM type), "
               "whose operations have no derivatives")
        raise UserError(f"{MADE_AT.get(name, 'a truncation marker call')}: the truncated copy of "
                        f"'{plain}' is called by differentiated code, but enzyme-cc "
                        f"differentiates only op-mode truncation to float or half ({why});"
                        " hint: use __enzyme_truncate_op_func(f, 64, 32) (or 16) there, or call "
                        "the truncated function outside the differentiated code")


class _Lowering:
    def __init__(self, module):
        self.m = module
        self.lines = list(module._lines)
        self.extra: list[str] = []
        self.decls: dict[str, str] = {}
        self.clones: dict[tuple, str] = {}
        self.locs: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.tmps = 0
        # a program's own (strong) runtime functions: Enzyme calls them for every target
        self.user_fprt = {m.group(1) for name, (a, _) in module._bodies.items()
                          for m in [re.match(r'@"?__enzyme_fprt_(\d+_\d+)_', name)]
                          if m and not re.search(r"\b(weak|weak_odr|linkonce|linkonce_odr)\b",
                                                 module._lines[a].split("@")[0])}

    def run(self) -> str:
        for name, (start, end) in list(self.m._bodies.items()):
            if name.startswith('@"__enzyme_cc_trunc') or \
                    not _CALL.search("\n".join(self.m._lines[start:end])):
                continue
            fn = self.m.function(name)
            for inst in list(fn.insts()):
                if inst.op in ("call", "invoke") and inst.callee and _CALL.match(inst.callee + "("):
                    self._marker(fn, inst)
        decls = [d for n, d in sorted(self.decls.items()) if n not in self.m.declarations
                 and not self.m.defines(n)]
        return "\n".join(self.lines) + "\n" + "\n".join(self.extra + decls) + "\n"

    def _marker(self, fn, inst):
        where = located(self.m, fn, inst)
        callee = inst.callee
        if inst.op == "invoke":
            raise UserError(f"{where}: truncation markers in a try block are not supported; "
                            "hint: call them outside the try block")
        vals = []
        for o in inst.ops[1:]:
            if not re.fullmatch(r"-?\d+", o.value):
                raise UserError(f"{where}: the widths passed to '{_plain(callee)}' must be "
                                f"integer constants (got '{o.value}'); hint: {_HINT}")
            vals.append(int(o.value))
        if "func" in callee:
            mode = MEM if "truncate_mem_func" in callee else OP
            target = inst.ops[0].value if inst.ops else ""
            if not target.startswith("@") or self.m.function(target) is None:
                raise UserError(f"{where}: the first argument of '{_plain(callee)}' must be a "
                                f"function defined in the program; hint: {_HINT}")
            if len(vals) not in (2, 3):
                raise UserError(f"{where}: '{_plain(callee)}' takes (f, from, to) or (f, from, "
                                f"exponent, significand), not {len(inst.ops)} arguments")
            tr = self._truncation(mode, vals, where, callee)
            new = self.clone(target, tr, where)
            self._replace(inst, f"{inst.name} = {_identity(inst.ty, new)}" if inst.name else "")
            for use in fn.insts():      # the copy itself: direct calls, markers of it
                if inst.name and use is not inst and inst.name in use.toks:
                    toks = [new if t == inst.name else t for t in use.toks]
                    self.lines[use.line] = line_of(toks) + "".join(
                        f", {k} {v}" for k, v in use.md.items())
                    for k in range(use.line + 1, use.line_end + 1):
                        self.lines[k] = ""
            return
        # __enzyme_truncate_mem_value(x, from, to) / __enzyme_expand_mem_value(x, from, to)
        if len(vals) != 2 or not inst.ops or inst.ops[0].ty not in ("double", "float"):
            raise UserError(f"{where}: '{_plain(callee)}' takes (value, from, to): a float or "
                            f"double and two constant widths; hint: {_HINT}")
        tr = self._truncation(MEM, vals, where, callee)
        if inst.ops[0].ty != tr.from_ty:
            raise UserError(f"{where}: '{_plain(callee)}' got a {inst.ops[0].ty} for {vals[0]}-bit "
                            f"values; hint: pass a {tr.from_ty}")
        body = _Body(self, tr, None)
        x = inst.ops[0].value
        if "truncate" in callee:
            v = body.rep(x, tr.from_ty, self._loc(inst))
        else:
            v, ty = body.real(x, self._loc(inst))
            v = body.cast(v, ty, tr.from_ty)
        out = body.out + ([f"{inst.name} = {_identity(inst.ty, v)}"] if inst.name else [])
        self._replace(inst, "\n".join(out))

    def _truncation(self, mode, vals, where, callee):
        to = IEEE.get(vals[1]) if len(vals) == 2 else tuple(vals[1:])
        if to is None or vals[0] not in IEEE:
            raise UserError(f"{where}: the float widths passed to '{_plain(callee)}' must be 16, "
                            "32 or 64 (got "
                            f"{', '.join(map(str, vals))}); hint: {_HINT}")
        tag = f"{vals[0]}_{IEEE[vals[0]][1]}"
        return Truncation(mode, vals[0], to, where, tag in self.user_fprt)

    def _replace(self, inst, text):
        self.lines[inst.line] = text
        for k in range(inst.line + 1, inst.line_end + 1):
            self.lines[k] = ""

    def clone(self, name, tr, where) -> str:
        """The truncated copy of function `name` (made once per truncation)."""
        key = (name, tr.key)
        if key not in self.clones:
            plain = name[1:].strip('"')
            self.clones[key] = new = f'@"__enzyme_cc_trunc.{tr.label()}.{plain}"'
            MADE_AT[new] = where
            self.extra.append(_Clone(self, self.m.function(name), tr, new).text())
        return self.clones[key]

    def declare(self, name, ret, args):
        self.decls.setdefault(name, f"declare {ret} {name}({', '.join(args)})")

    def _loc(self, inst) -> str:
        """Enzyme's `loc` argument: a C string with the source location of the operation."""
        src = (source_of(self.m, inst.md.get("!dbg")) if inst is not None else None) or "unknown"
        if src not in self.locs:
            g = f"@__enzyme_cc_trunc.loc.{len(self.locs)}"
            self.extra.append(c_string(g, src.encode() + b"\0"))
            self.locs[src] = g
        return self.locs[src]

    def pure_free_group(self, group):
        """An attribute group like `group` without memory-effect attributes: a clone that calls
        the runtime reads and writes memory even when the original was pure."""
        if group not in self.groups:
            text = self.m.attr_groups.get(group, "{ }")
            text = re.sub(r"\bmemory\([^)]*\)|\b(readnone|readonly|writeonly|argmemonly|"
                          r"inaccessiblememonly|speculatable|willreturn|nosync|nofree)\b", "", text)
            self.groups[group] = g = f"#{9000 + len(self.groups)}"
            self.extra.append(f"attributes {g} = {text}")
        return self.groups[group]


def _plain(callee: str) -> str:
    m = re.search(r"__enzyme_\w+?(func|value)", callee)
    return m.group(0) if m else callee.lstrip("@")


def _identity(ty, v):
    return _identity_v(v, ty)
