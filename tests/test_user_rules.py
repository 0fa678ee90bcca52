"""Users' own rule files ([rules] files in enzyme.toml): rules for functions without bitcode,
overriding the stdlib's rules, errors in rule files; and the examples of docs/rules.md, run."""
import os
import re
import shlex
import subprocess

import pytest
import tomli

from conftest import ROOT, run
import test_rules
from test_docs import blocks

DOC = os.path.join(ROOT, "docs", "rules.md")


def doc_blocks():
    """[(language, file name or None, text)] of the fenced blocks of docs/rules.md; a block names
    its file on its first line (`# file: x.toml`, `/* file: x.c */`)."""
    return blocks("rules.md")


def doc_file(name):
    return next(body for _, fname, body in doc_blocks() if fname == name)


def doc_toml_files():
    return {fname: body for lang, fname, body in doc_blocks()
            if lang == "toml" and fname != "enzyme.toml"}


def _env(config=None):
    """The environment of a build: rule files from `config` (else enzyme.toml found upward), no
    AD cache (every test runs the AD core with the rule files it writes)."""
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    env.pop("ENZYME_CC_CONFIG", None)
    if config:
        env["ENZYME_CC_CONFIG"] = str(config)
    return env


# ---- the worked example of docs/rules.md, as written --------------------------------------------

def test_doc_worked_example(tmp_path):
    for name in ("mylib.c", "main.c", "myrules.toml", "enzyme.toml"):
        (tmp_path / name).write_text(doc_file(name))
    console = next(body for lang, _, body in doc_blocks() if lang == "console")
    lines = console.splitlines()
    out = ""
    for i, line in enumerate(lines):
        if line.startswith("$ "):
            out = run(shlex.split(line[2:]), cwd=tmp_path, env=_env()).stdout
            expected = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("$ "):
                    break
                expected.append(nxt)
            assert out.splitlines() == expected, line


@pytest.mark.parametrize("name", sorted(doc_toml_files()))
def test_doc_rule_files_load(name, tmp_path):
    """Each rule file of the docs goes through the loader enzyme-cc uses, and its rules end up
    where the docs say: under the name, the f name (unless float_variant = false), the
    intrinsic; inactive names inactive, mirror names mirrored."""
    from enzyme_cc.rules import registry
    path = tmp_path / name
    path.write_text(doc_toml_files()[name])
    data = tomli.loads(path.read_text())
    registry.set_user_rule_files([str(path)])
    try:
        for rname, spec in data.items():
            if rname == "inactive":
                for n in spec["names"]:
                    assert registry.is_inactive_call("@" + n)
                continue
            if rname == "mirror":
                for n in spec["names"]:
                    assert registry.is_mirror_call("@" + n) and not registry.is_inactive_call("@" + n)
                continue
            rule = registry.call_rule("@" + rname)
            assert rule.source == str(path) and rule.args == spec["args"]
            variant = registry.call_rule("@" + rname + "f")
            if spec.get("float_variant", True):
                assert variant is rule
            else:
                assert variant is None or variant.source != str(path)
            if "intrinsic" in spec:
                assert registry.call_rule(f"@{spec['intrinsic']}.f64") is rule
    finally:
        registry.set_user_rule_files([])


@pytest.fixture(scope="module")
def mylib(tmp_path_factory):
    """The docs' mylib.c, compiled with plain clang (no bitcode)."""
    d = tmp_path_factory.mktemp("mylib")
    (d / "mylib.c").write_text(doc_file("mylib.c"))
    run(["clang-22", "-O2", "-c", "mylib.c", "-o", "mylib.o"], cwd=d)
    return d


@pytest.mark.parametrize("prec", ["double", "float"])
def test_doc_rules_gradients(prec, mylib, tmp_path):
    """Every rule of the docs for a function of mylib.c, checked like the stdlib's rules: reverse
    and forward mode against finite differences (float: the f variant)."""
    files = {n: t for n, t in doc_toml_files().items()
             if any(k in test_rules.prototypes(doc_file("mylib.c")) for k in tomli.loads(t))}
    assert set(files) == {"myrules.toml", "variants.toml"}
    rules = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        rules.update(tomli.loads(text))
    (tmp_path / "enzyme.toml").write_text(f"[rules]\nfiles = {sorted(files)!r}\n".replace("'", '"'))
    protos = test_rules.prototypes(doc_file("mylib.c"))
    cases = test_rules.cases_for("docs", prec, rules=rules, protos=protos)
    assert {c.name for c in cases} == ({"mysq", "logistic", "scaled", "clip1", "mycube"}
                                       if prec == "double" else {"mycube"})
    prelude = "\n".join(f"{ret} {n}({', '.join(ts)});" for n, (ret, ts) in protos.items())
    res = test_rules.build_and_run(cases, prec, "-O2", str(tmp_path / "build"), prelude,
                                   inputs=[str(mylib / "mylib.o")],
                                   env=_env(tmp_path / "enzyme.toml"))
    for c in cases:
        test_rules.check_case(res, c, prec, "-O2")


# ---- rules for external functions, inactive functions, overrides ---------------------------------

MAIN = r"""
#include <math.h>
#include <stdio.h>
double mysq(double);
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double f(double x) { return mysq(x) * 3; }
int main(void) {
  volatile double v = 1.25;
  printf("%.17g %.17g\n", __enzyme_autodiff((void *)f, v), __enzyme_fwddiff((void *)f, v, 1.0));
  return 0;
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    """mysq in an object built with plain clang-22 (no bitcode), and the program calling it."""
    d = tmp_path_factory.mktemp("ext")
    (d / "ext.c").write_text("double mysq(double x) { return x * x; }\n")
    (d / "main.c").write_text(MAIN)
    run(["clang-22", "-O2", "-c", "ext.c", "-o", "ext.o"], cwd=d)
    run(["enzyme-cc", "-O2", "-c", "main.c", "-o", "main.o"], cwd=d)
    return d


def _link(ext, config, cwd=None, check=True):
    return run(["enzyme-cc", "-O2", str(ext / "main.o"), str(ext / "ext.o"), "-o", "prog"],
               cwd=cwd or config.parent, env=_env(config), check=check)


def test_rule_for_external_function(ext, tmp_path):
    # enzyme.toml found upward from the build directory; its rule file relative to it
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "myrules.toml").write_text(
        '[mysq]\nargs = ["x"]\npartials = ["2 * x"]\n')
    (tmp_path / "enzyme.toml").write_text('[rules]\nfiles = ["rules/myrules.toml"]\n')
    build = tmp_path / "build"
    build.mkdir()
    run(["enzyme-cc", "-O2", str(ext / "main.o"), str(ext / "ext.o"), "-o", "prog"], cwd=build,
        env=_env())
    rev, fwd = map(float, run(["./prog"], cwd=build).stdout.split())
    assert rev == fwd == 3 * 2 * 1.25


def test_no_rule_is_an_error(ext, tmp_path):
    (tmp_path / "enzyme.toml").write_text("")
    r = _link(ext, tmp_path / "enzyme.toml", check=False)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("enzyme-cc: error:")
    assert "no derivative rule for call to 'mysq' and no bitcode for it" in r.stderr
    # the link names the object that defines mysq natively, and what to do about it
    assert ("'mysq' comes from '" in r.stderr and "ext.o', which was not built with enzyme-cc"
            in r.stderr and "rebuild that object with enzyme-cc" in r.stderr)


def test_doc_inactive_example(mylib, tmp_path):
    """The docs' [inactive] example: log_progress needs no rule once listed."""
    (tmp_path / "quiet.toml").write_text(doc_toml_files()["quiet.toml"])
    (tmp_path / "enzyme.toml").write_text('[rules]\nfiles = ["quiet.toml"]\n')
    (tmp_path / "p.c").write_text(r"""
#include <stdio.h>
void log_progress(double);
double __enzyme_autodiff(void *, ...);
static double f(double x) { log_progress(x); return x * x; }
int main(void) { printf("%g\n", __enzyme_autodiff((void *)f, 1.5)); return 0; }
""")
    cmd = ["enzyme-cc", "-O2", "p.c", str(mylib / "mylib.o"), "-lm", "-o", "p"]
    (tmp_path / "empty.toml").write_text("")
    r = run(cmd, cwd=tmp_path, env=_env(tmp_path / "empty.toml"), check=False)
    assert r.returncode != 0 and "call to 'log_progress'" in r.stderr
    run(cmd, cwd=tmp_path, env=_env())
    assert run(["./p"], cwd=tmp_path).stdout.strip() == "3"


OVERRIDE = r"""
#include <math.h>
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define rev_f ((float (*)(void *, float))__enzyme_autodiff)
#define fwd_f ((float (*)(void *, float, float))__enzyme_fwddiff)
static double d(double x) { return sin(x); }
static float f(float x) { return sinf(x); }
int main(void) {
  volatile double v = 0.5;
  printf("%.9g %.9g %.9g %.9g\n", __enzyme_autodiff((void *)d, v),
         __enzyme_fwddiff((void *)d, v, 1.0), rev_f((void *)f, v), fwd_f((void *)f, v, 1.0f));
  return 0;
}
"""


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-fno-math-errno"]],
                         ids=["libm-call", "intrinsic"])
@pytest.mark.parametrize("files,scale_d,scale_f", [
    ({"a.toml": '[sin]\nargs = ["x"]\npartials = ["3 * cos(x)"]\n'}, 3, 3),
    # an explicit [sinf] wins over [sin]'s float variant, in either order
    ({"a.toml": '[sinf]\nargs = ["x"]\npartials = ["5 * cos(x)"]\n\n'
                '[sin]\nargs = ["x"]\npartials = ["3 * cos(x)"]\n'}, 3, 5),
    # a later file wins
    ({"a.toml": '[sin]\nargs = ["x"]\npartials = ["3 * cos(x)"]\n',
      "b.toml": '[sin]\nargs = ["x"]\npartials = ["7 * cos(x)"]\n'}, 7, 7),
], ids=["sin", "explicit-sinf", "later-file"])
def test_user_rule_overrides_stdlib(tmp_path, files, scale_d, scale_f, flags):
    """A deliberately scaled derivative of sin in a user file replaces the stdlib's (user files
    are loaded after stdlib_rules/), for sin, sinf, and llvm.sin.* (-fno-math-errno)."""
    import math
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "enzyme.toml").write_text(f"[rules]\nfiles = {sorted(files)!r}\n".replace("'", '"'))
    if flags[-1] == "-fno-math-errno":
        scale_f = scale_d       # llvm.sin.f32 is llvm.sin: [sin]'s intrinsic, not [sinf]
    (tmp_path / "o.c").write_text(OVERRIDE)
    run(["enzyme-cc", *flags, "o.c", "-lm", "-o", "o"], cwd=tmp_path, env=_env())
    got = [float(v) for v in run(["./o"], cwd=tmp_path).stdout.split()]
    c = math.cos(0.5)
    assert got == pytest.approx([scale_d * c, scale_d * c, scale_f * c, scale_f * c], rel=1e-6)


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-fno-math-errno"]],
                         ids=["libm-call", "intrinsic"])
def test_doc_sqrt_override(tmp_path, flags):
    """The docs' override: sqrt's derivative at 0 becomes +inf (the stdlib gives 0)."""
    (tmp_path / "sqrt_inf.toml").write_text(doc_toml_files()["sqrt_inf.toml"])
    (tmp_path / "s.c").write_text(r"""
#include <math.h>
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
static double f(double x) { return sqrt(x); }
int main(void) { volatile double z = 0, four = 4;
  printf("%g %g\n", __enzyme_autodiff((void *)f, z), __enzyme_autodiff((void *)f, four)); }
""")
    outs = []
    for cfg in ("", '[rules]\nfiles = ["sqrt_inf.toml"]\n'):
        (tmp_path / "enzyme.toml").write_text(cfg)
        run(["enzyme-cc", *flags, "s.c", "-lm", "-o", "s"], cwd=tmp_path, env=_env())
        outs.append(run(["./s"], cwd=tmp_path).stdout.split())
    assert outs == [["0", "0.25"], ["inf", "0.25"]]


# ---- errors in rule files ----------------------------------------------------------------------

ERRORS = [
    # (rule file text, what the message must contain; "DOC": the docs show this very line)
    ('[mysq]\nargs ["x"]\n',
     ["myrules.toml: invalid TOML: Expected '=' after a key in a key/value pair "
      "(at line 2, column 6)", "DOC"]),
    ('[mysq\nargs = ["x"]\n', ["myrules.toml: invalid TOML", "line 1"]),
    ('[mysq]\npartial = ["2 * x"]\nargs = ["x"]\n',
     ["myrules.toml:2: rule 'mysq': unknown key 'partial' (known: args, partials, intrinsic, "
      "float_variant)", "DOC"]),
    ('[mysq]\nargs = ["x"]\npartials = ["2 * (x"]\n',
     ["myrules.toml:3: rule 'mysq', partial for 'x': cannot parse formula '2 * (x'"]),
    ('[mysq]\nargs = ["x"]\npartials = ["2 * y"]\n',
     ["myrules.toml:3: rule 'mysq', partial for 'x': unknown name 'y' (known: r, x) in formula "
      "'2 * y'", "DOC"]),
    ('[mysq]\nargs = ["x"]\npartials = ["sec(x)"]\n',
     ["myrules.toml:3: rule 'mysq', partial for 'x': unknown function 'sec'"]),
    ('[mysq]\nargs = ["x"]\npartials = ["where(x > 0, 1)"]\n',
     ["myrules.toml:3: rule 'mysq', partial for 'x': where() takes 3 arguments"]),
    ('[mysq]\nargs = ["x"]\npartials = ["pow(x)"]\n',
     ["myrules.toml:3: rule 'mysq', partial for 'x': pow() takes 2 arguments"]),
    ('[mysq]\nargs = ["x"]\npartials = ["2 * x", "1"]\n',
     ["myrules.toml:3: rule 'mysq': 1 args but 2 partials", "DOC"]),
    ('\n[mysq]\nargs = ["x", "y"]\npartials = ["2 * x"]\n',
     ["myrules.toml:4: rule 'mysq': 2 args but 1 partials"]),
    ('[mysq]\nargs = ["x"]\n', ["myrules.toml:1: rule 'mysq' needs 'partials'"]),
    ('[mysq]\nargs = "x"\npartials = ["2 * x"]\n',
     ["myrules.toml:2: rule 'mysq': 'args' must be a list of strings"]),
    ('[mysq]\nargs = ["x"]\npartials = [2]\n',
     ["myrules.toml:3: rule 'mysq': 'partials' must be a list of strings"]),
    ('[mysq]\nargs = ["r"]\npartials = ["2 * r"]\n',
     ["myrules.toml:2: rule 'mysq': 'r' cannot name an argument"]),
    ('[mysq]\nargs = ["x"]\npartials = ["2 * x"]\nintrinsic = "sin"\n',
     ["myrules.toml:4: rule 'mysq': 'intrinsic' must be a string naming an LLVM intrinsic"]),
    ('[mysq]\nargs = ["x"]\npartials = ["2 * x"]\nfloat_variant = "no"\n',
     ["myrules.toml:4: rule 'mysq': 'float_variant' must be true or false"]),
    ('mysq = 1\n', ["myrules.toml: 'mysq' must be a table"]),
    ('[inactive]\nname = ["mysq"]\n', ["myrules.toml:2: [inactive]: unknown key 'name'"]),
]


@pytest.mark.parametrize("text,expect", ERRORS, ids=[
    "bad-toml", "bad-toml-header", "unknown-key", "formula-syntax", "unknown-name",
    "unknown-function", "where-arity", "function-arity", "too-many-partials",
    "too-few-partials", "missing-partials", "args-not-list", "partial-not-string", "arg-named-r",
    "bad-intrinsic", "bad-float-variant", "not-a-table", "inactive-unknown-key"])
def test_rule_file_errors(ext, tmp_path, text, expect):
    (tmp_path / "myrules.toml").write_text(text)
    (tmp_path / "enzyme.toml").write_text('[rules]\nfiles = ["myrules.toml"]\n')
    r = _link(ext, tmp_path / "enzyme.toml", check=False)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("enzyme-cc: error: "), r.stderr
    assert lines[0].startswith(f"enzyme-cc: error: {tmp_path / 'myrules.toml'}"), lines[0]
    for want in expect:
        if want == "DOC":
            with open(DOC) as f:
                assert lines[0].replace(str(tmp_path), "/src") in f.read(), lines[0]
        else:
            assert want in lines[0]


def test_missing_rule_file(ext, tmp_path):
    (tmp_path / "enzyme.toml").write_text('[rules]\nfiles = ["nope.toml"]\n')
    r = _link(ext, tmp_path / "enzyme.toml", check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("enzyme-cc: error: cannot read rule file ")
    assert "nope.toml" in r.stderr


def test_documented_functions_are_the_formula_functions():
    from enzyme_cc.rules.formula import FUNCS, MACROS
    with open(DOC) as f:
        doc = f.read()
    listed = re.search(r"<!-- functions -->(.*?)<!-- /functions -->", doc, re.S).group(1)
    public = set(FUNCS) | {m for m in MACROS if not m.startswith("_")}
    assert set(listed.replace("`", " ").split()) == public
