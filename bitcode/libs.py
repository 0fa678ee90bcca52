"""Finding `-lNAME` like GNU ld. Kept apart from select.py so that the link step can look for
marker calls in its inputs without loading pyelftools or llvmlite."""
import os
import re

DEFAULT_LIB_DIRS = ('/usr/local/lib', '/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu',
                    '/usr/lib', '/lib')


_SCRIPT_LIST = re.compile(rb'\b(?:GROUP|INPUT)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)')


def script_inputs(path: str, data: bytes, lib_dirs: list[str], static: bool = False) -> list:
    """The files a linker script's GROUP(...) and INPUT(...) name (`libm.so` on many systems,
    or a library made of archives), resolved as GNU ld does: `-lNAME` on the search path, a
    path as it is, a bare name beside the script, in the current directory, then on the search
    path. AS_NEEDED(...) members are listed too; names not found are left out (the linker
    reports them)."""
    text = re.sub(rb'/\*.*?\*/', b' ', data, flags=re.S)
    out = []
    for body in _SCRIPT_LIST.findall(text):
        for tok in re.split(rb'[\s,()]+', body):
            name = tok.decode(errors='replace')
            if not name or name == 'AS_NEEDED':
                continue
            if name.startswith('-l'):
                found = find_library(name[2:], lib_dirs, static)
            elif os.path.isabs(name):
                found = name if os.path.isfile(name) else None
            else:
                found = next((p for p in (os.path.join(os.path.dirname(path), name), name,
                                          *(os.path.join(d, name) for d in lib_dirs))
                              if os.path.isfile(p)), None)
            if found:
                out.append(found)
    return out


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
