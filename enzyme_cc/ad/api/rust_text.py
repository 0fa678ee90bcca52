"""Rust's text formatting and printing carry no derivative: `format!`, `println!`, `write!`, a
`panic!` message or an `Err(format!(..))` hand floats to `core::fmt`, which turns them into
characters in a String or an output stream. Read as code, the formatter's indirect calls
through `Display` vtables would let every buffer it touches look written with active data (a
String's bytes then get a shadow, and their untyped moves are refused); as inactive calls, the
text is primal data, as a C program's printf is (stdlib_rules/inactive.toml).

Functions are recognized by their demangled path (legacy and v0 mangling alike)."""
from __future__ import annotations

import re
from ..structure.diagnostics import demangled

# the paths of the standard library's formatting and printing code
_PATHS = ("core::fmt::", "alloc::fmt::", "std::fmt::", "std::io::stdio::_print",
          "std::io::stdio::_eprint", "std::io::stdio::print_to")
# implementations of the formatting traits: <f64 as core::fmt::Display>::fmt, ...
_IMPL = re.compile(r" as core::fmt::(Display|Debug|LowerExp|UpperExp|LowerHex|UpperHex|Octal|"
                   r"Binary|Pointer|Write)>::")
_NAME = re.compile(r'^(?:define|declare)\b[^@\n]*(@(?:"[^"]*"|[-\w.$]+))\(', re.M)


def symbols(module) -> set[str]:
    """The module's functions (defined or declared) that format or print text."""
    if "fmt" not in module.text and "stdio" not in module.text:
        return set()                      # (substring tests: the regex scans every line)
    names = [m.group(1)[1:].strip('"') for m in _NAME.finditer(module.text)]
    names = [n for n in names if n.startswith(("_ZN", "_R")) and ("fmt" in n or "stdio" in n)]
    return {"@" + n for n, d in zip(names, demangled(names))
            if d.startswith(_PATHS) or _IMPL.search(d)}
