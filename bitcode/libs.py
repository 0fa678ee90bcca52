"""Finding `-lNAME` like GNU ld. Kept apart from select.py so that the link step can look for
marker calls in its inputs without loading pyelftools or llvmlite."""
import os

DEFAULT_LIB_DIRS = ('/usr/local/lib', '/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu',
                    '/usr/lib', '/lib')


def find_library(name: str, lib_dirs: list[str], static: bool = False) -> str | None:
    """Resolve `-lname` like GNU ld: per directory, libNAME.so then libNAME.a; `:file` is exact."""
    if name.startswith(':'):
        candidates = [name[1:]]
    else:
        candidates = ([] if static else [f'lib{name}.so']) + [f'lib{name}.a']
    for d in [*lib_dirs, *DEFAULT_LIB_DIRS]:
        for c in candidates:
            path = os.path.join(d, c)
            if os.path.isfile(path):
                return path
    return None
