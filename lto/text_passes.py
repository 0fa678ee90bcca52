"""The merge stage's rewrites of the module's IR text (lto/ad_pipeline.py `merge`), in the order
they run: each a function from IR text to IR text, listed by `merge_passes` and tested one by one
in tests/test_text_passes.py. They are the rewrites LLVM has no pass for: attributes the next
stages rely on (no optnone, registered and BLAS calls kept as calls, marked loops kept whole,
code AD never sees marked), inline assembly, x86 intrinsics and vector reductions as plain IR, flang's OpenMP
capture records as clang's fork arguments, and inline functions internal as LTO makes them in
an executable. The passes on generated IR live with the AD core."""
from __future__ import annotations

import re
from typing import Callable

from enzyme_cc.ad.api import loop_checkpoint
from enzyme_cc.ad.api.markers import DERIVATIVE_MARKERS
from enzyme_cc.ad.api.registrations import keep_registered_calls
from enzyme_cc.ad.structure.diagnostics import free_function_name
from enzyme_cc.rules import blas, mpi
from . import call_signatures, flang_omp, inline_asm, preopt_scope, vector_reductions, x86_intrinsics


def merge_passes(shared: bool, preopt: bool,
                 name_values: Callable[[str], str] | None = None,
                 outside: set[str] | None = None) -> list[tuple[str, Callable[[str], str]]]:
    """(name, pass) of the merge stage's text passes, in order, for a shared library or an
    executable, with or without the pre-AD optimization. name_values: LLVM's instnamer
    (optimize.name_values), for naming numbered types once optnone is gone (it skips optnone
    functions) and before code AD never sees is marked optnone again. outside: in an
    executable that exports nothing, the symbols code without bitcode refers to (the program's
    other variables become internal), else None."""
    passes = [("strip optnone", strip_optnone)]
    if name_values is not None:
        passes.append(("name numbered types",
                       lambda text: name_numbered_types(text, name_values)))
    passes += [("Enzyme's entry points unmangled", unmangle_entry_points),
               ("marker calls never merged", markers_nomerge),
               ("keep registered calls", keep_registered_calls),
              ("keep BLAS calls", blas.keep_calls),
              ("inline assembly as IR", inline_asm.rewrite),       # Eigen's SSE max/min, FMA
              ("x86 intrinsics as IR", x86_intrinsics.rewrite),    # AVX max/min, horizontal adds
              ("vector reductions as scalar code", vector_reductions.rewrite),   # -flto objects
              ("flang's OpenMP if clause as a fork", flang_omp.fork_if_as_fork),
              ("flang's OpenMP capture records unpacked", flang_omp.unpack_capture_records),
              ("calls matched to their callee's one-element aggregates", call_signatures.match_calls)]
    if not shared:
        passes.append(("internalize inline functions", internalize_inline_functions))
    if not shared and outside is not None:
        passes.append(("internalize the program's variables",
                       lambda text: internalize_variables(text, outside)))
    if preopt:
        passes += [("keep marked loops", loop_checkpoint.keep_loops),     # loops through -O2
                   ("mark unreached code", preopt_scope.mark_unreached)]  # optimized once, later
    return passes


def run(text: str, passes) -> str:
    for _, rewrite in passes:
        text = rewrite(text)
    return text


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


_VARIABLE = re.compile(r'^(@(?:"[^"]*"|[-\w.$]+)) = (?:dso_local )?(?:(?:hidden|protected) )?'
                       r'((?:thread_local(?:\(\w+\))? )?(?:(?:local_)?unnamed_addr )?'
                       r'(?:addrspace\(\d+\) )?(?:externally_initialized )?(?:global|constant) )',
                       re.M)
_USED = re.compile(r'^@llvm\.(?:compiler\.)?used = .*$', re.M)
_MODULE_ASM = re.compile(r'^module asm .*$', re.M)


def internalize_variables(text: str, outside: set[str]) -> str:
    """The program's own pointer variables (defined here with external linkage, as
    `double *buf;` in a file that another declares `extern`) become internal, as LTO makes them
    in an executable that exports nothing: the AD core then knows every store into them (a
    global heap pointer's shadow block, shared_globals.heap_slots). Only pointers: globalopt
    would split an internal aggregate (a Fortran module array's descriptor) into pieces the AD
    core no longer recognizes. Left as they are: what code without bitcode refers to (outside),
    what llvm.used or module assembly names, variables in a named section (reached through the
    linker's __start_ symbols), and names of Enzyme's or the implementation's (`enzyme_dup` is
    read by name, `__x` may be the runtime's)."""
    used, asm = " ".join(_USED.findall(text)), " ".join(_MODULE_ASM.findall(text))

    def internal(m):
        name = m.group(1)
        bare = name[1:].strip('"')
        line_end = text.find("\n", m.end())
        rest = text[m.end():line_end if line_end >= 0 else len(text)]
        if not rest.startswith("ptr ") or \
                bare in outside or bare.startswith("__") or "enzyme" in bare.lower() or \
                re.search(re.escape(name) + r"(?![-\w.$])", used) or \
                re.search(r"(?<![\w.$])" + re.escape(bare) + r"(?![\w.$])", asm) or \
                ', section "' in rest or ", comdat" in rest:
            return m.group(0)
        return f"{name} = internal {m.group(2)}"
    return _VARIABLE.sub(internal, text)


NUMBERED_TYPE = re.compile(r"^%\d+ = type ", re.M)
_TYPE_OR_STRING = re.compile(r'"[^"]*"|%(\d+)\b')


_NUMBERED_VALUE = re.compile(r"^(?:[ \t]+%\d+ = |\d+:)", re.M)


def name_numbered_types(text: str, name_values: Callable[[str], str]) -> str:
    """Struct types LLVM prints by number (`%0 = type { %1 }`: left nameless when linking C++
    objects whose types clash) named `%__enzyme_cc_type.N`: the AD core names a function's
    numbered values `%vN`, and a type `%0` would be renamed with the value `%0`. Every value
    named first (name_values), so that each `%N` left is a type; where a function kept numbered
    values (an optnone of the program's own: instnamer skips it), the module is left as it is."""
    if not NUMBERED_TYPE.search(text):
        return text
    named = name_values(text)
    if _NUMBERED_VALUE.search(named):
        return text
    return _TYPE_OR_STRING.sub(lambda m: m.group(0) if m.group(1) is None
                               else f"%__enzyme_cc_type.{m.group(1)}", named)


_MANGLED_DECL = re.compile(r"^declare [^@\n]*@(_Z\d+__enzyme_[\w.$]*)\(", re.M)


_MARKER_DECL = re.compile(r'^(declare [^\n]*@"?[\w.$]*' + DERIVATIVE_MARKERS +
                          r'[\w.$]*"?\([^\n]*?)$', re.M)


_FORK_DECL = re.compile(r'^(declare [^\n]*@__kmpc_fork_call(?:_if)?\([^\n]*?)$', re.M)
_MPI_DECL = re.compile(r'^(declare [^\n]*@(?:' + "|".join(n for n in mpi.FUNCS if mpi.FUNCS[n][1])
                       + r')\([^\n]*?)$', re.M)


def markers_nomerge(text: str) -> str:
    """The derivative markers' declarations `nomerge`: two calls in the arms of a branch that
    differ in one activity marker (`enzyme_dup` in one, `enzyme_dupnoneed` in the other) were
    sunk into one call by SimplifyCFG, whose marker argument is then a select of the two, which
    no marker can be read from. Likewise OpenMP's fork: two parallel regions in the arms of a
    branch (miniAMR's 7- and 27-point stencils) became one fork of a select of the two outlined
    functions, whose derivative cannot be chosen; and MPI's calls with a datatype: two
    reductions in the arms of a branch (Nek5000's gop: MPI_SUM or MPI_MAX) became one call of
    a phi of the two ops."""
    def mark(m):
        return m.group(1) if re.search(r"\bnomerge\b", m.group(1)) else m.group(1) + " nomerge"
    if "__kmpc_fork_call" in text:
        text = _FORK_DECL.sub(mark, text)
    if "@MPI_" in text:
        text = _MPI_DECL.sub(mark, text)
    return _MARKER_DECL.sub(mark, text) if "__enzyme_" in text else text


def unmangle_entry_points(text: str) -> str:
    """An Enzyme entry point a C++ program declares without `extern "C"` (`void
    *__enzyme_shadow(void *, int, int);`) is named by its mangled symbol
    (`_Z15__enzyme_shadowPvii`): called by its C name, as Enzyme reads it. Only one declaration
    per name, and only where the C name is not used already (the derivative markers, declared
    with several signatures, are recognized in any form)."""
    if "@_Z" not in text or "__enzyme_" not in text:
        return text
    found: dict[str, list[str]] = {}
    for m in _MANGLED_DECL.finditer(text):
        name = free_function_name(m.group(1))
        if name is not None and name.startswith("__enzyme_"):
            found.setdefault(name, []).append(m.group(1))
    renames = {fulls[0]: name for name, fulls in found.items() if len(fulls) == 1 and
               not re.search(r"@" + re.escape(name) + r"(?![\w.$])", text)}
    if not renames:
        return text
    pattern = re.compile("@(" + "|".join(map(re.escape, sorted(renames, key=len, reverse=True)))
                         + r")(?![\w.$])")
    return pattern.sub(lambda m: "@" + renames[m.group(1)], text)
