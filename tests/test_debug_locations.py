"""Source locations on the derivatives (enzyme_cc/ir/debug_locs.py): a program built with -g
whose differentiated function is a call kept by `noinline`. The code of its augmented forward,
reverse and forward-mode derivatives (symbols `aug.energy.N`, `rev.energy.N`,
`fwddiffe.energy.N`) must map, through the DWARF line table, to energy's own statements, and to
the inlined helper's line through the inlining chain, as a profiler or a debugger sees them;
the gradient stays right."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run

SRC = Path(__file__).resolve().parent / "debug_info" / "derivative_lines.c"
SYMBOLIZER = shutil.which("llvm-symbolizer-22")
BIN = Path(sys.executable).parent


def _line_of(tag: str) -> int:
    return next(k for k, ln in enumerate(SRC.read_text().split("\n"), 1) if tag in ln)


def _lines_of_symbol(exe, symbol_prefix):
    """{(function, line)} the symbolizer gives the code of the local symbol symbol_prefix*."""
    nm = subprocess.run(["nm", "-S", str(exe)], capture_output=True, text=True).stdout
    m = re.search(rf"^([0-9a-f]+) ([0-9a-f]+) t ({re.escape(symbol_prefix)}[\w.]*)$", nm, re.M)
    assert m, f"no symbol {symbol_prefix}* in:\n{nm}"
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    out = subprocess.run([SYMBOLIZER, f"--obj={exe}", "--inlining", "--no-demangle"],
                         input="\n".join(hex(a) for a in range(start, start + size)),
                         capture_output=True, text=True).stdout
    found = set()
    for block in out.strip().split("\n\n"):
        rows = block.split("\n")
        for fn, loc in zip(rows[::2], rows[1::2]):
            path, line = loc.split(":")[:2]
            found.add((fn, os.path.basename(path), int(line)))
    return m.group(3), found


@pytest.mark.skipif(SYMBOLIZER is None, reason="llvm-symbolizer-22 not installed")
@pytest.mark.parametrize("level", ["-O0", "-O2", "-O2-ref"])
def test_derivative_code_maps_to_the_primal_lines(tmp_path, level):
    env = dict(os.environ, **({"ENZYME_CC_PREOPT": "0"} if level == "-O2-ref" else {}))
    r = run([str(BIN / "enzyme-cc"), level[:3], "-g", str(SRC), "-o", "p", "-lm"], cwd=tmp_path,
            env=env, check=False)
    assert r.returncode == 0, r.stderr
    assert "invalid debug info" not in r.stderr, r.stderr
    p = subprocess.run(["./p"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    body = {_line_of("LINE_SIN"), _line_of("LINE_SUM")}
    for prefix in ("aug.energy.", "rev.energy.", "fwddiffe.energy."):
        name, found = _lines_of_symbol(tmp_path / "p", prefix)
        here = {line for fn, f, line in found if f == SRC.name}
        assert body <= here, (name, sorted(found))
        # the outermost frame is the derivative's own subprogram, named after it
        assert any(fn == name for fn, _, _ in found), (name, sorted(found))
        assert all(f in (SRC.name, "??") for _, f, _ in found), (name, sorted(found))
        # damp's line, inlined before AD (damp) or its derivative inlined after (aug.damp.N)
        if prefix != "aug.energy." or level != "-O0":
            assert any(line == _line_of("LINE_DAMP") and "damp" in fn.split(".")
                       for fn, _, line in found), (name, sorted(found))
