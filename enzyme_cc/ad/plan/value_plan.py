"""Where the reverse sweep gets each primal value it needs (Synth's planning, reverse.py): the
classification of a need key as direct, recompute, slot or tape (see reverse.py's docstring), and
what a recomputed value depends on. Loop control (exit counts, taken predecessors, exit values)
is recomputed only where it would be taped, from inputs free of tape and slot (exit_count.py,
phi_select.py)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from enzyme_cc.ir.model import Inst
from ..structure import exit_count
from . import phi_select, tape_cut
from .phi_select import RECOMPUTABLE
from ..structure.type_layout import global_named, underlying
from .plan import hoist_loop
from .read_only import reloadable
from .restored_args import restored_root
from enzyme_cc.rules.registry import intrinsic_base

# pure intrinsics cheaper to recompute than to tape
RECOMPUTABLE_INTRINSICS = {"llvm.fmuladd", "llvm.fma", "llvm.fabs", "llvm.copysign", "llvm.minnum",
                           "llvm.maxnum", "llvm.minimum", "llvm.maximum", "llvm.floor",
                           "llvm.ceil", "llvm.trunc", "llvm.rint", "llvm.round", "llvm.smax",
                           "llvm.smin", "llvm.umax", "llvm.umin", "llvm.abs"}

def recomputed_by_kind(inst) -> bool:
    """An instruction the reverse sweep re-executes by its kind alone (not a load or a phi):
    cheap arithmetic and casts, pure intrinsics, a division by a constant."""
    if inst.op == "call":
        return intrinsic_base((inst.callee or "")[1:]) in RECOMPUTABLE_INTRINSICS
    if inst.op == "fdiv" and not inst.ops[1].is_local:
        return True             # by a constant: cheaper again than a tape entry
    return inst.op in RECOMPUTABLE


class ValuePlan:
    """Mixed into Synth: the availability plan of need keys."""
    def def_block(self, key):
        kind, v = key
        if kind in ("pred", "iv"):
            return v
        if kind == "ctape":
            return self.line_insts[int(str(v).split(".")[0])].block.label
        if kind == "ivx":
            return v[1]
        d = self.fn.defs.get(v)
        if d is None or not isinstance(d, Inst):
            return None                       # parameter or constant
        return d.block.label

    def classify(self, key, user: str) -> str:
        """How the reverse block of `user` gets the value `key` (see the module docstring).
        Once the reverse's needs are known, each answer is kept: the plan, the tape cut and
        the recomputation cones ask again and again (LULESH: 44.6 k questions, 10.6 k
        distinct)."""
        if not getattr(self, "needs_known", False):
            return self._classify(key, user)
        memo = self.__dict__.setdefault("_classified", {})
        how = memo.get((key, user))
        if how is None:
            how = memo[(key, user)] = self._classify(key, user)
        return how

    def _classify(self, key, user: str) -> str:
        kind, v = key
        if kind == "iv":
            if user in self.loops[v].blocks:
                return "riv"
        elif kind in ("p", "s") and not v.startswith("%"):
            return "direct"
        blk = self.def_block(key)
        if blk is None:
            return "direct"
        if kind in ("p", "s") and self._recomputable(key, user):
            if kind == "p" and self.would_tape(blk, user) and self._cheaper_taped(key, user):
                return "tape"
            return "recompute"
        if not self.would_tape(blk, user):
            return "direct" if self.runs_once(blk) else "slot"
        # loop control otherwise taped (a slot's load is cheaper than recomputing it)
        sel = phi_select.pred_select(self, v) if kind == "pred" else None
        if sel is not None and self.free_at(("p", sel[0]), user):
            return "recompute"
        if kind == "ivx" and exit_count.recipe(self, key) is not None and all(
                self.free_at(d, user) for d in exit_count.deps(self, key)):
            return "recompute"
        return "tape"

    def needs_are_known(self):
        """The reverse's needs are complete (reverse.build, before planning): the cheaper cut
        may read them, and what free_at found without them is asked again."""
        self.needs_known = True
        self.__dict__.pop("_free", None)
        self.__dict__.pop("_classified", None)

    def _cheaper_taped(self, key, user: str) -> bool:
        """Taping the value of `key` (arithmetic the reverse of `user` would recompute) is part
        of the cheapest way to get what the reverse needs from its group (tape_cut: a minimum
        cut, four hourglass modes instead of eight velocities). Where tape_cut does not judge
        the group (nothing to cut, or too large): taping key costs fewer bytes than taping the
        values its recomputation reads, and nothing else reads those or the values between
        (every use of them lies on the way to key, and the reverse asks for none of them):
        `dr = r[i] - r[j]`, one double taped instead of two loads that stores in the loop may
        overwrite."""
        memo = self.__dict__.setdefault("_cheaper", {})
        if (key, user) in memo:
            return memo[(key, user)]
        memo[(key, user)] = False             # (a cycle back to key: recompute)
        inst = self.fn.defs[key[1]]
        if inst.op in ("load", "phi") or key[1] in self.affine or \
                exit_count.exit_value(self, key[1], user) is not None:
            return False
        if not getattr(self, "needs_known", False):
            del memo[(key, user)]
            return False                      # (asked before the reverse's needs are known)
        group = tape_cut.cut_members(self, key, user)
        if group is not None:           # (answers already given stay)
            for k, taped in group.items():
                memo.setdefault((k, user), taped)
            memo[(key, user)] = group[key]
            return group[key]
        needed = self.needed_keys()
        cone, leaves, todo = {key[1]}, [], list(self.deps(key, user))
        while todo:
            d = todo.pop()
            if d[0] != "p" or d[1] in cone:
                continue
            how = self.classify(d, user)
            if how == "recompute":
                cone.add(d[1])
                todo.extend(self.deps(d, user))
            elif how == "tape":
                leaves.append(d)
            if len(cone) > 16:
                return False
        users = self.value_users()
        inner = [("p", c) for c in cone if c != key[1]]
        for d in leaves + inner:
            if d in needed or any(u.name not in cone for u in users.get(d[1], ())):
                return False                  # taped anyway: recomputing key costs nothing more
        loops_of = lambda k: {h for h, lp in self.loops.items() if self.def_block(k) in lp.blocks}
        if any(loops_of(d) != loops_of(key) or hoist_loop(self, d, user) is not None
               for d in leaves):
            return False                      # (a leaf taped once per outer iteration or loop)
        taped = sum(type_size(self._key_type(d), self.module.named_types) or 8 for d in leaves)
        cut = taped > (type_size(inst.ty, self.module.named_types) or taped)
        memo[(key, user)] = cut
        return cut

    def needed_keys(self) -> set:
        """Every need key of the reverse sweep, over all its blocks (once they are known)."""
        if "_needed" not in self.__dict__:
            self._needed = {k for ks in self.needs.values() for k in ks}
        return self._needed

    def value_users(self) -> dict:
        """{value: the instructions using it} of the function (fn.users, made once)."""
        if "_value_users" not in self.__dict__:
            self._value_users = self.fn.users()
        return self._value_users

    def fixed_memory(self, ptr: str) -> bool:
        """No write of the whole call tree reaches the memory a load through ptr reads
        (read_only.reloadable): two loads of it read the same value."""
        return reloadable(self.gen, self.fn.name, ptr)

    def would_tape(self, blk: str, user: str) -> bool:
        """A value of block `blk` read in the reverse of `user` takes a tape entry: always in split
        mode; in combined mode unless blk runs once per call (the value is direct) or blk or the
        user runs at most once (a slot: the last value stored is the one the user saw)."""
        return self.mode != "combined" or not self.runs_once(blk) and user in self.cyclic and \
            blk in self.cyclic

    def free_at(self, key, user: str) -> bool:
        """The reverse of block `user` gets `key` with no tape or slot at all (its recomputation
        included): what a value recomputed to save a tape entry may depend on."""
        memo = self.__dict__.setdefault("_free", {})
        if (key, user) not in memo:
            memo[(key, user)] = False     # a cycle is not free
            how = self.classify(key, user)
            memo[(key, user)] = how in ("direct", "riv") or how == "recompute" and all(
                self.free_at(d, user) for d in self.deps(key, user))
        return memo[(key, user)]

    def runs_once(self, label: str) -> bool:
        """Block `label` runs exactly once per call: in no cycle, and on the way to every return."""
        return label not in self.cyclic and all(label in self.dom[r.label] for r in self.rets)

    def _recomputable(self, key, user: str | None = None) -> bool:
        kind, v = key
        inst = self.fn.defs[v]
        if kind == "s":
            return inst.op in ("getelementptr", "bitcast", "addrspacecast") or v in self.affine
        if exit_count.exit_value(self, v, user) is not None:
            return True
        if v in self.affine:
            return True
        if inst.op == "load" and "volatile" not in inst.flags and "atomic" not in inst.flags:
            base = underlying(self.fn, inst.ops[0].value)
            g = global_named(base) if base.startswith(("@", "getelementptr")) else None
            if g and self.module.is_constant_global(g) or restored_root(self, base):
                return True         # constant memory, or an array the reverse restores
            # no later write of the call reaches it (but one the reverse undoes first:
            # undo_stores.py); in a split pair only a block of the call's own stays so until
            # the reverse function runs
            if (self.mode == "combined" or self.mem.private_block(inst.ops[0].value)) and \
                    self.mem.unmodified_after(base, inst, user):
                return True
            # memory no write of the whole call tree reaches (split pairs too)
            return self.fixed_memory(inst.ops[0].value)
        if inst.op == "phi":              # only when that costs no tape or slot of its own
            sel = phi_select.branch_select(self, inst)
            # (a loop's exit value only through exit_count: its counter may not exist at the phi)
            return sel is not None and all(
                exit_count.exit_value(self, x, user) is not None
                if x in phi_select.exit_values(self, inst) else
                not x.startswith("%") or self.classify(("p", x), user) in ("direct", "recompute")
                for x in sel)
        return recomputed_by_kind(inst)

    def deps(self, key, user: str):
        """Need keys a value recomputed in the reverse of block `user` depends on."""
        kind, v = key
        if kind == "ivx":
            return exit_count.deps(self, key)
        if kind == "pred":
            c = phi_select.pred_select(self, v)[0]
            return [("p", c)] if c.startswith("%") else []
        if kind == "p" and exit_count.exit_value(self, v, user) is not None:
            return [("p", x) for x in exit_count.value_inputs(self, v)]
        inst = self.fn.defs[v]
        if v in self.affine:
            lp, init, _ = self.affine[v]
            return [("iv", lp.header), (kind, init)]
        if kind == "s":
            return [("s", inst.ops[0].value)] + [("p", o.value) for o in inst.ops[1:] if o.is_local]
        if inst.op == "phi":
            return [("p", x) for x in phi_select.branch_select(self, inst) if x.startswith("%")]
        return [("p", o.value) for o in inst.ops if o.is_local]
