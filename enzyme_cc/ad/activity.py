"""Activity analysis: which float values carry a derivative, which pointers need a shadow.

Forward propagation to a fixed point (phis make it iterative): a float is active when it depends
on an active input or is read from memory that has a shadow; a pointer has a shadow when it is
derived from a duplicated argument, a local allocation, or is read from shadowed memory.
Integers never carry a derivative (seeds/001, section 2).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import is_fp
from enzyme_cc.rules import is_inactive_call, call_rule

ALLOCATORS = {"@malloc", "@calloc", "@_Znwm", "@_Znam", "@_ZnwmRKSt9nothrow_t", "@_ZnamRKSt9nothrow_t",
              "@_ZnwmSt11align_val_t", "@_ZnamSt11align_val_t", "@aligned_alloc", "@realloc"}
# (realloc: the result always gets a shadow, even when growing from NULL)
FREES = {"@free", "@_ZdlPv", "@_ZdaPv", "@_ZdlPvm", "@_ZdaPvm", "@_ZdlPvSt11align_val_t",
         "@_ZdlPvmSt11align_val_t", "@_ZdaPvSt11align_val_t"}


def carries_float(ty: str) -> bool:
    return is_fp(ty) or (ty.startswith(("{", "[", "<{")) and any(
        f in ty for f in ("double", "float", "half", "x86_fp80", "fp128")))


class Activity:
    def __init__(self, fn, module, arg_act: list[str], callee_info, types=None):
        """arg_act per param: 'active', 'dup', 'dupnoneed', 'const'.
        callee_info(inst) -> (result_active, result_shadowed) for calls to functions with bitcode."""
        self.fn, self.module = fn, module
        self.active: set[str] = set()     # active float/aggregate values (original names)
        self.shadowed: set[str] = set()   # pointer values with a shadow
        self.punned: dict[str, str] = {}  # integer values that carry float data -> float type
        self.ptrint: set[str] = set()     # integer values that carry a pointer (shadow as int too)
        self.unknown_copies: set[str] = set()   # integers read from active memory, type unknown
        self.types = types
        # Mutable globals the function stores active data into get a shadow global.
        self.global_shadows: set[str] = set()
        for p, a in zip(fn.params, arg_act):
            if a == "active":
                self.active.add(p.name)
            elif a in ("dup", "dupnoneed"):
                self.shadowed.add(p.name)
        changed = True
        while changed:
            changed = False
            for inst in fn.insts():
                if not inst.name:
                    continue
                act, sh = self._infer(inst, callee_info)
                if act and inst.name not in self.active:
                    self.active.add(inst.name)
                    changed = True
                if sh and inst.name not in self.shadowed:
                    self.shadowed.add(inst.name)
                    changed = True
            for inst in fn.insts():
                if inst.op == "store" and (inst.ops[0].value in self.active or
                                           inst.ops[0].value in self.shadowed):
                    from .typeinfo import underlying
                    g = underlying(fn, inst.ops[1].value)
                    if g.startswith("@") and g in module.globals and \
                            not module.is_constant_global(g) and g not in self.shadowed:
                        self.shadowed.add(g)
                        self.global_shadows.add(g)
                        changed = True

    def is_active(self, v: str) -> bool:
        return v in self.active

    def has_shadow(self, v: str) -> bool:
        return v in self.shadowed or v == "null"

    def _any_active(self, inst):
        return any(o.value in self.active for o in inst.ops)

    def _infer(self, inst, callee_info):
        op, ty = inst.op, inst.ty
        fp = carries_float(ty)
        isptr = ty == "ptr"
        if op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc"):
            return self._any_active(inst), False
        if op in ("phi", "select", "freeze"):
            vals = inst.ops[1:] if op == "select" else inst.ops
            pun = [self.punned[o.value] for o in vals if o.value in self.punned]
            if pun and ty in ("i64", "i32"):
                self.punned[inst.name] = pun[0]
                return True, False
            return (fp and any(o.value in self.active for o in vals),
                    isptr and any(o.value in self.shadowed for o in vals))
        if op == "bitcast" and inst.ops and inst.ops[0].value in self.punned and is_fp(ty):
            return True, False                       # i64 copy of a double, viewed as double again
        if op == "bitcast" and inst.ops and ty in ("i64", "i32") and inst.ops[0].value in self.active:
            self.punned[inst.name] = inst.ops[0].ty
            return True, False
        if op == "getelementptr" or op in ("bitcast", "addrspacecast"):
            return False, isptr and inst.ops[0].value in self.shadowed
        if op == "load":
            src = inst.ops[0].value in self.shadowed
            if src and ty in ("i64", "i32") and self.types is not None:
                kind = self.types.kind_at(inst.ops[0].value, inst.md.get("!tbaa"))
                if kind in ("double", "float") and {"double": "i64", "float": "i32"}[kind] == ty:
                    self.punned[inst.name] = kind       # an untyped copy of float data
                    return True, False
                if kind == "float" and ty == "i64":
                    self.punned[inst.name] = "< 2 x float >"
                    return True, False
                if kind is None:
                    self.unknown_copies.add(inst.name)
                if kind == "ptr" and ty == "i64":
                    self.ptrint.add(inst.name)
                    return False, False
            return fp and src, isptr and src
        if op == "alloca":
            return False, True
        if op in ("extractvalue", "insertvalue", "extractelement", "insertelement", "shufflevector"):
            return fp and self._any_active(inst), isptr and any(
                o.value in self.shadowed for o in inst.ops)
        if op in ("call", "invoke"):
            if inst.callee in ALLOCATORS:
                return False, True
            if is_inactive_call(inst.callee or ""):
                return False, False
            rule = call_rule(inst.callee or "")
            if rule is not None:
                return fp and self._any_active(inst), False
            if self.module.defines(inst.callee or ""):
                return callee_info(inst, self)
            return fp and (self._any_active(inst) or any(
                o.value in self.shadowed for o in inst.ops)), False
        return False, False
