"""The kind of a call, by its callee's name: what rule differentiates it (an allocation, a free,
a memory copy, a library function with a formula, a BLAS routine, an MPI or OpenMP runtime call,
a function with bitcode to differentiate as code, ...). Kept per name (`kind_of`), since it
depends only on the name and on what the module defines and registers."""
from .registry import call_rule, is_inactive_call, allocator, is_deallocator, is_mirror_call
from .blas import applies
from .libm_out import family
from .mpi import is_mpi
from .tape import is_tape_call
from enzyme_cc.ad.parallel import openmp
from enzyme_cc.ad.api.checkpoint import DRIVERS
from enzyme_cc.ad.api.checkpoint_tangent import is_ckpt_fn
from enzyme_cc.ad.analysis.inert import inert

# Allocation functions: (size arguments, whose product is the size; deallocator). The shadow is
# allocated by the same call (zeroed: rules/shadow_blocks.py).
ALLOC = {"@malloc": ((0,), "@free"), "@calloc": ((0, 1), "@free"),
         "@aligned_alloc": ((1,), "@free"), "@memalign": ((1,), "@free"),
         "@valloc": ((0,), "@free"), "@_Znwm": ((0,), "@_ZdlPv"),
         "@_Znam": ((0,), "@_ZdaPv"), "@_ZnwmRKSt9nothrow_t": ((0,), "@_ZdlPv"),
         "@_ZnamRKSt9nothrow_t": ((0,), "@_ZdaPv")}
# std::string::_M_create(size_t &capacity, size_t old): an explicitly instantiated libstdc++
# member without bitcode that returns `new char[capacity + 1]` after possibly growing
# `capacity`: an allocation whose size ("*1+1": the i64 behind argument 1, plus one) is read
# after the call; its shadow comes from operator new (characters carry no derivative, but a
# string buffer may join a shadowed one, the short-string buffer inside a map node).
STRING_CREATE = "@_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm"
ALLOC[STRING_CREATE] = (("*1+1",), "@_ZdlPv")
SHADOW_ALLOCATOR = {STRING_CREATE: "@_Znwm"}
MEMCPY = ("@llvm.memcpy.", "@llvm.memmove.", "@memcpy", "@memmove")
MEMSET = ("@llvm.memset.", "@memset")


def kind_of(gen, inst) -> str:
    """The kind of a call by its callee (a name, or a local for an indirect call): it depends
    only on the name and on what the module defines and registers, so it is kept per name."""
    c = inst.callee or ""
    memo = gen.__dict__.setdefault("_call_kinds", {})
    kind = memo.get(c)
    if kind is None:
        kind = memo[c] = _kind_of(gen, c)
    return kind


def _kind_of(gen, c: str) -> str:
    if openmp.is_openmp(c):
        k = openmp.kind(c)            # OpenMP runtime: enzyme_cc/ad/parallel/openmp.py
        reg = getattr(gen, "reg", None)
        if k == "omp_refused" and reg is not None and c in reg.inactive:
            return "inactive"         # the program says so: a lock around an accumulation
        return k
    if c in DRIVERS:
        return "ckpt_driver"
    if is_ckpt_fn(c):
        return "ckpt_fn"             # a checkpointed loop's derivative, differentiated again
    if c.startswith("@__enzyme_cc_fp."):
        return "fixedpoint"          # enzyme_cc/ad/api/fixed_point.py: a lowered __enzyme_fixed_point
    if c in ALLOC or allocator(c):
        return "alloc"
    if c in gen.FREES or is_deallocator(c):
        return "free"
    if c == "@realloc":
        return "realloc"
    if is_tape_call(c):
        return "tape"
    if c == "@posix_memalign":
        return "memalign"
    if c.startswith(MEMCPY):
        return "memcpy"
    if c.startswith(MEMSET):
        return "memset"
    if is_inactive_call(c):
        return "inactive"
    if is_mirror_call(c):
        return "mirror"
    reg = getattr(gen, "reg", None)
    if reg is not None and (c in reg.gradient or c in reg.derivative):
        return "custom"
    if is_mpi(c) and not gen.module.defines(c):
        return "mpi"
    if applies(gen.module, c):
        return "blas"          # (other BLAS routines the program defines: differentiated as code)
    if call_rule(c) is not None:
        return "rule"
    if family(c) is not None and not gen.module.defines(c):
        return "libm_out"        # modf, sincos: two float results (rules/libm_out.py)
    if gen.module.defines(c) and is_variadic(gen.module, c):
        if inert(gen, c):
            return "inactive"     # an error reporter: formats text (enzyme_cc/ad/analysis/inert.py)
    if gen.module.defines(c) or c.startswith("%"):
        return "diff"             # indirect calls dispatch over the possible targets
    return "unknown"


def is_variadic(module, c: str) -> bool:
    """c is defined with a variadic parameter list (read from its `define` line: no parse)."""
    span = module._bodies.get(c)
    if span is None:
        return False
    head = module._lines[span[0]]
    k = span[0]
    while not head.rstrip().endswith("{") and k + 1 < span[1]:
        k += 1
        head += module._lines[k]
    return "...)" in head


def allocated_here(ctx, op) -> bool:
    """The freed pointer is an allocation of this function (its reverse frees it)."""
    d = ctx.synth.fn.defs.get(op.value)
    return getattr(d, "op", None) in ("call", "invoke") and kind_of(ctx.gen(), d) in (
        "alloc", "realloc")
