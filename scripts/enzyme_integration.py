#!/usr/bin/env python3
"""Build and run Enzyme's integration tests (enzyme/test/Integration) with enzyme-cc.

Usage:
    PATH=/path/to/.venv/bin:$PATH python3 scripts/enzyme_integration.py DIR [options]

DIR holds Enzyme's integration tests in their original layout (ReverseMode/, ForwardMode/, ...,
with the shared headers such as test_utils.h at its top). The tests are not part of this
repository: fetch them yourself and keep them outside any checkout.

Every test with a `// RUN:` line that compiles and runs it (through %lli, or by building and
running an executable) is built with enzyme-cc (C) or enzyme-c++ (C++) at each level (-O0 and
-O2 by default), with the extra flags its RUN line gives (-std=, -ffast-math, -D, -I, -x c++,
-fno-..., -l...). Enzyme-specific flags (-mllvm -enzyme-*, plugin loads, %loadEnzyme and the
like) and the RUN line's own -O level are dropped. The executable is then run with a timeout.
Each (test, level) is classified as:

    pass           built, ran, exit status 0 (and its output matched, where the RUN line
                   pipes the run into FileCheck); for a compile-only RUN line: it built
    build-error    enzyme-cc failed; the first `error:` line is kept
    run-fail       nonzero exit or signal (a derivative the test's APPROX_EQ rejected, an
                   abort, a crash) or FileCheck rejected the output; the last lines are kept
    timeout        building or running took longer than allowed
    unexpected-ok  the test expects a failure (`not %lli`, `// XFAIL:`, `-Xclang -verify`
                   with expected-error, or FileCheck of an error message) and there was none

Tests that expect a failure count as pass when enzyme-cc (or the run) reported an error.
Tests whose RUN lines only check the generated IR, whose RUN lines do not apply to this LLVM
version, and CUDA tests are listed as not run, with the reason. OpenMP tests build with their
-fopenmp; MPI tests (those including <mpi.h>) build with `mpicc --showme` flags and run under
`mpirun --allow-run-as-root --oversubscribe -np 2`.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter, OrderedDict, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from integration_output import (describe_exit, error_key, failure_line, first_error,  # noqa: E402
                                run_cmd, tail)

SOURCE_EXTS = (".c", ".cpp", ".cc", ".cxx")

# Flags taken over from a RUN line's compile command (a prefix match on the argument).
KEEP_PREFIXES = ("-std=", "-ffast-math", "-fno-", "-flto", "-fstrict", "-fwrapv", "-D", "-U", "-I",
                 "-include", "-l", "-L", "-march=", "-mavx", "-msse", "-mfma", "-pthread",
                 "-fexceptions", "-frtti", "-fno-exceptions", "-g", "-ffp-contract=",
                 "-fmath-errno", "-funsafe-math-optimizations", "-fopenmp")
# Flags that take the next argument as their value.
TAKES_VALUE = {"-mllvm", "-Xclang", "-o", "-x", "-include", "-I", "-D", "-L", "-Xlinker",
               "-load", "-fpass-plugin", "-fplugin"}


class Test:
    def __init__(self, root, path):
        self.path = path
        self.rel = os.path.relpath(path, root)
        parts = self.rel.split(os.sep)
        self.folder = parts[0] if len(parts) > 1 else "."
        with open(path, encoding="utf-8", errors="replace") as f:
            self.text = f.read()
        self.run_lines = parse_run_lines(self.text)
        self.xfail = bool(re.search(r"^\s*//\s*XFAIL:", self.text, re.M))
        self.has_main = bool(re.search(r"\bmain\s*\(", self.text))
        self.extra = []     # flags of other modules of the file that the run links in
        self.object_only = False
        self.kind, self.reason, self.flags, self.filecheck = self.plan()

    # What to do with the test: ("run" | "expect-error" | "expect-fail" | "skip", reason,
    # compile flags, FileCheck arguments for the run's output or None).
    def plan(self):
        low = self.text.lower()
        rel = self.rel.replace(os.sep, "/")
        # MPI tests: built with mpicc's flags and run on 2 ranks (run_one); OpenMP: -fopenmp
        self.mpi = "#include <mpi.h>" in self.text
        if "cuda" in low and ("cuda" in os.path.basename(rel).lower() or
                              "#include <cuda" in self.text or "-x cuda" in self.text):
            return "skip", "CUDA, not in scope", [], None
        if not self.run_lines:
            return "skip", "no RUN line", [], None
        applicable = [l for l in (strip_version_guard(r) for r in self.run_lines) if l]
        if not applicable:
            return "skip", "RUN lines do not apply to this LLVM version", [], None
        verify = [l for l in applicable if "-verify" in l]
        runs, expect_fail, fc_error, fc_run = [], [], [], []
        for line in applicable:
            if "-verify" in line:
                continue
            segs = pipeline_segments(line)
            runner = next((s for s in segs if is_run_segment(s)), None)
            fc = next((s for s in segs if s.strip().startswith("FileCheck")
                       or " FileCheck" in s), None)
            negated = any(re.match(r"\s*not\s", s) for s in segs)
            if runner is not None:
                if re.match(r"\s*not\s", runner):
                    expect_fail.append(line)
                elif fc is not None:
                    fc_run.append((line, fc))
                else:
                    runs.append(line)
            elif fc is not None and (negated or "2>&1" in line) and \
                    re.search(r"CHECK.*:.*(error|Enzyme:)", self.text, re.I):
                fc_error.append(line)
        if self.xfail and (runs or fc_run or expect_fail):
            line = (runs or [l for l, _ in fc_run] or expect_fail)[0]
            return "expect-fail", "XFAIL", compile_flags(line), None
        if runs:
            flags, self.extra = linked_objects(pick(runs), applicable)
            return "run", "", flags, None
        if fc_run:
            # Some tests document Enzyme's own bugs with a BUG prefix at some levels: check
            # against the prefixes of a line that expects the right answer.
            good = [(l, f) for l, f in fc_run if not re.search(r"prefix(es)?=\S*BUG", f)]
            line, fc = (good or fc_run)[0]
            flags, self.extra = linked_objects(line, applicable)
            return "run", "output checked with FileCheck", flags, fc
        if expect_fail:
            return "expect-fail", "RUN line expects the run to fail", \
                compile_flags(expect_fail[0]), None
        if verify and re.search(r"expected-error", self.text):
            return "expect-error", "-verify with expected-error", compile_flags(verify[0]), None
        if fc_error:
            return "expect-error", "FileCheck of an error message", \
                compile_flags(fc_error[0]), None
        if verify:
            return "skip", "-verify without expected errors (diagnostics only)", [], None
        compiles = [l for l in applicable if "%clang" in l and "FileCheck" not in l]
        if compiles:
            # `-c`: an object is all the line makes (enzyme-cc differentiates at the link)
            self.object_only = re.search(r"\s-c(\s|$)", compiles[0]) is not None
            return "compile", "compile-only RUN line", compile_flags(compiles[0]), None
        return "skip", "RUN lines check IR or compiler output only", [], None

    @property
    def cxx(self):
        return self.path.endswith((".cpp", ".cc", ".cxx")) or "c++" in self.flags


def parse_run_lines(text):
    lines, cur = [], None
    for raw in text.splitlines():
        m = re.match(r"\s*(?://|;|#)\s*RUN:\s?(.*)$", raw)
        if not m:
            if cur is not None:
                lines.append(cur)
                cur = None
            continue
        body = m.group(1).rstrip()
        if cur is not None:
            body = cur + " " + body
            cur = None
        if body.endswith("\\"):
            cur = body[:-1]
        else:
            lines.append(body)
    if cur is not None:
        lines.append(cur)
    return lines


def strip_version_guard(line, llvmver=None):
    """`if [ %llvmver -ge 12 ]; then CMD; fi` -> CMD, or '' when the guard is false."""
    llvmver = llvmver or LLVM_VERSION
    if not HONOR_LLVMVER:
        llvmver = None
    m = re.match(r"\s*if\s+\[\s*%llvmver\s+-(\w+)\s+(\d+)\s*\]\s*;\s*then\s+(.*?);?\s*fi\s*$",
                 line)
    if not m:
        return line
    op, n, cmd = m.group(1), int(m.group(2)), m.group(3)
    if llvmver is None:  # Enzyme's LLVM-version quirks are not enzyme-cc's: run them all
        return cmd
    ok = {"ge": llvmver >= n, "gt": llvmver > n, "le": llvmver <= n, "lt": llvmver < n,
          "eq": llvmver == n, "ne": llvmver != n}.get(op, True)
    return cmd if ok else ""


def pipeline_segments(line):
    return [s for s in re.split(r"\|(?!\|)|&&|;", line) if s.strip()]


def is_run_segment(seg):
    s = seg.strip()
    s = re.sub(r"^not\s+(--crash\s+)?", "", s)
    s = re.sub(r"^(env\s+(\w+=\S+\s+)*)", "", s)
    return s.startswith("%lli") or re.match(r"%[ts](\.\w+)?(\s|$)", s) is not None or \
        s.startswith("./")


def pick(lines):
    """The RUN line to take flags from: the first one compiling at -O0 or -O2, else the first."""
    for line in lines:
        if re.search(r"\s-O[02]\b", line):
            return line
    return lines[0]


def extra_modules(line):
    """Flags of the compiles of the other modules a RUN line links into the run (separate
    compilation: `%clang -DX %s -o %t.callee.ll; %clang %s -o - | %lli --extra-module=%t.callee.ll`)."""
    out = []
    for path in re.findall(r"--extra-module[= ](\S+)", line):
        seg = next((s for s in pipeline_segments(line) if "%clang" in s and
                    re.search(r"-o\s+" + re.escape(path) + r"(\s|$)", s)), None)
        if seg is not None:
            out.append(compile_flags(seg))
    return out


def linked_objects(line, lines):
    """(flags of the main build, flags of each other module linked in) for a run line. Besides
    --extra-module (extra_modules), a link of objects that other RUN lines compile from the file
    (`%clang -DDEFINE_F -c %s -o %t.f.o` ... `%clang %t.main.o %t.f.o -o %t && %t`): the first
    object's compile is the main build, the others are extra modules."""
    link = next((s for s in pipeline_segments(line) if "%clang" in s), "")
    objs = [o for o in re.findall(r"(?<!-o )(%t\.[\w.]+\.o)\b", link)]
    producers = []
    for o in objs:
        seg = next((s for l in lines for s in pipeline_segments(l) if "%clang" in s and "%s" in s
                    and re.search(r"-o\s+" + re.escape(o) + r"(\s|$)", s)), None)
        if seg is None:
            return compile_flags(line), extra_modules(line)
        producers.append(compile_flags(seg) + [f for f in compile_flags(link) if f not in
                                               compile_flags(seg)])
    if not producers:
        return compile_flags(line), extra_modules(line)
    return producers[0], producers[1:]


def compile_flags(line):
    """The flags of the RUN line's compile command that matter for enzyme-cc: the one whose
    output the run takes (`-o -`), else the first."""
    segs = [s for s in pipeline_segments(line) if "%clang" in s]
    seg = next((s for s in segs if re.search(r"-o\s+-(\s|$)", s)), segs[0] if segs else None)
    if seg is None:
        return []
    cxx = ["-x", "c++"] if "%clang++" in seg else []
    try:
        args = shlex.split(seg.replace("%clang++", "%clang"))
    except ValueError:
        args = seg.split()
    out, i = [], 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a in ("-mllvm", "-Xclang", "-Xlinker"):
            i += 2
            continue
        if a == "-x":
            out += ["-x", nxt]
            i += 2
            continue
        if a in ("-I", "-D", "-L", "-include"):
            out += [a, nxt.replace("%S", "%S")]
            i += 2
            continue
        if a.startswith("%") or a in ("-S", "-emit-llvm", "-c", "-", "-load") or a.startswith("-O") \
                or a.startswith("-fplugin") or a.startswith("-fpass-plugin") or a == "-o":
            i += 2 if a == "-o" else 1
            continue
        if a.startswith(KEEP_PREFIXES):
            out.append(a)
        i += 1
    if cxx and "-x" not in out:
        out = cxx + out
    return out


def mpi_flags():
    """Open MPI's compile and link flags (`mpicc --showme:compile`, `--showme:link`)."""
    out = []
    for what in ("compile", "link"):
        r = subprocess.run(["mpicc", "--showme:" + what], capture_output=True, text=True)
        out += r.stdout.split() if r.returncode == 0 else []
    return out


def run_one(test, level, args, workroot, env):
    """Build and run one test at one level; returns a result dict."""
    res = {"test": test.rel, "folder": test.folder, "level": level, "kind": test.kind}
    work = tempfile.mkdtemp(prefix=re.sub(r"\W", "_", test.rel) + level + "_", dir=workroot)
    srcdir = os.path.dirname(test.path)
    exe = os.path.join(work, "a.out")
    flags = [f.replace("%S", srcdir).replace("%p", srcdir) for f in test.flags]
    tool = "enzyme-c++" if test.cxx else "enzyme-cc"
    cmd = [tool, "-" + level] + flags + ["-I", srcdir, "-I", args.dir]
    if "-x" in flags:
        cmd += [test.path, "-x", "none"]
    else:
        cmd += [test.path]
    for k, extra in enumerate(test.extra):   # other modules, compiled on their own and linked
        obj = os.path.join(work, "extra%d.o" % k)
        xflags = [f.replace("%S", srcdir).replace("%p", srcdir) for f in extra]
        xcmd = [tool, "-" + level] + xflags + ["-I", srcdir, "-I", args.dir, "-c", test.path,
                                               "-o", obj]
        rc, out, to = run_cmd(xcmd, work, args.build_timeout, env)
        if to or rc != 0:
            res.update(status="timeout" if to else "build-error",
                       detail=first_error(out) if not to else "build took over %ds" %
                       args.build_timeout, output=tail(out, 12), build_cmd=" ".join(xcmd))
            cleanup(work, args)
            return res
        cmd.append(obj)
    if test.kind == "compile" and test.object_only:
        cmd += ["-c", "-o", exe]
    else:
        cmd += (["-shared", "-fPIC"] if not test.has_main else []) + ["-o", exe, "-lm"]
    if test.mpi:
        cmd += mpi_flags()
    res["build_cmd"] = " ".join(shlex.quote(c) for c in cmd)
    rc, out, to = run_cmd(cmd, work, args.build_timeout, env)
    built = not to and rc == 0 and os.path.exists(exe)
    if test.kind == "expect-error":
        if to:
            res.update(status="timeout", detail="build took over %ds" % args.build_timeout)
        elif not built and re.search(r"\berror\b", out):
            res.update(status="pass", detail="expected error: " + first_error(out))
        else:
            res.update(status="unexpected-ok",
                       detail="expected a compile-time error, enzyme-cc built it")
        cleanup(work, args)
        return res
    if to:
        res.update(status="timeout", detail="build took over %ds" % args.build_timeout)
        cleanup(work, args)
        return res
    if test.kind == "compile":
        if built:
            res.update(status="pass", detail="compile-only test")
        else:
            res.update(status="build-error", detail=first_error(out), output=tail(out, 12))
        cleanup(work, args)
        return res
    if not built:
        if test.kind == "expect-fail":
            res.update(status="pass", detail="expected failure; build error: " + first_error(out))
        else:
            res.update(status="build-error", detail=first_error(out), output=tail(out, 12))
        cleanup(work, args)
        return res
    run = [exe]
    if test.mpi:
        run = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", exe]
    rc, out, to = run_cmd(run, work, args.timeout, env)
    if to:
        res.update(status="timeout", detail="run took over %ds" % args.timeout,
                   output=tail(out))
    elif test.kind == "expect-fail":
        if rc != 0:
            res.update(status="pass", detail="expected failure: " + describe_exit(rc))
        else:
            res.update(status="unexpected-ok", detail="expected the run to fail; exit 0")
    elif rc != 0:
        res.update(status="run-fail", detail=describe_exit(rc) + ": " + failure_line(out),
                   output=tail(out))
    elif test.filecheck:
        ok, msg = filecheck(test, out, work, env)
        if ok:
            res.update(status="pass")
        else:
            res.update(status="run-fail", detail="FileCheck: " + msg, output=tail(out))
    else:
        res.update(status="pass")
    cleanup(work, args)
    return res


def filecheck(test, output, work, env):
    fc = shutil.which("FileCheck") or shutil.which("FileCheck-%d" % LLVM_VERSION) or \
        "/usr/lib/llvm-%d/bin/FileCheck" % LLVM_VERSION
    if not os.path.exists(fc) and not shutil.which(fc):
        return True, "FileCheck not found; output not checked"
    try:
        fargs = shlex.split(test.filecheck)
    except ValueError:
        fargs = test.filecheck.split()
    fargs = [a.replace("%s", test.path) for a in fargs[1:] if a not in ("-",)]
    if test.path not in fargs:
        fargs.insert(0, test.path)
    p = subprocess.run([fc] + fargs, input=output.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, cwd=work, env=env, timeout=60)
    if p.returncode == 0:
        return True, ""
    return False, first_error(p.stdout.decode("utf-8", "replace"))


def cleanup(work, args):
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def discover(root):
    tests = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(SOURCE_EXTS):
                tests.append(Test(root, os.path.join(dirpath, fn)))
    return tests


STATUSES = ["pass", "build-error", "run-fail", "timeout", "unexpected-ok"]


def report(tests, results, levels, out=sys.stdout):
    w = out.write
    by_folder = OrderedDict()
    for t in tests:
        by_folder.setdefault(t.folder, [])
    counts = defaultdict(Counter)
    for r in results:
        counts[(r["folder"], r["level"])][r["status"]] += 1
    skipped = defaultdict(Counter)
    for t in tests:
        if t.kind == "skip":
            skipped[t.folder][t.reason] += 1
    w("\n== Results per folder ==\n")
    head = "%-22s %-5s" % ("folder", "level") + "".join("%14s" % s for s in STATUSES) + \
        "%10s\n" % "not run"
    w(head)
    total = defaultdict(Counter)
    for folder in by_folder:
        nskip = sum(skipped[folder].values())
        for lv in levels:
            c = counts[(folder, lv)]
            if not c and not nskip:
                continue
            w("%-22s %-5s" % (folder, lv) + "".join("%14d" % c[s] for s in STATUSES) +
              "%10d\n" % nskip)
            total[lv].update(c)
    for lv in levels:
        w("%-22s %-5s" % ("TOTAL", lv) + "".join("%14d" % total[lv][s] for s in STATUSES) +
          "%10d\n" % sum(sum(c.values()) for c in skipped.values()))

    w("\n== Not run ==\n")
    reasons = defaultdict(list)
    for t in tests:
        if t.kind == "skip":
            reasons[t.reason].append(t.rel)
    for reason, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        w("  %s (%d): %s\n" % (reason, len(names), ", ".join(names)))

    for status in ("build-error", "run-fail", "timeout", "unexpected-ok"):
        groups = defaultdict(list)
        for r in results:
            if r["status"] == status:
                key = r.get("detail", "")
                if status in ("build-error", "run-fail"):
                    key = error_key(key, os.path.dirname(os.path.join(ARGS_DIR, r["test"])))
                    key = key.replace(ARGS_DIR + os.sep, "")
                groups[key].append(r)
        if not groups:
            continue
        n = sum(len(v) for v in groups.values())
        w("\n== %s (%d) ==\n" % (status, n))
        for key, rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            w("[%d] %s\n" % (len(rs), key))
            names = OrderedDict()
            for r in rs:
                names.setdefault(r["test"], []).append(r["level"])
            for name, lvls in names.items():
                w("      %s (%s)\n" % (name, ",".join(lvls)))
                if status in ("run-fail", "timeout"):
                    for r in rs:
                        if r["test"] == name:
                            for line in r.get("output", [])[-4:]:
                                w("          | %s\n" % line[:200])
                            break


ARGS_DIR = ""
LLVM_VERSION = 22
HONOR_LLVMVER = False


def llvm_version():
    try:
        out = subprocess.run(["enzyme-cc", "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=60).stdout.decode()
        m = re.search(r"clang version (\d+)", out)
        if m:
            return int(m.group(1))
    except Exception:
        pass
    return 22


def main():
    global ARGS_DIR, LLVM_VERSION, HONOR_LLVMVER
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="directory of Enzyme integration tests")
    ap.add_argument("--levels", default="O0,O2", help="optimization levels (default O0,O2)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel builds (default 2)")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per run (default 60)")
    ap.add_argument("--build-timeout", type=int, default=600,
                    help="seconds per build (default 600)")
    ap.add_argument("-k", "--filter", action="append", default=[],
                    help="only tests whose path contains this (repeatable)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--keep", action="store_true", help="keep build directories")
    ap.add_argument("--workdir", help="where to build (default: a temporary directory)")
    ap.add_argument("--honor-llvmver", action="store_true",
                    help="skip RUN lines whose `if [ %%llvmver ... ]` guard is false for this "
                         "LLVM (default: run every RUN line's test whatever its guard)")
    ap.add_argument("--list", action="store_true", help="only show what would be run")
    args = ap.parse_args()
    args.dir = os.path.abspath(args.dir)
    ARGS_DIR = args.dir
    if not shutil.which("enzyme-cc"):
        sys.exit("enzyme-cc is not on PATH (put the project's .venv/bin first)")
    LLVM_VERSION = llvm_version()
    HONOR_LLVMVER = args.honor_llvmver
    levels = [l.strip().lstrip("-") for l in args.levels.split(",") if l.strip()]

    tests = discover(args.dir)
    if args.filter:
        tests = [t for t in tests if any(f in t.rel for f in args.filter)]
    todo = [(t, lv) for t in tests if t.kind != "skip" for lv in levels]
    print("%d test files, %d to build (x %d levels = %d builds), LLVM %d, %s"
          % (len(tests), len({t.rel for t, _ in todo}), len(levels), len(todo), LLVM_VERSION,
             shutil.which("enzyme-cc")))
    if args.list:
        for t in tests:
            print("%-55s %-13s %-40s %s" % (t.rel, t.kind, t.reason, " ".join(t.flags)))
        return
    workroot = args.workdir or tempfile.mkdtemp(prefix="enzyme-it-")
    os.makedirs(workroot, exist_ok=True)
    env = dict(os.environ)
    results, lock = [], threading.Lock()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_one, t, lv, args, workroot, env): (t, lv) for t, lv in todo}
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            t, lv = futs[fut]
            try:
                r = fut.result()
            except Exception as e:  # the runner's own failure: report it, keep going
                r = {"test": t.rel, "folder": t.folder, "level": lv, "kind": t.kind,
                     "status": "build-error", "detail": "runner: %r" % e}
            with lock:
                results.append(r)
            print("[%d/%d] %-55s %-3s %s %s" % (i, len(todo), t.rel, lv, r["status"],
                                                 r.get("detail", "")[:150]), flush=True)
    results.sort(key=lambda r: (r["test"], levels.index(r["level"])))
    report(tests, results, levels)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results,
                       "not_run": [{"test": t.rel, "reason": t.reason}
                                   for t in tests if t.kind == "skip"]}, f, indent=1)
    if not args.workdir and not args.keep:
        shutil.rmtree(workroot, ignore_errors=True)
    bad = sum(1 for r in results if r["status"] != "pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
