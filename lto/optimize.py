"""The LLVM side of the link step: parse, link (llvmlite), optimize, emit a native object
(opt/llc).

One fresh LLVM context per link (DESIGN.md: link_in across contexts corrupts modules).
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess

import llvmlite.binding as llvm

from enzyme_cc import cache, toolchain
from . import jobserver
from enzyme_cc.errors import UserError

_initialized = False


def _init():
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()      # inline asm (cpuid in Eigen, rdtsc, ...)
        _initialized = True


# every LLVM context this process made, kept to its end: a garbage cycle that holds a module
# and its context (a caught error's traceback reaching the link's frames) is finalized in any
# order, and a context disposed first deletes its modules, whose own disposal then writes into
# freed memory (a segfault in LLVMContext::removeModule); a context kept is never finalized
# before its modules (llvmlite disposes nothing at interpreter exit)
_CONTEXTS: list = []


def new_context():
    _init()
    ctx = llvm.create_context()
    _CONTEXTS.append(ctx)
    return ctx


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


def merge(modules: list[tuple[str, bytes]], ctx, names: list | None = None, symbols=None):
    """Link all bitcode modules into the first one. `names`, when given, gets per module a dict
    {name: (is a function, linkage)} of its functions and global variables, defined or declared
    (a declared function's linkage: "declaration"; None: not readable). symbols: the linker's
    options on symbols (linker_symbols.LinkerSymbols: --wrap, --defsym, -z muldefs),
    applied to each module first."""
    if not modules:
        raise UserError("no bitcode to link")
    main = None
    for origin, data in modules:
        other = parse_bitcode(data, origin, ctx)
        if symbols is not None:
            symbols.apply(other, main, origin)
        if names is not None:
            try:
                names.append({v.name: (fn, "declaration" if fn and v.is_declaration else
                                       v.linkage.name) for fn, values in
                              ((True, other.functions), (False, other.global_variables))
                              for v in values})
            except UnicodeDecodeError:      # llvmlite decodes names as UTF-8
                names.append(None)
        if main is None:
            main = other
            continue
        try:
            main.link_in(other)
        except RuntimeError as e:
            raise UserError(f"{origin}: cannot link its bitcode: {str(e).strip()}")
    return main


# Pipelines and codegen run in LLVM 22's own opt/llc: the same PassBuilder pipeline as
# llvmlite's (identical IR), about 1.6x faster for optimization and 1.4x for codegen here (see
# docs/performance.md "Link time"), and codegen can use several cores.
# the post-AD parts are cached (enzyme_cc/cache.py): more parts than cores, so that an edit
# recompiles a small share of a whole-program derivative; llvm-split balances its clusters by
# their number of globals, not by their bodies, so editing a body keeps the partition
PART_BYTES, MAX_PARTS = 96 * 1024, 64
SPLIT_BYTES = 256 * 1024    # bitcode above which codegen is split over the cores (llvm-split)


def run_tool(cmd: list[str], what: str) -> None:
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       errors="replace")
    if r.returncode != 0:
        err = r.stderr.strip()
        # the line saying what failed first (a crash's stack dump follows it)
        cause = next((ln for ln in err.splitlines() if "LLVM ERROR" in ln or "error:" in ln), "")
        tail = err[-2000:]
        raise UserError(f"internal error: {what} failed ({os.path.basename(cmd[0])} exit "
                        f"{r.returncode}): {cause + ' ... ' if cause and cause not in tail else ''}"
                        f"{tail}; please report this")


def optimize(src: str, out: str, level: int, vectorize: bool, text: bool = False,
             extra: list[str] = (), sanitize: tuple[str, ...] = ()) -> None:
    """LLVM's O`level` pipeline on bitcode file `src` into `out` (IR text with `text`). Before
    AD: no vectorization (scalar code for the AD rules); small constant loops are unrolled in
    both (no tape for their values). sanitize: the instrumentation passes after it (after AD:
    sanitizers)."""
    level = min(max(level, 0), 3)
    v = "true" if vectorize else "false"
    pipeline = f"-passes=default<O{level}>,{','.join(sanitize)}" if sanitize else f"-O{level}"
    run_tool([toolchain.tool("opt"), pipeline, f"-vectorize-loops={v}",
              f"-vectorize-slp={v}", f"-interleave-loops={v}", *extra, src, "-o", out]
             + (["-S"] if text else []), "the optimization pipeline")


# the sanitizers clang's -fsanitize= runs as LLVM passes at the end of its pipeline, by the
# attribute it puts on each function it compiles (the embedded bitcode is not instrumented yet)
_SANITIZERS = (("sanitize_address", "asan"), ("sanitize_thread", "tsan-module,function(tsan)"),
               ("sanitize_memory", "msan"))


def gcov_counters(data: bytes, origin: str) -> bytes:
    """Bitcode `data` with the line counters of --coverage: clang's GCOV pass, which runs at
    the start of its pipeline at compile time, after the compile step took the bitcode, so the
    modules the link step recompiles would count nothing. On the same module the pass writes
    the same .gcno (the path `!llvm.gcov` names) as at compile time, so the notes stay valid;
    the derivatives, made later from instrumented code, count their forward sweep's runs as the
    primal's (as Enzyme's, which runs after the GCOV pass). A module without `!llvm.gcov` is
    returned as it is."""
    if "\n!llvm.gcov = " not in str(llvm.parse_bitcode(data)):
        return data
    r = subprocess.run([toolchain.tool("opt"), "-passes=insert-gcov-profiling", "-", "-o", "-"],
                       input=data, capture_output=True)
    if r.returncode:
        raise UserError(f"{origin}: the coverage instrumentation (--coverage) failed: "
                        f"{r.stderr.decode(errors='replace').strip()[-2000:]}")
    return r.stdout


def sanitizers(text: str) -> tuple[str, ...]:
    """The instrumentation passes the functions of module `text` ask for (-fsanitize=address,
    thread, memory at compile time): the AD module's primal functions keep their checks."""
    return tuple(p for attr, p in _SANITIZERS       # (the substring test first: a regex
                 if attr in text and re.search(rf"\b{attr}\b", text))   # scan costs 0.1 s/MB)


def _on_text(text: str, tmp: str, tag: str, passes: str, what: str) -> str:
    """opt's `passes` on module text."""
    src, out = os.path.join(tmp, f"{tag}-in.ll"), os.path.join(tmp, f"{tag}-out.ll")
    with open(src, "w") as f:
        f.write(text)
    run_tool([toolchain.tool("opt"), f"-passes={passes}", src, "-S", "-o", out], what)
    with open(out) as f:
        return f.read()


def name_values(text: str, tmp: str) -> str:
    """Every argument, block and value of module text given a name (LLVM's instnamer), so that
    each `%N` left in the text is a numbered type (text_passes.name_numbered_types)."""
    return _on_text(text, tmp, "names", "instnamer",
                    "naming the values of a module with numbered types")


def inline_always(text: str, tmp: str) -> str:
    """LLVM's always-inliner alone on module text: our wrappers linked at the merge
    (rules/mpi_fortran.c, mpi_c_typed.c) where the pre-AD pipeline does not run."""
    return _on_text(text, tmp, "wrappers", "always-inline", "inlining enzyme-cc's wrappers")


def inline_and_sroa(text: str, tmp: str) -> str:
    """LLVM's always-inliner, then SROA and instsimplify, on module text (for ad/api/sparse.py)."""
    return _on_text(text, tmp, "todense", "always-inline,function(sroa,instsimplify)",
                    "inlining for __enzyme_todense")


def lower_profile_counters(text: str, tmp: str) -> str:
    """The counter increments of clang's -fprofile-instr-generate (`llvm.instrprof.*`, which
    clang lowers in its own pipeline and llc cannot select) made loads and stores of the
    profile's counters, as clang's compile step does; derivatives count as their primal code."""
    return _on_text(text, tmp, "instrprof", "instrprof",
                    "lowering -fprofile-instr-generate's counters")


def fprt_runtime(tmp: str) -> str:
    """Bitcode of enzyme-cc's <enzyme/fprt/mpfr.h> (weak definitions), for a program whose
    truncated functions call the runtime without including it itself."""
    src, out = os.path.join(tmp, "fprt-runtime.c"), os.path.join(tmp, "fprt-runtime.bc")
    with open(src, "w") as f:
        f.write("#include <enzyme/fprt/mpfr.h>\n")
    r = subprocess.run([toolchain.tool("clang"), "-O2", "-c", "-emit-llvm", "-isystem",
                        toolchain.include_dir(), src, "-o", out], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, errors="replace")
    if r.returncode != 0:
        missing = "mpfr.h" in r.stderr and "not found" in r.stderr
        raise UserError("the truncation runtime (<enzyme/fprt/mpfr.h>, needed by a truncation "
                        "to a format without an LLVM type) does not compile"
                        + ("; hint: install MPFR (Debian: apt-get install libmpfr-dev)" if missing
                           else f": {r.stderr.strip()[-1000:]}"))
    return out


_MINSIZE = re.compile(r"^(attributes #\d+ = \{.*?) minsize\b", re.M)


def normalize_loops(text: str, tmp: str) -> str:
    """mem2reg, loop-rotate and loop-simplify on module text (ad/api/loop_checkpoint.py: loops in
    SSA form with a preheader, one latch, dedicated exits and the test at the end, also in the
    unoptimized "Ref" pipeline). A fixed-point loop whose test does the work (a DO WHILE
    condition) is rotated whatever its header's size: its step must end with the test."""
    src, out = os.path.join(tmp, "loops-in.ll"), os.path.join(tmp, "loops-out.ll")
    big = ["-rotation-max-header-size=100000"] if "__enzyme_set_fixed_point" in text else []
    if big:
        # LLVM rotates no loop of a `minsize` function (-Oz) whatever the threshold: the
        # attribute goes (the code is then optimized as at -Os)
        text = _MINSIZE.sub(r"\1", text)
    with open(src, "w") as f:
        f.write(text)
    run_tool([toolchain.tool("opt"), "-passes=function(mem2reg,loop(loop-rotate),loop-simplify)",
              *big, src, "-S", "-o", out], "loop normalization for checkpointed loops")
    with open(out) as f:
        return f.read()


# derivative text above which post-AD optimization and codegen run on parts in parallel
SPLIT_TEXT = 1 << 20
# a derivative kept as a call (generate.callee_attrs), not one of the tape's cold helpers
_NOINLINE_DEF = re.compile(r"^define internal (?![^@]*@__enzyme_cc_)(?=[^{]*\bnoinline\b)", re.M)


def jobs() -> int:
    """Parts run at once (lto/jobserver.py: the cores, within make's jobserver)."""
    return jobserver.limit()


def splittable(text: str, kept_whole: bool) -> bool:
    """Whether post-AD work is split over the cores (optimize_and_emit): a large derivative
    whose functions kept as calls (generate.callee_attrs: noinline) can go to separate parts;
    not where `kept_whole` (its debug info names globals: split_blocked_by_debug)."""
    return jobs() >= 2 and not kept_whole and len(text) >= SPLIT_TEXT and \
        _NOINLINE_DEF.search(text) is not None


# debug info naming a global: a variable record of a global, or a variable location (a debug
# record or intrinsic) whose value is one (a static's address)
_DEBUG_NAMING_GLOBALS = re.compile(r"!DIGlobalVariable\(|#dbg_\w+\([^\n]*@|"
                                   r"@llvm\.dbg\.\w+\([^\n]*@")


def split_blocked_by_debug(text: str) -> bool:
    """Whether a module's debug info (it has some) keeps it from being split into parts: where
    it names internal globals, a part whose code it describes would name a global another part
    holds (llvm-split keeps each local in one part only). Line tables alone do not (Rust's
    standard library, built with them, in every Rust program's AD module)."""
    return _DEBUG_NAMING_GLOBALS.search(text) is not None


_DISCARDABLE = {llvm.Linkage.linkonce_odr: llvm.Linkage.weak_odr,
                llvm.Linkage.linkonce_any: llvm.Linkage.weak_any}


def _whole_module_passes(module, level: int) -> None:
    """The passes that need the whole module, run in this process on the module already parsed
    (no bitcode written for opt and read back: about 0.3 s of a 400-function derivative's
    serial work; the IR is the same as `opt -passes=always-inline,ipsccp,globalopt,
    deadargelim,function-attrs`): the always-inliner (the tape helpers into every user), then
    constants and dead arguments into local functions (a derivative's size or flag arguments)
    and function attributes for callers."""
    tm = llvm.Target.from_triple(module.triple or llvm.get_process_triple()) \
        .create_target_machine()
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_always_inliner_pass()
    if level >= 1:
        mpm.add_ipsccp_pass()
        mpm.add_global_opt_pass()
        mpm.add_dead_arg_elimination_pass()
        mpm.add_post_order_function_attributes_pass()
    mpm.run(module, pb)


def optimize_and_emit(module, out: str, level: int, tmp: str,
                      sizes: dict | None = None, sanitize=(), before_split=None,
                      part_bytes: int = PART_BYTES) -> tuple[int, int]:
    """Post-AD optimization and codegen of the verified llvmlite `module` (changed in place) on
    parts in parallel: the always-inliner and the passes that need the whole module
    (_whole_module_passes), then the local functions never inlined made hidden (so that
    llvm-split may separate them, each with the locals only it calls), the split, and each part
    optimized at O`level` and compiled in parallel, joined with `ld.lld -r`. A whole program's
    derivatives thus use every core; their run time is the single module's
    (docs/performance.md). Each part's object is cached by its bitcode: (parts, how many came
    from the cache). sizes: {function: instructions} of the derivative text (function_sizes),
    for spreading the largest functions (_spread). before_split(module): run after the
    whole-module passes (lto/untouched.py's spread of the code AD did not reach). part_bytes:
    the bitcode of a part when the cache is on."""
    n, part, whole = jobs(), os.path.join(tmp, "adpart"), os.path.join(tmp, "ad-whole.bc")
    _whole_module_passes(module, level)
    if before_split is not None:
        before_split(module)
    # parts of about PART_BYTES of bitcode: one per core at most without the cache (a part
    # costs a process start and the split's overhead), up to MAX_PARTS with it
    by_size = max(2, len(module.as_bitcode()) // part_bytes)
    parts = min(MAX_PARTS, by_size) if cache.enabled() else min(n, by_size)
    hidden = []
    for fn in module.functions:
        if not fn.is_declaration and fn.linkage == llvm.Linkage.internal and \
                any(re.search(rb"\bnoinline\b", a) for a in fn.attributes):
            fn.linkage, fn.visibility = llvm.Linkage.external, llvm.Visibility.hidden
            hidden.append(fn)
    _colocate(module, hidden, _spread(hidden, sizes or {}, parts), parts)
    _share_glue(module)
    # a part must not drop a discardable definition (an inline function's static, a template)
    # that it does not use itself and another part does
    for g in list(module.functions) + list(module.global_variables):
        if not g.is_declaration and g.linkage in _DISCARDABLE:
            g.linkage = _DISCARDABLE[g.linkage]
    with open(whole, "wb") as f:
        f.write(module.as_bitcode())
    run_tool([toolchain.tool("split"), f"-j{parts}", "--preserve-locals", "-o", part, whole],
             "splitting the module")
    salt = _tools_identity(level) + repr(sanitize).encode()

    def one(k):
        src, obj = f"{part}{k}", f"{part}{k}.o"
        with open(src, "rb") as f:
            key = "part-" + hashlib.sha256(f.read() + salt).hexdigest() + ".o"
        if cache.fetch(key, obj):
            return True
        optimize(src, f"{src}.opt", level, vectorize=level >= 2, sanitize=sanitize)
        run_tool(_llc(level) + [f"{src}.opt", "-o", obj], "code generation")
        cache.store(key, obj)
        return False

    reused = sum(jobserver.run_all(one, range(parts)))     # (re-raises a part's UserError)
    cache.trim()
    run_tool([toolchain.tool("lld"), "-r", *[f"{part}{k}.o" for k in range(parts)], "-o", out],
             "joining the code generation parts")
    return parts, reused


_LOCAL_LINKAGE = (llvm.Linkage.internal, llvm.Linkage.private)
SPREAD_SHARE = 0.05         # a function with this share of the derivative's code gets a part


def function_sizes(text: str) -> dict[str, int]:
    """{function name: lines of its body} of an IR text."""
    sizes, name, start = {}, None, 0
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("define "):
            m = re.search(r'@("[^"]+"|[-\w.$]+)\(', line)
            name, start = (m.group(1).strip('"') if m else None), k
        elif line == "}" and name is not None:
            sizes[name], name = k - start, None
    return sizes


def _spread(hidden, sizes, parts) -> set:
    """Puts the largest of the functions made hidden into parts of their own, least loaded
    first. llvm-split places a function no local ties to others by the MD5 hash of its name
    (the low 16 bits, modulo the parts), which put LULESH's two largest derivatives, 60 % of
    the code, into one part: one core did most of the work. They were local functions, so
    renaming them (a suffix found by trying) changes nothing outside this module."""
    total = sum(sizes.values())
    big = sorted((f for f in hidden if sizes.get(f.name, 0) >= max(SPREAD_SHARE * total, 1)),
                 key=lambda f: (-sizes[f.name], f.name))
    load = [0] * parts
    for f in big:
        k = min(range(parts), key=lambda j: (load[j], j))
        load[k] += sizes[f.name]
        _steer(f, k, parts)
    return set(big)


def _part_of(name: str, parts: int) -> int:
    """The part llvm-split gives a function no local ties to others."""
    d = hashlib.md5(name.encode()).digest()
    return (d[0] | d[1] << 8) % parts


def _steer(f, k: int, parts: int) -> None:
    """Renames the hidden function f (a suffix found by trying) so that it goes to part k."""
    base = f.name               # (read once: each read is a call into LLVM)
    for j in range(4096):
        name = f"{base}.p{j}"
        if _part_of(name, parts) == k:
            f.name = name
            return


def _colocate(module, hidden, moved, parts) -> None:
    """Puts each derivative made hidden into the part of its primal, where llvm-split places
    the primal by its name (it is not a local): an edit of one function's body then changes
    one part, not three (its primal, augmented forward and reverse), and a rebuild recompiles
    that part alone (the others come from the cache). The largest functions keep the parts
    _spread gave them."""
    from enzyme_cc.ad.structure.diagnostics import generated_primal
    defined = {f.name: f for f in module.functions if not f.is_declaration}
    for f in hidden:
        gen = generated_primal(f.name) if f not in moved else None
        primal = defined.get(gen[1]) if gen else None
        if primal is not None and primal.linkage not in _LOCAL_LINKAGE:
            _steer(f, _part_of(primal.name, parts), parts)


def _share_glue(module) -> None:
    """Local globals that many functions name would keep all of them in one part (llvm-split
    keeps a local with all its users): the runtime's per-thread state and helpers
    (`__enzyme_cc_*`: the deferred frees every derivative that frees memory calls), clang's
    source-location records of the `__kmpc_*` calls, which the code only passes by address,
    and string constants (an error message that a primal, its augmented forward and its
    reverse all print: LULESH's LagrangeLeapFrog derivatives, 60 % of the code, shared one part
    through two of them). They become hidden definitions that every part may name. Other
    constants stay with their users, whose loads from them the optimizer may fold."""
    for g in list(module.global_variables) + list(module.functions):
        if g.is_declaration or g.linkage not in _LOCAL_LINKAGE:
            continue
        if g.name.startswith("__enzyme_cc_"):
            pass
        elif getattr(g.global_value_type, "name", "").startswith("struct.ident_t"):
            g.name = f"__enzyme_cc_loc.{g.name}"      # (an unnamed one gets a name)
        elif _is_string(g):
            g.name = f"__enzyme_cc_str.{g.name}"
        else:
            continue
        g.linkage, g.visibility = llvm.Linkage.external, llvm.Visibility.hidden


_BYTES = re.compile(r"\[\d+ x i8\]$")


def _is_string(g) -> bool:
    """A constant global array of bytes (a C string), not one in a section of its own (the
    `llvm.metadata` strings of `@llvm.global.annotations`, which codegen does not emit)."""
    if g.is_function or not _BYTES.match(str(g.global_value_type)):
        return False
    text = str(g)
    head = text.split("=", 1)[1][:80]            # `private unnamed_addr constant [n x i8] ...`
    return " constant " in f" {head} " and ' section "' not in text


def _tools_identity(level: int) -> bytes:
    """What a part's object depends on besides its bitcode: the pipeline and the tools."""
    ids = [repr((level, level >= 2, _llc(level)))]
    for t in ("opt", "llc"):
        path = os.path.realpath(toolchain.tool(t))
        ids.append(f"{path}:{os.path.getmtime(path)}:{os.path.getsize(path)}")
    return "\n".join(ids).encode()


def emit_object(src: str, out: str, level: int, tmp: str, kept_whole: bool = False) -> None:
    """Native PIC object of bitcode file `src`. A large module is split (llvm-split, locals kept
    with their users) and the parts are compiled in parallel, then joined with `ld.lld -r`;
    not where `kept_whole` (split_blocked_by_debug)."""
    llc = _llc(level)
    size = os.path.getsize(src)
    n = min(jobs(), max(2, size // SPLIT_BYTES)) if size >= SPLIT_BYTES else 1
    if n < 2 or kept_whole:
        run_tool(llc + [src, "-o", out], "code generation")
        return
    part = os.path.join(tmp, "part")
    run_tool([toolchain.tool("split"), f"-j{n}", "--preserve-locals", "-o", part, src],
             "splitting the module for code generation")
    jobserver.run_all(lambda k: run_tool(llc + [f"{part}{k}", "-o", f"{part}{k}.o"],
                                         "code generation"), range(n))
    run_tool([toolchain.tool("lld"), "-r", *[f"{part}{k}.o" for k in range(n)], "-o", out],
             "joining the code generation parts")


def _llc(level: int) -> list[str]:
    """llc producing a PIC object (it emits .init_array for constructors, as clang does)."""
    return [toolchain.tool("llc"), f"-O{min(max(level, 0), 3)}", "-relocation-model=pic",
            "-filetype=obj"]
