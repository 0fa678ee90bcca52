"""Link-time selection: which objects and archive members a linker would take, and their bitcode."""
import fnmatch
import os
import re
from dataclasses import dataclass, field

from enzyme_cc.errors import UserError

from .archive import ARCH, THIN, Archive, read_archive
from .elf import bitcode_modules, is_bitcode, is_elf, is_shared, symbols
from .libs import DEFAULT_LIB_DIRS, find_library, script_inputs  # noqa: F401 (API)

_SCRIPT = re.compile(rb'\s*(/\*.*?\*/\s*)*(INPUT|GROUP|OUTPUT_FORMAT|OUTPUT_ARCH|OUTPUT|SEARCH_DIR'
                     rb'|SECTIONS|MEMORY|ENTRY|VERSION|INCLUDE|PHDRS|EXTERN|STARTUP|TARGET|INSERT'
                     rb'|PROVIDE|ASSERT|NOCROSSREFS)\b', re.S)


@dataclass
class LinkPlan:
    modules: list[tuple[str, bytes]] = field(default_factory=list)   # (origin, bitcode), link order
    bitcode_objects: set[str] = field(default_factory=set)           # command-line objects taken
    native_only_objects: list[str] = field(default_factory=list)     # command-line objects kept
    pulled_members: dict[str, list[str]] = field(default_factory=dict)
    whole_archives: dict[int, Archive] = field(default_factory=dict)  # input position -> archive
    missing_bitcode: dict[str, str] = field(default_factory=dict)    # symbol -> origin
    native_refs: set[str] = field(default_factory=set)   # symbols objects without bitcode use
    native_code: set[str] = field(default_factory=set)   # origins with code besides bitcode
    shared_libraries: list[str] = field(default_factory=list)   # ELF ones, command-line order
    # symbol -> an archive defining it that the linker read before anything needed the symbol
    passed_archives: dict[str, str] = field(default_factory=dict)


# Rust's compiler_builtins: linked as its native code, never through LTO (as rustc does: its
# intrinsics must stay out of the optimized module, and its hidden helpers are not reachable
# from another object)
_NATIVE_ONLY = re.compile(r"libcompiler_builtins-[0-9a-f]+\.rlib\(")


def _read(path: str) -> bytes:
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError as e:
        raise UserError(f'{path}: {e.strerror}') from None


def _passthrough(path: str, data: bytes) -> bool:
    """Shared libraries and linker scripts go to the system linker unread."""
    base = os.path.basename(path)
    if is_elf(data):
        return is_shared(data)
    if is_bitcode(data):
        return False
    text = b'\0' not in data[:4096]
    return text and (fnmatch.fnmatch(base, '*.so') or fnmatch.fnmatch(base, '*.so.*')
                     or base.endswith(('.ld', '.lds')) or bool(_SCRIPT.match(data)))


def plan_link(inputs: list[tuple[str, str]], lib_dirs: list[str], static: bool = False,
              modes=None, sequential: bool = False) -> LinkPlan:
    """Select objects and archive members as the system linker will, and collect their bitcode.

    sequential (GNU ld, gold): the inputs are read in command-line order, and an archive gives
    the members that define what is undefined when the linker reaches it (scanned again until
    it gives none), never a symbol only a later input needs. Otherwise lld's rule: a member is
    taken iff it defines a symbol that is undefined (and not weak-undefined) in what has been
    taken so far, whatever the order of archives on the command line; when several archives
    define a symbol the first one on the command line wins. Every member of an archive inside
    --whole-archive is taken. Shared libraries are not read, so they do not satisfy references
    here. modes: per input, (-Bstatic in effect, inside --whole-archive), as the linker options
    before it leave them.
    """
    plan = LinkPlan()
    order = []              # ('obj', path, data) | ('ar', Archive), command-line order
    seen_archives = set()

    def add(k, path, b_static, whole, depth=0):
        data = _read(path)
        if data[:8] in (ARCH, THIN):
            real = os.path.realpath(path)
            if whole and depth == 0:
                plan.whole_archives[k] = read_archive(path)
                order.extend(('obj', f'{path}({m.name})', m.data)
                             for m in plan.whole_archives[k].members)
            elif real not in seen_archives:   # `-lfoo -lbar -lfoo`: one archive, read once
                seen_archives.add(real)
                order.append(('ar', read_archive(path)))
        elif not _passthrough(path, data):
            order.append(('obj', path, data))
        elif is_elf(data):
            plan.shared_libraries.append(path)
        elif depth < 8 and _SCRIPT.match(data):    # GROUP(...)/INPUT(...): what it names
            for named in script_inputs(path, data, lib_dirs, static or b_static):
                add(k, named, b_static, whole, depth + 1)

    for k, (kind, value) in enumerate(inputs):
        b_static, whole = modes[k] if modes else (False, False)
        path = value if kind == 'file' else find_library(value, lib_dirs, static or b_static)
        if path is not None:    # (else the system linker reports a missing library)
            add(k, path, b_static, whole)

    defined, undefined = set(), set()    # undefined: strong references not yet defined

    def take(origin: str, data: bytes) -> list[bytes]:
        d, u, weak = symbols(data, origin)
        defined.update(d)
        undefined.difference_update(d)
        new = sorted(u - weak - defined - undefined)
        undefined.update(new)
        queue.extend(new)
        modules = [] if _NATIVE_ONLY.match(os.path.basename(origin)) else \
            bitcode_modules(data, origin)
        if modules and is_elf(data):
            plan.native_code.add(origin)
        if not modules:
            for sym in sorted(d):
                plan.missing_bitcode.setdefault(sym, origin)
            plan.native_refs |= u
        return modules

    queue = []              # undefined symbols still to look up in the archives
    bitcode = {}            # command-line object position in order -> bitcode modules
    taken = {}              # (position in order, member index) -> bitcode modules
    if sequential:
        for i, item in enumerate(order):
            if item[0] == 'obj':
                bitcode[i] = take(item[1], item[2])
                continue
            archive, more = item[1], True
            while more:         # (a member taken may need another of the same archive)
                more = False
                for sym, members in archive.symbol_index.items():
                    if sym in undefined and (i, members[0]) not in taken:
                        member = archive.members[members[0]]
                        taken[i, members[0]] = take(f'{archive.path}({member.name})',
                                                    member.data)
                        more = True
        for i, item in enumerate(order):
            if item[0] == 'ar':
                for sym in item[1].symbol_index:
                    if sym in undefined:
                        plan.passed_archives.setdefault(sym, item[1].path)
    else:
        for i, item in enumerate(order):
            if item[0] == 'obj':
                bitcode[i] = take(item[1], item[2])
        queue = sorted(undefined, reverse=True)   # restart from what is still undefined
        providers = {}      # symbol -> (position in order, member index); first archive wins
        for i, item in enumerate(order):
            if item[0] == 'ar':
                for sym, members in item[1].symbol_index.items():
                    providers.setdefault(sym, (i, members[0]))
        while queue:
            sym = queue.pop()
            key = providers.get(sym)
            if sym in undefined and key is not None and key not in taken:
                archive = order[key[0]][1]
                member = archive.members[key[1]]
                taken[key] = take(f'{archive.path}({member.name})', member.data)

    for i, item in enumerate(order):
        if item[0] == 'obj':
            path = item[1]
            plan.modules += [(path, b) for b in bitcode[i]]
            if bitcode[i]:
                plan.bitcode_objects.add(path)
            else:
                plan.native_only_objects.append(path)
            continue
        archive = item[1]
        for m in sorted(m for (j, m) in taken if j == i):
            member = archive.members[m]
            plan.pulled_members.setdefault(archive.path, []).append(member.name)
            plan.modules += [(f'{archive.path}({member.name})', b) for b in taken[i, m]]
    return plan


def shared_definer(plan: LinkPlan, name: str) -> str | None:
    """The first shared library on the command line whose symbols define `name`, if any."""
    for path in plan.shared_libraries:
        try:
            if name in symbols(_read(path), path)[0]:
                return path
        except UserError:
            continue
    return None
