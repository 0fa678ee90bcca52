"""enzyme.toml: found via ENZYME_CC_CONFIG, else the nearest one upward from the working
directory, else built-in defaults. Unknown keys and invalid TOML are errors naming file and key."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import tomli

from .errors import UserError

SCHEMA = {
    "toolchain": {"clang": str, "clang++": str, "flang": str, "objcopy": str, "ar": str,
                  "ranlib": str},
    "ad": {"preopt": bool},
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
        try:
            with open(path, "rb") as f:
                data = tomli.load(f)
        except tomli.TOMLDecodeError as e:
            raise UserError(f"{path}: invalid TOML: {e}")
        except OSError as e:
            raise UserError(f"{path}: {e.strerror}")
        for table, values in data.items():
            if table not in SCHEMA or not isinstance(values, dict):
                raise UserError(f"{path}: unknown key '{table}' (known: {', '.join(SCHEMA)})")
            for key, val in values.items():
                if key not in SCHEMA[table]:
                    raise UserError(f"{path}: unknown key '{table}.{key}' (known: "
                                    f"{', '.join(SCHEMA[table])})")
                if not isinstance(val, SCHEMA[table][key]):
                    raise UserError(f"{path}: '{table}.{key}' must be a "
                                    f"{SCHEMA[table][key].__name__}")
        cfg.toolchain = dict(data.get("toolchain", {}))
        cfg.preopt = data.get("ad", {}).get("preopt", True)
        dbg = data.get("debug", {})
        cfg.dump_dir = dbg.get("dump_dir", "")
        cfg.verbose = dbg.get("verbose", False)
        base = os.path.dirname(path)
        cfg.rule_files = [os.path.join(base, f) for f in data.get("rules", {}).get("files", [])]
    env = os.environ.get("ENZYME_CC_PREOPT")
    if env is not None:
        cfg.preopt = env not in ("0", "false", "no", "off")
    if os.environ.get("ENZYME_CC_DUMP_DIR"):
        cfg.dump_dir = os.environ["ENZYME_CC_DUMP_DIR"]
    return cfg
