"""Finding the LLVM 22 tools the wrappers drive (clang-22, flang-new-22, llvm-objcopy-22, ...)."""
import os
import shutil

from .errors import UserError

# Debian names; the unversioned /usr/bin/llvm-* are an older LLVM and must not be used.
DEFAULTS = {
    "clang": "clang-22",
    "clang++": "clang++-22",
    "flang": "flang-new-22",
    "objcopy": "llvm-objcopy-22",
    "cxxfilt": "llvm-cxxfilt-22",       # C++ and Rust names in error messages
    "ar": "llvm-ar-22",
    "ranlib": "llvm-ranlib-22",
    "opt": "opt-22",                # the link step's pipelines and codegen (lto/optimize.py)
    "llc": "llc-22",
    "split": "llvm-split-22",
    "extract": "llvm-extract-22",   # code AD cannot reach, moved apart (lto/carve.py)
    "lld": "ld.lld-22",             # joins the codegen partitions (`-r`)
}

INSTALL_HINT = ("install LLVM 22 (Debian: `apt-get install clang-22 flang-22 lld-22 llvm-22`) "
                "or set its path under [toolchain] in enzyme.toml")

_overrides: dict[str, str] = {}


def set_overrides(paths: dict[str, str]) -> None:
    """Paths from enzyme.toml's [toolchain] table, by the keys of DEFAULTS."""
    _overrides.clear()
    _overrides.update({k: v for k, v in paths.items() if v})


def tool(name: str) -> str:
    """Absolute path of tool `name` (a key of DEFAULTS); UserError when it is not installed.
    The environment (ENZYME_CC_CLANG, ENZYME_CC_CLANGXX, ...) wins over enzyme.toml, as
    ENZYME_CC_PREOPT and ENZYME_CC_DUMP_DIR do."""
    wanted = os.environ.get(env_name(name)) or _overrides.get(name) or DEFAULTS[name]
    found = shutil.which(wanted)
    if not found:
        raise UserError(f"cannot find '{wanted}' ({name}); {INSTALL_HINT}")
    return found


def env_name(name: str) -> str:
    """ENZYME_CC_CLANG for 'clang', ENZYME_CC_CLANGXX for 'clang++'."""
    return "ENZYME_CC_" + name.upper().replace("+", "X")


def include_dir() -> str:
    """Headers shipped with enzyme-cc: <enzyme/enzyme> (Enzyme's C++ interface) and Enzyme's C
    headers."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def include_args(sources) -> list[str]:
    """`-isystem` for our headers when C-family sources are compiled (after the user's own -I,
    so a project's own enzyme/ headers win); not for preprocessed ones, where clang would warn
    that it is unused (an error under -Werror)."""
    return ["-isystem", include_dir()] if any(s.lang in ("c", "c++", "objc") and
                                               not s.preprocessed for s in sources) else []
