"""Entry points enzyme-cc, enzyme-c++, enzyme-fc: drop-in clang-22 / clang++-22 / flang-new-22.

Every compile of a build starts one of these, so this path imports only what a compile needs
(the link step and the AD core load on demand): Python's start-up is most of our overhead
over clang's (docs/performance.md "Link time")."""
from __future__ import annotations

import os
import sys

from . import toolchain
from .config import load_config
from .driver_args import classify
from .errors import UserError

PROG = {"clang": "enzyme-cc", "clang++": "enzyme-c++", "flang": "enzyme-fc"}


def toolchain_file() -> str:
    from importlib import resources
    return str(resources.files("enzyme_cc.data").joinpath("enzyme-toolchain.cmake"))


def cargo_config() -> str:
    """A `.cargo/config.toml` that makes cargo link through enzyme-cc: rustc then hands the
    link step the crates' bitcode (and the standard library's), where the markers are."""
    import shutil
    exe = shutil.which("enzyme-cc") or os.path.join(os.path.dirname(sys.executable), "enzyme-cc")
    return ("# .cargo/config.toml: link through enzyme-cc, which differentiates at link time\n"
            "[target.x86_64-unknown-linux-gnu]\n"
            f"linker = \"{os.path.abspath(exe)}\"\n"
            "rustflags = [\"-Clinker-plugin-lto\"]\n"
            "# doc-tests (cargo test) are linked by rustdoc, which takes its own flags\n"
            "[build]\n"
            "rustdocflags = [\"-Clinker-plugin-lto\"]\n")


def run_driver(driver: str, argv: list[str]) -> int:
    if argv[:1] == ["--print-toolchain-file"]:
        print(toolchain_file())
        return 0
    if argv[:1] == ["--print-cargo-config"]:
        print(cargo_config())
        return 0
    cfg = load_config()
    toolchain.set_overrides(cfg.toolchain)
    inv = classify(argv, driver)
    # Errors clang reports before compiling anything, in its own words: `-c a.c b.c -o x.o`
    # (one -o, several outputs) and sources that do not exist.
    if inv.action == "passthrough" or inv.action == "compile" and (
            inv.output and len(inv.sources) > 1
            or any(s.path != "-" and not os.path.exists(s.path) for s in inv.sources)):
        from .compile import run
        from .plugin import plugin_args
        return run([toolchain.tool(driver)] + toolchain.include_args(inv.sources) +
                   plugin_args(inv.sources) + inv.args)
    if inv.action == "compile":
        from .compile import compile_source, default_object_name
        unused = inv.link_options()     # clang's "argument unused" warning, once
        for src in inv.sources:     # every language, as the link step does (.ll/.bc too)
            out = inv.output if inv.output else default_object_name(src.path)
            rc = compile_source(driver, inv, src, out, unused)
            unused = []
            if rc != 0:
                return rc
        return 0
    from enzyme_cc.lto.link import link
    return link(driver, inv, cfg)


def _main(driver: str, argv: list[str]) -> int:
    try:
        return run_driver(driver, argv)
    except UserError as e:
        if os.environ.get("ENZYME_CC_DEBUG") == "1":
            import traceback
            traceback.print_exc()
        for message in [e.message, *e.more]:
            print(f"{PROG[driver]}: error: {message}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as e:      # a bug of ours: say so briefly, trace only on request
        if os.environ.get("ENZYME_CC_DEBUG") == "1":
            raise
        print(f"{PROG[driver]}: error: internal error: {type(e).__name__}: {e} (set "
              "ENZYME_CC_DEBUG=1 for a traceback, and please report it)", file=sys.stderr)
        return 70


def enzyme_cc():
    sys.exit(_main("clang", sys.argv[1:]))


def enzyme_cxx():
    sys.exit(_main("clang++", sys.argv[1:]))


def enzyme_fc():
    sys.exit(_main("flang", sys.argv[1:]))


if __name__ == "__main__":      # the compiled launcher's way in: python -m enzyme_cc.cli DRIVER ARGS
    sys.exit(_main(sys.argv[1], sys.argv[2:]))
