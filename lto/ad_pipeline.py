"""The AD object of a link, stage by stage: the merged bitcode goes through the stages below in
order, as IR text or an llvmlite module between them, and each reports its time under `-v` by
the name in STAGES (docs/architecture.md, "Data flow"). lto/link.py decides when to run it (a
marker call is present, the AD cache misses) and links the object it writes."""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field

from enzyme_cc import toolchain
from . import in_process
from enzyme_cc.errors import UserError

# the stages, in order; a stage that has nothing to do (no loop marked for checkpointing, no
# __enzyme_todense) is left out of `-v`
STAGES = ("merge", "pre-AD optimization", "checkpointed loops outlined", "differentiate",
          "todense lowering", "post-AD optimization and codegen",
          "code AD cannot reach, compiled apart")


@dataclass
class Job:
    """What passes from stage to stage."""
    plan: object                  # bitcode/select.py's LinkPlan
    inv: object                   # the command line (driver_args.Invocation)
    cfg: object                   # enzyme.toml and ENZYME_CC_* settings
    obj: str                      # the object to write
    tmp: str = ""
    text: str = ""                # the module as IR text (between the text stages)
    module: object = None         # the module as llvmlite's (between the others)
    ctx: object = None            # its LLVM context
    native: set = field(default_factory=set)   # module positions linked as their own code
    wrappers: bool = False        # always_inline wrappers of ours linked at the merge
    apart: object = None          # the code AD cannot reach, compiled apart (lto/carve.py)

    def origin_named(self):
        return _origin_named(self.plan)


def build_ad_object(plan, inv, cfg, obj, stages, merged_key=None) -> set[int]:
    """Write the AD object to `obj`; returns the positions of the bitcode modules left to their
    native code (objects AD cannot reach). merged_key(native): the cache key of the modules
    the merge stage keeps (lto/link.py), whose object is taken from the cache when it is there."""
    from enzyme_cc import cache
    job = Job(plan, inv, cfg, obj, tmp=os.path.dirname(obj))
    merged = select_modules(job)
    # (looked up before the merge's rewrites: after an edit of code AD does not reach, they
    # were most of the relink)
    key = merged_key(job.native) if merged_key else None
    if key and cache.fetch(key, obj):
        stages.done("merge")
        stages.done("AD cache hit (the objects AD reaches are unchanged)")
        return job.native
    merge(job, merged)
    del merged
    stages.done("merge")
    if cfg.preopt:
        preoptimize(job)
        stages.done("pre-AD optimization")
    else:
        job.text = str(job.module)
        if job.wrappers:          # (not user code: the rules expect them inlined)
            from .optimize import inline_always
            job.text = inline_always(job.text, job.tmp)
    if outline_checkpointed_loops(job):
        stages.done("checkpointed loops outlined")
    differentiate(job)
    stages.done("differentiate")
    if lower_todense(job):
        stages.done("todense lowering")
    emit(job, stages)
    if job.apart is not None:
        from . import carve
        carve.join(job, job.apart)
        stages.done(f"code AD cannot reach, compiled apart ({job.apart.functions} functions)")
    if key:
        cache.store(key, obj)
    return job.native


# ---- the stages ------------------------------------------------------------------------------
GCOV = b".gcda"     # (in the metadata strings of a module compiled with --coverage)


def select_modules(job):
    """The bitcode modules merged into one, to find those AD cannot reach (job.native, left
    to their own code): (context, merged text, Rust's allocator renamed in it, the symbol
    names of each module, the linker's symbol options), for `merge`."""
    from . import optimize as opt
    from enzyme_cc.rules import rust_alloc
    from .linker_symbols import linker_symbols
    plan = job.plan
    if any(GCOV in data for _, data in plan.modules):    # compiled with --coverage
        plan.modules = [(origin, opt.gcov_counters(data, origin) if GCOV in data else data)
                        for origin, data in plan.modules]
    ctx, names, symbols = opt.new_context(), [], linker_symbols(job.inv.args)
    module = opt.merge(plan.modules, ctx, names, symbols)
    # (Rust's allocator renamed first: std's object is not reached for it)
    text, rust = rust_alloc.substitute(str(module))
    job.native = _native_modules(plan, names, text)
    return ctx, text, rust, names, symbols


def merge(job, merged):
    """The modules AD may reach merged into one (`merged`: select_modules' result), with
    the rewrites the next stages rely on (lto/text_passes.py: optnone stripped, registered calls
    kept, inline functions internal in executables, marked loops kept whole, code AD never sees
    marked), flang's runtime entries renamed to ours and ours linked in."""
    from . import carve, optimize as opt, preopt_scope, text_passes
    from enzyme_cc.rules import c_search, c_sort, fortran, mpi, rust_alloc
    plan = job.plan
    ctx, text, rust, names, symbols = merged
    if job.native:
        ctx = opt.new_context()
        module = opt.merge([m for k, m in enumerate(plan.modules) if k not in job.native], ctx,
                           symbols=symbols)
        text, rust = rust_alloc.substitute(str(module))
        del module
    text = text_passes.run(text, text_passes.merge_passes(
        job.inv.shared, job.cfg.preopt, lambda t: opt.name_values(t, job.tmp),
        _outside_references(job, names)))
    if "@llvm.instrprof." in text:
        text = opt.lower_profile_counters(text, job.tmp)
    text, substituted = fortran.substitute_runtime(text)
    text, fortran_mpi = mpi.substitute_fortran(text)
    text, c_datatypes = mpi.substitute_c_datatypes(text)
    choice = _carved(job, text)
    if choice is not None:
        text = preopt_scope.untag(text, choice.functions)
    job.module, job.ctx = opt.parse_text(text, ctx, "merged bitcode"), ctx
    if substituted:
        fortran.link_runtime(job.module, ctx, text)
    if fortran_mpi:
        mpi.link_fortran_bindings(job.module, ctx, text)
    if c_datatypes:
        mpi.link_c_datatypes(job.module, ctx, text)
    job.wrappers = fortran_mpi or c_datatypes
    c_sort.link_runtime(job.module, text, ctx)
    c_search.link_runtime(job.module, text, ctx)
    if rust:
        rust_alloc.link_runtime(job.module, ctx)
    if choice is not None:
        job.apart = carve.split_off(job, choice, opt_level(job.inv.opt_level),
                                    opt.sanitizers(text))


def _carved(job, text):
    """What of the merged module is compiled apart from the AD module (lto/carve.py), or None:
    not where its debug info names globals (a variable's record would name a declaration)."""
    from . import carve, optimize as opt
    if _DEBUG_VERSION in text and opt.split_blocked_by_debug(text):
        return None
    return carve.choose(text)


# linker options that export an executable's symbols (to dlopen'ed code, by dlsym)
_EXPORTING = ("-E", "--export-dynamic", "-export-dynamic", "--dynamic-list",
              "--export-dynamic-symbol", "--export-dynamic-symbol-list")


def _outside_references(job, names) -> set[str] | None:
    """The symbols that code the AD module does not hold refers to: objects and archive members
    without bitcode, the modules left to their native code, and the shared libraries of the
    command line. None when the link exports its symbols (a shared library, `-rdynamic`, a
    partial link): then any of them may be referred to."""
    from .linker_symbols import linker_options
    from enzyme_cc.bitcode.elf import symbols
    inv = job.inv
    if inv.shared or "-rdynamic" in inv.args or "-r" in inv.args or any(
            o.split("=")[0] in _EXPORTING for _, o in linker_options(inv.args)):
        return None
    out = set(job.plan.native_refs)
    for k in job.native:
        out |= {n for n, (_, linkage) in (names[k] or {}).items() if linkage == "declaration"}
    for path in job.plan.shared_libraries:
        try:
            with open(path, "rb") as f:
                out |= symbols(f.read(), path)[1]
        except (OSError, UserError):
            return None
    return out


def preoptimize(job):
    """LLVM's -O2 pipeline on the merged module, before AD (docs/performance.md). -O3 links
    unroll with -O3's budget (small constant loops over local arrays become registers: no tape
    for them), in the -O2 pipeline (-O3's argument promotion would pass a float's bits by
    value, which AD refuses)."""
    from . import optimize as opt
    from . import inline_asm, preopt_scope, vector_reductions
    merged, pre = os.path.join(job.tmp, "merged.bc"), os.path.join(job.tmp, "pre.ll")
    bitcode = job.module.as_bitcode()
    extra = ["-unroll-threshold=300"] if opt_level(job.inv.opt_level) >= 3 else []
    if not extra and in_process.wanted(len(bitcode)):
        text = str(in_process.optimized(bitcode, opt.new_context(), 2, vectorize=False))
    else:
        with open(merged, "wb") as f:
            f.write(bitcode)
        opt.optimize(merged, pre, 2, vectorize=False, text=True, extra=extra)
        with open(pre) as f:
            text = f.read()
    # (a loop the program marks for vectorization, `#pragma omp simd`, is vectorized even
    # here: its reductions become scalar code as at the merge)
    job.text = inline_asm.barriers(vector_reductions.rewrite(preopt_scope.unmark(text)))


def outline_checkpointed_loops(job) -> bool:
    """Loops marked for checkpointing become calls of their outlined body (ad/api/loop_checkpoint.py);
    True when there were some."""
    from . import optimize as opt
    from enzyme_cc.ad.api import loop_checkpoint
    if not loop_checkpoint.has_annotations(job.text):
        return False
    with job.origin_named():
        job.text = loop_checkpoint.outline(job.text, lambda t: opt.normalize_loops(t, job.tmp))
    return True


def differentiate(job):
    """Every marker call rewritten into calls of generated derivatives (ad/synthesis/generate.py),
    the derivatives with the same code merged (ad/synthesis/identical.py)."""
    from enzyme_cc.ad.synthesis.generate import differentiate as rewrite_markers
    from enzyme_cc.ad.synthesis import identical
    from enzyme_cc import deep_stack
    from .byval_copies import explicit_copies
    from .interior_pointers import offsets_from_argument
    from enzyme_cc.rules.fortran import intrinsic_assignments
    job.text = intrinsic_assignments(offsets_from_argument(explicit_copies(job.text)))
    if job.cfg.ckpt_budget:
        from enzyme_cc.ad.api.checkpoint import define_budget
        job.text = define_budget(job.text, job.cfg.ckpt_budget)
    _dump(job.cfg, "before-ad.ll", job.text)
    with job.origin_named():
        job.text = deep_stack.call(rewrite_markers, job.text, job.plan.missing_bitcode,
                                   shared=job.inv.shared)
    job.text, _ = identical.merge(job.text)


def lower_todense(job) -> bool:
    """__enzyme_todense pointers lowered to their load/store functions (ad/api/sparse.py), after
    differentiation; True when there were some."""
    from . import optimize as opt
    from enzyme_cc.ad.api import sparse
    if not sparse.has_todense(job.text):
        return False
    with job.origin_named():
        job.text = sparse.lower(job.text, lambda t: opt.inline_and_sroa(t, job.tmp))
    return True


def emit(job, stages):
    """The derivative module verified (an invalid one is an internal error naming the generated
    function), the runtimes it calls linked in, then optimized and compiled: in parallel parts
    when it is large (optimize.optimize_and_emit), else in one."""
    from . import optimize as opt, untouched
    new = job.text
    _dump(job.cfg, "after-ad.ll", new)
    debug = _DEBUG_VERSION in new
    kept_whole = debug and opt.split_blocked_by_debug(new)
    split = opt.splittable(new, kept_whole)
    module = _verified(job, new, debug)
    level = opt_level(job.inv.opt_level)
    sanitize = opt.sanitizers(new)
    if split:
        parts, reused = opt.optimize_and_emit(module, job.obj, level, job.tmp,
                                              opt.function_sizes(new), sanitize,
                                              before_split=lambda m: untouched.spread(m, new))
        stages.done(f"post-AD optimization and codegen, {parts} parts on {opt.jobs()} cores "
                    f"({reused} from the cache)")
        return
    ad, post = os.path.join(job.tmp, "ad.bc"), os.path.join(job.tmp, "post.bc")
    bitcode = module.as_bitcode()
    if not debug and not sanitize and in_process.wanted(len(bitcode)) and \
            not in_process.has_static_constructors(module):
        module = in_process.optimized(bitcode, opt.new_context(), level, vectorize=level >= 2)
        stages.done("post-AD optimization")
        in_process.emit_object(module, job.obj, level)
        stages.done("codegen")
        return
    with open(ad, "wb") as f:
        f.write(bitcode)
    try:
        _optimize_and_compile(job, stages, ad, post, level, sanitize, kept_whole)
    except UserError as e:
        if not debug or not e.message.startswith("internal error"):
            raise
        # the derivatives' source locations (ir/debug_locs.py) broke LLVM's pipeline: a
        # program without debug info rather than none (a bug of ours, reported as one)
        print("enzyme-cc: warning: the derivative module was compiled without debug info: "
              f"{e.message.splitlines()[0][:400]}; please report this", file=sys.stderr)
        opt.run_tool([toolchain.tool("opt"), "-strip-debug", ad, "-o", ad], "dropping debug info")
        _optimize_and_compile(job, stages, ad, post, level, sanitize, False)


def _optimize_and_compile(job, stages, ad, post, level, sanitize, kept_whole):
    from . import optimize as opt
    opt.optimize(ad, post, level, vectorize=level >= 2, sanitize=sanitize)
    stages.done("post-AD optimization")
    # llc: .init_array for constructors, as clang
    opt.emit_object(post, job.obj, level, job.tmp, kept_whole=kept_whole)
    stages.done("codegen")


def _verified(job, new, debug):
    from . import optimize as opt
    try:
        if debug:
            # LLVM's parser verifies a module with debug info itself and aborts the process when
            # it is broken; check a copy without debug info first, so we can report it.
            with _quiet_stderr():       # LLVM warns that it drops the debug info: it may
                opt.parse_text(new.replace(_DEBUG_VERSION, '!"Debug Info Version", i32 0'),
                               opt.new_context())
        module = opt.parse_text(new, job.ctx)
        if "__enzyme_fprt_" in new and _FPRT_DECL.search(new):   # runtime calls not defined here
            with open(opt.fprt_runtime(job.tmp), "rb") as f:
                module.link_in(opt.parse_bitcode(f.read(), "truncation runtime", job.ctx))
        from enzyme_cc.rules import blas, fortran, mpi
        mpi.link_runtime(module, new, job.ctx)
        blas.link_runtime(module, new, job.ctx)
        fortran.link_shadow_runtime(module, new, job.ctx)
        return module
    except opt.InternalIRError as e:
        fd, path = tempfile.mkstemp(prefix="enzyme-cc-invalid-", suffix=".ll")  # (make -j)
        with os.fdopen(fd, "w") as f:
            f.write(e.text)
        from enzyme_cc.ad.structure.diagnostics import generated_origin
        raise UserError(f"internal error: the derivative IR does not verify"
                        f"{generated_origin(e.text, str(e))} ({e}); the IR was written to {path}; "
                        "please report this")


# ---- which modules AD needs ------------------------------------------------------------------
def _native_modules(plan, names, text) -> set[int]:
    """Positions of the bitcode modules whose object's own code can be linked instead: objects
    with native code in which no function or global AD may reach (or a marker holder) is
    defined or even named, and no enzyme name or annotation (attribute) appears. AD never reads
    their bitcode (its module-wide scans look at what reached code names), and optimizing and
    compiling them again is most of a large program's link time. As in a plain link, they keep
    the optimization of their compile step (also -O0)."""
    from .preopt_scope import reached_definitions
    scope = reached_definitions(text)
    if scope is None:
        return set()
    reached, calling = scope
    by_origin: dict[str, list[int]] = {}
    for k, (origin, _) in enumerate(plan.modules):
        by_origin.setdefault(origin, []).append(k)
    native = {o: ks for o, ks in by_origin.items() if o in plan.native_code and all(
        names[k] is not None and not _needed(names[k], reached, calling) for k in ks)}
    # an inline function AD reaches must keep a definition (its address may come from here)
    inline = [{n for n, (fn, linkage) in names[k].items() if fn and linkage == "linkonce_odr"}
              if names[k] is not None else set() for k in range(len(names))]
    while True:
        kept = set().union(*(inline[k] for k in range(len(names)) if not any(
            k in ks for ks in native.values())))
        short = [o for o, ks in native.items() if any(inline[k] & reached - kept for k in ks)]
        if not short:
            return {k for ks in native.values() for k in ks}
        for o in short:
            del native[o]


_LOCAL_COPY = re.compile(r"\.\d+$")   # the linker's name for a clashing local: f.1, f.2, ...


def _needed(names: dict, reached: set[str], calling: set[str]) -> bool:
    """Whether a module with these {name: (function, linkage)} must go to the AD module.
    Not for what it names only as its own copy of an inline function (linkonce_odr: every
    module calling one defines it, and the copies are equivalent), nor for its local data
    (reached only through its other names), nor for the reached functions it only calls: the
    AD module keeps them as they are for its callers (Rust's std calls the allocator shim that
    differentiated code reaches). But a global it names is (AD's analysis of globals reads every
    store to them), and so is a function `calling` an Enzyme entry point (AD may read what
    every caller passes it: a marker's function, a global's address for __enzyme_shadow). A
    local function may be reached as an indirect call's target: its merged name may carry the
    linker's suffix."""
    if "llvm.global.annotations" in names or any("enzyme" in n.lower() for n in names):
        return True
    local_fns = {n for n, (fn, linkage) in names.items() if fn and linkage in ("internal",
                                                                              "private")}
    return any(n in reached for n, (fn, linkage) in names.items()
               if linkage not in ("internal", "private") and not (fn and linkage == "linkonce_odr")
               and (linkage != "declaration" or n in calling)) or \
        any(n in local_fns or _LOCAL_COPY.sub("", n) in local_fns for n in reached)


# ---- helpers -----------------------------------------------------------------------------------
_FPRT_DECL = re.compile(r'^declare [^@\n]*@"?__enzyme_fprt_', re.M)
_DEBUG_VERSION = '!"Debug Info Version", i32 3'


@contextlib.contextmanager
def _quiet_stderr():
    """Silence what LLVM itself writes to file descriptor 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# the AD core's words: "function 'f' has no bitcode", "... call to 'g' and no bitcode for it"
# (a C++ or Rust name demangled, its symbol after it)
_NO_BITCODE = re.compile(r"function '([^']+)' has no bitcode|"
                         r"call to '([^']+)'(?: \(symbol ([^)]+)\))? and no bitcode")


@contextlib.contextmanager
def _origin_named(plan):
    """Re-raise a 'no bitcode' error with the input that defines the function natively."""
    try:
        yield
    except UserError as e:
        raise _name_origin(e, plan) from None


def _name_origin(e: UserError, plan) -> UserError:
    return UserError(_origin_of(e.message, plan), e.exit_code,
                     [_origin_of(m, plan) for m in e.more])


def _origin_of(message: str, plan) -> str:
    from enzyme_cc.bitcode.select import shared_definer
    m = _NO_BITCODE.search(message)
    if not m:
        return message
    name = m.group(1) or m.group(3) or m.group(2)
    if name.startswith("llvm."):
        return message                  # (an LLVM intrinsic: no library defines it)
    missing = plan.missing_bitcode
    lib = None if name in missing else shared_definer(plan, name)
    if name in missing:
        what = (f"'{name}' comes from '{missing[name]}', which was not built with enzyme-cc: "
                f"rebuild that object with enzyme-cc (or enzyme-c++, enzyme-fc)")
    elif name in plan.passed_archives:
        head = message.split("; hint:", 1)[0]
        return (f"{head}; '{name}' is defined in '{plan.passed_archives[name]}', which comes "
                "before the code that needs it on the command line: the linker reads archives "
                "in order and would report an undefined reference too; hint: name the library "
                "after the objects and libraries that use it (or group them: -Wl,--start-group "
                "... -Wl,--end-group)")
    elif lib:           # (the generic hint, to build it with enzyme-cc, does not help)
        head = message.split("; hint:", 1)[0]
        return (f"{head}; '{name}' is defined in the shared library '{lib}', which holds "
                "machine code only (whatever built it); hint: link that library statically "
                "(its objects built with enzyme-cc, in an archive; CMake's add_library(... "
                "STATIC)), or call the marker inside the library (docs/api.md, \"Shared "
                "libraries\")")
    else:
        what = (f"no object or static library on the command line defines '{name}' (a shared "
                f"or runtime library may)")
    return f"{message}; {what}"


def opt_level(o: str) -> int:
    return {"0": 0, "1": 1, "2": 2, "3": 3, "s": 2, "z": 2, "fast": 3, "g": 1}.get(o, 2)


def _dump(cfg, name, text):
    if cfg.dump_dir:
        os.makedirs(cfg.dump_dir, exist_ok=True)
        with open(os.path.join(cfg.dump_dir, name), "w") as f:
            f.write(text)
