"""The truncated copy of one function (ad/api/truncate.py): each instruction rewritten for one
Truncation. Debug records and metadata attachments are dropped (the copy has no DISubprogram)."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import join, scalar_of
from ..structure.diagnostics import located
from .truncate_ops import (_BINOPS, INTRINSICS, LIBM, MEM, _SUFFIX, _Body, _const_value, _vec,
                           line_of)

_CASTS = ("fptosi", "fptoui", "sitofp", "uitofp", "fpext", "fptrunc", "bitcast")
_FROM_HINT = ("hint: truncate only code whose floats stay floats, or expand the value "
              "(__enzyme_expand_mem_value) before it leaves the truncated function")


class _Clone:
    def __init__(self, low, fn, tr, name):
        self.low, self.fn, self.tr, self.name = low, fn, tr, name
        self.m = low.m
        self.prelude: list[str] = []       # constants a phi needs, made in the entry block

    def text(self) -> str:
        fn, tr = self.fn, self.tr
        params = []
        for p in fn.params:
            if p.ty == "...":
                params.append("...")
                continue
            attrs = re.sub(r"\bnofpclass \( [^)]* \)", "", " ".join(p.attrs)).split()
            params.append(" ".join([p.ty] + attrs + ([p.name] if p.name else [])))
        group = fn.attr_group if tr.native else \
            (self.low.pure_free_group(fn.attr_group) if fn.attr_group else "")
        pers = f" personality {fn.personality}" if fn.personality else ""
        head = (f"define internal {fn.cconv + ' ' if fn.cconv else ''}{fn.ret_ty} {self.name}("
                f"{', '.join(params)}) {group or ''}{pers} {{")
        body = []
        for k, b in enumerate(fn.blocks):
            label = b.label[1:]
            body.append(f"{label}:")
            at = len(body)
            for inst in b.insts:
                body += ["  " + s for s in self.inst(inst) if s]
            if k == 0:
                entry_at = at
        body[entry_at:entry_at] = ["  " + s for s in self.prelude]
        return "\n".join([head] + body + ["}"])

    # -- helpers ---------------------------------------------------------------------------
    def where(self, inst):
        return located(self.m, self.fn, inst)

    def is_from(self, ty) -> bool:
        return scalar_of(ty or "") == self.tr.from_ty

    def body(self) -> _Body:
        return _Body(self.low, self.tr, self.fn)

    def refuse(self, inst, what, hint=_FROM_HINT):
        mode = "mem" if self.tr.mode == MEM else "op"
        raise UserError(f"{self.where(inst)}: cannot truncate this {what} ({mode}-mode "
                        f"truncation of '{self.fn.name[1:].strip(chr(34))}' to "
                        f"{self.tr.exp} exponent / {self.tr.sig} significand bits); {hint}")

    def no_vector(self, inst, ty):
        if ty.startswith("<") and not self.tr.native:
            self.refuse(inst, "vector operation", "hint: the runtime computes scalars only; "
                        "truncate to float or half, or keep the code scalar")

    def mem_consts(self, inst, toks, b) -> list[str]:
        """mem mode: every `from` constant operand replaced by its representation."""
        if self.tr.mode != MEM:
            return toks
        toks = list(toks)
        loc = self.low._loc(inst)
        phi = inst.op == "phi" and self.is_from(inst.ty)
        for k in range(len(toks) - 1):
            nxt = toks[k + 1]
            if not (toks[k] == self.tr.from_ty or (phi and toks[k] == "[")):
                continue
            if _const_value(nxt) is None:
                continue
            if phi and not self.tr.native:
                pre = self.body()
                toks[k + 1] = pre.packed_const(nxt, loc)
                self.prelude += pre.out
            else:
                toks[k + 1] = b.packed_const(nxt, loc)
        return toks

    # -- instructions ----------------------------------------------------------------------
    def inst(self, inst) -> list[str]:
        tr, b = self.tr, self.body()
        op = inst.op
        loc = self.low._loc(inst) if (op in _BINOPS + ("fcmp", "fneg", "call", "load") or
                                      op in _CASTS) else None
        if op in _BINOPS and self.is_from(inst.ty):
            self.no_vector(inst, inst.ty)
            a, c = (b.operand(o.value, inst.ty, loc) for o in inst.ops)
            if tr.native:
                r = b.emit(f"{op} {' '.join(inst.flags)} {_vec(inst.ty, tr.native)} {a}, {c}")
                b.out.append(f"{inst.name} = {_identity_of(b.result(r, inst.ty), inst.ty)}")
            else:
                r = b.fprt(f"binop_{op}", [(inst.ty, a), (inst.ty, c)], inst.ty, loc)
                b.out.append(f"{inst.name} = {_identity_of(r, inst.ty)}")
            return b.out
        if op == "fneg" and self.is_from(inst.ty) and tr.mode == MEM:
            self.no_vector(inst, inst.ty)
            x = b.operand(inst.ops[0].value, inst.ty, loc)
            if tr.native:
                r = b.result(b.emit(f"fneg {_vec(inst.ty, tr.native)} {x}"), inst.ty)
            else:       # -x = -0 - x, exactly, in the runtime's arithmetic
                z = b.packed_const("-0.0", loc)
                r = b.fprt("binop_fsub", [(inst.ty, z), (inst.ty, x)], inst.ty, loc)
            b.out.append(f"{inst.name} = {_identity_of(r, inst.ty)}")
            return b.out
        if op == "fcmp" and self.is_from(inst.ops[0].ty):
            ty = inst.ops[0].ty
            self.no_vector(inst, ty)
            a, c = (b.operand(o.value, ty, loc) for o in inst.ops)
            if tr.native:
                b.out.append(f"{inst.name} = fcmp {' '.join(inst.flags)} {inst.pred} "
                             f"{_vec(ty, tr.native)} {a}, {c}")
            else:
                r = b.fprt(f"fcmp_{inst.pred}", [(ty, a), (ty, c)], "i1", loc)
                b.out.append(f"{inst.name} = {_identity_of(r, 'i1')}")
            return b.out
        if op in _CASTS and tr.mode == MEM:
            got = self.cast(inst, b, loc)
            if got is not None:
                return got
        if op == "load" and tr.mode == MEM and self.is_from(inst.ty) and \
                self.constant_memory(inst.ops[0].value):
            # a constant global holds full-width numbers, never representations
            self.no_vector(inst, inst.ty)
            raw = b.emit(join(inst.toks[2:]))
            b.out.append(f"{inst.name} = {_identity_of(b.rep(raw, inst.ty, loc), inst.ty)}")
            return b.out
        if op in ("call", "invoke"):
            return self.call(inst, b, loc)
        if op == "atomicrmw" and tr.mode == MEM and self.is_from(inst.ty):
            self.refuse(inst, "atomic update", "hint: keep atomics outside the truncated code")
        if tr.mode == MEM and op in ("bitcast",) and (self.is_from(inst.ty) or
                                                      self.is_from(inst.ops[0].ty)):
            self.refuse(inst, "reinterpretation of a truncated value's bits")
        return b.out + [line_of(self.mem_consts(inst, inst.toks, b))]

    def constant_memory(self, ptr) -> bool:
        seen = 0
        while ptr.startswith("%") and seen < 8:
            d = self.fn.defs.get(ptr)
            if getattr(d, "op", None) != "getelementptr":
                return False
            ptr, seen = d.ops[0].value, seen + 1
        g = re.search(r'@[-\w.$]+|@"[^"]*"', ptr)
        return bool(g) and self.m.is_constant_global(g.group(0))

    def cast(self, inst, b, loc):
        """mem mode: casts into or out of the `from` type cross the representation."""
        src, dst, v = inst.ops[0].ty, inst.ty, inst.ops[0].value
        if not (self.is_from(src) or self.is_from(dst)):
            return None
        if inst.op == "bitcast":
            self.refuse(inst, "reinterpretation of a truncated value's bits")
        self.no_vector(inst, src if self.is_from(src) else dst)
        if self.is_from(src):                          # fptosi / fpext / fptrunc of a value
            x, ty = (b.unpack(v, src), _vec(src, self.tr.native)) if self.tr.native else \
                b.real(v, loc)
            if inst.op in ("fpext", "fptrunc"):
                r = b.cast(x, ty, dst)
            else:
                r = b.emit(f"{inst.op} {ty} {x} to {dst}")
        else:                                          # sitofp / fpext / fptrunc into one
            if inst.op in ("sitofp", "uitofp"):
                work = _vec(dst, self.tr.native) if self.tr.native else dst
                x, ty = b.emit(f"{inst.op} {src} {v} to {work}"), work
            else:
                x, ty = v, src
            r = b.pack(b.cast(x, ty, _vec(dst, self.tr.native)), dst) if self.tr.native else \
                b.rep(x, ty, loc)
        b.out.append(f"{inst.name} = {_identity_of(r, dst)}")
        return b.out

    def call(self, inst, b, loc) -> list[str]:
        tr = self.tr
        callee = inst.callee or ""
        floats = [o for o in inst.ops if self.is_from(o.ty)] or self.is_from(inst.ty)
        if callee.startswith("@llvm.dbg."):
            return []
        if not callee.startswith("@"):
            if floats or callee != "asm":
                self.refuse(inst, "call through a function pointer", "hint: call the function "
                            "directly, so that its truncated copy can be called")
            return [line_of(inst.toks)]
        if self.m.defines(callee) and not callee.startswith('@"__enzyme_cc_trunc'):
            new = self.low.clone(callee, tr, self.where(inst))
            toks = [new if t == callee else t for t in inst.toks]
            if not tr.native:            # the call site must not promise the original's purity
                toks = [t for t in toks if not re.fullmatch(r"#\d+", t)]
            return b.out + [line_of(self.mem_consts(inst, toks, b))]
        plain = callee[1:].strip('"')
        if plain.startswith("llvm."):
            parts = plain[5:].split(".")
            if parts[0] not in INTRINSICS or not floats:
                if floats and tr.mode == MEM:
                    self.refuse(inst, f"call of '{plain}'", "hint: enzyme-cc truncates "
                                + ", ".join(sorted(INTRINSICS)) + " intrinsics")
                return b.out + [line_of(self.mem_consts(inst, inst.toks, b))]
            native = "llvm." + ".".join([parts[0]] + [self.suffix(p) for p in parts[1:]]) \
                if tr.native else None
            return self.math(inst, b, loc, plain, "intr_" + plain.replace(".", "_"), native)
        base = plain[:-1] if tr.from_ty == "float" and plain.endswith("f") else plain
        if floats and base in LIBM and (tr.from_ty == "double") == (base == plain):
            return self.math(inst, b, loc, plain, "func_" + plain, base + "f")
        if floats and tr.mode == MEM:
            self.refuse(inst, f"call of '{plain}', which has no bitcode",
                        "hint: expand the values first (__enzyme_expand_mem_value), or build "
                        f"'{plain}' with enzyme-cc so that it is truncated too")
        return b.out + [line_of(inst.toks)]

    def suffix(self, part):
        m = re.fullmatch(r"(v\d+)?" + _SUFFIX[self.tr.from_ty], part)
        return (m.group(1) or "") + _SUFFIX[self.tr.native] if m else part

    def math(self, inst, b, loc, plain, kind, native_name):
        """An intrinsic or libm call computed in the target format."""
        tr = self.tr
        if inst.op == "invoke":
            self.refuse(inst, f"invoke of '{plain}'", "hint: call it outside a try block")
        self.no_vector(inst, inst.ty if self.is_from(inst.ty) else inst.ops[0].ty)
        args = [(o.ty, b.operand(o.value, o.ty, loc) if self.is_from(o.ty) else o.value)
                for o in inst.ops]
        if not tr.native:
            r = b.fprt(kind, args, inst.ty, loc)
        else:
            narrow = [(_vec(t, tr.native) if self.is_from(t) else t, v) for t, v in args]
            rty = _vec(inst.ty, tr.native) if self.is_from(inst.ty) else inst.ty
            if native_name.startswith("llvm."):
                self.low.declare("@" + native_name, rty, [t for t, _ in narrow])
                call_args, r_ty, name = narrow, rty, native_name
            else:   # libm has no half functions: compute in float and round (as C does)
                call_args = [("float", b.cast(v, t, "float")) if t == tr.native else (t, v)
                             for t, v in narrow]
                r_ty = "float" if rty == tr.native else rty
                self.low.declare("@" + native_name, r_ty, [t for t, _ in call_args])
                name = native_name
            flags = " ".join(inst.flags)
            r = b.emit(f"call {flags} {r_ty} @{name}(" + ", ".join(f"{t} {v}" for t, v in call_args)
                       + ")") if inst.ty != "void" else None
            if r is not None and r_ty != rty:
                r = b.cast(r, r_ty, rty)
            if r is not None and self.is_from(inst.ty):
                r = b.result(r, inst.ty)
        if inst.name:
            b.out.append(f"{inst.name} = {_identity_of(r, inst.ty)}")
        return b.out


def _identity_of(v, ty):
    """A copy of v under the instruction's own name; never arithmetic (a mem-mode value is a
    bit pattern that an fadd could flush or canonicalize)."""
    return f"select i1 true, {ty} {v}, {ty} {v}"
