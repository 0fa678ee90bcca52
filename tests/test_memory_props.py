"""Property-based test of the memory rules: seeded random C functions that grow and shrink a
heap buffer of active values with realloc, shift it with overlapping memmove (left and right by
random offsets), copy parts with memcpy, zero parts with memset and mix the values nonlinearly.
All cases go into one program per optimization level; it checks each reverse-mode gradient
against central finite differences and forward mode against reverse mode (<J v, 1> == v . grad),
calling every gradient twice (stale shadow memory from the first call shows in the second).
"""
import os
import random
import shutil

import pytest

from conftest import run

SEED = 20261123
CASES = 40
H = 1e-6


def _expr(rng, nin):
    """A random smooth expression of the inputs x[0..nin)."""
    j, k = rng.randrange(nin), rng.randrange(nin)
    return rng.choice([f"x[{j}]", f"x[{j}] * x[{k}]", f"sin(x[{j}])", f"(x[{j}] + 0.5 * x[{k}])",
                       f"exp(0.3 * x[{j}])"])


def _size(n_in, value):
    """A byte count for `value` doubles, sometimes through the runtime n (not a constant)."""
    return f"(n + {value - n_in}) * sizeof(double)" if value != n_in else "n * sizeof(double)"


def gen_case(rng, k):
    nin = rng.randint(2, 6)
    length = rng.randint(1, 4)
    body = [f"double case{k}(const double *x, int n) {{",
            f"  double *b = malloc({_size(nin, length)});"]
    body += [f"  b[{i}] = {_expr(rng, nin)};" for i in range(length)]
    for _ in range(rng.randint(3, 7)):
        op = rng.choice(["grow", "grow", "shrink", "left", "right", "memcpy", "memset", "mix"])
        if op == "grow":
            new = length + rng.randint(1, 5)
            body.append(f"  b = realloc(b, {_size(nin, new)});")
            body += [f"  b[{i}] = {_expr(rng, nin)} * b[{rng.randrange(length)}];"
                     for i in range(length, new)]
            length = new
        elif op == "shrink" and length > 1:
            length = rng.randint(1, length - 1)
            body.append(f"  b = realloc(b, {_size(nin, length)});")
        elif op in ("left", "right") and length > 1:
            s = rng.randint(1, length - 1)
            dst, src = ("b", f"b + {s}") if op == "left" else (f"b + {s}", "b")
            body.append(f"  memmove({dst}, {src}, {length - s} * sizeof(double));")
        elif op == "memcpy" and length > 1:
            m = rng.randint(1, length // 2) if length >= 2 else 1
            body.append(f"  {{ double *c = malloc({m} * sizeof(double));")
            body.append(f"    memcpy(c, b + {length - m}, {m} * sizeof(double));")
            body.append(f"    memcpy(b, c, {m} * sizeof(double));")
            body.append(f"    b[{length - 1}] *= c[0]; free(c); }}")
        elif op == "memset" and length > 1:
            s = rng.randrange(length)
            m = rng.randint(1, length - s)
            body.append(f"  memset(b + {s}, 0, {m} * sizeof(double));")
            body.append(f"  b[{s}] += {_expr(rng, nin)};")
        else:
            body.append(f"  for (int i = 0; i < {length}; i++) b[i] = b[i] * (0.5 + 0.25 * "
                        f"sin(b[(i + 1) % {length}])) + 0.1 * x[i % {nin}];")
    body.append("  double s = 0;")
    body.append(f"  for (int i = 0; i < {length}; i++) s += b[i] * (1 + 0.3 * i) + 0.1 * b[i] * b[i];")
    body += ["  free(b);", "  return s;", "}"]
    xs = [round(rng.uniform(-1.2, 1.2), 3) for _ in range(nin)]
    vs = [round(rng.uniform(-1, 1), 3) for _ in range(nin)]
    return "\n".join(body), nin, xs, vs


def gen_program(seed=SEED, cases=CASES):
    rng = random.Random(seed)
    out = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
           "int enzyme_dup, enzyme_const;", "double __enzyme_autodiff(void *, ...);",
           "double __enzyme_fwddiff(void *, ...);", "static int failed;",
           "static void check(const char *what, int k, int i, double got, double want) {",
           "  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));",
           '  printf("CHECK case%d_%s[%d] %.12g %.12g%s\\n", k, what, i, got, want, ok ? "" : '
           '"  <-- FAILED");',
           "  failed += !ok;", "}",
           # a macro: the marker calls need the function itself, not a pointer parameter
           "#define TEST(k, f, n, x0, v0) do { for (int call = 0; call < 2; call++) { \\",
           "    double x[8], dx[8] = {0}, v[8], dot = 0; \\",
           "    for (int i = 0; i < n; i++) x[i] = x0[i]; \\",
           "    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n); \\",
           "    for (int i = 0; i < n; i++) { \\",
           "      double xp[8], xm[8]; \\",
           "      for (int j = 0; j < n; j++) xp[j] = xm[j] = x0[j]; \\",
           f"      xp[i] += {H}; xm[i] -= {H}; \\",
           f"      check(\"grad\", k, i, dx[i], (f(xp, n) - f(xm, n)) / (2 * {H})); \\",
           "      v[i] = v0[i]; \\",
           "      dot += v0[i] * dx[i]; \\",
           "    } \\",
           "    check(\"dot\", k, call, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, \\",
           "                                           enzyme_const, n), dot); \\",
           "  } } while (0)"]
    mains = []
    for k in range(cases):
        src, nin, xs, vs = gen_case(rng, k)
        out.append(src)
        mains.append(f"  {{ const double x_in[] = {{{', '.join(map(str, xs))}}}, "
                     f"v_in[] = {{{', '.join(map(str, vs))}}}; "
                     f"TEST({k}, case{k}, {nin}, x_in, v_in); }}")
    out += ["int main(void) {", *mains,
            '  if (failed) printf("FAILED: %d check(s)\\n", failed);', "  return failed != 0;", "}"]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_random_memory_programs(tmp_path, level):
    src = tmp_path / "props.c"
    src.write_text(gen_program())
    exe = tmp_path / "props"
    run(["enzyme-cc", level, str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    cmd = [str(exe)]
    if shutil.which("valgrind"):
        cmd = ["valgrind", "--error-exitcode=1", "--leak-check=full",
               "--errors-for-leak-kinds=definite", "-q", *cmd]
    r = run(cmd, cwd=tmp_path, check=False)
    bad = [line for line in r.stdout.splitlines() if "FAILED" in line]
    assert r.returncode == 0 and not bad, "\n".join(bad) + "\n" + r.stderr[-4000:]
    n_checks = sum(line.startswith("CHECK ") for line in r.stdout.splitlines())
    assert n_checks >= CASES * 4, r.stdout
    for line in r.stdout.splitlines():       # re-verify the numbers here
        if line.startswith("CHECK "):
            got, want = map(float, line.split()[2:4])
            assert abs(got - want) <= 1e-5 * (1 + abs(want)), line
