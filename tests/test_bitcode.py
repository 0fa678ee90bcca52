"""enzyme_cc.bitcode on real inputs built with the LLVM 22 tools, GNU ar and gcc."""
import os
import shutil
import struct
import subprocess

import llvmlite.binding as llvm
import pytest

from enzyme_cc.bitcode import (SECTION, is_archive, bitcode_modules, object_symbols, plan_link,
                               read_archive)
from enzyme_cc.errors import UserError

SOURCES = {
    'main.c': 'double a(double);\nint main(void) { return (int)a(1.0); }\n',
    'a.c': 'double b(double);\ndouble a(double x) { return 2 * b(x); }\n',
    'b.c': 'double b(double x) { return x * x; }\n',
    'unused.c': 'double unused(double x) { return x; }\n',
    # A symbol named like the bitcode magic: the string table blob then holds it 4-byte aligned.
    'magic.c': ('int weird(void) __asm__("BC\\xc0\\xde");\nint weird(void) { return 2; }\n'
                'int k(void) { return 1; }\n'),
    'syms.c': ('extern void maybe(void) __attribute__((weak));\nvoid ext(void);\n'
               'static int hidden(int x) { return x + 1; }\n'
               'int f(int x) { if (maybe) maybe(); ext(); return hidden(x); }\n'
               'int g(int x) __attribute__((alias("f")));\nint counter;\n'),
    'weakref.c': ('extern void opt(void) __attribute__((weak));\n'
                  'int main(void) { if (opt) opt(); return 0; }\n'),
    'opt.c': 'void opt(void) {}\n',
    'u1.c': 'int u1(void) { return 1; }\n',
    'u2.c': 'int u2(void) { return 2; }\n',
    'needs_u2.c': 'int u2(void);\nint main(void) { return u2(); }\n',
    'f.f90': 'subroutine sq(x, y)\n  real(8) :: x, y\n  y = x * x\nend subroutine\n',
}


def sh(*cmd, cwd=None):
    subprocess.run(cmd, check=True, cwd=cwd, capture_output=True)


def enzyme_cc(src, out):
    """Our compile step: pre-optimization bitcode, moved to .enzyme.bc."""
    sh('clang-22', '-c', '-O1', '-Xclang', '-fembed-bitcode=all', str(src), '-o', str(out))
    sh('llvm-objcopy-22', '--rename-section', f'.llvmbc={SECTION},exclude',
       '--remove-section', '.llvmcmd', str(out))
    return str(out)


@pytest.fixture(scope='session')
def objs(tmp_path_factory):
    d = tmp_path_factory.mktemp('objs')
    for name, text in SOURCES.items():
        (d / name).write_text(text)
    o = {}
    for stem in ['main', 'a', 'b', 'unused', 'magic', 'syms', 'weakref', 'opt', 'needs_u2']:
        o[stem] = enzyme_cc(d / f'{stem}.c', d / f'{stem}.o')
    for stem in ['u1', 'u2']:   # two members both named util.o, from different directories
        (d / stem).mkdir()
        o[stem] = enzyme_cc(d / f'{stem}.c', d / stem / 'util.o')
    sh('clang-22', '-c', '-Xclang', '-fembed-bitcode=all', str(d / 'b.c'), '-o', str(d / 'b_llvmbc.o'))
    sh('clang-22', '-flto', '-c', str(d / 'a.c'), '-o', str(d / 'a_bare.o'))
    sh('clang-22', '-flto', '-c', str(d / 'syms.c'), '-o', str(d / 'syms_bare.o'))
    sh('gcc', '-c', str(d / 'b.c'), '-o', str(d / 'b_gcc.o'))
    sh('flang-new-22', '-c', '-flto', '-ffat-lto-objects', str(d / 'f.f90'), '-o', str(d / 'f.o'),
       cwd=d)
    sh('ld.lld-22', '-r', o['a'], o['b'], '-o', str(d / 'ab.o'))
    sh('ld.lld-22', '-r', o['magic'], o['b'], '-o', str(d / 'magic_b.o'))
    o.update({k: str(d / f'{k}.o') for k in ['b_llvmbc', 'a_bare', 'syms_bare', 'b_gcc', 'f', 'ab',
                                              'magic_b']})
    o['dir'] = d
    return o


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def parse(module):
    return llvm.parse_bitcode(module, llvm.create_context())


def defined_functions(module):
    return {f.name for f in parse(module).functions if not f.is_declaration}


# --- single files ----------------------------------------------------------------------------

def test_enzyme_section(objs):
    data = read(objs['a'])
    [module] = bitcode_modules(data, 'a.o')
    assert defined_functions(module) == {'a'}
    assert object_symbols(data, 'a.o') == ({'a'}, {'b'})


def test_llvmbc_section(objs):
    [module] = bitcode_modules(read(objs['b_llvmbc']), 'b.o')
    assert defined_functions(module) == {'b'}


def test_bare_bitcode(objs):
    data = read(objs['a_bare'])
    assert bitcode_modules(data, 'a.o') == [data]
    assert object_symbols(data, 'a.o') == ({'a'}, {'b'})


def test_bare_bitcode_symbols_locals_weak_aliases(objs):
    defined, undefined = object_symbols(read(objs['syms_bare']), 'syms.o')
    assert defined == {'f', 'g', 'counter'}     # the alias g; not the static `hidden`
    assert undefined == {'maybe', 'ext'}        # no llvm.* intrinsics


def test_wrapped_bitcode(objs):
    inner = read(objs['a_bare'])
    wrapped = b'\xde\xc0\x17\x0b' + struct.pack('<IIII', 0, 20, len(inner), 7) + inner
    assert bitcode_modules(wrapped, 'w.bc') == [inner]


def test_fat_lto_fortran(objs):
    data = read(objs['f'])
    [module] = bitcode_modules(data, 'f.o')
    assert defined_functions(module) == {'sq_'}
    assert object_symbols(data, 'f.o')[0] == {'sq_'}


def test_relocatable_link_holds_two_modules(objs):
    modules = bitcode_modules(read(objs['ab']), 'ab.o')
    assert [defined_functions(m) for m in modules] == [{'a'}, {'b'}]


def test_magic_inside_a_module_is_not_a_split_point(objs):
    [module] = bitcode_modules(read(objs['magic']), 'magic.o')
    assert any(i % 4 == 0 for i in range(4, len(module)) if module.startswith(b'BC\xc0\xde', i))
    first, second = bitcode_modules(read(objs['magic_b']), 'magic_b.o')
    assert first == module and defined_functions(second) == {'b'}
    assert 'k' in object_symbols(module, 'magic.bc')[0]


def test_zero_padding_between_modules(objs):
    a, b = read(objs['a_bare']), bitcode_modules(read(objs['b']), 'b.o')[0]
    assert bitcode_modules(a + b'\0' * 12 + b, 'ab.bc') == [a, b]


def test_object_without_bitcode(objs):
    data = read(objs['b_gcc'])
    assert bitcode_modules(data, 'b.o') == []
    assert object_symbols(data, 'b.o') == ({'b'}, set())


def test_truncated_bitcode(objs):
    data = read(objs['a_bare'])
    with pytest.raises(UserError, match='short.bc'):
        bitcode_modules(data[:len(data) // 2], 'short.bc')


def test_truncated_elf(objs):
    data = read(objs['a'])
    for cut in (40, len(data) // 2):
        with pytest.raises(UserError, match='cut.o'):
            bitcode_modules(data[:cut], 'cut.o')


def test_text_file_is_not_an_object(tmp_path):
    notes = tmp_path / 'notes.o'
    notes.write_text('hello, world\n')
    for fn in (bitcode_modules, object_symbols):
        with pytest.raises(UserError, match='notes.o: not an object file'):
            fn(read(notes), 'notes.o')
    with pytest.raises(UserError, match='notes.o'):
        plan_link([('file', str(notes))], [])


# --- archives --------------------------------------------------------------------------------

ARCHIVERS = {
    'gnu': ['ar', 'rcs'],
    'llvm': ['llvm-ar-22', 'rcs'],
    'gnu-thin': ['ar', 'rcsT'],
    'llvm-thin': ['llvm-ar-22', 'rcsT'],
    'bsd': ['llvm-ar-22', '--format=bsd', 'rcs'],
    'gnu-no-index': ['ar', 'rcS'],
}


@pytest.mark.parametrize('flavour', ARCHIVERS)
def test_archive_flavours(objs, tmp_path, flavour):
    long_name = tmp_path / 'a_member_with_a_long_name.o'   # > 15 chars: GNU long-name table
    shutil.copy(objs['a'], long_name)
    (tmp_path / 'lib').mkdir()
    lib = tmp_path / 'lib' / 'libk.a'   # thin: relative member paths resolve from the archive's dir
    sh(*ARCHIVERS[flavour], 'lib/libk.a', long_name.name, objs['b'], objs['a_bare'], cwd=tmp_path)
    assert is_archive(lib) and not is_archive(objs['a'])
    ar = read_archive(str(lib))
    assert [m.name.split('/')[-1] for m in ar.members] == [
        'a_member_with_a_long_name.o', 'b.o', 'a_bare.o']
    assert [m.data for m in ar.members] == [read(long_name), read(objs['b']), read(objs['a_bare'])]
    assert ar.symbol_index['a'] == [0, 2] and ar.symbol_index['b'] == [1]


def test_duplicate_member_names(objs, tmp_path):
    lib = tmp_path / 'libdup.a'
    sh('ar', 'q', str(lib), objs['u1'])
    sh('ar', 'q', str(lib), objs['u2'])
    sh('ar', 's', str(lib))
    ar = read_archive(str(lib))
    assert [m.name for m in ar.members] == ['util.o', 'util.o']
    assert ar.members[0].offset != ar.members[1].offset
    plan = plan_link([('file', objs['needs_u2']), ('file', str(lib))], [])
    assert plan.pulled_members == {str(lib): ['util.o']}
    [(origin, module)] = plan.modules[1:]
    assert origin == f'{lib}(util.o)' and defined_functions(module) == {'u2'}


def test_corrupt_archives(objs, tmp_path):
    lib = tmp_path / 'libk.a'
    sh('ar', 'rcs', str(lib), objs['a'], objs['b'])
    data = read(lib)
    cases = {'truncated.a': data[:len(data) - 100], 'header.a': data[:80] + b'garbage' + data[87:],
             'magic-only.a': b'!<arch>\nnot a header'}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(UserError, match=name):
            read_archive(str(tmp_path / name))
    shutil.copy(objs['a'], tmp_path / 'gone.o')
    sh('ar', 'rcsT', 'libthin.a', 'gone.o', cwd=tmp_path)
    os.remove(tmp_path / 'gone.o')
    with pytest.raises(UserError, match='libthin.a'):
        read_archive(str(tmp_path / 'libthin.a'))


# --- link plans ------------------------------------------------------------------------------

def test_member_selection_is_order_independent(objs, tmp_path):
    lib1, lib2 = tmp_path / 'lib1.a', tmp_path / 'lib2.a'
    sh('ar', 'rcs', str(lib1), objs['a'], objs['unused'])
    sh('llvm-ar-22', 'rcs', str(lib2), objs['b'])
    # lib2 (which provides b) comes before lib1 (whose a.o needs b): lld still finds it.
    plan = plan_link([('file', objs['main']), ('file', str(lib2)), ('file', str(lib1))], [])
    assert plan.pulled_members == {str(lib2): ['b.o'], str(lib1): ['a.o']}
    assert [o for o, _ in plan.modules] == [objs['main'], f'{lib2}(b.o)', f'{lib1}(a.o)']
    assert plan.bitcode_objects == {objs['main']}
    assert plan.native_only_objects == [] and plan.missing_bitcode == {}


def test_lib_resolution(objs, tmp_path):
    libdir = tmp_path / 'lib'
    libdir.mkdir()
    sh('ar', 'rcs', str(libdir / 'libk.a'), objs['a'], objs['b'])
    inputs = [('file', objs['main']), ('lib', 'k')]
    assert plan_link(inputs, [str(libdir)]).pulled_members == {
        str(libdir / 'libk.a'): ['a.o', 'b.o']}
    assert plan_link(inputs, []).pulled_members == {}            # not found: left to the linker
    sh('clang-22', '-shared', objs['a'], objs['b'], '-o', str(libdir / 'libk.so'))
    shared = plan_link(inputs, [str(libdir)])                    # .so preferred: passed through
    assert shared.pulled_members == {} and shared.modules == [(objs['main'], shared.modules[0][1])]
    assert plan_link(inputs, [str(libdir)], static=True).pulled_members
    assert plan_link([inputs[0], ('lib', ':libk.a')], [str(libdir)]).pulled_members


def test_bare_bitcode_and_native_inputs(objs, tmp_path):
    lib = tmp_path / 'libg.a'
    sh('ar', 'rcs', str(lib), objs['b_gcc'])
    plan = plan_link([('file', objs['main']), ('file', objs['a_bare']), ('file', str(lib))], [])
    assert plan.bitcode_objects == {objs['main'], objs['a_bare']}
    assert plan.missing_bitcode == {'b': f'{lib}(b_gcc.o)'}
    plan = plan_link([('file', objs['main']), ('file', objs['a']), ('file', objs['b_gcc'])], [])
    assert plan.native_only_objects == [objs['b_gcc']]
    assert plan.missing_bitcode == {'b': objs['b_gcc']}
    assert [o for o, _ in plan.modules] == [objs['main'], objs['a']]


def test_weak_reference_pulls_nothing(objs, tmp_path):
    lib = tmp_path / 'libopt.a'
    sh('ar', 'rcs', str(lib), objs['opt'])
    assert plan_link([('file', objs['weakref']), ('file', str(lib))], []).pulled_members == {}


def test_shared_libraries_and_scripts_pass_through(objs, tmp_path):
    so = tmp_path / 'libx.so'
    sh('clang-22', '-shared', objs['b'], '-o', str(so))
    script = tmp_path / 'libc_like.so'
    script.write_text('/* GNU ld script */\nGROUP ( /lib/libc.so.6 )\n')
    other = tmp_path / 'link.lds'
    other.write_text('SECTIONS { .text : { *(.text) } }\n')
    plan = plan_link([('file', objs['main']), ('file', str(so)), ('file', str(script)),
                      ('file', str(other)), ('file', objs['a'])], [])
    assert plan.bitcode_objects == {objs['main'], objs['a']} and plan.native_only_objects == []
