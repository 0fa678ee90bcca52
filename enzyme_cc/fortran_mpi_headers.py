"""Open MPI's Fortran headers for flang, where the installed ones were made for gfortran.

A distribution's Open MPI is built with gfortran: its `mpif.h` includes `mpif-sizeof.h`, whose
MPI_SIZEOF interfaces flang rejects ("not distinguishable"), and its `mpi.mod` is gfortran's
format. So `OMPI_FC=flang mpif90` fails on `include 'mpif.h'` and `use mpi` alike. Where an
include directory of the command holds such headers, enzyme-fc puts a directory of its own
first: `mpif.h` without the MPI_SIZEOF interfaces (its other includes still come from Open MPI's
directory) and an `mpi` module compiled by flang from it. Everything else is Open MPI's own:
the constants, the common blocks of its sentinels, and the library the program links.
MPI_SIZEOF itself is then unknown, and `use mpi_f08` is not provided (flang fails on it as
before). The directory is made once per header set and flang, in enzyme-cc's cache, where
the compiled launcher finds it too (the first compile of a set goes through Python).
"""
from __future__ import annotations

import os
import subprocess
import tempfile

from .cache import cache_root

_SIZEOF = "mpif-sizeof.h"


def with_mpi_headers(args: list[str], flang: str) -> list[str]:
    """args, with our header directory first where an include directory holds Open MPI's
    Fortran headers that flang cannot read."""
    for d in _include_dirs(args):
        if os.path.isfile(os.path.join(d, "mpif.h")) and \
                os.path.isfile(os.path.join(d, _SIZEOF)):
            shim = _shim(d, flang)
            return ["-I" + shim] + args if shim else args
    return args


def _include_dirs(args: list[str]) -> list[str]:
    out = []
    for k, a in enumerate(args):
        if a == "-I" and k + 1 < len(args):
            out.append(args[k + 1])
        elif a.startswith("-I") and len(a) > 2:
            out.append(a[2:])
    return out


def _shim(ompi: str, flang: str) -> str | None:
    """Our directory for Open MPI's headers in `ompi`, None where flang reads them as they are
    (or cannot read them even without MPI_SIZEOF)."""
    out = os.path.join(cache_root(), "fortran-mpi", _key(ompi, flang))
    verdict = os.path.join(out, "verdict")
    if os.path.isfile(verdict):
        with open(verdict) as f:
            return out if f.read().strip() == "shim" else None
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out)) as tmp:
        made = os.path.join(tmp, "dir")
        os.mkdir(made)
        use = "shim" if _make(ompi, made, flang) else "none"
        with open(os.path.join(made, "verdict"), "w") as f:
            f.write(use + "\n")
        try:                                 # atomic: parallel compiles see all or nothing
            os.rename(made, out)
        except OSError:
            pass                             # (another compile made it first: theirs is used)
    if not os.path.isfile(verdict):
        return None
    with open(verdict) as f:
        return out if f.read().strip() == "shim" else None


def _key(ompi: str, flang: str) -> str:
    """The directory's name: a hash of the headers' and flang's real paths, sizes and times.
    FNV-1a, because the compiled launcher computes the same name (launcher.c mpi_shim) to find
    the directory without starting Python."""
    real = os.path.realpath(ompi)
    text = real + "\n"
    for path in (os.path.join(real, "mpif.h"), os.path.join(real, _SIZEOF),
                 os.path.realpath(flang)):
        st = os.stat(path)
        text += f"{path}:{st.st_size}:{st.st_mtime_ns}\n"
    h = 0xcbf29ce484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def _make(ompi: str, made: str, flang: str) -> bool:
    """Writes our mpif.h and mpi.mod into `made`; False where they are not needed or do not
    help."""
    if _compiles(flang, "subroutine probe\n  include 'mpif.h'\nend subroutine\n", [ompi], made):
        return False
    with open(os.path.join(ompi, "mpif.h")) as f:
        lines = f.read().splitlines()
    kept = ["!     " + ln.strip() + "  (left out by enzyme-fc: flang rejects it)"
            if _SIZEOF in ln and ln.strip().lower().startswith("include") else ln for ln in lines]
    with open(os.path.join(made, "mpif.h"), "w") as f:
        f.write("\n".join(kept) + "\n")
    return _compiles(flang, "module mpi\n  include 'mpif.h'\nend module mpi\n", [made, ompi],
                     made, module_dir=made)


def _compiles(flang: str, source: str, dirs: list[str], work: str, module_dir=None) -> bool:
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        src = os.path.join(tmp, "probe.f90")
        with open(src, "w") as f:
            f.write(source)
        cmd = [flang] + ["-I" + d for d in dirs] + \
            (["-J", module_dir, "-c", src, "-o", os.path.join(tmp, "probe.o")] if module_dir
             else ["-fsyntax-only", src])
        try:
            r = subprocess.run(cmd, capture_output=True, cwd=tmp, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return r.returncode == 0
