"""The link step (DESIGN.md "Data flow"): compile sources, find bitcode, and either link as clang
would (no marker calls: zero added cost) or merge, optimize, differentiate, optimize, emit one
native object and relink it with everything that carried no bitcode."""
from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import tempfile
import time

from enzyme_cc import cache, toolchain
from enzyme_cc.errors import UserError
from enzyme_cc.compile import compile_source, run
from enzyme_cc.bitcode.libs import find_library
from .ad_pipeline import build_ad_object, opt_level
from .linker_symbols import linker_options, linker_symbols

# every Enzyme entry point (the unsupported ones are then reported by name, ad/api/markers.py)
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
    except BaseException:
        # a refused link leaves no output, as a failed link of clang's does (a stale program
        # from an earlier build would otherwise run: `make && ./prog`)
        out = inv.output or "a.out"
        if out != "-" and os.path.isfile(out):
            os.remove(out)
        raise
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


# a declaration (not a definition) of Enzyme's truncation runtime (ad/api/truncate.py)


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
    # the compile jobs used the compile flags: the link of their objects warns of none, as
    # one compile-and-link run of the driver does not (`enzyme-fc -fstack-arrays p.f90 -o p`)
    quiet = ["-Qunused-arguments", "-Wno-deprecated-ofast"] if inv.sources else []
    # `-r`: a partial link keeps every bitcode section (back to back); the final link differentiates
    if "-r" in inv.args or "--relocatable" in inv.args or not _may_call_markers(inputs, inv):
        return run([final] + inv.link_args_with(replace) + quiet, inv.verbose)
    from enzyme_cc.bitcode import plan_link
    plan = plan_link([(kind, v) for _, kind, v in inputs], inv.lib_dirs, inv.static,
                     _linker_modes(inv.args, [i for i, _, _ in inputs]), _sequential(inv.args))
    stages.done("read bitcode")
    if not any(m in data for _, data in plan.modules for m in MARKER_BYTES):
        _refuse_native_marker_calls(plan)
        return run([final] + inv.link_args_with(replace) + quiet, inv.verbose)

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
    for k, archive in plan.whole_archives.items():
        idx = inputs[k][0]
        replace[idx] = [obj] * (replace.get(idx, [None])[0] == obj) + \
            _unmerged_members(archive, plan, native, os.path.join(tmp, f"whole{k}"))
    with open(obj, "rb") as f:   # the MPFR truncation runtime (ours or <enzyme/fprt/mpfr.h>)
        mpfr = [] if b"mpfr_" not in f.read() else ["-lmpfr"]
    rc = run([final] + inv.link_args_with(replace) + mpfr + quiet, inv.verbose)
    stages.done("relink")
    return rc


_STATIC = {"-Bstatic": True, "-dn": True, "-non_shared": True, "-static": True,
           "-Bdynamic": False, "-dy": False, "-call_shared": False}
_WHOLE = {"--whole-archive": True, "-whole-archive": True, "--no-whole-archive": False,
          "-no-whole-archive": False}


# the markers a program calls and nothing defines (Enzyme's entry points)
_MARKER_NAME = re.compile(r"__enzyme_(autodiff|fwddiff|augmentfwd|reverse|batch|"
                          r"fwdsplit|truncate_mem_func|truncate_op_func|todense)\w*$")


def _refuse_native_marker_calls(plan) -> None:
    """An object without bitcode that calls a marker (compiled by plain clang, or from an
    assembly file): nothing defines the marker, so ld's undefined reference would be all the
    user sees; say which object and why."""
    from enzyme_cc.bitcode.elf import symbols
    for path in plan.native_only_objects:
        try:
            with open(path, "rb") as f:
                undefined = symbols(f.read(), path)[1]
        except (OSError, UserError):
            continue
        called = sorted(u for u in undefined if _MARKER_NAME.match(u))
        if called:
            raise UserError(f"{path} calls {called[0]} but holds no bitcode (compiled without "
                            "enzyme-cc, or assembled from a .s file), so the link step cannot "
                            f"differentiate for it; hint: compile {os.path.basename(path)}'s "
                            "source with enzyme-cc (CC=enzyme-cc), from C, C++ or Fortran "
                            "source rather than assembly")


def _sequential(args) -> bool:
    """Whether the linker the link runs reads archives in command-line order (GNU ld, gold:
    clang's default here) rather than lld's way; a link with archive groups (`--start-group`,
    which ld rescans) is planned lld's way, which takes what any order would."""
    ld = ""
    for t in args:
        if t.startswith(("-fuse-ld=", "--ld-path=")):
            ld = t.split("=", 1)[1]
    groups = {"--start-group", "-start-group", "-("}
    return "lld" not in os.path.basename(ld) and \
        not any(o in groups for _, o in linker_options(args))


def _linker_modes(args, indices) -> list[tuple[bool, bool]]:
    """(-Bstatic, --whole-archive) in effect at each of these argument positions, as the
    linker options before them (`-Wl,...`, `-Xlinker ...`) leave them."""
    events = linker_options(args)
    out, static, whole, e = [], False, False, 0
    for i in indices:
        while e < len(events) and events[e][0] < i:
            o = events[e][1]
            static, whole = _STATIC.get(o, static), _WHOLE.get(o, whole)
            e += 1
        out.append((static, whole))
    return out


def _unmerged_members(archive, plan, native, folder) -> list[str]:
    """The members of an archive inside --whole-archive that the AD object does not hold (no
    bitcode, or left to their own code), written out as objects: the archive itself would
    bring every member again beside the AD object (duplicate definitions)."""
    os.makedirs(folder, exist_ok=True)
    out = []
    for j, m in enumerate(archive.members):
        origin = f"{archive.path}({m.name})"
        if origin in plan.bitcode_objects and origin not in native:
            continue
        path = os.path.join(folder, f"{j}-{os.path.basename(m.name) or 'member'}")
        with open(path, "wb") as f:
            f.write(m.data)
        out.append(path)
    return out


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


def _cache_key(plan, inv, cfg, native=None) -> str | None:
    """The name of this exact input's AD object in the cache (None: no caching). Keyed by the
    bitcode, the options that change the result, rule files and our own code. native: the
    positions of the modules the merge stage left to their own code, whose bitcode the AD
    object does not depend on; the key of the modules it merged (after an edit in an object
    AD does not reach, this one still finds the AD object)."""
    if not cache.enabled() or cfg.dump_dir:
        return None
    import hashlib
    h = hashlib.sha256(b"" if native is None else b"merged")
    for k, (origin, data) in enumerate(plan.modules):
        if native is None or k not in native:
            h.update(hashlib.sha256(data).digest())
    from enzyme_cc.ad.tape.tape import tape_stats         # instrumented tape helpers
    from enzyme_cc.ad.parallel.openmp_affine import range_check
    from enzyme_cc.rules.blas import defined_as_code
    from enzyme_cc.ad.analysis.speculative import strong_zero
    from enzyme_cc.ad.synthesis.undo_stores import undo_loops
    from enzyme_cc.ad.tape.tape_sites import tape_sites
    h.update(repr((cfg.preopt, opt_level(inv.opt_level), sorted(cfg.rule_files), inv.shared,
                   cfg.ckpt_budget, tape_stats(), tape_sites(), range_check(),
                   os.environ.get("ENZYME_CC_LANE_FUSION") == "0", defined_as_code(),
                   strong_zero(), undo_loops(), linker_symbols(inv.args).key())).encode())
    for path in cfg.rule_files:
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            return None
    h.update(_code_digest())
    return ("ad-" if native is None else "ad-merged-") + h.hexdigest()


@functools.cache
def _code_digest() -> bytes:
    """Our own code's digest (read once per process: both AD cache keys name it). Hashing the
    sources took 0.04-0.07 s of every link: the digest is kept in the cache folder beside a
    fingerprint of the files' names, sizes and modification times, and recomputed when that
    changes."""
    import hashlib
    import enzyme_cc
    from enzyme_cc import bitcode, rules, stdlib_rules
    pkg_dirs = {os.path.dirname(os.path.abspath(m.__file__))
                for m in (enzyme_cc, bitcode, rules, stdlib_rules)}
    pkg_dirs.add(os.path.dirname(os.path.abspath(__file__)))
    files = []
    for d in sorted(pkg_dirs):
        for root, _, names in sorted(os.walk(d)):
            files += [os.path.join(root, n) for n in sorted(names)
                      if n.endswith((".py", ".toml", ".c", ".h"))]
    fp = hashlib.sha256()
    for path in files:
        st = os.stat(path)
        fp.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    memo = os.path.join(cache.cache_root(), "code-digest")
    try:
        with open(memo) as f:
            seen, digest = f.read().split()
        if seen == fp.hexdigest():
            return bytes.fromhex(digest)
    except (OSError, ValueError):
        pass
    h = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + f.read())
    try:                                # (atomic: parallel links never read half a file)
        os.makedirs(os.path.dirname(memo), exist_ok=True)
        part = f"{memo}.{os.getpid()}.tmp"
        with open(part, "w") as f:
            f.write(f"{fp.hexdigest()} {h.hexdigest()}\n")
        os.replace(part, memo)
    except OSError:
        pass                            # (a read-only cache folder: hashed every time)
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
    native = build_ad_object(plan, inv, cfg, obj, stages,
                             lambda native: _cache_key(plan, inv, cfg, native))
    if key:
        with open(listed, "w") as f:           # (module positions: paths may differ)
            f.write(" ".join(map(str, sorted(native))))
        cache.store(key + ".native", listed)
        cache.store(key + ".o", obj)
        cache.trim()
    return obj, {plan.modules[k][0] for k in native}
