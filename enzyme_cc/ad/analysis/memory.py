"""Which memory the function may write: decides whether a load can be re-executed in the
reverse sweep (combined mode) instead of being cached."""
from __future__ import annotations

from .activity_basics import int_pointer_sources
from ..structure.alias_scopes import scoped_disjoint
from ..structure.type_layout import underlying, same_memory
from enzyme_cc.rules.call_kinds import ALLOC
from enzyme_cc.rules.blas import written_arg
from enzyme_cc.rules.mpi import written

# instructions through which an address may leave the call other than a store or a call
_LEAVES = ("ret", "ptrtoint", "insertvalue", "insertelement", "atomicrmw", "cmpxchg")
ZEROED = ("@calloc", "@__rust_alloc_zeroed")     # allocations whose bytes start as zeros


class MemoryInfo:
    def __init__(self, fn, kind_of_call, kept=lambda v: False, module=None):
        """kept(p): a free of p waits for the reverse sweep (p has a shadow: the forward rule of
        free defers it, or the allocation's reverse frees it); any other free ends p's contents
        in the forward sweep, like a write. module: its scoped no-alias metadata (a `restrict`
        function inlined) tells a write from a load it cannot reach."""
        self.fn, self.kept, self.module = fn, kept, module
        # `noalias` parameters (C99 restrict): during the call no pointer not derived from one
        # reaches its memory, so like a local it aliases nothing else while it does not escape
        self.noalias = {p.name for p in fn.params if "noalias" in p.attrs}
        self.written: set[str] = set()
        self.anything = False
        self.escaped: set[str] = set()
        # objects reached through a pointer phi/select or moved by realloc are not identified:
        # a write through the joined pointer may be a write to any of them. A phi/select of one
        # object and null (std::vector's `n ? new T[n] : nullptr`) is that object (_canon)
        self._canons: dict = {}
        self.joined = {v for pair in same_memory(fn) if self._canon(pair[0]) == pair[0]
                       for v in pair}
        self.writers: list = []     # (instruction, bases it may write; None: any memory)
        # stores the reverse sweep can undo (undo_stores.py), and those it must undo
        # because a reload was allowed past them: id -> store
        self.undoable: set = set()
        self.undo: dict = {}
        self.loop_undoable: set = set()     # ... of them, stores in loops (undo_stores.select)
        self.dropped: set = set()   # writes the forward sweep leaves out (enzyme_dupnoneed)
        self._reach: dict = {}
        self._private: set | None = None    # bases that leave the call (private_block)
        self._writers_memo: dict = {}       # base -> the writers that may write it
        for inst in fn.insts():
            bases = self._writes(fn, inst, kind_of_call)
            if bases:
                self.written.update(bases)
                self.writers.append((inst, bases))
            elif bases is None:
                self.anything = True
                self.writers.append((inst, None))

    def _canon(self, v: str, depth=0) -> str:
        """The object v points into when v is a pointer phi/select whose incoming values are
        that one object (through GEPs and such phis) or null/undef (never dereferenced): an
        access through v is an access to it. Otherwise v itself."""
        if v in self._canons:
            return self._canons[v]
        self._canons[v] = v                   # (a phi cycle resolves to no object)
        d = self.fn.defs.get(v)
        out = v
        if depth <= 8 and getattr(d, "op", None) in ("phi", "select") and d.ty == "ptr":
            bases = set()
            for o in (d.ops[1:] if d.op == "select" else d.ops):
                if o.value in ("null", "undef", "poison"):
                    continue
                if not o.value.startswith("%"):
                    bases.add(None)           # a global or constant: not one local object
                    break
                b = self._canon(underlying(self.fn, o.value), depth + 1)
                if b != v:
                    bases.add(b)
            if len(bases) == 1 and None not in bases:
                out = bases.pop()
        self._canons[v] = out
        return out

    def _base(self, v: str) -> str:
        return self._canon(underlying(self.fn, v))

    def _writes(self, fn, inst, kind_of_call):
        """Underlying objects inst may write (empty: none), None for any memory; records
        escaping pointers."""
        if inst.op == "store":
            if inst.ops[0].ty == "ptr":
                self.escaped.add(self._base(inst.ops[0].value))
            return {self._base(inst.ops[1].value)}
        if inst.op in ("atomicrmw", "cmpxchg"):
            return None
        if inst.op not in ("call", "invoke"):
            return set()
        kind = kind_of_call(inst)
        ptrs = [self._base(o.value) for o in inst.ops if o.ty == "ptr"]
        if (inst.callee or "").startswith("@llvm.lifetime.") or \
                kind in ("memcpy", "memset", "memalign"):
            # a lifetime marker ends (or starts) the object's contents: a reload after it
            # reads undefined bytes
            return {ptrs[0]}
        if kind == "blas":
            k = written_arg(inst.callee)
            return {self._base(inst.ops[k].value)} if k is not None else set()
        if kind == "omp":                         # runtime bookkeeping: integers it is given
            return set(ptrs)
        if kind == "omp_fork":
            return None
        if kind == "mpi":
            self.escaped.update(ptrs)             # Isend/Irecv keep their buffers
            ks = written(inst)
            return None if ks is None else {self._base(inst.ops[k].value) for k in ks}
        if (inst.callee or "").startswith("@ad.gs."):
            return None                           # an inner round's swaps of shadow storage
        if kind in ("rule", "libm_out"):
            # results stored through pointers (frexp's exponent, sincos's pair): a reload of
            # that memory after the call must not be recomputed from what it holds later
            return set(ptrs)
        if kind == "free":      # (a reload after a free the forward sweep runs reads freed memory)
            p = inst.ops[0].value if inst.ops else None
            return set() if p is None or not p.startswith("%") or self.kept(p) else {self._base(p)}
        if kind in ("inactive", "alloc"):
            return set()
        # a callee may write through its pointers, or globals
        self.escaped.update(ptrs)
        if kind == "unknown" or (inst.callee or "").startswith("%"):
            return None
        return set(ptrs) | {"@*"}

    def _identified_local(self, v):
        if v in self.joined:
            return False
        if v in self.noalias:
            return v not in self.escaped
        d = self.fn.defs.get(v)
        return v not in self.escaped and d is not None and getattr(d, "op", None) in (
            "alloca", "call", "invoke") and (d.op == "alloca" or d.ty == "ptr" and d.callee in ALLOC)

    def may_alias(self, a, b) -> bool:
        a = self._canon(a)
        b = b if b == "@*" else self._canon(b)
        if a == b:
            return True
        if b == "@*":
            return not self._identified_local(a)
        if self._identified_local(a) or self._identified_local(b):
            return False
        if a.startswith("@") and b.startswith("@"):
            return False
        return True

    def unmodified(self, base: str) -> bool:
        """No instruction of the function may write memory that `base` points into."""
        if self.anything:
            return False
        return not any(self.may_alias(base, w) for w in self.written)

    def unmodified_after(self, base: str, load, user: str | None = None) -> bool:
        """No instruction that may write memory `base` points into can run after `load` (in
        forward order: later in its block, or in a block reachable from it): the value loaded
        is still in memory when the reverse sweep runs (it writes no primal memory, and frees
        of the function's own allocations wait for it). A later write that the reverse sweep
        undoes (a store run exactly once per call, `undoable`) does not count for a reload in
        the reverse of block `user` that cannot run after the store: the store's reverse puts
        the old bytes back before that reload runs. Nor does a write the forward sweep leaves
        out."""
        blk = load.block
        later = self._reachable(blk.label)
        pos = None                      # positions in the load's block, when a writer is there
        undone = []
        for inst in self._writers_of(base):
            b = inst.block.label
            if id(inst) in self.dropped or self.module is not None and \
                    scoped_disjoint(self.module, self.fn, load, inst):
                continue
            if b not in later:
                if b != blk.label:
                    continue
                pos = pos or {id(i): n for n, i in enumerate(blk.insts)}
                if pos[id(inst)] <= pos[id(load)]:
                    continue
            # an undone store helps only a reload in the reverse of a block that cannot run
            # after it (the reload runs where that block's reverse starts, before the
            # reverse of the block's own stores)
            if id(inst) not in self.undoable or user is None or b == user or \
                    user in self._reachable(b, blk.label if id(inst) in self.loop_undoable
                                            else None):
                return False
            undone.append(inst)
        for inst in undone:             # the reverse sweep will undo these (undo_stores.py)
            self.undo[id(inst)] = inst
        return True

    def _writers_of(self, base: str) -> list:
        """The writers that may write memory `base` points into, in program order."""
        if base not in self._writers_memo:
            self._writers_memo[base] = [inst for inst, bases in self.writers if bases is None or
                                        any(self.may_alias(base, w) for w in bases)]
        return self._writers_memo[base]

    def private_block(self, ptr: str) -> bool:
        """ptr points into a heap block this call allocates and nothing outside the call ever
        sees: its address is not stored to memory, passed to a call that may keep it, returned,
        made an integer, or joined with another object. In a split pair only this call's
        augmented forward can write it, and its free waits for the reverse function (shadowed
        blocks) or is a write like any other, so a load that no later write of the call may
        reach reads the same bytes when the reverse function runs."""
        base = self._base(ptr)
        d = self.fn.defs.get(base)
        if getattr(d, "op", None) not in ("call", "invoke") or d.ty != "ptr" or \
                d.callee not in ALLOC or base in self.escaped or base in self.joined:
            return False
        if self._private is None:
            self._private = set()
            for inst in self.fn.insts():
                if inst.op in _LEAVES:
                    self._private.update(self._base(o.value) for o in inst.ops
                                         if o.ty == "ptr" and o.is_local)
        return base not in self._private

    def zeroed_until(self, ptr: str, inst) -> bool:
        """ptr points into a block allocated zeroed (calloc, Rust's alloc_zeroed) that nothing
        may write before `inst` runs: its bytes are still zeros there (`vec![vec![0.0; n]; m]`
        clones such a row with untyped copies)."""
        base = self._base(ptr)
        d = self.fn.defs.get(base)
        if getattr(d, "op", None) == "inttoptr":     # Rust's Vec: its address kept as an integer
            srcs = int_pointer_sources(self.fn, d.ops[0].value) or set()
            base = self._base(srcs.pop()) if len(srcs) == 1 else base
            d = self.fn.defs.get(base)
        if getattr(d, "op", None) not in ("call", "invoke") or d.callee not in ZEROED:
            return False
        blk = inst.block
        pos = {id(i): n for n, i in enumerate(blk.insts)}
        for w, bases in self.writers:
            if w is inst or bases is not None and not any(self.may_alias(base, b) for b in bases):
                continue
            b = w.block.label
            if b == blk.label and pos[id(w)] < pos[id(inst)] or blk.label in self._reachable(b):
                return False
        return True

    def _reachable(self, label: str, avoid: str | None = None) -> set:
        """Blocks reachable from `label` by one edge or more, without entering `avoid` if given
        (a loop store's run between a load and the reverse of block `user` needs a path from
        the store to `user` that does not run the load again: a run after the load again is
        undone before that load's reload)."""
        key = label if avoid is None else (label, avoid)
        if key not in self._reach:
            seen, todo = set(), [t for t in self.fn.block(label).term.targets if t != avoid]
            while todo:
                x = todo.pop()
                if x not in seen:
                    seen.add(x)
                    todo.extend(t for t in self.fn.block(x).term.targets if t != avoid)
            self._reach[key] = seen
        return self._reach[key]
