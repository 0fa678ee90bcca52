"""Reading `ar` archives (regular and thin, GNU and BSD flavours); pyelftools does not read them.

Members are kept in file order and identified by the offset of their header, since an archive may
hold several members of the same name (`ar q` of two `util.o` from different directories).
"""
import os
import struct
from dataclasses import dataclass, field

from enzyme_cc.errors import UserError

from .elf import is_bitcode, is_elf, object_symbols

ARCH, THIN = b'!<arch>\n', b'!<thin>\n'
HEADER = 60   # name[16] date[12] uid[6] gid[6] mode[8] size[10] fmag[2]
GNU_SYMTABS = {'/': 4, '/SYM64/': 8}                                    # name -> offset width
BSD_SYMTABS = {'__.SYMDEF': 4, '__.SYMDEF SORTED': 4, '__.SYMDEF_64': 8, '__.SYMDEF_64 SORTED': 8}


@dataclass
class Member:
    name: str
    offset: int   # offset of the member's header in the archive: its identity
    data: bytes


@dataclass
class Archive:
    path: str
    members: list[Member] = field(default_factory=list)
    symbol_index: dict[str, list[int]] = field(default_factory=dict)   # symbol -> member indices


def is_archive(path) -> bool:
    try:
        with open(path, 'rb') as f:
            return f.read(8) in (ARCH, THIN)
    except OSError:
        return False


def read_archive(path: str) -> Archive:
    path = os.fspath(path)
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise UserError(f'{path}: {e.strerror}') from None
    try:
        return _parse(path, data)
    except (ValueError, IndexError, struct.error) as e:
        raise UserError(f'{path}: corrupt archive ({e})') from None


def _parse(path: str, data: bytes) -> Archive:
    thin = data[:8] == THIN
    if not thin and data[:8] != ARCH:
        raise ValueError('no archive magic')
    archive, symtab, longnames, pos = Archive(path), None, b'', 8
    while pos < len(data):
        if data[pos:pos + 1] == b'\n':          # padding to an even offset
            pos += 1
            continue
        header = data[pos:pos + HEADER]
        if len(header) < HEADER or header[58:60] != b'`\n':
            raise ValueError(f'bad member header at byte {pos}')
        raw, size, body = header[:16].decode('latin-1').rstrip(' '), int(header[48:58]), pos + HEADER
        if size < 0:
            raise ValueError(f'negative member size at byte {pos}')
        special = raw in GNU_SYMTABS or raw == '//' or raw.startswith('__.SYMDEF')
        if raw.startswith('#1/'):               # BSD: the name follows the header, counted in size
            n = int(raw[3:])
            if not 0 <= n <= size:
                raise ValueError(f'bad BSD name length at byte {pos}')
            raw, body, size = data[body:body + n].rstrip(b'\0').decode('latin-1'), body + n, size - n
            special = raw in BSD_SYMTABS
        # Thin archives store only the symbol table and the long-name table inline.
        stored = not thin or special
        if stored and body + size > len(data):
            raise ValueError(f'member at byte {pos} extends past the end of the file')
        content = data[body:body + size] if stored else None
        if raw == '//':
            longnames = content
        elif raw in GNU_SYMTABS or raw in BSD_SYMTABS:
            symtab = (raw, content)
        else:
            name = _member_name(raw, longnames)
            if thin:
                content = _read_thin_member(path, name)
            archive.members.append(Member(name, pos, content))
        pos = body + size if stored else body
    archive.symbol_index = _index(archive, symtab)
    return archive


def _member_name(raw: str, longnames: bytes) -> str:
    if raw.startswith('/') and raw[1:].isdigit():    # GNU: offset into the `//` table
        start = int(raw[1:])
        if start >= len(longnames):
            raise ValueError(f'long name offset {start} out of range')
        end = longnames.find(b'\n', start)
        raw = longnames[start:end if end >= 0 else len(longnames)].decode('latin-1')
    return raw[:-1] if raw.endswith('/') else raw   # GNU terminates names with '/'


def _read_thin_member(path: str, name: str) -> bytes:
    # Thin members are paths relative to the archive's directory (or absolute).
    member_path = os.path.join(os.path.dirname(path), name)
    try:
        with open(member_path, 'rb') as f:
            return f.read()
    except OSError as e:
        raise UserError(f'{path}: thin archive member {member_path}: {e.strerror}') from None


def _index(archive: Archive, symtab) -> dict[str, list[int]]:
    by_offset = {m.offset: i for i, m in enumerate(archive.members)}
    entries = _symtab_entries(*symtab) if symtab else []
    # No table, or an empty one while there are members (Debian's GNU ar writes an empty index
    # when its LLVM plugin fails on bitcode): compute the index from the members themselves.
    if not entries and archive.members:
        return _computed_index(archive)
    index: dict[str, list[int]] = {}
    for sym, offset in entries:
        if offset not in by_offset:
            raise ValueError(f'symbol table entry {sym!r} points to no member (offset {offset})')
        index.setdefault(sym, []).append(by_offset[offset])
    return index


def _symtab_entries(kind: str, table: bytes) -> list[tuple[str, int]]:
    """(symbol, member header offset) pairs of a GNU or BSD archive symbol table."""
    if kind in GNU_SYMTABS:   # big-endian count, count offsets, then NUL-terminated names
        w = GNU_SYMTABS[kind]
        fmt = '>Q' if w == 8 else '>I'
        (count,) = struct.unpack_from(fmt, table)
        offsets = struct.unpack_from(f'>{count}{fmt[1]}', table, w)
        names = table[w * (count + 1):].split(b'\0')
        if len(names) < count:
            raise ValueError('symbol table truncated')
        return [(names[i].decode('latin-1'), offsets[i]) for i in range(count)]
    # BSD (little-endian): byte size of a (name offset, member offset) array, the array, then a
    # byte size of the string table and the strings.
    w = BSD_SYMTABS[kind]
    fmt = '<Q' if w == 8 else '<I'
    (nbytes,) = struct.unpack_from(fmt, table)
    pairs = struct.unpack_from(f'<{nbytes // w}{fmt[1]}', table, w)
    strings = table[2 * w + nbytes:]
    result = []
    for strx, offset in zip(pairs[::2], pairs[1::2]):
        end = strings.find(b'\0', strx)
        result.append((strings[strx:end if end >= 0 else len(strings)].decode('latin-1'), offset))
    return result


def _computed_index(archive: Archive) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, member in enumerate(archive.members):
        if is_elf(member.data) or is_bitcode(member.data):   # other members (data files) define nothing
            defined, _ = object_symbols(member.data, f'{archive.path}({member.name})')
            for sym in defined:
                index.setdefault(sym, []).append(i)
    return index
