"""The import graph of enzyme_cc has no cycle: every import counts, module-level and inside
functions (a function-local import that works around a cycle at run time still ties the two
modules together for a reader). `lto/`, `rules/` and `bitcode/` are the `enzyme_cc.lto`,
`enzyme_cc.rules` and `enzyme_cc.bitcode` packages they are installed as (pyproject.toml).
The AD core's subpackages import only the ones below them (LAYERS)."""
import ast
from pathlib import Path

from enzyme_cc.ad.structure.cfg import strongly_connected

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"enzyme_cc": "enzyme_cc", "lto": "enzyme_cc.lto", "rules": "enzyme_cc.rules",
            "bitcode": "enzyme_cc.bitcode"}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def _imports(name: str, path: Path, modules) -> set[str]:
    """The project modules `name` imports (a `from X import y` names X, and X.y when y is a
    module)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out |= {t for t in targets if t in modules and t != name}
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module."""
    return [sorted(c) for c in strongly_connected(list(graph), lambda v: sorted(graph[v]))
            if len(c) > 1]


def test_no_import_cycle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles = _cycles(graph)
    assert not cycles, "modules that import each other (directly or through others):\n" + \
        "\n".join(", ".join(c) for c in cycles)


# enzyme_cc/ad's subpackages, lowest first: each may import those before it, never one after
# (docs/architecture.md, "The AD core by concern")
LAYERS = ("structure", "tape", "analysis", "parallel", "api", "plan", "synthesis")


def _layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[2]) if parts[:2] == ["enzyme_cc", "ad"] and len(parts) > 3 \
        else None


def test_ad_subpackages_import_only_downward():
    modules = _modules()
    upward = []
    for name, path in modules.items():
        mine = _layer(name)
        for target in _imports(name, path, modules):
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports against the layers (LAYERS):\n" + "\n".join(sorted(upward))
    on_disk = {p.name for p in (ROOT / "enzyme_cc" / "ad").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert on_disk == set(LAYERS)
    assert not [p.name for p in (ROOT / "enzyme_cc" / "ad").glob("*.py")
                if p.name != "__init__.py"], "every AD module belongs to a subpackage"


def test_the_cycle_check_sees_function_local_imports(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from .type_layout import underlying\n    return underlying\n")
    modules = {"enzyme_cc.ad.m": path, "enzyme_cc.ad.type_layout": path}
    assert _imports("enzyme_cc.ad.m", path, modules) == {"enzyme_cc.ad.type_layout"}


# Packages loaded only when a link differentiates: nothing in them needs a lazy import (the
# link stages in lto/ad_pipeline.py and the command line keep theirs, for the start-up of
# compiles and of links without a marker; the Python bridge for its optional dependencies).
EAGER = ("enzyme_cc/ad", "enzyme_cc/ir", "rules", "bitcode")


def _local_project_imports(path: Path) -> list[int]:
    out = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and \
                        (node.level or (node.module or "").startswith("enzyme_cc")):
                    out.append(node.lineno)
                elif isinstance(node, ast.Import) and any(a.name.startswith("enzyme_cc")
                                                          for a in node.names):
                    out.append(node.lineno)
    return out


def test_no_function_local_imports_in_the_ad_core():
    found = [f"{path.relative_to(ROOT)}:{line}" for folder in EAGER
             for path in sorted((ROOT / folder).rglob("*.py"))
             for line in _local_project_imports(path)]
    assert not found, "import these at module level (the graph has no cycle):\n" + "\n".join(found)
