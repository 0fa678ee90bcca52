"""Bitcode and symbols of one input file: an ELF object (pyelftools) or a bare bitcode file."""
import io

from elftools.elf.elffile import ELFFile

from enzyme_cc.errors import UserError

from .bitstream import bitcode_symbols, is_bitcode, split_modules

SECTION = '.enzyme.bc'
# Ours first; then clang's -fembed-bitcode section and the fat-LTO section (flang, clang).
BITCODE_SECTIONS = (SECTION, '.llvmbc', '.llvm.lto')


def is_elf(data: bytes) -> bool:
    return data[:4] == b'\x7fELF'


def is_shared(data: bytes) -> bool:
    """ELF shared object (ET_DYN): e_type at offset 16, in the file's byte order (EI_DATA)."""
    order = 'big' if data[5:6] == b'\x02' else 'little'
    return is_elf(data) and int.from_bytes(data[16:18], order) == 3


def _open(data: bytes, name: str) -> ELFFile:
    try:
        return ELFFile(io.BytesIO(data))
    except Exception as e:  # pyelftools raises assorted exception types on malformed input
        raise UserError(f'{name}: corrupt ELF object ({e})') from None


def _not_object(name: str) -> UserError:
    return UserError(f'{name}: not an object file or bitcode (expected ELF, LLVM bitcode or an archive)')


def bitcode_modules(data: bytes, name: str) -> list[bytes]:
    """All bitcode modules of an input file's bytes, in section order."""
    if is_bitcode(data):
        return split_modules(data, name)
    if not is_elf(data):
        raise _not_object(name)
    elf = _open(data, name)
    modules = []
    try:
        for section in elf.iter_sections():
            if section.name in BITCODE_SECTIONS:
                start, size = section['sh_offset'], section['sh_size']
                if start + size > len(data):
                    raise ValueError(f'section {section.name} extends past the end of the file')
                modules += split_modules(data[start:start + size], f'{name}: section {section.name}')
    except UserError:
        raise
    except Exception as e:
        raise UserError(f'{name}: corrupt ELF object ({e})') from None
    return modules


def symbols(data: bytes, name: str) -> tuple[set[str], set[str], set[str]]:
    """(defined, undefined, weak undefined) global and weak symbols; undefined includes the weak ones.

    The weak undefined ones are kept apart because, as in lld and GNU ld, they do not pull archive
    members into the link.
    """
    if is_bitcode(data):
        defined, undefined, weak = set(), set(), set()
        for module in split_modules(data, name):
            d, u, w = bitcode_symbols(module, name)
            defined |= d
            undefined |= u
            weak |= w
        return defined, undefined - defined, weak - defined
    if not is_elf(data):
        raise _not_object(name)
    elf = _open(data, name)
    defined, undefined, weak = set(), set(), set()
    try:
        tables = [s for s in elf.iter_sections() if s['sh_type'] == 'SHT_SYMTAB']
        tables = tables or [s for s in elf.iter_sections() if s['sh_type'] == 'SHT_DYNSYM']
        for table in tables:
            for sym in table.iter_symbols():
                bind = sym['st_info']['bind']
                if not sym.name or bind == 'STB_LOCAL':
                    continue
                if sym['st_shndx'] != 'SHN_UNDEF':
                    defined.add(sym.name)
                elif bind == 'STB_WEAK':
                    weak.add(sym.name)
                else:
                    undefined.add(sym.name)
    except Exception as e:
        raise UserError(f'{name}: corrupt ELF object ({e})') from None
    return defined, (undefined | weak) - defined, weak - defined


def object_symbols(data: bytes, name: str) -> tuple[set[str], set[str]]:
    """(defined, undefined) global/weak symbol names of an ELF object or a bare bitcode file."""
    defined, undefined, _ = symbols(data, name)
    return defined, undefined
