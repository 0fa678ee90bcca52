"""The prototype of a declared function as enzyme-cc compiled it, checked against its Signature
before anything runs: the IR function type says pointer, float, double or an integer's width
for every parameter, and the debug info (the user's sources are compiled with -g) what a
pointer points to and whether it is const. A Signature that contradicts the code is refused,
naming the argument, instead of giving wrong numbers or corrupting the heap."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from enzyme_cc.ad.structure.type_layout import underlying
from enzyme_cc.ir.model import parse_module
from enzyme_cc.toolchain import tool

from .signature import COMPLEX, DTYPES, In, Int, Out, SignatureError

# Integer C types and their widths in bits (x86-64 Linux).
_INT_BITS = {"int": 32, "int32_t": 32, "long": 64, "long long": 64, "int64_t": 64, "size_t": 64,
             "ptrdiff_t": 64, "bool": 1}
# Integer names in debug info (C's and flang's) -> width in bits: an integer flang passes by
# reference (a dummy without bind(c)) has its value type in the debug info.
_INT_NAMES = {"int": 32, "long": 64, "long int": 64, "long long": 64, "long long int": 64,
              "integer": 32, "integer(kind=4)": 32, "integer(kind=8)": 64, "integer*4": 32,
              "integer*8": 64}
_INT_NAMES.update({"int32_t": 32, "int64_t": 64})
_INT_ARRAYS = {32: "int32", 64: "int64"}      # an index array's dtype by its width
# Float names in debug info (C, C++ and flang's) -> dtype.
_FLOAT_NAMES = {"double": "float64", "real(kind=8)": "float64", "double precision": "float64",
                "real*8": "float64", "float": "float32", "real": "float32",
                "real(kind=4)": "float32", "real*4": "float32",
                "complex double": "complex128", "complex float": "complex64",
                "complex<double>": "complex128", "complex<float>": "complex64",
                "complex(kind=8)": "complex128", "complex(kind=4)": "complex64"}


@dataclass
class Param:
    ir: str                      # IR type: ptr, double, float, i32, ...
    c: str | None = None         # the C type as the debug info spells it (None without it)
    pointee: str | None = None   # for a pointer: the base type's name (typedefs resolved)
    const: bool = False          # for a pointer: the pointee is const
    name: str | None = None      # the parameter's name in the source (debug info)
    row_names: list | None = None   # a C99 `a[n][m]`'s row extents as the source spells them


@dataclass
class Prototype:
    name: str
    ret: str                     # IR return type
    params: list


def find(modules, name: str, with_module=False):
    """The prototype of the function `name` defined in one of the bitcode modules (bytes), or
    None; with_module: (prototype, the module's bytes)."""
    import llvmlite.binding as llvm
    for data in modules:
        mod = llvm.parse_bitcode(data)
        try:
            fn = mod.get_function(name)
        except NameError:
            continue
        if fn.is_declaration:
            continue
        text = str(mod)
        m = parse_module(text)
        f = m.function("@" + name)
        proto = Prototype(name, f.ret_ty.strip(), [Param(p.ty.strip()) for p in f.params])
        _debug_types(m.metadata, f.dbg, proto)
        _param_names(m.metadata, f.dbg, proto)
        _row_names(m.metadata, f.dbg, proto)
        return (proto, data) if with_module else proto
    return (None, None) if with_module else None


def _param_names(md, sp, proto):
    """Each parameter's source name: the DILocalVariable with `arg: k` in its subprogram."""
    if not sp:
        return
    for node in md.values():
        if "DILocalVariable" not in node or _field(node, "scope") != sp:
            continue
        k, nm = _field(node, "arg"), _field(node, "name")
        if k and nm and k.isdigit() and 1 <= int(k) <= len(proto.params):
            proto.params[int(k) - 1].name = nm.strip('"')


def _row_names(md, sp, proto):
    """A variable-length array parameter's row extents as its declaration in the source spells
    them (`const double A[n][m]`: ['m']): the debug info says only "variable" (count -1)."""
    for k, p in enumerate(proto.params):
        rows = row_extents(p)
        if not rows or -1 not in rows or not p.name:
            continue
        var = next((n for n in md.values() if "DILocalVariable" in n and
                    _field(n, "scope") == sp and _field(n, "arg") == str(k + 1)), "")
        src = _source_lines(md, _field(var, "file"), _field(var, "line"))
        m = re.search(rf"\b{re.escape(p.name)}\s*\[[^\[\]]*\]((?:\s*\[[^\[\]]*\])+)", src)
        if m:
            names = [x.strip() for x in re.findall(r"\[([^\[\]]*)\]", m.group(1))]
            if len(names) == len(rows):
                p.row_names = names


def _source_lines(md, file_ref, line) -> str:
    """The text of a source file from `line` on (a declaration's next lines), or ''."""
    import os
    f = md.get(file_ref or "", "")
    name, folder = _field(f, "filename"), _field(f, "directory")
    if not name or not line or not line.isdigit():
        return ""
    path = os.path.join(folder.strip('"') if folder else "", name.strip('"'))
    try:
        with open(path, errors="replace") as fh:
            return " ".join(fh.read().split("\n")[int(line) - 1:int(line) + 15])
    except OSError:
        return ""


def _field(node: str, key: str):
    m = re.search(rf"\b{key}: (\"[^\"]*\"|![0-9]+|[-\w.]+)", node or "")
    return m.group(1) if m else None


def _debug_types(md, sp, proto):
    """Fill in each parameter's C type from the DISubprogram's DISubroutineType."""
    types = md.get(_field(md.get(sp or "", ""), "type") or "", "")
    lst = md.get(_field(types, "types") or "", "")
    refs = re.findall(r"![0-9]+|null", lst)
    if len(refs) != len(proto.params) + 1:
        return                   # (no debug info, or a C++ member function's this and friends)
    for p, ref in zip(proto.params, refs[1:]):
        p.c, p.pointee, p.const = _describe(md, ref)


def _describe(md, ref, depth=0):
    """(C spelling, pointee base name or None, pointee const) of a DIType."""
    node = md.get(ref, "") if ref != "null" else ""
    tag = _field(node, "tag") or ""
    if depth > 16 or not node:
        return "void", None, False
    if "DIBasicType" in node:
        return _field(node, "name").strip('"'), None, False
    if tag == "DW_TAG_typedef":
        _, pointee, const = _describe(md, _field(node, "baseType"), depth + 1)
        return _field(node, "name").strip('"'), pointee, const
    if tag in ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type"):
        return _describe(md, _field(node, "baseType"), depth + 1)
    if tag == "DW_TAG_array_type":      # a Fortran array dummy (passed by address)
        base = _base_name(md, _field(node, "baseType"), depth + 1)
        if "dataLocation:" in node:     # assumed shape, ALLOCATABLE, POINTER: a descriptor
            rank = len(re.findall(r"!\d+", md.get(_field(node, "elements") or "", "")))
            return f"{base}({', '.join([':'] * max(rank, 1))}) by descriptor", DESCRIPTOR, False
        # explicit shape, `u(n)`: its extents where constant, `?` where a dummy gives them
        shape = ", ".join(str(n) if n >= 0 else "?" for n in _counts(md, node)) or "?"
        return f"{base}({shape})", base, False
    if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
        inner = _field(node, "baseType")
        row = _array_behind(md, inner)
        if row is not None:             # C's `double a[n][m]` (or a[][3]): a pointer to its rows
            elem = _field(row, "baseType")
            const = _is_const(md, inner) or _is_const(md, elem)
            base = _base_name(md, elem, depth + 1)
            rows = "".join(f"[{n if n >= 0 else '?'}]" for n in _counts(md, row))
            return f"{'const ' if const else ''}{base} (*){rows}", base, const
        const = _is_const(md, inner)
        base = _base_name(md, inner, depth + 1)
        return f"{'const ' if const else ''}{base} *", base, const
    return _field(node, "name").strip('"') if _field(node, "name") else "?", None, False


DESCRIPTOR = "descriptor"     # the pointee of a Fortran array dummy passed by descriptor
DESCRIPTOR_WHY = ("assumed shape `(:)`, ALLOCATABLE or POINTER), not by the address of its data; "
                  "hint: declare it with its extent, `a(n)` or `a(*)`, its size an integer "
                  "argument")


def _counts(md, array) -> list[int]:
    """The extents of a C array type's dimensions (-1 where variable: a VLA)."""
    out = []
    for ref in re.findall(r"!\d+", md.get(_field(array, "elements") or "", "")):
        m = re.search(r"count: (-?\d+)", md.get(ref, ""))
        out.append(int(m.group(1)) if m else -1)
    return out


def fortran_rank(p) -> int:
    """The rank of a Fortran array parameter from its spelling (`real(kind=8)(?, 3)`: 2,
    `real(kind=8)(:) by descriptor`: 1), else 0."""
    m = re.search(r"\(([^()]*)\)$", (p.c or "").removesuffix(" by descriptor"))
    return m.group(1).count(",") + 1 if m and "kind=" not in m.group(1) else 0


def row_extents(p) -> list[int] | None:
    """A C pointer-to-rows parameter's row extents from its spelling (`double (*)[3][?]`:
    [3, -1]), or None for another parameter."""
    m = re.search(r"\(\*\)((?:\[[0-9?]+\])+)$", p.c or "")
    if not m:
        return None
    return [int(x) if x != "?" else -1 for x in re.findall(r"\[([0-9?]+)\]", m.group(1))]


def _array_behind(md, ref, depth=0):
    """The DW_TAG_array_type node behind qualifiers and typedefs of ref, or None."""
    node = md.get(ref or "", "")
    tag = _field(node, "tag") or ""
    if tag == "DW_TAG_array_type":
        return node
    if tag in ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type",
               "DW_TAG_typedef") and depth < 8:
        return _array_behind(md, _field(node, "baseType"), depth + 1)
    return None


def _is_const(md, ref, depth=0) -> bool:
    node = md.get(ref or "", "")
    tag = _field(node, "tag") or ""
    if tag == "DW_TAG_const_type":
        return True
    if tag in ("DW_TAG_volatile_type", "DW_TAG_restrict_type") and depth < 8:
        return _is_const(md, _field(node, "baseType"), depth + 1)
    return False


def _base_name(md, ref, depth=0) -> str:
    """The name of the type behind qualifiers and typedefs (void for none)."""
    node = md.get(ref or "", "")
    if not node or depth > 16:
        return "void"
    tag = _field(node, "tag") or ""
    if "DIBasicType" in node:
        name = _field(node, "name").strip('"')
        if _field(node, "encoding") == "DW_ATE_complex_float" and name == "complex":
            # C's `double _Complex` is named "complex" whatever its width: the size says
            return "complex double" if _field(node, "size") == "128" else "complex float"
        return name
    if tag in ("DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type",
               "DW_TAG_typedef", "DW_TAG_atomic_type"):
        inner = _field(node, "baseType")
        if tag == "DW_TAG_typedef" and inner is None:
            return _field(node, "name").strip('"')
        base = _base_name(md, inner, depth + 1)
        if base == "?" and tag == "DW_TAG_typedef":
            return _field(node, "name").strip('"')     # (`typedef struct {...} Params`)
        return base
    if tag == "DW_TAG_pointer_type":
        return _base_name(md, _field(node, "baseType"), depth + 1) + " *"
    name = _field(node, "name")
    return name.strip('"') if name else "?"


def check(sig, proto: Prototype) -> frozenset:
    """Refuse a Signature that contradicts the compiled prototype: the argument count, pointer
    versus value, the element type behind a pointer, const outputs, integer widths, the
    returned type. Returns the names of the scalar inputs (In with shape ()) that C takes by
    value and of the integers (Int) it takes by reference."""
    where = f"{sig.name}: the C function is {_show(proto)}"
    if len(proto.params) != len(sig.args):
        raise SignatureError(f"{where}, with {len(proto.params)} argument(s), but the signature "
                             f"declares {len(sig.args)}")
    _check_order(sig, where, proto)
    by_value = set()
    for a, p in zip(sig.args, proto.params):
        if _check_arg(sig, where, a, p):
            by_value.add(a.name)
    if sig.ret is not None:
        want = DTYPES[sig.ret.dtype]
        if proto.ret != want:
            raise SignatureError(f"{where}: it returns {_c_ret(proto)}, but Ret declares "
                                 f"{want} (dtype {sig.ret.dtype!r})")
    elif proto.ret in ("double", "float"):
        raise SignatureError(f"{where}: it returns {proto.ret}, but the signature declares no "
                             f"Ret (its value and derivative would be dropped): add "
                             f"ret=Ret(\"name\"" + (", \"float32\")" if proto.ret == "float" else ")"))
    return frozenset(by_value)


def _check_order(sig, where, proto) -> None:
    """Refuse arguments in another order than C's, or named otherwise: two arrays (or sizes) of
    one type swapped pass every type check, then read and write past the smaller one, and with
    names of the user's own (`bias` for C's `in`) no check could see the swap. Where C's debug
    info names a parameter, the signature uses that name (Fortran's in any case)."""
    names = [p.name for p in proto.params]
    order = ", ".join(f"{n}" for n in names)
    for k, a in enumerate(sig.args):
        if names[k] is None or a.name == names[k] or a.name.lower() == names[k].lower():
            continue
        if a.name in names:
            raise SignatureError(f"{where}: argument {a.name!r} is parameter {names.index(a.name) + 1} "
                                 f"in C, but the signature declares it as argument {k + 1} "
                                 f"(where C has {names[k]!r}): declare the arguments in C's "
                                 f"order ({order})")
        raise SignatureError(f"{where}: argument {k + 1} is {names[k]!r} in C, but the signature "
                             f"names it {a.name!r}: use C's names, in C's order ({order}), so "
                             "that a swap cannot pass unseen")


def _check_arg(sig, where, a, p) -> bool:
    """Raise on a contradiction; True for a scalar input C takes by value, or an integer it
    takes by reference."""
    kind = type(a).__name__
    if isinstance(a, Int):
        bits = _INT_BITS[a.ctype]
        if p.ir == "ptr" and _INT_NAMES.get(p.c or "") == bits:
            return True         # an integer by reference (Fortran): the wrapper passes &n
        if p.ir != f"i{bits}":
            raise SignatureError(f"{where}: argument {a.name!r} is {_c(p)} in C, but Int "
                                 f"declares {a.ctype}" + (" (a pointer: declare it In or Out)"
                                                          if p.ir == "ptr" else ""))
        return
    if p.pointee == DESCRIPTOR:
        raise SignatureError(
            f"{where}: argument {a.name!r} is a Fortran array passed by descriptor ({_c(p)}: "
            + DESCRIPTOR_WHY)
    if fortran_rank(p) > 1 and len(a.shape) > 1:
        # Fortran stores a(m, k) column by column; the arrays come in C order (row by row), so
        # the same shape would read the transpose (and a square matrix gives no shape error)
        raise SignatureError(
            f"{where}: argument {a.name!r} is a Fortran array of rank {fortran_rank(p)} "
            f"({_c(p)}), stored column by column, and Python's arrays come row by row: a "
            "multi-dimensional shape would read it transposed, which is not supported yet; "
            "hint: give the routine the array as one dimension (a(*), with its size an "
            "integer argument) and pass it in Fortran order (numpy: a.ravel(order='F'), "
            "torch: a.T.reshape(-1))")
    want = DTYPES[a.dtype]
    decl = f"{'const ' if isinstance(a, In) else ''}{want} *"
    if p.ir != "ptr":
        by_value = p.ir in ("double", "float") and a.dtype not in COMPLEX
        if by_value and isinstance(a, In) and tuple(a.shape) == ():
            if p.ir != want:
                raise SignatureError(f"{where}: argument {a.name!r} is {_c(p)} in C, passed by "
                                     f"value, but In declares dtype {a.dtype!r}: use dtype "
                                     f"{'float64' if p.ir == 'double' else 'float32'!r}")
            return True         # a scalar by value: the wrapper passes the value
        raise SignatureError(
            f"{where}: argument {a.name!r} is {_c(p)} in C, passed by value, but {kind} declares "
            f"a pointer ({decl}{a.name})" + (": a scalar input passed by value is declared "
                                             f"In({a.name!r}, ())" if by_value else ""))
    if p.pointee is not None:
        have = _FLOAT_NAMES.get(p.pointee) or _INT_ARRAYS.get(_INT_NAMES.get(p.pointee))
        if have is None and p.pointee not in ("void", "?"):
            raise SignatureError(f"{where}: argument {a.name!r} points to {p.pointee} in C, but "
                                 f"{kind} declares {a.dtype} data ({decl}{a.name})")
        if have is not None and have != a.dtype:
            raise SignatureError(f"{where}: argument {a.name!r} is {_c(p)} in C, but {kind} "
                                 f"declares dtype {a.dtype!r} ({decl}{a.name}): use dtype "
                                 f"{have!r}")
        if isinstance(a, Out) and p.const:
            raise SignatureError(f"{where}: argument {a.name!r} is {_c(p)} in C (read only), "
                                 "but Out declares it written: declare it In")
        _check_rows(sig, where, a, p)
    return False


def _check_rows(sig, where, a, p) -> None:
    """C reads a pointer to rows (`double A[][3]`, C99's `double A[n][m]`) in rows of its
    extents: a shape of another rank or row length would read the data skewed or past its
    end, and the VJP write past it."""
    rows = row_extents(p)
    if not rows:
        return
    spelt = [str(n) if n >= 0 else (p.row_names[i] if p.row_names else "?")
             for i, n in enumerate(rows)]
    want = f"(rows, {', '.join(spelt)})"
    ints = {x.name for x in sig.args if isinstance(x, Int)}
    bad = len(a.shape) != len(rows) + 1
    for i, (n, d) in enumerate(zip(rows, a.shape[1:])):
        if n >= 0:
            bad |= d != n               # (a named extent could be anything at run time)
        elif p.row_names and p.row_names[i] in ints:
            bad |= d != p.row_names[i]  # (the parameter that gives the extent in C)
    if bad:
        raise SignatureError(f"{where}: argument {a.name!r} is {_c(p)} in C, read in rows of "
                             f"{' x '.join(spelt)}, but the signature gives it shape "
                             f"{tuple(a.shape)}: give it shape {want}")


def check_inputs_unwritten(sig, proto: Prototype, module: bytes, declared_in=()) -> None:
    """Refuse an In whose C pointer the function writes through (LLVM's attribute inference on
    the optimized function; for a `const` pointer, or a Fortran dummy in declared_in (its
    source says intent(in)), a store the function makes itself): the caller's array would
    change, and a JAX array, immutable, would give another result at the next call."""
    where = f"{sig.name}: the C function is {_show(proto)}"
    suspect = [k for k, (a, p) in enumerate(zip(sig.args, proto.params))
               if isinstance(a, In) and p.ir == "ptr"]
    if not suspect:
        return
    fn = _optimized(module, sig.symbol)
    access, stored = _accesses(fn), _stored_through(fn)
    for k in suspect:
        a, p = sig.args[k], proto.params[k]
        # a `const` pointer: only a store the function itself makes through it (the const cast
        # away); what it hands to a library call LLVM cannot see into is read only, as declared
        const = p.const or a.name.lower() in declared_in
        if (access[k] in ("write", "both") if not const else k in stored):
            raise SignatureError(
                f"{where}: argument {a.name!r} is {_c(p)} in C and the function writes through "
                "it" + (" (casting the const away)" if const else "") + ", but In declares "
                "it read only (the caller's array would change): declare it Out if it is an "
                "output (zeroed before each call), or " + (
                    "keep the function from writing through it" if const else
                    "leave it unchanged and make it `const`") + " if it is an input; an "
                "argument updated in place is not supported")


def pointer_access(module: bytes, symbol: str) -> list[str]:
    """Per parameter of `symbol` in the bitcode `module`: what the optimized function does
    with it ('read', 'write', 'both' or 'none'), from LLVM's attribute inference; 'unknown'
    where it goes into an OpenMP parallel region, which that inference does not see into."""
    return _accesses(_optimized(module, symbol))


def _optimized(module: bytes, symbol: str):
    """`symbol` of the bitcode `module` after LLVM's O1 pipeline (attributes inferred, small
    helpers inlined), the module's other definitions made internal first: a C++ template or
    inline function (linkonce_odr) may be replaced at link time, so LLVM infers nothing about
    what it does with its pointers, nor then about its callers'."""
    r = subprocess.run([tool("opt"), "-passes=internalize,default<O1>",
                        f"-internalize-public-api-list={symbol}", "-", "-S", "-o", "-"],
                       input=module, capture_output=True)
    if r.returncode:
        raise SignatureError(f"reading the prototype of '{symbol}' failed:\n"
                             f"{r.stderr.decode(errors='replace').strip()}")
    return parse_module(r.stdout.decode()).function("@" + symbol)


def _accesses(fn) -> list[str]:
    # a pointer handed to an OpenMP parallel region: LLVM's inference does not look into the
    # outlined function, so 'both' says nothing there ('unknown')
    forks = any((i.callee or "").startswith("@__kmpc_fork") for i in fn.insts())
    return [_access(p.attrs) if _access(p.attrs) != "both" or not forks else "unknown"
            for p in fn.params]


def _stored_through(fn) -> set[int]:
    """The parameters fn itself stores into (a store, or the destination of memcpy, memmove or
    memset), through address arithmetic on them."""
    index = {p.name: k for k, p in enumerate(fn.params)}
    out = set()
    for inst in fn.insts():
        dest = inst.ops[1].value if inst.op == "store" else inst.ops[0].value \
            if inst.op == "call" and (inst.callee or "").startswith(_WRITES) and inst.ops else None
        if dest is not None and underlying(fn, dest) in index:
            out.add(index[underlying(fn, dest)])
    return out


_WRITES = ("@llvm.memcpy", "@llvm.memmove", "@llvm.memset")


def _access(attrs) -> str:
    ro, wo = "readonly" in attrs, "writeonly" in attrs
    return "none" if "readnone" in attrs or (ro and wo) else \
        "read" if ro else "write" if wo else "both"


def _c(p) -> str:
    return f"`{p.c}`" if p.c else f"`{_ir_c(p.ir)}`"


def _ir_c(ir: str) -> str:
    return {"ptr": "a pointer", "double": "double", "float": "float", "i32": "a 32-bit integer",
            "i64": "a 64-bit integer", "i8": "an 8-bit integer", "i16": "a 16-bit integer",
            "i1": "bool"}.get(ir, ir)


def _c_ret(proto) -> str:
    return {"void": "void"}.get(proto.ret, _ir_c(proto.ret))


def _show(proto) -> str:
    args = ", ".join(p.c or _ir_c(p.ir) for p in proto.params) or "void"
    return f"`{_c_ret(proto)} {proto.name}({args})`"
