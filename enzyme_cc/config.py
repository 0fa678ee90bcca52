"""enzyme.toml: found via ENZYME_CC_CONFIG, else the nearest one upward from the working
directory, else built-in defaults. Unknown keys and invalid TOML are errors naming file and key."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import UserError

SCHEMA = {
    "toolchain": {"clang": str, "clang++": str, "flang": str, "objcopy": str, "ar": str,
                  "ranlib": str, "opt": str, "llc": str, "split": str, "extract": str, "lld": str,
                  "cxxfilt": str},
    "ad": {"preopt": bool},
    "checkpoint": {"budget_bytes": int},
    "debug": {"dump_dir": str, "verbose": bool},
    "rules": {"files": list},
}


@dataclass
class Config:
    path: str | None = None
    toolchain: dict = field(default_factory=dict)
    preopt: bool = True           # optimize before AD (the paper's pipeline); False = "Ref"
    dump_dir: str = ""            # write IR before/after AD here
    verbose: bool = False         # print each link stage with its time
    rule_files: list = field(default_factory=list)
    ckpt_budget: int = 0          # Revolve's snapshot bytes where the program sets no count


def find_config(start: str | None = None) -> str | None:
    env = os.environ.get("ENZYME_CC_CONFIG")
    if env:
        if not os.path.isfile(env):
            raise UserError(f"ENZYME_CC_CONFIG names '{env}', which is not a file")
        return env
    d = os.path.abspath(start or os.getcwd())
    while True:
        p = os.path.join(d, "enzyme.toml")
        if os.path.isfile(p):
            return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def load_config(start: str | None = None) -> Config:
    path = find_config(start)
    cfg = Config(path=path)
    if path:
        import tomli                    # only when there is a file (most compiles: none)
        try:
            with open(path, "rb") as f:
                data = tomli.load(f)
        except tomli.TOMLDecodeError as e:
            raise UserError(f"{path}: invalid TOML: {e}")
        except OSError as e:
            raise UserError(f"{path}: {e.strerror}")
        for table, values in data.items():
            if table not in SCHEMA:
                raise UserError(f"{path}: unknown key '{table}' (known: {', '.join(SCHEMA)})")
            if not isinstance(values, dict):
                raise UserError(f"{path}: '{table}' must be a table ([{table}])")
            for key, val in values.items():
                if key not in SCHEMA[table]:
                    raise UserError(f"{path}: unknown key '{table}.{key}' (known: "
                                    f"{', '.join(SCHEMA[table])})")
                want = SCHEMA[table][key]
                if not isinstance(val, want) or (want is list and not
                                                 all(isinstance(v, str) for v in val)):
                    what = "list of strings" if want is list else want.__name__
                    raise UserError(f"{path}: '{table}.{key}' must be a {what}")
        base = os.path.dirname(os.path.abspath(path))
        # relative paths in the file are relative to the file, wherever the build runs; a bare
        # name ("clang-22") is looked up on PATH
        cfg.toolchain = {k: os.path.join(base, v) if os.sep in v else v
                         for k, v in data.get("toolchain", {}).items()}
        cfg.preopt = data.get("ad", {}).get("preopt", True)
        dbg = data.get("debug", {})
        cfg.dump_dir = os.path.join(base, dbg["dump_dir"]) if dbg.get("dump_dir") else ""
        cfg.verbose = dbg.get("verbose", False)
        cfg.rule_files = [os.path.join(base, f) for f in data.get("rules", {}).get("files", [])]
        cfg.ckpt_budget = data.get("checkpoint", {}).get("budget_bytes", 0)
        if isinstance(cfg.ckpt_budget, bool) or cfg.ckpt_budget < 0:
            raise UserError(f"{path}: 'checkpoint.budget_bytes' must be a non-negative int")
    env = os.environ.get("ENZYME_CC_PREOPT")
    if env is not None:
        cfg.preopt = env not in ("0", "false", "no", "off")
    if os.environ.get("ENZYME_CC_DUMP_DIR"):
        cfg.dump_dir = os.environ["ENZYME_CC_DUMP_DIR"]
    return cfg
