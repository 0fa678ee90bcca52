"""`__enzyme_iter(a, b)` (Enzyme's, used with fixed points): a in the program, and it gains b
in every derivative that copies it (`bump_iters`: a series keeps enough terms when it is
differentiated); the calls left at the end become their first argument (`drop_iters`)."""
from __future__ import annotations

import itertools
import re

_ITER = re.compile(r"^(\s*)(%[-\w.$]+) = (?:tail |notail |musttail )?call (?:\w+ )*(i\d+) "
                   r"@\"?[\w.$]*__enzyme_iter\w*\"?\s*\(\s*(i\d+) (?:noundef )?([^,\s]+)\s*,"
                   r"\s*(i\d+) (?:noundef )?([^,)\s]+)\s*\)(.*)$")


_ITER_NAMES = itertools.count()


def bump_iters(text: str) -> str:
    """In a derivative: __enzyme_iter(a, b) -> __enzyme_iter(a + b, b)."""
    if "__enzyme_iter" not in text:
        return text
    out = []
    for line in text.split("\n"):
        m = _ITER.match(line)
        if m:
            ind, res, ty, aty, a, bty, b, _ = m.groups()
            nxt = f"%ad.iter.{next(_ITER_NAMES)}"
            out.append(f"{ind}{nxt} = add {aty} {a}, {b}")
            line = line[:m.start(5)] + nxt + line[m.end(5):]
        out.append(line)
    return "\n".join(out)


def drop_iters(text: str) -> str:
    """The __enzyme_iter calls the program keeps: their first argument."""
    if "__enzyme_iter" not in text:
        return text
    out = []
    for line in text.split("\n"):
        m = _ITER.match(line)
        if m:
            ind, res, ty, aty, a = m.groups()[:5]
            line = f"{ind}{res} = add {aty} {a}, 0"
        out.append(line)
    return "\n".join(out)
