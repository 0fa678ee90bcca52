"""Code AD cannot reach, compiled apart from the AD module (lto/ad_pipeline.py, after the merge).

Every Rust program brings in the standard library's largest object for a few functions AD
reaches (the drop glue a trait object calls): about 1,400 functions and 18 MB of line tables
that went through the pre-AD pipeline, the differentiate stage's parse, the post-AD
verification, split and passes, on every link and relink, although AD reads none of it. When
the functions the pre-AD scope found AD cannot reach (preopt_scope.UNREACHED) hold CARVE_BYTES
of IR text or more, they move to a module of their own: opt and llc compile it beside the AD
stages (on another core) and the cache keeps its object by its bitcode, so that a relink after
an edit takes it from there. The AD module keeps declarations of them, as it does for the
objects left to their native code (`_native_modules`, on the same reachability).

What moves, so that what AD's module-wide scans see does not change:
- a function AD cannot reach that takes the address of no function staying in the AD module (an
  indirect call's target AD would no longer see; its calls into that module stay calls, across
  the two objects, which loses their inlining: hence the threshold), names no writable variable
  that the AD module's code or a variable's initializer names (a store AD's analyses would no
  longer see: static_locals' constant statics), and no thread-local, alias or unnamed global;
  none in a comdat, none with a blockaddress, none named by an alias or by metadata;
- a variable that only moved functions name, whose initializer names nothing.
The locals named across the two modules become hidden definitions under names of our own
(untouched.PREFIX). llvm-extract makes every local of both halves an external hidden symbol;
they get their linkage back here (and its linkonce definitions weak, which they stay: a
linkonce function one half calls must not be dropped by the other, which holds it).
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass

from enzyme_cc import cache, toolchain
from . import jobserver, preopt_scope
from .untouched import LOCAL, PLAIN, PREFIX, hide

CARVE_BYTES = 1 << 20       # IR text of the functions that would move, below which none does
APART_PART_BYTES = 1 << 20  # bitcode per part of the moved code (one key for all of it first)
_KIND = re.compile(r'@\S+ = (?:[\w()"]+ )*?(global|constant|alias|ifunc) ')
_LOCAL = re.compile(r"(?:define|@\S+ =) (?:internal|private) ")
_BLOCKADDRESS = re.compile(r'blockaddress\(@([-\w.$]+|"[^"]+")')
_META_LINE = re.compile(r"^![^\n]*@[^\n]*", re.M)


@dataclass
class Choice:
    functions: set[str]             # the functions that move (names as the text writes them)
    variables: set[str]             # the variables that move with them
    promoted: set[str]              # the locals named across the two modules


def _names(text: str) -> set[str]:
    return preopt_scope.references(text)[0]


def choose(text: str) -> Choice | None:
    """What of the merged module `text` (after the merge's text passes) moves, or None."""
    if preopt_scope.UNREACHED not in text:
        return None
    funcs, variables = preopt_scope.index(text)
    unreached = preopt_scope.marked_unreached(text, funcs)
    if sum(len(funcs[n][1]) for n in unreached) < CARVE_BYTES:
        return None
    refs, taken = {}, {}
    for n, (define, body) in funcs.items():
        refs[n], taken[n] = preopt_scope.references(define + body)
    kinds = {v: (m.group(1) if (m := _KIND.match(line)) else None)
             for v, line in variables.items()}
    inits = {v: _names(line.split("=", 1)[1]) for v, line in variables.items()}
    aliases = {v for v, k in kinds.items() if k in ("alias", "ifunc")}
    meta = set().union(*map(_names, _META_LINE.findall(text)))
    held = set(_BLOCKADDRESS.findall(text)) | meta
    for v in aliases:
        held |= inits[v]
    barred = aliases | {v for v, line in variables.items()      # (an unnamed one: `@0`)
                        if kinds[v] is None or " thread_local" in line or v.isdigit()}
    moving = {n for n in unreached if PLAIN.fullmatch(n) and n not in held and
              " comdat" not in funcs[n][0] and "blockaddress(" not in funcs[n][1]}
    in_inits = set().union(*inits.values())
    while True:
        staying = funcs.keys() - moving
        named = set().union(in_inits, *(refs[n] for n in staying))
        bad = barred | {v for v in named if kinds.get(v) == "global"}
        out = {n for n in moving if refs[n] & bad or taken[n] & staying}
        if not out:
            break
        moving -= out
    if sum(len(funcs[n][1]) for n in moving) < CARVE_BYTES:
        return None
    namers: dict[str, set] = {}
    for n, r in refs.items():
        for x in r & variables.keys():
            namers.setdefault(x, set()).add(n)
    moved_vars = {v for v, line in variables.items()
                  if namers.get(v) and namers[v] <= moving and not inits[v] and
                  kinds[v] in ("global", "constant") and v not in in_inits | held and
                  PLAIN.fullmatch(v) and not v.isdigit() and not v.startswith("llvm.") and
                  " comdat" not in line and " thread_local" not in line and
                  '"llvm.metadata"' not in line}
    staying = funcs.keys() - moving
    a_side = set().union(*(refs[n] for n in staying),
                         *(inits[v] for v in variables.keys() - moved_vars)) | held
    b_side = set().union(*(refs[n] for n in moving))
    across = (b_side - moving - moved_vars) | (a_side & moving)
    promoted = {x for x in across if x in funcs and _LOCAL.match(funcs[x][0]) or
                x in variables and _LOCAL.match(variables[x])}
    if any(not PLAIN.fullmatch(x) or x.isdigit() for x in promoted):
        return None
    return Choice(moving, moved_vars, promoted)


class Apart:
    """The moved code's object, made on a thread of its own where the machine has a core to
    spare and no jobserver rations them (else when the AD object is joined)."""

    def __init__(self, build, functions: int):
        self.build, self.error, self.thread = build, None, None
        self.functions = functions                  # (how many moved, for -v)
        if jobserver.limit() > 1 and jobserver.jobserver() is None:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self):
        try:
            self.build()
        except BaseException as e:          # (raised again by wait, on the link's thread)
            self.error = e

    def wait(self):
        if self.thread is None:
            self.build()
            return
        self.thread.join()
        if self.error is not None:
            raise self.error


def split_off(job, choice: Choice, level: int, sanitize) -> Apart:
    """Moves `choice` out of job.module (the merged module, in place of which the rest is
    parsed) into a module compiled into job.tmp/apart.o by the Apart returned."""
    from . import optimize as opt
    module, linkages = job.module, {}       # (name -> the linkage and visibility to restore)
    for g in list(module.functions) + list(module.global_variables):
        if g.is_declaration:
            continue
        if g.name in choice.promoted:
            hide(g)
        elif g.linkage in LOCAL:
            linkages[g.name] = (g.linkage, g.visibility)
    whole, rest, apart = (os.path.join(job.tmp, n) for n in ("whole.bc", "rest.bc", "apart.bc"))
    rsp = os.path.join(job.tmp, "apart.rsp")
    with open(whole, "wb") as f:
        f.write(module.as_bitcode())
    rename = lambda n: PREFIX + n if n in choice.promoted else n       # noqa: E731
    with open(rsp, "w") as f:
        f.write("\n".join([f"--func={rename(n)}" for n in sorted(choice.functions)] +
                          [f"--glob={v}" for v in sorted(choice.variables)]) + "\n")
    extract = toolchain.tool("extract")
    jobserver.run_all(lambda cmd: opt.run_tool(cmd, "moving code AD cannot reach apart"),
                      [[extract, "--delete", f"@{rsp}", whole, "-o", rest],
                       [extract, f"@{rsp}", whole, "-o", apart]])
    with open(rest, "rb") as f:
        job.module = opt.parse_bitcode(f.read(), "the AD module", job.ctx)
    _restore(job.module, linkages)
    job.module.verify()
    obj = os.path.join(job.tmp, "apart.o")

    def build():
        with open(apart, "rb") as f:
            m = opt.parse_bitcode(f.read(), "the code AD cannot reach", opt.new_context())
        _restore(m, linkages)
        key = "apart-" + hashlib.sha256(
            m.as_bitcode() + opt._tools_identity(level) + repr(sanitize).encode()).hexdigest()
        if cache.fetch(key + ".o", obj):
            return
        tmp = os.path.join(job.tmp, "apart")        # (its parts apart from the AD object's)
        os.makedirs(tmp, exist_ok=True)
        opt.optimize_and_emit(m, obj, level, tmp, sanitize=sanitize, before_split=_unbind,
                              part_bytes=APART_PART_BYTES)
        cache.store(key + ".o", obj)

    return Apart(build, len(choice.functions))


def _unbind(module) -> None:
    """The moved code's local functions made hidden definitions of names of our own, so that
    llvm-split places each by its name: a library's locals tie all of it into one part (the
    same as untouched.spread, for a module that is all code AD did not reach)."""
    for fn in module.functions:
        if not fn.is_declaration and fn.linkage in LOCAL and fn.name and \
                not fn.name.startswith(PREFIX):
            hide(fn)


def _restore(module, linkages: dict) -> None:
    """The linkage and visibility llvm-extract took from the definitions of `module`."""
    for g in list(module.functions) + list(module.global_variables):
        if not g.is_declaration:
            old = linkages.get(g.name)
            if old is not None:
                g.linkage, g.visibility = old


def join(job, apart: Apart) -> None:
    """The moved code's object joined into the AD object."""
    from . import optimize as opt
    apart.wait()
    joined = job.obj + ".joined"
    opt.run_tool([toolchain.tool("lld"), "-r", job.obj, os.path.join(job.tmp, "apart.o"),
                  "-o", joined], "joining the code AD cannot reach")
    os.replace(joined, job.obj)
