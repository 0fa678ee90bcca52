"""Code AD did not reach, spread over the post-AD parts (lto/optimize.py `optimize_and_emit`).

llvm-split (with `--preserve-locals`) keeps each local function and variable in the part of its
users, so the locals of one object form one group. When AD brings in a large library object for a
few of its functions (Rust's standard library, reached through a trait object's drop: about 1,300
functions tied together by their locals), that group was one part, compiled on one core while the
other waited. Here the local functions the pre-AD scope found AD cannot reach
(lto/preopt_scope.py, UNREACHED), and the local variables only they name, become hidden
definitions under names of our own, which llvm-split places by the hash of the name, like any
other definition.

What AD reached keeps its locals, and with them every inlining the part's pipeline does on them:
its pre-AD pipeline kept calls for AD that the post-AD one inlines. The code that loses them was
optimized at its compile step and went through the whole-module passes before the split.
Renaming a local inside the AD object changes nothing outside it: the object is the link's only
one with these names."""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from . import preopt_scope

PREFIX = "__enzyme_cc_u."
LOCAL = (llvm.Linkage.internal, llvm.Linkage.private)
PLAIN = re.compile(r"[-\w.$]+")        # a name the text writes without quotes


def hide(g) -> None:
    """The local function or variable g made a hidden definition named PREFIX + its name."""
    g.name = PREFIX + g.name
    g.linkage, g.visibility = llvm.Linkage.external, llvm.Visibility.hidden


def spread(module, text: str) -> int:
    """Makes the local functions of `module` (its IR `text`) that AD did not reach (the
    pre-AD scope gave them preopt_scope.UNREACHED), and the local variables no other function
    names (nor their initializers), hidden definitions named PREFIX + name; returns how many.
    The code AD reached keeps its locals: its pre-AD pipeline kept calls for AD that the
    post-AD one inlines (a primal's OpenMP regions their element kernel). Left local:
    thread-locals, what is in a comdat or in llvm.metadata, and what `text` does not define
    (the runtimes linked in after it)."""
    if preopt_scope.UNREACHED not in text:
        return 0
    funcs, variables = preopt_scope.index(text)
    unreached = preopt_scope.marked_unreached(text, funcs)
    named = preopt_scope.variables_named(funcs, variables, [n for n in funcs
                                                            if n not in unreached])
    kept = {n for n, line in variables.items()
            if " thread_local" in line or " comdat" in line or '"llvm.metadata"' in line}
    kept |= {n for n, (define, _) in funcs.items() if " comdat" in define}
    candidates = {n for n in unreached | set(variables)
                  if n not in named and n not in kept and PLAIN.fullmatch(n)}
    count = 0
    for g in list(module.functions) + list(module.global_variables):
        if g.is_declaration or g.linkage not in LOCAL:
            continue
        name = g.name
        if name not in candidates or name.startswith("__enzyme_cc_"):
            continue
        hide(g)
        count += 1
    return count
