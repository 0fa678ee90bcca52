"""The import graph of enzyme_cc has no cycle: every import counts, module-level and inside
functions (a function-local import that works around a cycle at run time still ties the two
modules together for a reader). `lto/`, `rules/` and `bitcode/` are the `enzyme_cc.lto`,
`enzyme_cc.rules` and `enzyme_cc.bitcode` packages they are installed as (pyproject.toml)."""
import ast
from pathlib import Path

from enzyme_cc.ad.cfg import strongly_connected

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


def test_the_cycle_check_sees_function_local_imports():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    modules = _modules()
    name = "enzyme_cc.ad.lane_fusion"
    assert "enzyme_cc.ad.type_layout" in _imports(name, modules[name], modules)  # (in a function)
