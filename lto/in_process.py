"""Small modules optimized and compiled in this process, by llvmlite's PassBuilder and
TargetMachine, instead of by `opt` and `llc`.

Each of those tools spends about 0.05-0.1 s of CPU loading LLVM before it reads a module, and a
small program's link ran three of them (pre-AD `opt`, post-AD `opt`, `llc`): a quarter of its
CPU time (docs/performance.md, "The small link"). This process has LLVM loaded already. The
pipelines are the same (`default<O{level}>`, with the same vectorization switches), and so is
the code: on large modules the tools are faster (about 1.6x for optimization) and can run on
several cores, so they keep those (optimize.py).

Not here: a module with static constructors or destructors (llvmlite's TargetMachine puts
them in `.ctors`, where llc and clang use `.init_array`; and its bitcode, unlike opt's, does
not keep the use-list order, on which llc's code depends), modules with debug info (a pass that
breaks on the derivatives' debug locations would abort this process, where `opt` failing gives
an error and a retry without it: ad_pipeline.emit), sanitizer passes and options that only the
tools take. ENZYME_CC_LLVM_TOOLS=1 sends every module to the tools.
"""
from __future__ import annotations

import os

import llvmlite.binding as llvm

# bitcode below which a module is optimized and compiled here (up to about this size the tools'
# start costs more than llvmlite's slower passes; docs/performance.md)
SMALL_BITCODE = 32 * 1024


def wanted(bitcode_len: int) -> bool:
    """Whether a module of `bitcode_len` bytes of bitcode goes through this process."""
    return bitcode_len < SMALL_BITCODE and os.environ.get("ENZYME_CC_LLVM_TOOLS") != "1"


def _machine(module, level: int, reloc: str):
    target = llvm.Target.from_triple(module.triple or llvm.get_process_triple())
    # the tools' defaults: no CPU beyond the functions' own attributes, the default code model;
    # opt's relocation model is the target's default (static: its pipeline then builds no
    # relative lookup tables), llc's is PIC as we ask it
    return target.create_target_machine(opt=level, reloc=reloc, codemodel="default")


def optimized(bitcode: bytes, ctx, level: int, vectorize: bool):
    """opt's `-O{level}` pipeline on the module of `bitcode`, read as opt reads it (into `ctx`,
    a fresh context: the same type names and use-list order, so the same IR out), with
    optimize.optimize's switches: loop and SLP vectorization and loop interleaving all on or
    all off. Returns the llvmlite module."""
    module = llvm.parse_bitcode(bitcode, ctx)
    level = min(max(level, 0), 3)
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = pto.slp_vectorization = pto.loop_interleaving = vectorize
    pb = llvm.create_pass_builder(_machine(module, level, "default"), pto)
    pb.getModulePassManager().run(module, pb)
    return module


def has_static_constructors(module) -> bool:
    """Whether `module` lists static constructors or destructors (llvmlite's TargetMachine
    would put them in `.ctors`: such a module goes to llc)."""
    for name in ("llvm.global_ctors", "llvm.global_dtors"):
        try:
            module.get_global_variable(name)
            return True
        except NameError:
            pass
    return False


def emit_object(module, out: str, level: int) -> None:
    """The native object of `module` (without static constructors) written to `out`, as `llc
    -O{level} -relocation-model=pic` writes it from opt's output."""
    assert not has_static_constructors(module)
    with open(out, "wb") as f:
        f.write(_machine(module, min(max(level, 0), 3), "pic").emit_object(module))
