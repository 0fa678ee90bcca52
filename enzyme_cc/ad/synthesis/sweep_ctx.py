"""What instruction rules see while a sweep is emitted: FwdCtx (forward sweep: renamed primal
names, forward shadows) and RevCtx (reverse sweep: primal values as planned, adjoint
accumulation), and the adjoint zero."""
from __future__ import annotations

import hashlib
import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import GLOBAL_REF, is_fp, record_leaves, zero_of
from ..analysis.activity_basics import integer_only
from ..analysis.speculative import guarded
from ..structure.diagnostics import demangled
from ..structure.type_layout import global_named


def adjoint_zero(ty: str) -> str:
    """The empty value of an adjoint accumulator: -0.0 for double and float, the identity of
    fadd (-0.0 + x == x for every x, +0.0 included), so LLVM folds the first accumulation
    `load; fadd; store` into a plain store (x + 0.0 does not fold: -0.0 + 0.0 is +0.0). Adjoints
    handed to the user go through user_zero (generate.finish_reverse)."""
    return "-0.0" if ty in ("double", "float") else zero_of(ty)


def copy_fields(ctx, ty: str, dst: str, src: str, which) -> str:
    """dst (a record of type ty) with the scalar fields for whose type which() holds taken from
    src: a pointer-and-float record's shadow pointers put into its tangent, or into the record
    shadow memory holds (whose float fields are adjoints)."""
    for path, lty in record_leaves(ty):
        if which(lty):
            idx = ", ".join(map(str, path))
            e, nxt = ctx.tmp(), ctx.tmp()
            ctx.emit(f"{e} = extractvalue {ty} {src}, {idx}")
            ctx.emit(f"{nxt} = insertvalue {ty} {dst}, {lty} {e}, {idx}")
            dst = nxt
    return dst


class _NoAdjoint(str):
    """What RevCtx.take returns for a register-held adjoint nothing was added to: the
    reverse of an instruction without effects on memory is then skipped (a known zero)."""


NO_ADJOINT = _NoAdjoint("-0.0")


def block_local_adjoints(synth, blocks) -> set[str]:
    """Active floating-point values whose every use is a non-phi instruction of their own
    block. The reverse of that block adds all their adjoint contributions before it reaches
    their definition, in one straight run of code (a rule emits no blocks of its own), so the
    adjoint lives in a register (RevCtx.local): no alloca, no zeroing, no load and store per
    contribution for the optimizer to clean up."""
    act, fn = synth.act, synth.fn
    cand = {}
    for b in blocks:
        for i in b.insts:
            if i.name and i.op != "phi" and i.name in act.active and is_fp(i.ty) and \
                    synth.value_type(i.name) == i.ty:
                cand[i.name] = b.label
    for b in fn.blocks:
        for i in b.insts:
            for v in i.locals_used():
                if v in cand and (i.op == "phi" or cand[v] != b.label):
                    del cand[v]
    return set(cand)


_GLOBAL_TOKEN = re.compile(r'(?<![-\w.$@"])' + GLOBAL_REF.pattern)   # not inside a name


def shadow_of_constant(v: str, shadow_of_global) -> str | None:
    """The shadow of a constant expression over one global (`getelementptr (i8, ptr @g, i64
    16)`, a phi's incoming address of a table entry): the same expression over the global's
    shadow, where it has one (shadow_of_global: its name or None)."""
    names = set(_GLOBAL_TOKEN.findall(v))
    if len(names) != 1 or v in names:
        return None
    g = names.pop()
    sg = shadow_of_global(g)
    if sg is None:
        return None
    return _GLOBAL_TOKEN.sub(lambda m: sg if m.group(0) == g else m.group(0), v)


def null_based_constant(v: str) -> bool:
    """A constant address made from an integer or from null (`inttoptr (i64 48 to ptr)`: an
    empty std::vector's begin + 1): never dereferenced, its own shadow."""
    return v.startswith("inttoptr") or v.startswith("getelementptr") and "ptr null" in v


class FwdCtx:
    """What forward rules see: renamed primal names and forward shadow names."""

    def __init__(self, synth, block, lines):
        self.synth, self.block, self.lines = synth, block, lines
        self.act = synth.act

    def p(self, v):
        return self.synth.r(v)

    def s(self, v):
        if not v.startswith("%"):
            if v in ("null", "undef", "poison", "zeroinitializer") or null_based_constant(v):
                return v
            sv = self.global_shadow(v)
            if sv is None:
                sv = shadow_of_constant(v, self.global_shadow)
            if sv is not None:
                return sv
            raise UserError(f"{self.synth.where(None)}: no shadow for '{v}' (a global or "
                            "constant used as active memory); hint: mark it inactive")
        if v not in self.act.shadowed and self.synth.null_based(v):
            return self.p(v)          # e.g. `gep (null, n)`: an end pointer never dereferenced
        if v not in self.act.shadowed:
            if integer_only(self.synth.fn, v, self.act.punned):
                return "null"         # integers by reference (Fortran): no derivative to hold
            d = self.synth.fn.defs.get(v)
            if getattr(d, "op", None) == "inttoptr" and d.ops[0].value not in self.act.ptrint:
                # an address made from a plain integer (Rust's dangling pointer of an empty
                # allocation: its alignment) joined with real ones: a null shadow, so a
                # derivative that ever went through it would fault, never read garbage
                return "null"
            scratch = self.synth.gen.inactive_scratch(self.synth, v)
            if scratch:
                return scratch
            param = any(p.name == v for p in self.synth.fn.params)
            fname = self.synth.fn.name[1:].strip('"')
            hint = ("mark the argument enzyme_dup" if self.synth.mode == "combined" else
                    f"every caller of '{fname}' must pass this argument memory that has a "
                    "shadow (enzyme_dup at the marker, or memory the derivative creates)") \
                if param else _origin_hint(self.synth.fn, v)
            raise UserError(f"{self.synth.where(self.synth.fn.defs.get(v))}: pointer '{v}' "
                            f"joins shadowed and unshadowed memory; hint: {hint}")
        return self.synth.sname(v)

    def global_shadow(self, g: str) -> str | None:
        """The shadow of global g where it has one: a constant's (constant_shadow), a global
        holding active data (one per lane in vector mode), an enzyme_inactive one's scratch."""
        fixed = self.synth.gen.unwritten_global_shadow(g)
        if fixed is not None:
            return fixed
        if g in self.act.global_shadows:
            width = getattr(self.synth, "width", 1)
            return self.synth.gen.shadow_global(g, self.synth.lane if width > 1 else None, width)
        if g in self.act.inactive_globals:
            return self.synth.gen.scratch_shadow(g)
        return None

    def emit(self, line):
        self.lines.append(line)

    def tmp(self, hint="t"):
        return self.synth.tmp(hint)

    def gen(self):
        return self.synth.gen

    def active(self, v: str) -> bool:
        return v in self.act.active

    def shadowed(self, v: str) -> bool:
        return v in self.act.shadowed


class RevCtx:
    """What reverse rules see: available primal values, shadows, adjoint accumulation."""

    def __init__(self, synth, block, dry):
        self.synth, self.block, self.dry = synth, block, dry
        self.act = synth.act
        self.requests: list = []         # the primal values the block reads, in order
        self._requested: set = set()     # (the same, for membership: blocks of 10^4 values)
        self.avail: dict = {}
        self.lines: list[str] = []
        self.phi_d = {}
        self.local: dict[str, str] = {}    # register-held adjoint -> its sum so far
        self.taken: set[str] = set()
        self.guard = None       # (adjoint, type) of a speculative value being reversed

    def _get(self, key):
        kind, v = key
        if kind in ("p", "s") and not v.startswith("%"):
            return v if kind == "p" else self._const_shadow(v)
        if self.dry:
            if key not in self._requested:
                self._requested.add(key)
                self.requests.append(key)
            return "%ad.dry"
        return self.avail[key]

    def _const_shadow(self, v):
        if v in ("null", "undef", "poison", "zeroinitializer") or null_based_constant(v):
            return v
        sv = self._global_shadow(v) or shadow_of_constant(v, self._global_shadow)
        if sv is None:
            raise UserError(f"{self.synth.where(None)}: no shadow for '{v}'")
        return sv

    def _global_shadow(self, g):
        fixed = self.synth.gen.unwritten_global_shadow(g)     # (as FwdCtx.global_shadow)
        if fixed is not None:
            return fixed
        if g in self.act.global_shadows:
            return self.synth.gen.shadow_global(g)
        if g in self.act.inactive_globals:
            return self.synth.gen.scratch_shadow(g)
        return None

    def p(self, v: str) -> str:
        """Primal value of operand v, usable in this reverse block."""
        return self._get(("p", v))

    def s(self, v: str) -> str:
        """Shadow pointer of v, usable in this reverse block."""
        if v.startswith("%") and v not in self.act.shadowed and self.synth.null_based(v):
            return self._get(("p", v))
        return self._get(("s", v))

    def active(self, v: str) -> bool:
        return v in self.act.active

    def shadowed(self, v: str) -> bool:
        return v in self.act.shadowed

    def emit(self, line):
        if not self.dry:
            self.lines.append(line)

    def tmp(self, hint="t"):
        return self.synth.tmp(hint)

    def take(self, v, ty) -> str:
        """Read the adjoint of v and reset it to zero (NO_ADJOINT: a register-held adjoint
        that nothing was added to)."""
        if v in self.synth.local_adjoints:
            self.taken.add(v)
            return self.local.pop(v, NO_ADJOINT)
        slot = self.synth.slots.get(v, "%ad.dry")
        d = self.tmp("d")
        self.emit(f"{d} = load {ty}, ptr {slot}")
        self.emit(f"store {ty} {adjoint_zero(ty)}, ptr {slot}")
        return d

    def add(self, v: str, ty: str, val: str):
        """Accumulate val into the adjoint of v (ignored for inactive values and constants);
        zero where the adjoint of the speculative value being reversed is (speculative.py)."""
        if v not in self.act.active:
            return
        if self.guard is not None and is_fp(ty):
            val = guarded(self, self.guard, ty, val)
        if v in self.synth.local_adjoints:
            if v in self.taken or self.synth.fn.defs[v].block is not self.block or \
                    ty != self.synth.fn.defs[v].ty:
                raise AssertionError(f"adjoint of {v} ({ty}) added outside its block's reverse")
            old = self.local.get(v)
            if old is None:
                self.local[v] = val           # -0.0 + val == val
            else:
                new = self.tmp("n")
                self.emit(f"{new} = fadd {ty} {old}, {val}")
                self.local[v] = new
            return
        slot = self.synth.slots.get(v, "%ad.dry")
        old, new = self.tmp("o"), self.tmp("n")
        self.emit(f"{old} = load {ty}, ptr {slot}")
        if is_fp(ty):
            self.emit(f"{new} = fadd {ty} {old}, {val}")
        else:
            self.emit(f"{new} = call {ty} @__enzyme_cc_add_{_agg_tag(ty)}({ty} {old}, {ty} {val})")
            self.synth.gen.need_aggregate_add(ty)
        self.emit(f"store {ty} {new}, ptr {slot}")

    def error(self, inst, why, hint):
        raise UserError(f"{self.synth.where(inst)}: {why}; hint: {hint}")

    def gen(self):
        return self.synth.gen


def _agg_tag(ty: str) -> str:
    return hashlib.sha1(ty.encode()).hexdigest()[:10]


def _origin_hint(fn, v: str) -> str:
    """The hint for a pointer without a shadow that is not a parameter: where it was read from
    a global (a static container's nodes: a global std::unordered_map memoizing results),
    naming the global; else the general one."""
    seen, todo = set(), [v]
    while todo and len(seen) < 64:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        if x.startswith("@"):
            name = x.lstrip("@").strip('"')
            shown = (demangled([name]) or [name])[0]
            return (f"the pointer is read from the global '{shown}' (a static container or a "
                    "table whose memory has no shadow): declare it in the differentiated "
                    "function, or pass it as an argument (enzyme_dup), so that its memory has a "
                    "shadow (docs/api.md, \"Shadows of globals\")")
        d = fn.defs.get(x)
        op = getattr(d, "op", None)
        if op in ("load", "getelementptr", "bitcast", "addrspacecast", "select", "phi"):
            todo += [o.value for o in (d.ops[1:] if op == "select" else d.ops)
                     if o.ty == "ptr" and o.value.startswith(("%", "@"))]
            todo += [global_named(o.value) for o in d.ops
                     if not o.value.startswith(("@", "%")) and global_named(o.value)]
    return ("the pointer was made by code whose result has no shadow (a call without bitcode "
            "or rule, or an integer): build that code with enzyme-cc, or keep active data out "
            "of that memory")
