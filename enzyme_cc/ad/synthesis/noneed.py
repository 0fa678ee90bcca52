"""`enzyme_dupnoneed` (forward mode, and the forward sweep of reverse mode): the caller does not need
the primal memory behind the argument (Enzyme's sparse examples pass `(double*)0x1`), only its
shadow. As in Enzyme, primal writes whose underlying object is such an argument are dropped
(stores, memset/memcpy into it): their shadow counterparts still run. The primal values that only
fed dropped writes (a load of `g[i]` feeding `g[i] + a`) are not computed either, so nothing reads
the primal memory for them.

Where the function (or a callee it passes the pointer to) still needs a primal value read from
that memory, a dropped write could make the read stale: then nothing is dropped and the argument
is handled as enzyme_dup (correct whenever the memory exists, as Enzyme, which always reads it).
"""
from __future__ import annotations

import re

_MEMWRITE = re.compile(r"@(?:llvm\.)?mem(?:set|cpy|move)(?:\.inline)?\b")
_MEMCOPY = re.compile(r"@(?:llvm\.)?mem(?:cpy|move)(?:\.inline)?\b")
# primal values whose tangent rule reads no primal operand (rules/tangent.py): if their only
# users are dropped writes (or other such values) their primal is never needed
_LINEAR = ("fadd", "fsub", "fneg", "phi", "select", "freeze", "fpext", "fptrunc", "insertvalue",
           "extractvalue")


class NoNeed:
    """What forward mode drops for the dupnoneed arguments of `fn` (acts: per parameter)."""

    def __init__(self, gen, fn, acts, error=False):
        self.gen = gen
        self.ptrs: set[str] = {p.name for p, a in zip(fn.params, acts) if a == "dupnoneed"}
        self.drops: set[int] = set()        # id() of the writes whose primal is dropped
        self.unneeded: set[str] = set()
        self.slots: set[str] = set()        # stack slots holding only such pointers
        self.reads = False                  # a needed primal read of the memory (here or below)
        if not self.ptrs or error:
            self.ptrs = set()
            return
        self._derive(fn)
        self._find_drops(fn)
        self._find_unneeded(fn)
        self.reads = self._needs_reads(fn)
        if self.reads:                      # keep the memory up to date: drop nothing
            self.ptrs, self.drops, self.unneeded = set(), set(), set()

    @classmethod
    def of(cls, gen, fn, acts, error=False) -> "NoNeed":
        """Memoized per (function, activities); a recursive cycle counts as reading."""
        memo = gen.__dict__.setdefault("_noneed", {})
        key = (fn.name, tuple(k for k, a in enumerate(acts) if a == "dupnoneed"), error)
        if key not in memo:
            busy = cls.__new__(cls)
            busy.ptrs, busy.drops, busy.unneeded, busy.reads = set(), set(), set(), True
            busy.slots = set()
            memo[key] = busy
            memo[key] = cls(gen, fn, acts, error)
        return memo[key]

    def _derive(self, fn):
        """Pointers whose underlying object is a dupnoneed argument (greatest fixed point, so
        loop-carried pointer phis qualify), also through a stack slot the pointer is spilled to
        and loaded back from (unoptimized code keeps every argument in one)."""
        slots = _spill_slots(fn)
        stored: dict[str, list[str]] = {a: [] for a in slots}
        for i in fn.insts():
            if i.op == "store" and i.ops[1].value in slots:
                stored[i.ops[1].value].append(i.ops[0].value)
        cand = {i.name: i for i in fn.insts() if i.name and i.ty == "ptr" and (
            i.op in ("getelementptr", "bitcast", "addrspacecast", "phi", "select") or
            i.op == "load" and i.ops[0].value in slots)}
        keep = set(cand) | self.ptrs
        changed = True
        while changed:
            changed = False
            for name, i in cand.items():
                if name not in keep:
                    continue
                srcs = [v for v, _ in i.incoming] if i.op == "phi" else \
                    [i.ops[1].value, i.ops[2].value] if i.op == "select" else \
                    stored[i.ops[0].value] if i.op == "load" else [i.ops[0].value]
                if not srcs or not all(s in keep for s in srcs):
                    keep.discard(name)
                    changed = True
        self.ptrs = keep
        # slots that only ever hold such pointers: spilling into them is not an escape
        self.slots = {a for a, vals in stored.items() if vals and all(v in keep for v in vals)}

    def _find_drops(self, fn):
        for i in fn.insts():
            if i.op == "store" and i.ops[1].value in self.ptrs and "volatile" not in i.toks:
                self.drops.add(id(i))
            elif i.op == "call" and _MEMWRITE.match(i.callee or "") and i.ops and \
                    i.ops[0].value in self.ptrs and i.name is None:
                self.drops.add(id(i))

    def _find_unneeded(self, fn):
        users = fn.users()
        cand = {i.name for i in fn.insts() if i.name and (i.op in _LINEAR or (
            i.op == "load" and "volatile" not in i.toks and "atomic" not in i.toks))}
        changed = True
        while changed:
            changed = False
            for v in list(cand):
                for u in users.get(v, []):
                    dropped_value = id(u) in self.drops and u.op == "store" and u.ops[0].value == v
                    if not dropped_value and u.name not in cand:
                        cand.discard(v)
                        changed = True
                        break
        # only what feeds a dropped write changes: the rest is left to LLVM as before
        feeds, work = set(), [i.ops[0].value for i in fn.insts() if id(i) in self.drops and
                               i.op == "store"]
        while work:
            v = work.pop()
            if v in cand and v not in feeds:
                feeds.add(v)
                d = fn.defs.get(v)
                work += [x for x, _ in d.incoming] if d.op == "phi" else d.locals_used()
        self.unneeded = feeds

    def _escapes(self, i) -> bool:
        """A use of a dupnoneed pointer other than an access, a derived pointer, a compare or a
        call argument (the pointer stored as a value, returned, cast to an integer): something
        may read the memory later through a pointer we do not follow."""
        if i.op in ("load", "icmp") or i.name in self.ptrs or i.op in ("call", "invoke"):
            return False
        if i.op == "store":
            return i.ops[0].value in self.ptrs and i.ops[1].value not in self.slots
        vals = [v for v, _ in i.incoming] if i.op == "phi" else [o.value for o in i.ops]
        return any(v in self.ptrs for v in vals)

    def _needs_reads(self, fn) -> bool:
        for i in fn.insts():
            if i.op == "load" and i.ops[0].value in self.ptrs and i.name not in self.unneeded:
                return True
            if self._escapes(i):
                return True
            if i.op not in ("call", "invoke") or not any(o.value in self.ptrs for o in i.ops):
                continue
            callee = i.callee or ""
            if callee.startswith(("@llvm.lifetime.", "@llvm.assume", "@llvm.prefetch")):
                continue
            if _MEMWRITE.match(callee):
                if _MEMCOPY.match(callee) and len(i.ops) > 1 and i.ops[1].value in self.ptrs:
                    return True
                continue
            target = self.gen.module.function(callee) if callee.startswith("@") else None
            if target is None or not target.blocks or len(target.params) != len(i.ops):
                return True                 # no bitcode: it may read the memory
            acts = ["dupnoneed" if o.value in self.ptrs else "const" for o in i.ops]
            if NoNeed.of(self.gen, target, acts).reads:
                return True
        return False

    def drops_primal(self, inst) -> bool:
        """A primal write (or a value only it uses) that the forward sweep leaves out."""
        return id(inst) in self.drops or (inst.name is not None and inst.name in self.unneeded)

    def propagate(self, inst, acts: list[str]) -> list[str]:
        """A callee's pointer argument based on a dupnoneed one is dupnoneed there too."""
        return [("dupnoneed" if a == "dup" and o.value in self.ptrs else a)
                for a, o in zip(acts, inst.ops)] + acts[len(inst.ops):]


def _spill_slots(fn) -> set[str]:
    """Allocas used only as the address of whole loads and stores (and lifetime markers)."""
    slots = {i.name for i in fn.insts() if i.op == "alloca"}
    for i in fn.insts():
        used = [v for v, _ in i.incoming] if i.op == "phi" else i.locals_used()
        for k, v in enumerate(used):
            if v not in slots:
                continue
            if i.op == "load" and k == 0 and i.ty == "ptr" or \
                    i.op == "store" and k == 1 and i.ops[0].value != v or \
                    i.op == "call" and (i.callee or "").startswith("@llvm.lifetime."):
                continue
            slots.discard(v)
    return slots
