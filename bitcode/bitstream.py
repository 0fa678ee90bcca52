"""Bare LLVM bitcode: splitting concatenated modules, and reading a module's symbols.

`ld -r` concatenates the bitcode sections of its inputs, so one section can hold several modules.
Rather than guessing split points at occurrences of the magic (which may also occur inside a
module's data), we walk the bitstream's top-level blocks: at top level the abbreviation width is 2
and every entry is an ENTER_SUBBLOCK that carries its own length in 32-bit words, so a module can
be skipped exactly without decoding it. A module ends where the next top-level entry is not a
block: the magic of the next module, the wrapper header, zero padding, or the end of the data.
"""
import re
import struct

import llvmlite.binding as llvm

from enzyme_cc.errors import UserError

MAGIC = b'BC\xc0\xde'
WRAPPER = b'\xde\xc0\x17\x0b'   # 0x0B17C0DE little-endian: Darwin-style wrapper header
ENTER_SUBBLOCK = 1


def is_bitcode(data: bytes) -> bool:
    return data[:4] in (MAGIC, WRAPPER)


def _bits(data: bytes, bitpos: int, n: int) -> int:
    i = bitpos >> 3
    word = int.from_bytes(data[i:i + (n >> 3) + 2], 'little')
    return (word >> (bitpos & 7)) & ((1 << n) - 1)


def _vbr(data: bytes, bitpos: int, n: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        chunk = _bits(data, bitpos, n)
        bitpos += n
        value |= (chunk & ((1 << (n - 1)) - 1)) << shift
        if not chunk >> (n - 1):
            return value, bitpos
        shift += n - 1
        if shift > 64:
            raise ValueError('bad VBR')


def _module_end(data: bytes, start: int) -> int:
    """Byte offset just past the module whose magic is at `start`."""
    base, end = start * 8, len(data) * 8
    pos = base + 32                                    # after the magic
    while pos + 32 <= end and _bits(data, pos, 2) == ENTER_SUBBLOCK:
        _, pos = _vbr(data, pos + 2, 8)                # block id
        _, pos = _vbr(data, pos, 4)                    # abbreviation width inside the block
        pos = base + ((pos - base + 31) & ~31)         # alignment is relative to the stream start
        if pos + 32 > end:
            raise ValueError('truncated block header')
        pos += 32 + 32 * _bits(data, pos, 32)          # length word, then the block body
    if pos > end:
        raise ValueError('truncated block')
    return pos // 8


def split_modules(data: bytes, name: str) -> list[bytes]:
    """The bitcode modules stored back to back in `data` (zero padding between them is skipped)."""
    modules, pos = [], 0
    try:
        while pos < len(data):
            head = data[pos:pos + 4]
            if data[pos] == 0:                          # alignment padding between modules
                pos += 1
            elif head == WRAPPER:                       # magic, version, offset, size, cputype
                offset, size = struct.unpack_from('<II', data, pos + 8)
                inner = data[pos + offset:pos + offset + size]
                if len(inner) != size or inner[:4] != MAGIC:
                    raise ValueError('bad wrapper header')
                modules.append(inner)
                pos += offset + size
            elif head == MAGIC:
                end = _module_end(data, pos)
                modules.append(data[pos:end])
                pos = end
            else:
                raise ValueError('no bitcode magic')
    except (ValueError, struct.error) as e:
        raise UserError(f'{name}: corrupt or truncated bitcode at byte {pos} ({e})') from None
    return modules


_LOCAL = {'internal', 'private'}


def bitcode_symbols(data: bytes, name: str) -> tuple[set[str], set[str], set[str]]:
    """(defined, undefined, weak undefined) global symbols of one bare bitcode module.

    Parsed with llvmlite in a fresh context (the global context would rename struct types for
    later parses of the same link). Aliases and ifuncs are not exposed by llvmlite's binding, so
    they are read from the module text.
    """
    try:
        module = llvm.parse_bitcode(data, llvm.create_context())
    except RuntimeError as e:
        raise UserError(f'{name}: cannot read bitcode: {str(e).strip()}') from None
    defined, undefined, weak_undefined = set(), set(), set()
    for value in [*module.functions, *module.global_variables]:
        try:
            sym, linkage = value.name, value.linkage.name
        except UnicodeDecodeError:   # llvmlite decodes names as UTF-8; skip other byte strings
            continue
        if not sym or sym.startswith('llvm.') or linkage in _LOCAL:
            continue
        if not value.is_declaration and linkage != 'available_externally':
            defined.add(sym)
        elif linkage == 'external_weak':
            weak_undefined.add(sym)
        else:
            undefined.add(sym)
    for line in str(module).splitlines():
        m = _ALIAS.match(line)
        if m and not _LOCAL & set(m.group(2).split()):
            defined.add(_unquote(m.group(1)))
    undefined -= defined
    weak_undefined -= defined
    return defined, undefined | weak_undefined, weak_undefined


# `@name = [linkage, visibility, ... keywords] alias|ifunc ...`
_ALIAS = re.compile(r'@("(?:[^"\\]|\\[0-9A-Fa-f]{2})*"|[-\w$.]+) = ((?:[a-z_]+(?:\(\w+\))? )*)(?:alias|ifunc) ')


def _unquote(sym: str) -> str:
    if sym.startswith('"'):
        return re.sub(r'\\([0-9A-Fa-f]{2})', lambda m: chr(int(m.group(1), 16)), sym[1:-1])
    return sym
