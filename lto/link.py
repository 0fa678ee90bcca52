"""The link step (DESIGN.md "Data flow"): compile sources, find bitcode, and either link as clang
would (no marker calls: zero added cost) or merge, optimize, differentiate, optimize, emit one
native object and relink it with everything that carried no bitcode."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import time

from enzyme_cc import cache, toolchain
from enzyme_cc.compile import compile_source, run
from enzyme_cc.errors import UserError
from enzyme_cc.bitcode.libs import find_library

# every Enzyme entry point (the unsupported ones are then reported by name, ad/markers.py)
MARKER_BYTES = (b"__enzyme_",)


class Stages:
    """`-v` / [debug] verbose: each stage with its time on stderr."""

    def __init__(self, on: bool):
        self.on, self.t = on, time.perf_counter()

    def done(self, what: str):
        now = time.perf_counter()
        if self.on:
            print(f"enzyme-cc: {what}: {now - self.t:.3f}s", file=sys.stderr)
        self.t = now


def link(driver: str, inv, cfg) -> int:
    tmp = tempfile.mkdtemp(prefix="enzyme-cc-")
    try:
        return _link(driver, inv, cfg, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _final_driver(driver: str, inv) -> str:
    # Fortran objects need flang's runtime; flang links like clang otherwise.
    if driver == "flang" or any(s.lang == "fortran" for s in inv.sources):
        return toolchain.tool("flang")
    return toolchain.tool("clang++" if driver == "clang++" else "clang")


def _depfile_args(inv, src) -> list[str]:
    """clang's own names for -MD/-MMD output when it compiles a source for a link: the file is
    the -o path with extension .d (else SOURCE-STEM.d), the target the -o path (else STEM.o).
    Our compile jobs write to temporary objects, so both are spelled out."""
    args = inv.compile_args(src)
    if not any(a in ("-MD", "-MMD") for a in args):
        return []
    stem = os.path.splitext(os.path.basename(src.path))[0]
    out = []
    if not any(a.startswith("-MF") for a in args):
        out += ["-MF", os.path.splitext(inv.output)[0] + ".d" if inv.output else stem + ".d"]
    if not any(a.startswith(("-MT", "-MQ")) for a in args):
        out += ["-MQ", inv.output or stem + ".o"]
    return out


# a declaration (not a definition) of Enzyme's truncation runtime (ad/truncate.py)
_FPRT_DECL = re.compile(r'^declare [^@\n]*@"?__enzyme_fprt_', re.M)


def _link(driver, inv, cfg, tmp) -> int:
    stages = Stages(cfg.verbose or inv.verbose)
    final = _final_driver(driver, inv)
    if any(not os.path.exists(p) for _, p in inv.inputs + [(0, s.path) for s in inv.sources
                                                          if s.path != "-"]):
        return run([final] + inv.args)     # clang's own "no such file or directory"
    replace: dict[int, list[str]] = {}
    inputs: list[tuple[int, str, str]] = []        # (index, kind, value) in command-line order
    for k, src in enumerate(inv.sources):
        obj = os.path.join(tmp, f"{k}-{os.path.basename(src.path)}.o")
        rc = compile_source(driver, inv, src, obj, _depfile_args(inv, src))
        if rc != 0:
            return rc
        replace[src.index] = [obj]
        inputs.append((src.index, "file", obj))
    stages.done("compile")
    inputs += [(i, "file", p) for i, p in inv.inputs]
    inputs += [(i, "lib", n) for i, n in inv.libs]
    inputs.sort()
    # `-r`: a partial link keeps every bitcode section (back to back); the final link differentiates
    if "-r" in inv.args or "--relocatable" in inv.args or not _may_call_markers(inputs, inv):
        return run([final] + inv.link_args_with(replace), inv.verbose)
    from enzyme_cc.bitcode import plan_link
    plan = plan_link([(kind, v) for _, kind, v in inputs], inv.lib_dirs, inv.static)
    stages.done("read bitcode")
    if not any(m in data for _, data in plan.modules for m in MARKER_BYTES):
        return run([final] + inv.link_args_with(replace), inv.verbose)

    from enzyme_cc.rules.registry import set_user_rule_files   # the AD core: only when needed
    set_user_rule_files(cfg.rule_files)
    obj, native = _differentiate(plan, inv, cfg, tmp, stages)
    # the new object replaces every input whose bitcode it contains
    first = True
    for idx, kind, value in inputs:
        if kind == "file" and value in plan.bitcode_objects and value not in native:
            replace[idx] = [obj] if first else []
            first = False
    if first:   # bitcode only from archive members (and objects left native)
        idx, kind, value = inputs[0]
        replace[idx] = [obj] + replace.get(idx, [value if kind == "file" else f"-l{value}"])
    with open(obj, "rb") as f:   # the MPFR truncation runtime (ours or <enzyme/fprt/mpfr.h>)
        mpfr = [] if b"mpfr_" not in f.read() else ["-lmpfr"]
    rc = run([final] + inv.link_args_with(replace) + mpfr, inv.verbose)
    stages.done("relink")
    return rc


def _may_call_markers(inputs, inv) -> bool:
    """False when no object or archive of the link holds a marker name anywhere in its bytes:
    then no bitcode can call one, and the link is clang's, without reading any bitcode. (A
    thin archive's members live elsewhere: assume they may.)"""
    for _, kind, value in inputs:
        path = value if kind == "file" else find_library(value, inv.lib_dirs, inv.static)
        if path is None or path.endswith(".so") or ".so." in os.path.basename(path):
            continue                    # shared libraries are never differentiated here
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return True                 # let the full reader report it
        if data[:8] == b"!<thin>\n" or any(m in data for m in MARKER_BYTES):
            return True
    return False


def _cache_key(plan, inv, cfg) -> str | None:
    """The name of this exact input's AD object in the cache (None: no caching). Keyed by the
    bitcode, the options that change the result, rule files and our own code."""
    if not cache.enabled() or cfg.dump_dir:
        return None
    import hashlib
    h = hashlib.sha256()
    for origin, data in plan.modules:
        h.update(hashlib.sha256(data).digest())
    from enzyme_cc.ad.tape import tape_stats         # instrumented tape helpers
    from enzyme_cc.ad.openmp_affine import range_check
    h.update(repr((cfg.preopt, _level(inv.opt_level), sorted(cfg.rule_files), inv.shared,
                   cfg.ckpt_budget, tape_stats(), range_check(),
                   os.environ.get("ENZYME_CC_LANE_FUSION") == "0")).encode())
    for path in cfg.rule_files:
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            return None
    h.update(_code_digest())
    return "ad-" + h.hexdigest()


def _code_digest() -> bytes:
    import hashlib
    h = hashlib.sha256()
    import enzyme_cc
    pkg_dirs = {os.path.dirname(os.path.abspath(enzyme_cc.__file__)), os.path.dirname(
        os.path.abspath(__file__))}
    from enzyme_cc import rules, stdlib_rules
    pkg_dirs |= {os.path.dirname(os.path.abspath(rules.__file__)),
                 os.path.dirname(os.path.abspath(stdlib_rules.__file__))}
    for d in sorted(pkg_dirs):
        for root, _, files in sorted(os.walk(d)):
            for name in sorted(files):
                if name.endswith((".py", ".toml", ".c", ".h")):
                    with open(os.path.join(root, name), "rb") as f:
                        h.update(name.encode() + f.read())
    return h.digest()


def _differentiate(plan, inv, cfg, tmp, stages) -> tuple[str, set[str]]:
    """(the AD object, the origins of the bitcode modules it leaves to their native code)."""
    key = _cache_key(plan, inv, cfg)
    obj = os.path.join(tmp, "enzyme-ad.o")
    listed = os.path.join(tmp, "native.txt")
    if key and cache.fetch(key + ".native", listed) and cache.fetch(key + ".o", obj):
        with open(listed) as f:
            native = {plan.modules[int(k)][0] for k in f.read().split()}
        stages.done("AD cache hit")
        return obj, native
    native = _build_ad_object(plan, inv, cfg, obj, stages)
    if key:
        with open(listed, "w") as f:           # (module positions: paths may differ)
            f.write(" ".join(map(str, sorted(native))))
        cache.store(key + ".native", listed)
        cache.store(key + ".o", obj)
        cache.trim()
    return obj, {plan.modules[k][0] for k in native}


def _native_modules(plan, names, text) -> set[int]:
    """Positions of the bitcode modules whose object's own code can be linked instead: objects
    with native code in which no function or global AD may reach (or a marker holder) is
    defined or even named, and no enzyme name or annotation (attribute) appears. AD never reads
    their bitcode (its module-wide scans look at what reached code names), and optimizing and
    compiling them again is most of a large program's link time. As in a plain link, they keep
    the optimization of their compile step (also -O0)."""
    from .preopt_scope import reached_definitions
    reached = reached_definitions(text)
    if reached is None:
        return set()
    by_origin: dict[str, list[int]] = {}
    for k, (origin, _) in enumerate(plan.modules):
        by_origin.setdefault(origin, []).append(k)
    native = {o: ks for o, ks in by_origin.items() if o in plan.native_code and all(
        names[k] is not None and not _needed(names[k], reached) for k in ks)}
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


def _needed(names: dict, reached: set[str]) -> bool:
    """Whether a module with these {name: (function, linkage)} must go to the AD module.
    Not for what it names only as its own copy of an inline function (linkonce_odr: every
    module calling one defines it, and the copies are equivalent), nor for its local data
    (reached only through its other names). A local function may be reached as an indirect
    call's target: its merged name may carry the linker's suffix."""
    if "llvm.global.annotations" in names or any("enzyme" in n.lower() for n in names):
        return True
    local_fns = {n for n, (fn, linkage) in names.items() if fn and linkage in ("internal",
                                                                              "private")}
    return any(n in reached for n, (fn, linkage) in names.items()
               if linkage not in ("internal", "private") and not (fn and linkage ==
                                                                  "linkonce_odr")) or \
        any(n in local_fns or _LOCAL_COPY.sub("", n) in local_fns for n in reached)


def _build_ad_object(plan, inv, cfg, obj, stages):
    from . import optimize as opt
    from enzyme_cc.ad.generate import differentiate
    ctx, names = opt.new_context(), []
    module = opt.merge(plan.modules, ctx, names)
    text = str(module)
    native = _native_modules(plan, names, text)
    if native:
        del module
        ctx = opt.new_context()
        module = opt.merge([m for k, m in enumerate(plan.modules) if k not in native], ctx)
        text = str(module)
    from enzyme_cc.ad.registrations import keep_registered_calls
    text = keep_registered_calls(opt.strip_optnone(text))
    if not inv.shared:
        text = opt.internalize_inline_functions(text)
    from enzyme_cc.ad import loop_checkpoint
    from . import preopt_scope
    if cfg.preopt:
        text = loop_checkpoint.keep_loops(text)     # marked loops stay loops through -O2
        text = preopt_scope.mark_unreached(text)    # code AD never sees: optimized once, later
    from enzyme_cc.rules import fortran
    text, substituted = fortran.substitute_runtime(text)
    module = opt.parse_text(text, ctx, "merged bitcode")
    if substituted:
        fortran.link_runtime(module, ctx)
    stages.done("merge")
    tmp = os.path.dirname(obj)
    if cfg.preopt:
        merged = os.path.join(tmp, "merged.bc")
        with open(merged, "wb") as f:
            f.write(module.as_bitcode())
        # -O3 links unroll before AD with -O3's budget (small constant loops over local arrays
        # become registers: no tape for them), in the -O2 pipeline (-O3's argument promotion
        # would pass a float's bits by value, which AD refuses)
        opt.optimize(merged, os.path.join(tmp, "pre.ll"), 2, vectorize=False, text=True,
                     extra=["-unroll-threshold=300"] if _level(inv.opt_level) >= 3 else [])
        with open(os.path.join(tmp, "pre.ll")) as f:
            pre = preopt_scope.unmark(f.read())
        stages.done("pre-AD optimization")
    else:
        pre = str(module)
    if loop_checkpoint.has_annotations(pre):
        with _origin_named(plan.missing_bitcode):
            pre = loop_checkpoint.outline(pre, lambda t: opt.normalize_loops(t, tmp))
        stages.done("checkpointed loops outlined")
    if cfg.ckpt_budget:
        from enzyme_cc.ad.checkpoint import define_budget
        pre = define_budget(pre, cfg.ckpt_budget)
    _dump(cfg, "before-ad.ll", pre)
    with _origin_named(plan.missing_bitcode):
        new = differentiate(pre, plan.missing_bitcode)
    stages.done("differentiate")
    from enzyme_cc.ad import sparse
    if sparse.has_todense(new):
        with _origin_named(plan.missing_bitcode):
            new = sparse.lower(new, lambda t: opt.inline_and_sroa(t, tmp))
        stages.done("todense lowering")
    _dump(cfg, "after-ad.ll", new)
    debug = _DEBUG_VERSION in new
    split = opt.splittable(new, debug)
    try:
        if debug:
            # LLVM's parser verifies a module with debug info itself and aborts the process when
            # it is broken; check a copy without debug info first, so we can report it.
            with _quiet_stderr():       # LLVM warns that it drops the debug info: it may
                opt.parse_text(new.replace(_DEBUG_VERSION, '!"Debug Info Version", i32 0'),
                               opt.new_context())
        module = opt.parse_text(new, ctx)
        if "__enzyme_fprt_" in new and _FPRT_DECL.search(new):   # runtime calls not defined here
            with open(opt.fprt_runtime(tmp), "rb") as f:
                module.link_in(opt.parse_bitcode(f.read(), "truncation runtime", ctx))
        from enzyme_cc.rules.mpi import link_runtime
        link_runtime(module, new, ctx)
    except opt.InternalIRError as e:
        fd, path = tempfile.mkstemp(prefix="enzyme-cc-invalid-", suffix=".ll")  # (make -j)
        with os.fdopen(fd, "w") as f:
            f.write(e.text)
        from enzyme_cc.ad.diagnostics import generated_origin
        raise UserError(f"internal error: the derivative IR does not verify"
                        f"{generated_origin(e.text, str(e))} ({e}); the IR was written to {path}; "
                        "please report this")
    ad, post = os.path.join(tmp, "ad.bc"), os.path.join(tmp, "post.bc")
    with open(ad, "wb") as f:
        f.write(module.as_bitcode())
    level = _level(inv.opt_level)
    if split:
        parts, reused = opt.optimize_and_emit(ad, obj, level, tmp)
        stages.done(f"post-AD optimization and codegen, {parts} parts on {opt.jobs()} cores "
                    f"({reused} from the cache)")
        return native
    opt.optimize(ad, post, level, vectorize=level >= 2)
    stages.done("post-AD optimization")
    # llc: .init_array for constructors, as clang
    opt.emit_object(post, obj, level, tmp, debug=debug)
    stages.done("codegen")
    return native


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


_DEBUG_VERSION = '!"Debug Info Version", i32 3'
# the AD core's words: "function 'f' has no bitcode", "... call to 'g' and no bitcode for it"
# (a C++ or Rust name demangled, its symbol after it)
_NO_BITCODE = re.compile(r"function '([^']+)' has no bitcode|"
                         r"call to '([^']+)'(?: \(symbol ([^)]+)\))? and no bitcode")


@contextlib.contextmanager
def _origin_named(missing: dict[str, str]):
    """Re-raise a 'no bitcode' error with the input that defines the function natively."""
    try:
        yield
    except UserError as e:
        raise _name_origin(e, missing) from None


def _name_origin(e: UserError, missing: dict[str, str]) -> UserError:
    m = _NO_BITCODE.search(e.message)
    if not m:
        return e
    name = m.group(1) or m.group(3) or m.group(2)
    if name in missing:
        what = (f"'{name}' comes from '{missing[name]}', which was not built with enzyme-cc: "
                f"rebuild that object with enzyme-cc (or enzyme-c++, enzyme-fc)")
    else:
        what = (f"no object or static library on the command line defines '{name}' (a shared "
                f"or runtime library may)")
    return UserError(f"{e.message}; {what}", e.exit_code)


def _level(o: str) -> int:
    return {"0": 0, "1": 1, "2": 2, "3": 3, "s": 2, "z": 2, "fast": 3, "g": 1}.get(o, 2)


def _dump(cfg, name, text):
    if cfg.dump_dir:
        os.makedirs(cfg.dump_dir, exist_ok=True)
        with open(os.path.join(cfg.dump_dir, name), "w") as f:
            f.write(text)
