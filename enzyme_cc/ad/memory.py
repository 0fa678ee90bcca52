"""Which memory the function may write: decides whether a load can be re-executed in the
reverse sweep (combined mode) instead of being cached."""
from __future__ import annotations

from .typeinfo import underlying
from enzyme_cc.rules.calls import ALLOC


class MemoryInfo:
    def __init__(self, fn, kind_of_call):
        self.fn = fn
        # `noalias` parameters (C99 restrict): during the call no pointer not derived from one
        # reaches its memory, so like a local it aliases nothing else while it does not escape
        self.noalias = {p.name for p in fn.params if "noalias" in p.attrs}
        self.written: set[str] = set()
        self.anything = False
        self.escaped: set[str] = set()
        for inst in fn.insts():
            if inst.op == "store":
                self.written.add(underlying(fn, inst.ops[1].value))
                if inst.ops[0].ty == "ptr":
                    self.escaped.add(underlying(fn, inst.ops[0].value))
            elif inst.op in ("call", "invoke"):
                kind = kind_of_call(inst)
                ptrs = [underlying(fn, o.value) for o in inst.ops if o.ty == "ptr"]
                if kind in ("memcpy", "memset", "memalign"):
                    self.written.add(ptrs[0])
                elif kind == "blas":
                    from enzyme_cc.rules.blas import written_arg
                    k = written_arg(inst.callee)
                    if k is not None:
                        self.written.add(underlying(fn, inst.ops[k].value))
                elif kind == "fortran":
                    pass                          # reads its array only
                elif kind not in ("inactive", "rule", "alloc", "free"):
                    # a callee may write through its pointers, or globals
                    self.written.update(ptrs)
                    self.escaped.update(ptrs)
                    self.written.add("@*")
                    if kind == "unknown" or (inst.callee or "").startswith("%"):
                        self.anything = True
            elif inst.op in ("atomicrmw", "cmpxchg"):
                self.anything = True

    def _identified_local(self, v):
        if v in self.noalias:
            return v not in self.escaped
        d = self.fn.defs.get(v)
        return v not in self.escaped and d is not None and getattr(d, "op", None) in (
            "alloca", "call") and (d.op == "alloca" or d.ty == "ptr" and d.callee in ALLOC)

    def may_alias(self, a, b) -> bool:
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
