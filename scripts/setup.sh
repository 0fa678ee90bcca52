#!/usr/bin/env bash
# Set up enzyme-cc on Debian bookworm (LLVM 22 from apt, a venv with the package), then run
# `demo` (the README examples) or `test` (the test suite). Idempotent; quick when already set up.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

missing=""
for tool in clang-22 clang++-22 flang-new-22 ld.lld-22 llvm-objcopy-22 llvm-ar-22 opt-22 llc-22 llvm-split-22 llvm-extract-22 cmake make ccache; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || missing="$missing libopenblas-dev"
[ -e /usr/include/eigen3/Eigen/Dense ] || missing="$missing libeigen3-dev"
[ -e /usr/lib/llvm-22/include/clang/Sema/ParsedAttr.h ] || missing="$missing libclang-22-dev"
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"     # the memory tests run under it
# OpenMP (clang-22's runtime), Open MPI 4.1 and MPFR (the truncation family's arbitrary precision)
[ -e /usr/lib/llvm-22/lib/libomp.so ] || missing="$missing libomp-22-dev"
command -v mpicc >/dev/null 2>&1 || missing="$missing libopenmpi-dev openmpi-bin"
[ -e /usr/include/mpfr.h ] || missing="$missing libmpfr-dev"
# the sanitizers' runtimes (-fsanitize=address through the link step's instrumentation)
ls /usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a >/dev/null 2>&1 || \
  missing="$missing libclang-rt-22-dev"
if [ -n "$missing" ]; then
  echo "setup: installing LLVM 22 and build tools (missing:$missing)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-22 flang-22 lld-22 llvm-22 \
    cmake make libopenblas-dev libeigen3-dev libclang-22-dev ccache valgrind \
    libomp-22-dev libopenmpi-dev openmpi-bin libmpfr-dev libclang-rt-22-dev >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
stamp=.venv/.enzyme-cc-setup
want=$(cat pyproject.toml | sha1sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing the enzyme-cc package into .venv"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
  echo "$want" > "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
# The clang plugin for Enzyme's source attributes: built once here rather than by the first
# compile (about 15 s).
.venv/bin/python -c "from enzyme_cc.plugin import plugin_path; plugin_path()"
# The compile step's fast path without Python (enzyme_cc/launcher.py) over the entry scripts;
# rebuilt when pip rewrote them or the plugin, clang or the launcher changed.
install_launcher() { .venv/bin/python -m enzyme_cc.launcher .venv/bin; }
install_launcher
# Byte code of the package, which an editable install does not write (nor Python itself where
# PYTHONDONTWRITEBYTECODE is set): a marker link compiled the AD core's sources, 0.25 s CPU.
.venv/bin/python -m compileall -q enzyme_cc lto bitcode rules stdlib_rules >/dev/null

case "${1:-demo}" in
  demo)
    cd examples/c
    enzyme-cc square.c -o "${TMPDIR:-/tmp}/enzyme-square" && "${TMPDIR:-/tmp}/enzyme-square"
    enzyme-cc -O2 norm.c -lm -o "${TMPDIR:-/tmp}/enzyme-norm" && "${TMPDIR:-/tmp}/enzyme-norm"
    ;;
  test)
    shift
    # The Python API's optional extras (CPU torch pinned: newer versions pull a CUDA build of GBs)
    extras=.venv/.enzyme-cc-extras
    if [ "$(cat "$extras" 2>/dev/null)" != "$want" ]; then
      echo "setup: installing the torch and jax extras into .venv"
      .venv/bin/pip install -q --disable-pip-version-check -e '.[test,torch,jax]'
      echo "$want" > "$extras"
      install_launcher
    fi
    # one worker per core, each test file on one worker (a file's builds share a pool)
    exec .venv/bin/python -m pytest -q -n auto --dist loadfile "$@"
    ;;
  *)
    echo "usage: scripts/setup.sh [demo|test [pytest args]]" >&2
    exit 2
    ;;
esac
