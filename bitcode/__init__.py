"""Bitcode extraction from link inputs: ELF objects, bare bitcode files and `ar` archives, and the
selection of archive members a linker would pull in (installed as `enzyme_cc.bitcode`)."""
from .archive import Archive, Member, is_archive, read_archive
from .elf import SECTION, bitcode_modules, object_symbols
from .select import LinkPlan, find_library, plan_link

__all__ = ['SECTION', 'bitcode_modules', 'object_symbols', 'Member', 'Archive', 'read_archive',
           'is_archive', 'LinkPlan', 'plan_link', 'find_library']
