"""Bitcode extraction from link inputs: ELF objects, bare bitcode files and `ar` archives, and the
selection of archive members a linker would pull in (installed as `enzyme_cc.bitcode`).

The names below load their module (and with it pyelftools and llvmlite) on first use, so that a
link without marker calls, which needs only `libs`, does not pay for them."""
import importlib

_WHERE = {'SECTION': 'elf', 'bitcode_modules': 'elf', 'object_symbols': 'elf',
          'Member': 'archive', 'Archive': 'archive', 'read_archive': 'archive',
          'is_archive': 'archive', 'LinkPlan': 'select', 'plan_link': 'select',
          'find_library': 'libs'}

__all__ = list(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f'.{_WHERE[name]}', __name__), name)
