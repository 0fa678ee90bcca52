"""enzyme.toml: discovery, validation, and what each key does."""
import os
import re
import shutil

import pytest

from conftest import ROOT, run
from enzyme_cc import toolchain
from enzyme_cc.config import SCHEMA, Config, find_config, load_config
from enzyme_cc.errors import UserError

ENV = ("ENZYME_CC_CONFIG", "ENZYME_CC_PREOPT", "ENZYME_CC_DUMP_DIR", "ENZYME_CC_DEBUG",
       "ENZYME_CC_CLANG")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---- discovery ------------------------------------------------------------------------------

def test_nearest_enzyme_toml_upward(tmp_path):
    outer = write(tmp_path / "a" / "enzyme.toml", "[ad]\npreopt = false\n")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    cfg = load_config(str(deep))
    assert cfg.path == str(outer) and cfg.preopt is False
    inner = write(tmp_path / "a" / "b" / "enzyme.toml", "[debug]\nverbose = true\n")
    cfg = load_config(str(deep))
    assert cfg.path == str(inner) and cfg.preopt is True and cfg.verbose is True


def test_environment_names_the_file(tmp_path, monkeypatch):
    write(tmp_path / "enzyme.toml", "[ad]\npreopt = false\n")
    chosen = write(tmp_path / "elsewhere" / "my.toml", "[debug]\nverbose = true\n")
    monkeypatch.setenv("ENZYME_CC_CONFIG", str(chosen))
    cfg = load_config(str(tmp_path))
    assert cfg.path == str(chosen) and cfg.verbose and cfg.preopt
    monkeypatch.setenv("ENZYME_CC_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(UserError, match="ENZYME_CC_CONFIG names '.*missing.toml'"):
        load_config(str(tmp_path))


def test_defaults_without_a_file(tmp_path):
    ancestors = [p for p in [tmp_path, *tmp_path.parents] if (p / "enzyme.toml").exists()]
    if ancestors:
        pytest.skip(f"an enzyme.toml above the test directory: {ancestors[0]}")
    assert find_config(str(tmp_path)) is None
    assert load_config(str(tmp_path)) == Config()


def test_environment_wins_over_the_file(tmp_path, monkeypatch):
    write(tmp_path / "enzyme.toml", '[ad]\npreopt = true\n[debug]\ndump_dir = "d"\n')
    monkeypatch.setenv("ENZYME_CC_PREOPT", "0")
    monkeypatch.setenv("ENZYME_CC_DUMP_DIR", "/somewhere")
    cfg = load_config(str(tmp_path))
    assert cfg.preopt is False and cfg.dump_dir == "/somewhere"


def test_relative_paths_are_relative_to_the_file(tmp_path):
    write(tmp_path / "enzyme.toml", '[debug]\ndump_dir = "dumps"\n[rules]\nfiles = ["r/my.toml"]\n'
                                    '[toolchain]\nclang = "bin/clang"\nflang = "flang-new-22"\n')
    (tmp_path / "sub").mkdir()
    cfg = load_config(str(tmp_path / "sub"))
    assert cfg.dump_dir == str(tmp_path / "dumps")
    assert cfg.rule_files == [str(tmp_path / "r" / "my.toml")]
    assert cfg.toolchain == {"clang": str(tmp_path / "bin" / "clang"), "flang": "flang-new-22"}


# ---- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("[ad\npreopt = false\n", r"invalid TOML: .*line 1"),
    ("[ad]\npreopt = \n", r"invalid TOML"),
    ("[optimizer]\nlevel = 2\n", r"unknown key 'optimizer' \(known: toolchain, ad, checkpoint, debug, rules\)"),
    ("[ad]\npre_opt = false\n", r"unknown key 'ad.pre_opt' \(known: preopt\)"),
    ("[toolchain]\nld = 'ld.lld-22'\n", r"unknown key 'toolchain.ld'"),
    ("ad = 1\n", r"'ad' must be a table"),
    ("[ad]\npreopt = 'no'\n", r"'ad.preopt' must be a bool"),
    ("[debug]\ndump_dir = 3\n", r"'debug.dump_dir' must be a str"),
    ("[rules]\nfiles = 'a.toml'\n", r"'rules.files' must be a list of strings"),
    ("[rules]\nfiles = [1, 2]\n", r"'rules.files' must be a list of strings"),
], ids=lambda v: v if len(v) < 20 else None)
def test_errors_name_the_file_and_key(tmp_path, text, message):
    path = write(tmp_path / "enzyme.toml", text)
    with pytest.raises(UserError) as e:
        load_config(str(tmp_path))
    assert e.value.message.startswith(f"{path}: ")
    assert re.search(message, e.value.message), e.value.message


def test_config_errors_from_the_command_line(tmp_path):
    path = write(tmp_path / "enzyme.toml", "[ad]\nbogus = true\n")
    write(tmp_path / "x.c", "int main(void) { return 0; }\n")
    r = run(["enzyme-cc", "-c", "x.c"], cwd=tmp_path, check=False)
    assert r.returncode == 1
    assert r.stderr == f"enzyme-cc: error: {path}: unknown key 'ad.bogus' (known: preopt)\n"


# ---- the documented default file ------------------------------------------------------------

DEFAULT = os.path.join(ROOT, "enzyme.toml")
KEY_LINE = re.compile(r'^# ("?[\w+]+"?) = (.+)$')


def _documented(text):
    """{table: {key: value as written}} of the commented-out `# key = value` lines."""
    table, out = None, {}
    for line in text.splitlines():
        m = re.match(r"^\[(\w+)\]$", line)
        if m:
            table = m.group(1)
            out[table] = {}
        m = KEY_LINE.match(line)
        if m and table:
            out[table][m.group(1).strip('"')] = m.group(2)
    return out


def test_default_file_documents_every_key():
    with open(DEFAULT) as f:
        text = f.read()
    documented = _documented(text)
    assert {t: sorted(keys) for t, keys in documented.items()} == \
        {t: sorted(keys) for t, keys in SCHEMA.items()}


def test_default_file_changes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("ENZYME_CC_CONFIG", DEFAULT)
    cfg = load_config()
    assert cfg.path == DEFAULT
    assert cfg == Config(path=DEFAULT)
    # uncommented, every key is valid and holds the built-in default
    with open(DEFAULT) as f:
        text = f.read()
    uncommented = write(tmp_path / "enzyme.toml", re.sub(r"(?m)^# (\"?[\w+]+\"? = )", r"\1", text))
    monkeypatch.setenv("ENZYME_CC_CONFIG", str(uncommented))
    cfg = load_config()
    assert (cfg.preopt, cfg.dump_dir, cfg.verbose, cfg.rule_files) == (True, "", False, [])
    assert cfg.toolchain == toolchain.DEFAULTS


# ---- what the keys do -----------------------------------------------------------------------

NORM_PAIR = re.compile(r"=\s*(-?\d+\.\d+) \(exact\s+(-?\d+\.\d+)\)")


def _norm_gradient_ok(out):
    pairs = [(float(a), float(b)) for a, b in NORM_PAIR.findall(out)]
    assert len(pairs) == 4, out
    assert all(abs(a - b) < 2e-6 for a, b in pairs), out


def test_preopt_false_and_dump_dir(tmp_path):
    """[ad] preopt = false differentiates unoptimized IR: the gradient is the same; dump_dir
    (relative to the file, whatever the working directory) holds the IR before and after AD."""
    counts = {}
    for preopt in ("true", "false"):
        proj = tmp_path / preopt
        write(proj / "enzyme.toml", f'[ad]\npreopt = {preopt}\n[debug]\ndump_dir = "ir"\n')
        src = proj / "src"
        src.mkdir()
        shutil.copy(os.path.join(ROOT, "examples", "c", "norm.c"), src)
        run(["enzyme-cc", "-O2", "norm.c", "-lm", "-o", "norm"], cwd=src)
        _norm_gradient_ok(run(["./norm"], cwd=src).stdout)
        before = (proj / "ir" / "before-ad.ll").read_text()
        after = (proj / "ir" / "after-ad.ll").read_text()
        assert "__enzyme_autodiff" in before and len(after) > len(before)
        assert not (src / "ir").exists()
        counts[preopt] = before.count(" = alloca ")
    assert counts["false"] > counts["true"]


def test_toolchain_paths(tmp_path, monkeypatch):
    write(tmp_path / "x.c", "int main(void) { return 0; }\n")
    # a relative path is relative to enzyme.toml: a wrapper script around clang-22
    tools = tmp_path / "tools"
    write(tools / "myclang", '#!/bin/sh\necho "myclang ran" >&2\nexec clang-22 "$@"\n').chmod(0o755)
    write(tmp_path / "enzyme.toml", '[toolchain]\nclang = "tools/myclang"\n')
    (tmp_path / "sub").mkdir()
    r = run(["enzyme-cc", "-c", "../x.c", "-o", "x.o"], cwd=tmp_path / "sub")
    assert "myclang ran" in r.stderr
    # a tool that is not there: the error names it and says how to install LLVM 22
    write(tmp_path / "enzyme.toml", '[toolchain]\nclang = "/opt/none/clang-22"\n')
    r = run(["enzyme-cc", "-c", "x.c"], cwd=tmp_path, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("enzyme-cc: error: cannot find '/opt/none/clang-22' (clang); install")
    # the environment wins over the file
    r = run(["enzyme-cc", "-c", "x.c"], cwd=tmp_path, env=dict(os.environ, ENZYME_CC_CLANG="clang-22"))
    assert r.returncode == 0


def test_rule_files(tmp_path):
    """[rules] files: a derivative rule for a function whose object has no bitcode."""
    write(tmp_path / "rules" / "cube.toml", '[mycube]\nargs = ["x"]\npartials = ["3*x*x"]\n')
    write(tmp_path / "enzyme.toml", '[rules]\nfiles = ["rules/cube.toml"]\n')
    write(tmp_path / "cube.c", "double mycube(double x) { return x * x * x; }\n")
    write(tmp_path / "main.c", '#include <stdio.h>\ndouble mycube(double);\n'
          'double f(double x) { return mycube(x) + x; }\ndouble __enzyme_autodiff(void *, double);\n'
          'int main(void) { printf("%.6f\\n", __enzyme_autodiff((void *)f, 2.0)); }\n')
    run(["gcc", "-O2", "-c", "cube.c"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "main.c", "cube.o", "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "13.000000\n"
