"""llvmlite side of the link step: parse, link, optimize, emit a native object.

One fresh LLVM context per link (DESIGN.md: link_in across contexts corrupts modules).
"""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from enzyme_cc.errors import UserError

_initialized = False


def _init():
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()      # inline asm (cpuid in Eigen, rdtsc, ...)
        _initialized = True


def new_context():
    _init()
    return llvm.create_context()


def parse_bitcode(data: bytes, origin: str, ctx):
    try:
        return llvm.parse_bitcode(data, ctx)
    except RuntimeError as e:
        raise UserError(f"{origin}: cannot read bitcode: {str(e).strip()}")


def parse_text(text: str, ctx, what: str = "generated IR"):
    try:
        m = llvm.parse_assembly(text, ctx)
        m.verify()
        return m
    except RuntimeError as e:
        raise InternalIRError(f"{what} is invalid: {str(e).strip()}", text)


class InternalIRError(Exception):
    """The IR we produced does not parse/verify: a bug of ours, never the user's."""

    def __init__(self, msg, text):
        super().__init__(msg)
        self.text = text


def merge(modules: list[tuple[str, bytes]], ctx):
    """Link all bitcode modules into the first one."""
    if not modules:
        raise UserError("no bitcode to link")
    main = parse_bitcode(modules[0][1], modules[0][0], ctx)
    for origin, data in modules[1:]:
        other = parse_bitcode(data, origin, ctx)
        try:
            main.link_in(other)
        except RuntimeError as e:
            raise UserError(f"{origin}: cannot link its bitcode: {str(e).strip()}")
    return main


_OPTNONE = re.compile(r"\b(optnone|noinline)\b")


def strip_optnone(text: str) -> str:
    """-O0 objects carry optnone + noinline on every function; drop that pair from attribute
    groups (a user's own noinline, without optnone, stays)."""
    out = []
    for line in text.split("\n"):
        if line.startswith("attributes #") and re.search(r"\boptnone\b", line):
            line = _OPTNONE.sub("", line)
        out.append(line)
    return "\n".join(out)


_COMDAT = re.compile(r" comdat(?:\(\$[^)]*\))?(?= )")


def internalize_inline_functions(text: str) -> str:
    """C++ inline functions and template instantiations (linkonce_odr: every object that uses one
    carries its own copy) become internal to the merged module, as LTO does for an executable:
    the inliner then treats a single call site as the last use and inlines it, which turns
    template layers (Boost, the STL) and the function pointers passed through them into one
    function before AD. Out of their comdat, so another object's copy never replaces ours."""
    out = []
    for line in text.split("\n"):
        if line.startswith("define linkonce_odr "):
            rest = line[len("define linkonce_odr "):]
            for vis in ("hidden ", "protected "):     # local linkage has default visibility
                rest = rest.removeprefix(vis)
            line = _COMDAT.sub("", "define internal " + rest, 1)
        out.append(line)
    return "\n".join(out)


def target_machine(module, opt: int):
    triple = module.triple or llvm.get_process_triple()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(opt=opt, reloc="pic", codemodel="default")


def optimize(module, level: int, vectorize: bool):
    """Run LLVM's O`level` pipeline. Before AD: no vectorization (scalar code for the AD rules)."""
    if level <= 0:
        level = 0
    tm = target_machine(module, min(level, 3))
    pto = llvm.create_pipeline_tuning_options(min(level, 3))
    pto.loop_vectorization = vectorize
    pto.slp_vectorization = vectorize
    pto.loop_unrolling = True         # small constant loops unrolled: no tape for their values
    pto.loop_interleaving = vectorize
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(module, pb)
    return module


def emit_object(module, level: int) -> bytes:
    tm = target_machine(module, min(max(level, 0), 3))
    return tm.emit_object(module)
