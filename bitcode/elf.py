"""Bitcode and symbols of one input file: an ELF object or a bare bitcode file. 64-bit
little-endian ELF (x86-64, AArch64, ...) is read here with struct, 25 times faster than
pyelftools (which read the symbol tables of a 400-function program's 20 objects in 0.7 s of a
link); other ELF classes, and anything this reader finds odd, go to pyelftools."""
import io
import struct

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


def _open(data: bytes, name: str):
    from elftools.elf.elffile import ELFFile        # (the fallback reader: loaded when needed)
    try:
        return ELFFile(io.BytesIO(data))
    except Exception as e:  # pyelftools raises assorted exception types on malformed input
        raise UserError(f'{name}: corrupt ELF object ({e})') from None


def _not_object(name: str) -> UserError:
    return UserError(f'{name}: not an object file or bitcode (expected ELF, LLVM bitcode or an archive)')


_SHDR = struct.Struct('<IIQQQQIIQQ')     # Elf64_Shdr
_SYM = struct.Struct('<IBBHQQ')           # Elf64_Sym
_SHT_SYMTAB, _SHT_DYNSYM = 2, 11


def _sections64(data: bytes):
    """[(name, type, offset, size, link)] of a 64-bit little-endian ELF file, or None (another
    class or byte order, extended numbering, or anything out of bounds: pyelftools decides)."""
    if data[4:6] != b'\x02\x01' or len(data) < 64:
        return None
    shoff, = struct.unpack_from('<Q', data, 0x28)
    entsize, num, strndx = struct.unpack_from('<HHH', data, 0x3A)
    if num == 0 or strndx >= num or entsize != _SHDR.size or shoff + num * entsize > len(data):
        return None
    heads = [_SHDR.unpack_from(data, shoff + k * entsize) for k in range(num)]
    names = heads[strndx]
    if names[4] + names[5] > len(data):
        return None
    strtab = data[names[4]:names[4] + names[5]]
    out = []
    for h in heads:
        if h[1] != 8 and h[4] + h[5] > len(data):          # (SHT_NOBITS has no bytes)
            return None
        end = strtab.find(b'\0', h[0])
        out.append((strtab[h[0]:end].decode('utf-8', 'replace'), h[1], h[4], h[5], h[6]))
    return out


def _symbols64(data: bytes, sections):
    """(defined, undefined, weak undefined) as symbols() from the fast reader's sections."""
    tables = [s for s in sections if s[1] == _SHT_SYMTAB] or \
        [s for s in sections if s[1] == _SHT_DYNSYM]
    defined, undefined, weak = set(), set(), set()
    for _, _, offset, size, link in tables:
        if link >= len(sections):
            return None
        names = data[sections[link][2]:sections[link][2] + sections[link][3]]
        for st_name, info, _, shndx, _, _ in _SYM.iter_unpack(data[offset:offset + size
                                                                    - size % _SYM.size]):
            bind = info >> 4
            if bind == 0 or not st_name:                    # STB_LOCAL
                continue
            sym = names[st_name:names.find(b'\0', st_name)].decode('utf-8', 'replace')
            if shndx != 0:
                defined.add(sym)
            elif bind == 2:                                 # STB_WEAK
                weak.add(sym)
            else:
                undefined.add(sym)
    return defined, (undefined | weak) - defined, weak - defined


def bitcode_modules(data: bytes, name: str) -> list[bytes]:
    """All bitcode modules of an input file's bytes, in section order."""
    if is_bitcode(data):
        return split_modules(data, name)
    if not is_elf(data):
        raise _not_object(name)
    sections = _sections64(data)
    if sections is not None:
        return [m for sec, _, start, size, _ in sections if sec in BITCODE_SECTIONS
                for m in split_modules(data[start:start + size], f'{name}: section {sec}')]
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
    sections = _sections64(data)
    fast = sections is not None and _symbols64(data, sections)
    if fast:
        return fast
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
