"""Sign changes done on a float's bits, rewritten as float operations before synthesis.

SSE code (Eigen's packet math, hand-written intrinsics) negates with a xor of -0.0
(`_mm_xor_pd`), takes absolute values with an and-not of it and negative magnitudes with an or,
per lane; LLVM keeps these as integer ops between two bitcasts, often with a shuffle of the
integer vector between (a broadcast). Integer ops carry no derivative, so the derivative through
them would be lost. On our private copy of the function (the primal is untouched) such a chain
becomes the same computation on the float vector: shuffles and lane extractions of the bits
become float shuffles and extractions, a xor/and/or with a sign mask per lane becomes `fneg`,
|x| (`select` on the sign bit) or -|x|, and the bitcast back to float is the float value
itself. The bits may also come straight from memory: a load of integers that TBAA types as the
floats, or through a pointer TBAA types as a pointer to them (Eigen's abs under AVX-512 loads
`<8 x i64>` through its `double *` storage and clears the sign bits), or whose sign-changed
values all go back to floats (`_mm_and_pd(_mm_loadu_pd(x), mask)`; a select of the bits counts
as going back), becomes a float load when only sign operations use it. A select between two such
views (a max LLVM does on the bits of the floats it compared) becomes a float select. What is left on float bits afterwards is refused by the
synthesis (activity.punned)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import vector_shape
from .float_pairs import constant_lanes, located_inst, reloaded, split_float_pairs
from .frexp_bits import FrexpBits, is_frexp_mask
from .type_layout import tbaa_kind, tbaa_pointee

_FLOAT_OF = {"i64": "double", "i32": "float"}


def _split(ty: str):
    """(lanes or None for a scalar, element type) of a scalar or vector type."""
    return vector_shape(ty) or (None, ty.strip())


def _float_type(ty: str) -> str | None:
    n, el = _split(ty)
    f = _FLOAT_OF.get(el)
    if f is None:
        return None
    return f if n is None else f"<{n} x {f}>"


def _lane_bits(ty: str) -> int:
    """The width of an integer lane a float's bits are held in: 64 (double) or 32 (float)."""
    return 64 if _split(ty)[1] == "i64" else 32


def _sign_masks(op: str, bits: int) -> tuple[int, int]:
    """(lane constant that keeps a lane, lane constant that changes its sign) for a xor, an and
    (|x|) or an or (-|x|) on lanes of `bits` bits."""
    sign, ones = 1 << (bits - 1), (1 << bits) - 1
    return {"xor": (0, sign), "and": (ones, ones ^ sign), "or": (0, sign)}[op]


def _changes_signs(op: str, lanes: list, bits: int) -> bool:
    """The constant lanes of op change sign bits only, and some lane's."""
    keep, change = _sign_masks(op, bits)
    return all(v in (keep, change) for v in lanes) and any(v == change for v in lanes)


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.replace(" ", "") == b.replace(" ", "")


class _Rewriter(FrexpBits):
    def __init__(self, fn, module=None):
        self.fn, self.module, self.n = fn, module, 0
        self.view: dict[str, str] = {}     # integer value -> the float value it is the bits of
        self.fractions: dict[str, tuple] = {}   # frexp_bits: masked bits -> (bits, keeps sign)
        self.users = fn.users()

    def tmp(self):
        self.n += 1
        return f"%ad.fb.{self.n}"

    def inst(self, text, like):
        return located_inst(text, like)

    def float_of(self, v: str) -> str | None:
        """The float value whose bits the integer operand v is (poison stays poison)."""
        if v in ("poison", "undef", "zeroinitializer"):
            return v
        return self.view.get(v)

    def run(self):
        phis = self._carrying_phis()
        for k, phi in enumerate(phis):    # (their float views, made once the rest is rewritten)
            self.view[phi.name] = f"%ad.fb.phi{k}"
        changed = bool(phis)
        for b in self.fn.blocks:
            out = []
            for inst in b.insts:
                new = self.rewrite(inst)
                if new is None:
                    out.append(inst)
                else:
                    out.extend(new)
                    changed = True
            b.insts = out
        for phi in phis:
            self._float_phi(phi)
        if changed:
            self.fn.index()
            self._drop_unused_views()

    def _drop_unused_views(self):
        """Float views nothing uses (the float phi beside a key made from a float's bits that is
        only compared, a radix sort's `~u`): left in place, their bitcasts would count as the
        bits becoming float data again (integer_checks)."""
        while True:
            users = self.fn.users()
            dead = {id(i) for i in self.fn.insts() if (i.name or "").startswith("%ad.fb.") and
                    i.op in ("phi", "bitcast") and not any(u is not i for u in
                                                           users.get(i.name, ()))}
            if not dead:
                return
            for b in self.fn.blocks:
                b.insts = [i for i in b.insts if id(i) not in dead]
            self.fn.index()

    def _carrying_phis(self):
        """Integer phis (of an integer type a float has the size of) that may carry a float's
        bits: one of their incoming values is, through sign operations, shuffles, selects and
        other such phis, the bits of a float (SROA keeps an SSE vector carried by a loop, an
        Eigen quaternion negated by a xor, as <2 x i64>)."""
        carries: set[str] = set()
        changed = True
        while changed:
            changed = False
            for inst in self.fn.insts():
                if inst.name in carries or not inst.name or _float_type(inst.ty or "") is None:
                    continue
                if inst.op == "bitcast" and inst.ops and _same(_float_type(inst.ty),
                                                               inst.ops[0].ty):
                    hit = True
                elif inst.op == "phi":
                    hit = any(v in carries for v, _ in inst.incoming)
                elif inst.op in ("xor", "and", "or", "shufflevector", "select",
                                 "extractelement", "insertelement"):
                    hit = any(o.value in carries for o in inst.ops)
                else:
                    hit = False
                if hit:
                    carries.add(inst.name)
                    changed = True
        return [i for i in self.fn.insts() if i.op == "phi" and i.name in carries]

    def _float_phi(self, phi):
        """The float phi beside an integer phi that carries a float's bits: each incoming value's
        float view, or its bits bitcast at the end of that predecessor."""
        fty = _float_type(phi.ty)
        incoming = []
        for v, label in phi.incoming:
            f = self.view.get(v)
            if f is None and v.startswith("%"):
                pred = self.fn.block(label)
                f = self.tmp()
                pred.insts.insert(len(pred.insts) - 1,
                                  self.inst(f"{f} = bitcast {phi.ty} {v} to {fty}", pred.term))
            elif f is None:
                f = f"bitcast ({phi.ty} {v} to {fty})" if v not in ("poison", "undef") else v
            incoming.append(f"[ {f}, {label} ]")
        b = phi.block
        b.insts.insert(b.insts.index(phi) + 1,
                       self.inst(f"{self.view[phi.name]} = phi {fty} {', '.join(incoming)}", phi))

    def rewrite(self, inst):
        op, ty = inst.op, inst.ty
        if op == "load":
            return self._float_load(inst)
        if op == "bitcast" and inst.ops and inst.ops[0].is_local:
            src = inst.ops[0]
            if _same(_float_type(ty), src.ty):
                self.view[inst.name] = src.value          # the bits of a float value
            elif src.value in self.view and _same(_float_type(src.ty), ty):
                # the bits viewed as the float again: the float value itself
                back = self.view[src.value]
                return [self.inst(f"{inst.name} = select i1 true, {ty} {back}, {ty} {back}",
                                  inst)]
            return None
        fty = _float_type(ty) if ty else None
        if op == "shufflevector" and fty and len(inst.ops) == 3:
            a = self.float_of(inst.ops[0].value)
            b = self.float_of(inst.ops[1].value)
            src_fty = _float_type(inst.ops[0].ty)
            if a is None or b is None or src_fty is None:
                return None
            f = self.tmp()
            mask = f"{inst.ops[2].ty} {inst.ops[2].value}"
            return self._as_bits(inst, fty, [
                f"{f} = shufflevector {src_fty} {a}, {src_fty} {b}, {mask}"], f)
        if op == "extractelement" and fty and len(inst.ops) == 2:
            src_fty = _float_type(inst.ops[0].ty)
            a = self.float_of(inst.ops[0].value)
            if a is None or src_fty is None or not a.startswith("%"):
                return None
            f = self.tmp()
            return self._as_bits(inst, fty, [
                f"{f} = extractelement {src_fty} {a}, {inst.ops[1].ty} {inst.ops[1].value}"], f)
        if op == "insertelement" and fty and len(inst.ops) == 3:
            a, e = self.float_of(inst.ops[0].value), self.float_of(inst.ops[1].value)
            elt_fty = _float_type(inst.ops[1].ty)
            if a is None or e is None or elt_fty is None or e == "zeroinitializer":
                return None
            f = self.tmp()
            return self._as_bits(inst, fty, [
                f"{f} = insertelement {fty} {a}, {elt_fty} {e}, {inst.ops[2].ty} "
                f"{inst.ops[2].value}"], f)
        if op in ("xor", "and", "or") and fty and len(inst.ops) == 2:
            return self._sign_op(inst, fty)
        if op == "select" and fty and len(inst.ops) == 3:
            # a max/min LLVM does on the bits of the floats it compared (select of bitcasts)
            a, b = self.float_of(inst.ops[1].value), self.float_of(inst.ops[2].value)
            if a is None or b is None:
                return None
            f, c = self.tmp(), inst.ops[0]
            return self._as_bits(inst, fty, [f"{f} = select {c.ty} {c.value}, {fty} {a}, {fty} {b}"],
                                 f)
        return None

    def _float_load(self, inst):
        """A load of integers TBAA types as floats, used only by sign operations: the floats."""
        fty = _float_type(inst.ty)
        if fty is None:
            return None
        users = self.users.get(inst.name, [])
        # (or put into a vector of such bits by element, where the memory's type says floats:
        # SROA builds Eigen's SSE packets of a quaternion so before negating them)
        inserted = any(u.op == "insertelement" and u.ops[1].value == inst.name for u in users)
        # (a plain view of the floats beside the sign operations, as the bits of |x| beside x
        # in Eigen's SSE2 `abs(x) * x`, is a user too)
        viewed = [u for u in users if u.op == "bitcast" and _same(u.ty, fty)]
        signs = [u for u in users if u not in viewed]
        if not signs or any(u.op not in ("xor", "and", "or", "insertelement") or
                            u.op != "insertelement" and all(o.is_local for o in u.ops) and
                            not self._sign_extracted(u) for u in signs):
            return None
        users = signs
        # floats by the memory's type, or by use: every result goes back to floats, through
        # sign changes or frexp's mantissa mask (`~i` on integers read back from a reused
        # buffer, `flags & ~floatfield`: integer arithmetic, not a float's)
        if any(u.op in ("xor", "and", "or") and not self._sign_like(u) for u in users):
            return None
        uses = [w for u in users if u.op == "insertelement" or not all(o.is_local for o in u.ops)
                for w in self.users.get(u.name, [])]      # (not the sign-extracting users)
        uses = [x for w in uses for x in (      # (frexp_bits: the exponent set after the mask)
            self.users.get(w.name, []) if w.op == "or" and not all(o.is_local for o in w.ops)
            else [w])]
        as_floats = not inserted and bool(uses) and all(
            w.op == "bitcast" and _same(w.ty, fty) or w.op == "select" and _same(w.ty, inst.ty) or
            w.op == "store" and _same(w.ops[0].ty, inst.ty) or    # (a float's bits kept, or one
            w.op == "extractelement" for w in uses)           #  lane's taken out)
        if not as_floats and (self.module is None or self._memory_kind(inst) != _split(fty)[1]):
            return None
        f = self.tmp()
        load = reloaded(inst, f, fty)
        if load is None:
            return None                               # volatile or atomic: left alone
        return [load] + self._as_bits(inst, fty, [], f)

    def _sign_like(self, u) -> bool:
        """u (xor, and, or) changes the sign bits of its lanes only (a constant sign mask, or a
        value's: _flip_by), or masks a float's mantissa for frexp: the operations a float's
        bits go through here (`flags & ~floatfield`, `-1 - i` on integers do not)."""
        c = next((o for o in u.ops if not o.is_local), None)
        if c is None:
            return True
        n, bits = _split(u.ty)[0], _lane_bits(u.ty)
        lanes = constant_lanes(c.value, n, bits)
        if lanes is None:
            return False
        keep = _sign_masks(u.op, bits)[0]
        return _changes_signs(u.op, [keep if v is None else v for v in lanes], bits) or \
            u.op == "and" and is_frexp_mask(lanes, bits)

    def _memory_kind(self, load):
        """'double'/'float' when TBAA says the loaded memory holds them: the load's own tag, or
        the tag of the load that produced its pointer (through GEPs and pointer phis)."""
        kind = tbaa_kind(self.module, load.md.get("!tbaa"))
        if kind:
            return kind
        kinds, seen, todo = set(), set(), [load.ops[0].value]
        while todo and len(seen) < 64:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            d = self.fn.defs.get(v)
            if d is None or not hasattr(d, "op"):
                return None
            if d.op == "getelementptr":
                todo.append(d.ops[0].value)
            elif d.op == "phi":
                todo.extend(val for val, _ in d.incoming)
            elif d.op == "load":
                kinds.add(tbaa_pointee(self.module, d.md.get("!tbaa")))
            else:
                return None
        return kinds.pop() if len(kinds) == 1 and not todo else None

    def _as_bits(self, inst, fty, lines, f):
        """The float computation `lines` (result f), and inst's integer result as its bits."""
        self.view[inst.name] = f
        return [self.inst(t, inst) for t in lines] + \
            [self.inst(f"{inst.name} = bitcast {fty} {f} to {inst.ty}", inst)]

    def _sign_only(self, v: str, bits: int, depth: int = 0) -> bool:
        """Integer v can have no bit set but each lane's sign bit (a mask made with an `and` of
        the sign bit or a shift to it, joined by xor/or/select): a data-dependent sign."""
        d = self.fn.defs.get(v)
        op, sign = getattr(d, "op", None), 1 << (bits - 1)
        if op is None or depth > 8 or _float_type(d.ty or "") is None:
            return False
        n = _split(d.ty)[0]
        consts = [constant_lanes(o.value, n, bits) for o in d.ops if not o.is_local]
        if op == "and" and any(c and all(x in (None, 0, sign) for x in c) for c in consts):
            return True
        if op == "shl" and consts and consts[0] and all(x == bits - 1 for x in consts[0]):
            return True
        if op in ("xor", "or") and not consts or op == "select":
            return all(self._sign_only(o.value, bits, depth + 1)
                       for o in (d.ops[1:] if op == "select" else d.ops))
        return False

    def _sign_extracted(self, u) -> bool:
        """u (integer code on a float's bits and other data) is only masked down to its sign
        bits: Eigen's sin takes the sign of x xor the quadrant's so."""
        bits = _lane_bits(u.ty)
        uses = self.users.get(u.name, [])
        return bool(uses) and all(w.op == "and" and self._sign_only(w.name, bits) for w in uses)

    def _flip_by(self, inst, fty, x, m):
        """xor of the bits of a float with a data-dependent sign mask m: -f where m's sign bit is
        set, f elsewhere."""
        f = self.view.get(x.value)
        bits = _lane_bits(inst.ty)
        if f is None or not self._sign_only(m.value, bits):
            return None
        n = _split(inst.ty)[0]
        neg, cond, res = self.tmp(), self.tmp(), self.tmp()
        zero = "zeroinitializer" if n else "0"
        return self._as_bits(inst, fty, [
            f"{neg} = fneg {fty} {f}",
            f"{cond} = icmp slt {inst.ty} {m.value}, {zero}",
            f"{res} = select {'<%d x i1>' % n if n else 'i1'} {cond}, {fty} {neg}, {fty} {f}"],
            res)

    def _sign_op(self, inst, fty):
        x, c = inst.ops
        if inst.op == "xor" and x.is_local and c.is_local:
            return self._flip_by(inst, fty, x, c) or self._flip_by(inst, fty, c, x)
        if not x.is_local:
            x, c = c, x
        if not x.is_local or c.is_local:
            return None
        f = self.view.get(x.value)
        n, bits = _split(inst.ty)[0], _lane_bits(inst.ty)
        lanes = constant_lanes(c.value, n, bits)
        if lanes is not None and inst.op == "or" and x.value in self.fractions:
            return self.frexp_exponent(inst, fty, n, lanes, bits)
        if f is None or lanes is None or inst.op == "and" and self.frexp_mask(inst, lanes, bits):
            return None
        keep, change = _sign_masks(inst.op, bits)
        lanes = [keep if v is None else v for v in lanes]
        if not _changes_signs(inst.op, lanes, bits):
            return None
        neg, lines = self.tmp(), []
        lines.append(f"{neg} = fneg {fty} {f}")
        if inst.op == "xor":
            res = neg
        else:
            # |x|: x with its sign bit cleared (the bits decide, so -0.0 gives +0.0); -|x| for or
            sign_set, absx = self.tmp(), self.tmp()
            zero = "zeroinitializer" if n else "0"
            lines.append(f"{sign_set} = icmp slt {inst.ty} {x.value}, {zero}")
            lines.append(f"{absx} = select {'<%d x i1>' % n if n else 'i1'} {sign_set}, "
                         f"{fty} {neg}, {fty} {f}")
            res = absx
            if inst.op == "or":
                res = self.tmp()
                lines.append(f"{res} = fneg {fty} {absx}")
        if any(v == keep for v in lanes):           # only some lanes change
            pick = self.tmp()
            idx = ", ".join(f"i32 {k + n if v == change else k}" for k, v in enumerate(lanes))
            lines.append(f"{pick} = shufflevector {fty} {f}, {fty} {res}, <{n} x i32> <{idx}>")
            res = pick
        return self._as_bits(inst, fty, lines, res)


def rewrite_sign_bits(fn, module=None):
    """Rewrite fn's sign changes on float bits as float operations (module docstring)."""
    insts = list(fn.insts())
    if any(i.op == "bitcast" and (_split(i.ty)[1] in _FLOAT_OF or _float_type(i.ops[0].ty))
           for i in insts) or module is not None and \
            any(i.op == "load" and _float_type(i.ty or "") for i in insts) and \
            any(i.op in ("and", "or", "xor") and _float_type(i.ty or "") for i in insts):
        split_float_pairs(fn)
        _Rewriter(fn, module).run()     # (bits loaded from float memory: _float_load)
