"""Memory that nothing in a derivative's call tree writes: its loads are re-read in any reverse
sweep, split pairs included, instead of being taped.

A split pair's reverse runs long after its forward: the rest of the caller's forward sweep runs
in between, and MemoryInfo.unmodified_after only sees one function. This analysis sees the whole
call tree of the round's marker calls. It follows every pointer to the objects it may point to
(its roots): an argument of the differentiated function, a global, an object allocated in the
tree (an alloca or a heap block: "local"), memory reached through a pointer read from outside
the tree ("deref"). Roots flow through calls and OpenMP forks to the callees' parameters, and
through stores of pointers into local objects to the loads that read them back. Every write
of the tree (stores, atomics, library calls through their pointer arguments, frees) is then
mapped to its roots. When no write reaches memory from outside the tree, nothing the gradient
runs can change that memory between a load and its reverse: arguments' memory, globals and
what they point to are read-only for the whole call, so a load of them is re-executed where
its reverse needs it. Writes to one global leave the other globals read-only, and writes
through a `restrict` argument of the differentiated function the other arguments.

Each marker call's tree is analysed on its own, and a derivative shared by several trees reloads
only what is read-only in every one of them. Trees of marker calls that let the program run
between the two halves (`__enzyme_augmentfwd`, `__enzyme_reverse`) or choose the function at
run time have no read-only memory; so has a tree with anything the analysis cannot follow (an
indirect call, a pointer from an integer, a callee it has no rule or body for).
"""
from __future__ import annotations

import re

from ..structure.type_layout import global_named, underlying
from enzyme_cc.rules.call_kinds import kind_of
from ..parallel.openmp import outlined_call
from enzyme_cc.rules.blas import written_arg
from enzyme_cc.rules.mpi import written
from ..analysis.loop_regions import may_write_arg

UNKNOWN = ("unknown",)
DEREF = ("deref",)          # memory reached through a pointer read from outside the tree
RUNTIME = ("runtime",)      # the OpenMP runtime's thread-id words given to an outlined region
_CONSTANTS = ("null", "undef", "poison", "zeroinitializer")
_ARG_WRITERS = ("rule", "libm_out", "inactive", "mirror")
_STOPPERS = ("tape", "ckpt_driver", "ckpt_fn", "fixedpoint", "custom", "unknown",
             "omp_refused", "memalign")


def reloadable(gen, fn_name: str, ptr: str) -> bool:
    """A load through `ptr` in function fn_name reads memory that no write of any call tree of
    the round's marker calls containing fn_name reaches (analysed on first use)."""
    trees = gen.__dict__.get("_read_only")
    if trees is None:
        trees = gen._read_only = [ReadOnly(gen, r) for r in getattr(gen, "ro_requests", None) or ()]
    known = False
    for t in trees:
        if t.stopped:
            if fn_name in t.reach():
                return False
        elif fn_name in t.params:
            if not t.reloadable(fn_name, ptr):
                return False
            known = True
    return known


class ReadOnly:
    """The call tree of one marker call."""

    def __init__(self, gen, request):
        self.gen, self.module, self.request = gen, gen.module, request
        self.kind = lambda inst: kind_of(gen, inst)
        self.params: dict[str, list[set]] = {}     # function -> roots per parameter
        self.content: dict[tuple, set] = {}        # local root -> roots of pointers stored in it
        self.opaque: set = set()                   # local roots written other than that
        self.written: set = set()
        self._memo: dict = {}
        self._reach = None
        fn = self.module.function(request.fn)
        self.stopped = fn is None or request.mode not in ("reverse", "forward") or \
            bool(getattr(request, "candidates", None))
        if self.stopped:
            return
        self.params[request.fn] = [{("arg", request.fn, i)} for i in range(len(fn.params))]
        while not self.stopped:                 # roots only grow: a least fixed point
            size = self._size()
            for f in list(self.params):
                self._visit(f)
            if self._size() == size:
                break
        if not self.stopped:
            for f in self.params:
                self._writes(f)
        self.stopped = self.stopped or UNKNOWN in self.written
        # a `restrict` argument of the differentiated function (LLVM's noalias) is written
        # only through pointers based on it during the call: its writes reach no other root
        private = {("arg", request.fn, k) for k, p in enumerate(fn.params) if "noalias" in p.attrs}
        self.outside = any(w[0] in ("arg", "deref", "runtime") and w not in private
                           for w in self.written)
        self.globals_written = {w[1] for w in self.written if w[0] == "global"}

    def reach(self) -> set:
        """Every function a stopped tree may run: all defined functions its code names."""
        if self._reach is None:
            fns, _ = getattr(self.request, "candidates", None) or ((), None)
            self._reach, todo = set(), [self.request.fn, *fns]
            while todo:
                f = todo.pop()
                if f in self._reach or not self.module.defines(f):
                    continue
                self._reach.add(f)
                todo.extend(re.findall(r'@[-\w.$]+|@"[^"]+"', self.gen._body(f)))
        return self._reach

    # ---- roots of a pointer --------------------------------------------------------------------
    def _param_roots(self, f, fn) -> list[set]:
        if f not in self.params:
            self.params[f] = [set() for _ in fn.params]
        return self.params[f]

    def roots(self, fn, v: str, seen=None) -> set:
        if v and v.startswith("%"):
            v = underlying(fn, v)
        if not v or v in _CONSTANTS:
            return set()
        if not v.startswith("%"):
            g = global_named(v)
            return {("global", g)} if g else {UNKNOWN}
        d = fn.defs.get(v)
        if d is None:
            return {UNKNOWN}
        if not hasattr(d, "op"):                             # a parameter
            k = fn.params.index(d)
            ps = self.params.get(fn.name)
            return set(ps[k]) if ps else {UNKNOWN}
        seen = seen if seen is not None else set()
        if v in seen:
            return set()                                     # (a phi cycle adds nothing new)
        seen.add(v)
        if d.op == "alloca":
            return {("local", fn.name, v)}
        if d.op in ("phi", "select"):
            out = set()
            for o in (d.ops[1:] if d.op == "select" else d.ops):
                out |= self.roots(fn, o.value, seen)
            return out
        if d.op in ("call", "invoke"):
            return {("local", fn.name, v)} if self.kind(d) == "alloc" else {UNKNOWN}
        if d.op == "load" and d.ty == "ptr":
            out = set()
            for r in self.roots(fn, d.ops[0].value, seen):
                if r[0] == "local":
                    out |= self.content.get(r, set())
                    if r in self.opaque:
                        out.add(UNKNOWN)
                else:
                    out.add(UNKNOWN if r == UNKNOWN else DEREF)
            return out
        return {UNKNOWN}

    # ---- the fixed point: parameters' roots and local objects' contents -----------------------
    def _size(self) -> int:
        return sum(len(r) for ps in self.params.values() for r in ps) + len(self.params) + \
            sum(map(len, self.content.values())) + len(self.opaque)

    def _visit(self, f):
        fn = self.module.function(f)
        for inst in fn.insts():
            if inst.op == "store":
                for r in self.roots(fn, inst.ops[1].value):
                    if r[0] == "local":
                        if inst.ops[0].ty == "ptr":
                            self.content.setdefault(r, set()).update(
                                self.roots(fn, inst.ops[0].value))
                        else:
                            self.opaque.add(r)
            elif inst.op in ("call", "invoke"):
                self._call(fn, inst)
            if inst.op == "store" or inst.op in ("call", "invoke") and self.kind(inst) != "omp":
                self._callbacks(inst)
            if self.stopped:
                return

    def _callbacks(self, inst):
        """A function whose address the tree passes on or stores may be called by code the
        analysis does not see, with pointers it does not know: it belongs to the tree, its
        pointer parameters pointing anywhere. (The OpenMP runtime's own callbacks, reduction
        functions, write what the runtime's rule says: see _call_writes.)"""
        ops = inst.ops[3:] if self.kind(inst) == "omp_fork" else inst.ops
        for o in ops:
            if o.value.startswith("@") and self.module.defines(o.value):
                for r in self._param_roots(o.value, self.module.function(o.value)):
                    r.add(UNKNOWN)

    def _callee(self, inst, kind) -> str | None:
        """The function a call runs as code of the tree: a callee with a body (the outlined
        region of an OpenMP fork), whatever rule its kind has (its writes are its body's)."""
        callee = inst.ops[2].value if kind == "omp_fork" else inst.callee or ""
        if kind in ("diff", "omp_fork") + _ARG_WRITERS and callee.startswith("@") and \
                self.module.defines(callee) and not callee.startswith("@ad.gs."):
            return callee
        return None

    def _call(self, fn, inst):
        kind = self.kind(inst)
        callee = self._callee(inst, kind)
        if callee is None:
            if kind in ("diff", "omp_fork"):
                self.stopped = True            # an indirect call, an inner round's helper
                return
            if (inst.callee or "").startswith("@llvm.lifetime."):
                return              # (no pointer enters the local: its content stays known)
            for r in self._call_writes(fn, inst, kind):
                if r[0] == "local":
                    self.opaque.add(r)
            return
        ps = self._param_roots(callee, self.module.function(callee))
        if kind == "omp_fork":                 # @outlined(gtid, btid, captured...)
            inst = outlined_call(inst)
            for k in (0, 1):
                ps[k].add(RUNTIME)
        for k, o in enumerate(inst.ops[:len(ps)]):
            if o.ty == "ptr" and not (kind == "omp_fork" and k < 2):
                ps[k] |= self.roots(fn, o.value)

    # ---- what the tree writes --------------------------------------------------------------------
    def _call_writes(self, fn, inst, kind) -> set:
        """Roots a call that is not differentiated as code may write."""
        ptrs = [o for o in inst.ops if o.ty == "ptr"]
        if kind in _STOPPERS or (inst.callee or "@").startswith("%"):
            return {UNKNOWN}
        if kind in ("alloc",):
            return set()
        if kind == "omp":        # runtime bookkeeping: the words it is given, the reduction list
            out = set()
            for o in ptrs:
                for r in self.roots(fn, o.value):
                    if r[0] == "global":
                        continue            # its own ident and lock words
                    out.add(r)
                    if r[0] == "local":
                        out |= self.content.get(r, set())
            return out
        if kind in ("free", "realloc", "memcpy", "memset"):
            return self.roots(fn, ptrs[0].value) if ptrs else set()
        if (inst.callee or "").startswith("@llvm.lifetime."):
            return self.roots(fn, ptrs[0].value)
        if kind == "blas":
            k = written_arg(inst.callee)
            return self.roots(fn, inst.ops[k].value) if k is not None else set()
        if kind == "mpi":
            ks = written(inst)
            if ks is None:
                return {UNKNOWN}
            return set().union(*(self.roots(fn, inst.ops[k].value) for k in ks))
        if kind in _ARG_WRITERS:
            out = set()
            for k, o in enumerate(inst.ops):
                if o.ty == "ptr" and may_write_arg(self.module, inst.callee, k):
                    out |= {r for r in self.roots(fn, o.value)
                            if not (r[0] == "global" and self.module.is_constant_global(r[1]))}
            return out
        return {UNKNOWN}

    def _writes(self, f):
        fn = self.module.function(f)
        for inst in fn.insts():
            if inst.op == "store":
                self.written |= self.roots(fn, inst.ops[1].value)
            elif inst.op in ("atomicrmw", "cmpxchg"):
                self.written |= self.roots(fn, inst.ops[0].value)
            elif inst.op in ("call", "invoke") and \
                    self._callee(inst, self.kind(inst)) is None:
                self.written |= self._call_writes(fn, inst, self.kind(inst))

    # ---- the question --------------------------------------------------------------------------
    def reloadable(self, f: str, ptr: str) -> bool:
        if self.stopped or f not in self.params:
            return False
        key = (f, ptr)
        if key not in self._memo:
            self._memo[key] = self._reloadable(self.module.function(f), ptr)
        return self._memo[key]

    def _reloadable(self, fn, ptr) -> bool:
        roots = self.roots(fn, ptr)
        if not roots or any(r[0] in ("local", "unknown", "runtime") for r in roots) or \
                roots & self.written or self.outside:
            return False
        return not any(r[1] in self.globals_written if r[0] == "global" else self.globals_written
                       for r in roots)
