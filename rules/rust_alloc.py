"""Rust's default allocator (`__rdl_alloc`, `__rdl_dealloc`, `__rdl_realloc`,
`__rdl_alloc_zeroed`, which the allocator shim `__rust_alloc` & co. call) differentiated through
our own implementation (rust_alloc.c) instead of std's.

std defines them in its one large object (11 MB of bitcode, backtraces and all), which the link
step had to merge, optimize and compile again whenever differentiated code allocated: a third of
a small Rust program's link. References to them are renamed before the merge stage decides which
objects AD reaches (lto/ad_pipeline.py), so std stays with its compiled code unless AD reaches
something else there; std's own definitions stay for its own code. A program with its own
#[global_allocator] calls that one instead (`__rg_alloc`), which is not affected."""
from __future__ import annotations

import re

from .c_runtime import runtime_bitcode
from enzyme_cc.lto.optimize import parse_bitcode

# v0-mangled `__rustc::__rdl_NAME` (the crate hash varies by toolchain), or the plain name
_REF = re.compile(r"@(?:_RNvCs[0-9A-Za-z_]+_7___rustc\d+___|__)rdl_"
                  r"(alloc_zeroed|alloc|dealloc|realloc)(?![\w.$])")


_SIGNATURES = {"alloc": "ptr @{}(i64, i64)", "alloc_zeroed": "ptr @{}(i64, i64)",
               "dealloc": "void @{}(ptr, i64, i64)", "realloc": "ptr @{}(ptr, i64, i64, i64)"}


def substitute(text: str) -> tuple[str, bool]:
    """Module text with references to std's `__rdl_*` (and their declarations) renamed to ours,
    their definitions kept (std's own code calls them); and whether there were any."""
    if "rdl_" not in text:
        return text, False
    out, used, declared = [], set(), set()
    for line in text.split("\n"):
        if "rdl_" in line and not line.startswith("define "):
            used |= {m.group(1) for m in _REF.finditer(line)}
            if line.startswith("declare "):
                declared |= {m.group(1) for m in _REF.finditer(line)}
            line = _REF.sub(r"@__enzyme_cc_rust_rdl_\1", line)
        out.append(line)
    # (where std's definitions were merged, the new names have no declaration yet)
    out += ["declare " + _SIGNATURES[k].format(f"__enzyme_cc_rust_rdl_{k}")
            for k in sorted(used - declared)]
    return "\n".join(out), bool(used)


def link_runtime(module, ctx):
    for data in runtime_bitcode(("rust_alloc.c",), (), "Rust allocator"):
        module.link_in(parse_bitcode(data, "enzyme-cc Rust allocator", ctx))
