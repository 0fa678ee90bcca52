"""Integer code that would lose a float's derivative, refused (a mixin of Synth): integer
arithmetic on a float's bits whose result becomes data again (`refuse_bit_manipulation`: a mask
that is not a sign change, arithmetic on the bits), and float data read or written through a
pointer made from an integer (`_check_int_pointers`: its shadow is unknown)."""
from __future__ import annotations

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import carries_float
from ..structure import packed_bits
from ..structure.bit_sources import mantissa_source
from ..structure.frexp_bits import NONFINITE
from ..analysis.activity_basics import FREES, int_pointer_base, int_pointer_chain, int_pointer_sources
from ..structure.enum_arms import integer_arm_use
from ..structure.type_layout import underlying

# integer instructions: on a float's bits (activity.punned) they lose its derivative, except
# the sign changes float_bits.py rewrites (sitofp/uitofp are not among them: an integer read as
# a number, as an enum's other variant sharing the float's slot, carries no derivative)
_INT_OPS = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or",
            "xor", "bitcast", "ptrtoint", "inttoptr", "shufflevector", "extractelement",
            "insertelement", "trunc", "zext", "sext")
_INT_MIN_MAX = ("@llvm.umin.", "@llvm.umax.", "@llvm.smin.", "@llvm.smax.")
# what a float's slot turned back into a pointer may be passed to and lose nothing
_DEALLOCS = FREES | {"@__rust_dealloc"}


# masks of an integer's low 16 or 32 bits (a narrowing of indices, no float's field)
_WIDTH_MASKS = ((1 << 16) - 1, (1 << 32) - 1)

# x * 2^n: the integer n scales, it is not data (a float's exponent field read from its bits)
_SCALE_BY = ("@ldexp", "@ldexpf", "@ldexpl", "@scalbn", "@scalbnf", "@scalbln", "@scalblnf")


def _scales_by(call, v: str) -> bool:
    """v is only the exponent argument n of a call x * 2^n."""
    c = call.callee or ""
    return (c in _SCALE_BY or c.startswith("@llvm.ldexp.")) and len(call.ops) == 2 and \
        call.ops[1].value == v and call.ops[0].value != v


class IntegerChecks:
    def _check_int_pointers(self):
        """A pointer made from an integer has no known shadow: reading or writing float data
        through it would silently drop derivatives."""
        for inst in self.fn.insts():
            ptr = inst.ops[0].value if inst.op == "load" else \
                inst.ops[1].value if inst.op == "store" else None
            ty = inst.ty if inst.op == "load" else inst.ops[0].ty if inst.op == "store" else ""
            if ptr is None or not carries_float(ty):
                continue
            base = self.fn.defs.get(underlying(self.fn, ptr))
            if getattr(base, "op", None) != "inttoptr" or int_pointer_base(self.fn, base) or \
                    base.ops[0].value in self.act.ptrint or \
                    int_pointer_chain(self.fn, base.ops[0].value):  # (its shadow: an integer too)
                continue
            srcs = int_pointer_sources(self.fn, base.ops[0].value)
            value = inst.name if inst.op == "load" else inst.ops[0].value
            if srcs is not None and value not in self.act.active and \
                    not any(p in self.act.shadowed for p in srcs):
                continue    # (an address rebuilt from pointers to memory without derivatives:
                #            Rust's Vec, a dangling constant or the allocation)
            if self.act.active or self.act.shadowed - set(self.act.global_shadows):
                raise UserError(self.where(inst) + ": float data accessed through a pointer made "
                                "from an integer (inttoptr); its shadow is unknown; hint: keep "
                                "pointer arithmetic on pointers (no casts through uintptr_t)")

    def refuse_bit_manipulation(self, inst):
        """Integer code on a float's bits whose result carries no derivative (a mask that is
        not a sign change, arithmetic on the bits): the derivative would be lost; refused."""
        if inst.op not in _INT_OPS or inst.name in self.act.active or \
                not any(o.value in self.act.punned for o in inst.ops) or \
                packed_bits.drops_float(self.act, inst):
            return
        keeper = self._bits_kept(inst)
        if keeper is None or self.integer_arm(inst):
            return
        if keeper.op in ("sitofp", "uitofp"):
            fmt = mantissa_source(self.fn, self.act.punned, keeper.ops[0].value)
            why = (self.where(keeper) + f": converts bits of a {fmt}'s mantissa to a number (a "
                   "bit-level approximation such as a fast log or exp, or an argument reduction "
                   f"on the bits): a continuous function of the {fmt} whose derivative would be "
                   "lost; hint: give the function doing it a derivative of your own "
                   "(__enzyme_register_gradient), or compute with the libm function (log, exp, "
                   "frexp, ...) instead")
            if not self._always_runs(keeper.block):
                self.stops[keeper.name] = why       # (emit_stop: an error if it ever runs)
                return
            raise UserError(why)
        if keeper.op in ("ret", "insertvalue"):
            raise UserError(self.where(inst) + ": the function returns a float's bits packed "
                            "with other data in an integer whose bits may overlap them (a record "
                            "of a float and an integer in one register is differentiated; a float "
                            "combined with a tag or mask is not); hint: return the float "
                            "separately, or write the record through a pointer argument")
        fmt = next((self.act.punned[o.value] for o in inst.ops if o.value in self.act.punned),
                   "double")
        fmt = "float" if "float" in fmt else "double"
        why = (self.where(inst) + ": integer arithmetic on data that holds a float (bit "
               f"manipulation of a {fmt}); hint: give the function doing it a derivative of "
               "your own (__enzyme_register_gradient), or compute on the float value instead "
               "(marking it inactive would drop its derivative)")
        if not self._always_runs(inst.block) and not self._magic_constant(inst):
            # (the integer arm of a type-generic kernel, Nek5000's gs_gather switching on a
            # type tag: it runs on integer data, or the derivative stops there; a bit trick
            # under a flag, with its magic constant, is refused at the link as before)
            self.stops[inst.name] = why
            return
        raise UserError(why)

    def _magic_constant(self, inst) -> bool:
        """The integer code from inst on (up to 32 instructions) uses a constant of 2^20 or
        more: an exponent mask or a magic number, the mark of work on a float's bits (an
        integer variant's arithmetic adds counts and indices; its masks to 16 or 32 bits, as
        jl's gs_gather converts indices, are no float's fields)."""
        users = self._users
        todo, seen = [inst], set()
        while todo and len(seen) < 32:
            i = todo.pop()
            if i.name in seen:
                continue
            seen.add(i.name)
            for o in i.ops:
                v = o.value.lstrip("-")
                if not o.is_local and v.isdigit() and int(v) >= 1 << 20 and \
                        int(v) not in _WIDTH_MASKS:
                    return True
            todo += [u for u in users.get(i.name, ()) if u.op in _INT_OPS and u.name]
        return False

    @property
    def _users(self) -> dict:
        """The function's users map, made once (ValuePlan.value_users; for the refusal checks
        above)."""
        return self.value_users()

    @property
    def stops(self) -> dict:
        """Instructions of paths some calls take (Eigen's sin and cos of huge arguments) whose
        derivative would be lost: the derivative stops with `why` there instead (emit_stop)."""
        return self.__dict__.setdefault("_stops", {})

    def _always_runs(self, block) -> bool:
        """Every path from the entry to a return passes block."""
        seen, todo = {block.label}, [self.fn.blocks[0].label]
        while todo:
            lab = todo.pop()
            if lab in seen:
                continue
            seen.add(lab)
            b = self.fn.block(lab)
            if b.term.op == "ret":
                return False
            todo.extend(b.term.targets)
        return True

    def emit_stop(self, lines, inst):
        """Before a stop's instruction (stops): print its error and abort."""
        why = self.stops.get(inst.name)
        if why is not None:
            msg = self.gen.private_string("enzyme-cc: error: " + why + "\n")
            self.gen.helpers.add(("badcall",))          # (defines __enzyme_cc_stop)
            lines.append(f"call void @__enzyme_cc_stop(ptr {msg})")

    def integer_arm(self, inst) -> bool:
        """inst computes on a tagged union's integer variant passed or returned by value
        (enum_arms.integer_arm_use): no float's bits are manipulated."""
        return integer_arm_use(self.act, self.fn, inst, self.__dict__.setdefault("_arm_memo", {}))

    def _bits_kept(self, inst):
        """The instruction through which the integer result of inst (through further integer
        code) becomes data again: stored, returned, passed, viewed as a float; None if none.
        Bits only compared (isnan written on the exponent bits, a sign test), converted to a
        number (sitofp: an integer SROA kept in a double vector's lane, a float's exponent field;
        not its mantissa bits, structure/bit_sources.py) or used as an address's
        index carry no derivative and lose none."""
        users = self._users
        todo, seen = [inst], set()
        while todo:
            i = todo.pop()
            if i.name is None or i.name in seen:
                continue
            seen.add(i.name)
            if i.op == "inttoptr" and all(
                    u.op == "icmp" or u.op in ("call", "invoke") and u.callee in _DEALLOCS
                    for u in users.get(i.name, ())):
                continue      # (an enum's pointer payload sharing the float's slot, freed)
            for u in users.get(i.name, ()):
                if u.op in ("call", "invoke") and (_scales_by(u, i.name) or
                                                   u.callee == "@llvm.fake.use"):
                    continue          # (a power of two's exponent: piecewise constant; -Og's
                    #                    marker that keeps a variable alive: no use at all)
                if u.op in ("sitofp", "uitofp") and \
                        mantissa_source(self.fn, self.act.punned, u.ops[0].value):
                    return u          # (a continuous function of the float: see bit_sources)
                if u.op in ("icmp", "br", "switch", "sitofp", "uitofp", "getelementptr") or \
                        u.op == "select" and all(o.value != i.name for o in u.ops[1:]):
                    continue          # (a select's condition: control, not data; an address's
                    #                    index: an enum's length sharing the float's slot)
                if u.op == "bitcast" and u.name.startswith(NONFINITE):
                    continue          # (frexp_bits: the bits of an infinite or NaN x kept)
                if (u.op in _INT_OPS or u.op in ("phi", "select", "freeze") or
                        u.op == "call" and (u.callee or "").startswith(_INT_MIN_MAX)) and \
                        not carries_float(u.ty or ""):
                    todo.append(u)    # (min/max: one of the operands, as a select)
                    continue
                return u
        return None
