"""A function's Signature read from the code instead of declared: `signature_of("f",
sources=[...], shapes={"x": ("n",), "y": ("n",)})`. The sources are compiled as for the build
(with -g); the debug info gives each parameter's name and C type (prototype.py), and LLVM's
attribute inference on the optimized function says which pointers it only reads and which it
only writes. So:

- a pointer to float data is an input (`In`) when it is `const` or only read, an output (`Out`)
  when only written; one both read and written (an accumulated output, or an argument updated in
  place) must be named in `outputs=` (then it is an `Out`: zeroed before each call, so an
  accumulating C function sees zeros);
- a float or double by value is a scalar input (`In(name, ())`);
- an integer by value is an `Int` (a size named in shapes, or a value given at the call);
- a float or double result is `Ret(ret)`.

Each pointer's shape comes from `shapes` (ints and names of integer parameters). `nondiff=` names
inputs held constant (`In(..., diff=False)`). The result is cached by content, like builds."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile

from enzyme_cc.ad.structure.diagnostics import demangled

from .build import BuildError, _code_digest, cache_root, check_toolchain, compile_sources, \
    read_sources, sources_digest
from .fortran_intent import intents
from .prototype import (_FLOAT_NAMES, _INT_BITS, _INT_NAMES, DESCRIPTOR, DESCRIPTOR_WHY, find,
                        pointer_access)
from .signature import In, INT_CTYPES, Int, Out, Ret, Signature, SignatureError


def signature_of(name, sources=(), source=None, lang="c", flags=("-O2",), shapes=None,
                 outputs=(), nondiff=(), ret="result") -> Signature:
    """The Signature of function `name` in these sources (see the module's description)."""
    shapes, outputs, nondiff = dict(shapes or {}), tuple(outputs), tuple(nondiff)
    for k, v in shapes.items():
        if isinstance(v, (int, str)):       # (a string would be taken letter by letter)
            raise SignatureError(f"{name}: shapes[{k!r}] is {v!r}, but a shape is a tuple: "
                                 f"write ({v!r},)")
    if isinstance(sources, (str, bytes)) or hasattr(sources, "__fspath__"):
        sources = [sources]
    srcs = read_sources(sources, source, lang)
    h = hashlib.sha256(repr((name, list(flags), sorted(shapes.items()), outputs, nondiff, ret))
                       .encode())
    h.update(sources_digest(srcs, list(flags)))
    h.update(_code_digest())
    path = os.path.join(cache_root(), f"signature-{h.hexdigest()[:32]}.json")
    try:
        with open(path) as f:
            return _from_json(name, json.load(f))
    except (OSError, ValueError):
        pass
    params, ret_ir, symbol = _compiled_params(name, srcs, list(flags))
    sig = _signature(name, params, ret_ir, shapes, outputs, nondiff, ret, symbol,
                     intents(srcs, name))
    os.makedirs(cache_root(), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(_to_json(sig), f)
    os.replace(tmp, path)
    return sig


def _compiled_params(name, srcs, flags):
    """([(param name, IR type, C spelling, pointee, const, access)], IR return type, symbol) of
    the compiled function; access: 'read', 'write', 'none' (neither) or 'both'. A C++ function
    without extern "C" is found by its name (qualified or not) among the demangled ones."""
    check_toolchain({lg for _, lg, _ in srcs})
    from enzyme_cc.bitcode.elf import bitcode_modules
    os.makedirs(cache_root(), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="infer-", dir=cache_root()) as tmp:
        modules = []
        # at -O0 (enzyme-cc's -O0 leaves the code optimizable): what a function does with a
        # pointer is read before vectorization, whose alias checks (ptrtoint) hide it
        flags = [f for f in flags if not re.fullmatch(r"-O.*", f)] + ["-O0"]
        for obj in compile_sources(tmp, srcs, flags, debug=True):
            with open(obj, "rb") as f:
                modules += bitcode_modules(f.read(), obj)
        symbol = name
        proto, module = find(modules, name, with_module=True)
        if proto is None:           # Fortran without bind(c): flang's external name
            symbol = name.lower() + "_"
            proto, module = find(modules, symbol, with_module=True)
        if proto is None:           # a Fortran module procedure: flang's _QM<module>P<name>
            symbol = _fortran_module_symbol(modules, name)
            proto, module = find(modules, symbol, with_module=True)
        if proto is None:
            symbol = _cxx_symbol(modules, name)
            proto, module = find(modules, symbol, with_module=True)
        if proto is None:
            raise BuildError(f"'{name}' is not defined in the given sources")
    # LLVM's inference of what the function does with each pointer (readonly, writeonly)
    access = pointer_access(module, symbol)
    if None in [p.name for p in proto.params]:
        raise SignatureError(f"{name}: the debug info gives no parameter names (a C++ member "
                             "function, or a function without them); declare its Signature")
    return [(p.name, p.ir, p.c, p.pointee, p.const, a)
            for p, a in zip(proto.params, access)], proto.ret, symbol


def _fortran_module_symbol(modules, name):
    """The symbol flang gives the module procedure `name` (or `module::name`), `_QM<module>P<name>`
    in lower case, else `name` (then not found)."""
    import llvmlite.binding as llvm
    mod, _, proc = name.lower().rpartition("::")
    pattern = re.compile(r"_QM(\w+?)P" + re.escape(proc) + "$")
    hits = [f.name for data in modules for f in llvm.parse_bitcode(data).functions
            if not f.is_declaration and (m := pattern.match(f.name)) and
            (not mod or m.group(1) == mod)]
    if len(hits) > 1:
        raise SignatureError(f"'{name}' names procedures of {len(hits)} Fortran modules "
                             f"({', '.join(hits)}): give it as module::{proc}")
    return hits[0] if hits else name


def _cxx_symbol(modules, name):
    """The symbol of the one C++ function the sources define whose demangled name is `name`
    (`energy`, or qualified: `phys::energy`), else `name` (then not found)."""
    import llvmlite.binding as llvm
    mangled = [f.name for data in modules for f in llvm.parse_bitcode(data).functions
               if not f.is_declaration and f.name.startswith("_Z")]
    hits = []
    for sym, shown in zip(mangled, demangled(mangled)):
        if any(f == name or f.endswith("::" + name) for f in _names_of(shown)):
            hits.append((sym, shown))
    if len(hits) > 1:
        raise SignatureError(f"'{name}' names {len(hits)} C++ functions ("
                             f"{', '.join(shown for _, shown in hits)}): give the qualified "
                             "name (with a template's arguments: `ns::f<double>`) or, for "
                             "overloads, the symbol of the one you mean "
                             f"({', '.join(sym for sym, _ in hits)})")
    return hits[0][0] if hits else name


def _names_of(shown: str) -> set:
    """The names a demangled function answers to: `phys::energy`; a template instantiation's
    (which demangles with its return type first: `double phys::sq<double>(...)`) with and
    without its template arguments."""
    base, depth, cut = shown.split("(")[0], 0, 0
    for i, c in enumerate(base):
        depth += (c == "<") - (c == ">")
        if c == " " and depth == 0:
            cut = i + 1
    base = base[cut:] if "<" in base else base
    return {base, base[:base.index("<")]} if base.endswith(">") else {base}


def _signature(name, params, ret_ir, shapes, outputs, nondiff, ret, symbol, intent=None):
    """intent: a Fortran routine's {dummy: 'in', 'out' or 'inout'} from its source (what the
    compiled code cannot say: an array handed to another routine looks written)."""
    intent = intent or {}
    # (a Fortran routine's types, as its debug information spells them: `real(kind=8)`)
    fortran = any("(kind=" in (p[2] or "") for p in params)
    where = f"{name}: the {'Fortran routine' if fortran else 'C function'}'s argument"
    make_input = "declare it intent(in)" if fortran else "make it `const`"
    names = [p[0] for p in params]
    if fortran:         # (Fortran's names are case-insensitive; its debug info spells them lower)
        low = (lambda d: d.lower() if isinstance(d, str) else d)
        shapes = {k.lower(): tuple(low(d) for d in v) for k, v in shapes.items()}
        outputs, nondiff = tuple(map(str.lower, outputs)), tuple(map(str.lower, nondiff))
    for given, what in ((shapes, "shapes"), (outputs, "outputs"), (nondiff, "nondiff")):
        unknown = [k for k in given if k not in names]
        if unknown:
            owner = "Fortran routine" if fortran else "C function"
            raise SignatureError(f"{name}: {what} names {unknown[0]!r}, which is not an "
                                 f"argument of the {owner} ({', '.join(names)})")
    args = []
    for pname, ir, c, pointee, const, access in params:
        spelled = f"`{c}`" if c else ir
        if ir == "ptr" and pointee is None and c in _INT_NAMES:     # Fortran's integers
            args.append(Int(pname, "int" if _INT_NAMES[c] == 32 else "long"))
            continue
        if ir == "ptr" and pointee is None and c in _FLOAT_NAMES:   # and its scalars
            if pname in outputs or intent.get(pname) == "out" or \
                    (access == "write" and intent.get(pname) != "in"):  # (an intent(out) result)
                args.append(Out(pname, (), _FLOAT_NAMES[c]))
            else:
                args.append(In(pname, (), _FLOAT_NAMES[c], diff=pname not in nondiff))
            continue
        if ir == "ptr":
            dtype = _FLOAT_NAMES.get(pointee or "")
            index = {32: "int32", 64: "int64"}.get(_INT_NAMES.get(pointee or ""))
            if dtype is None and index is not None and (const or access in ("read", "none")) \
                    and pname not in outputs:
                if pname not in shapes:
                    raise SignatureError(f"{where} {pname!r} is {spelled}: give its shape in "
                                         f"shapes= (e.g. shapes={{{pname!r}: ('n',)}})")
                args.append(In(pname, tuple(shapes[pname]), index, diff=False))  # (indices)
                continue
            if pointee == DESCRIPTOR:
                raise SignatureError(f"{where} {pname!r} is {spelled} (" + DESCRIPTOR_WHY)
            if dtype is None:
                raise SignatureError(f"{where} {pname!r} is {spelled}: only pointers to float, "
                                     "double and their complex types, and integer arrays the "
                                     "function only reads (indices), are passed as arrays")
            if pname not in shapes:
                raise SignatureError(f"{where} {pname!r} is {spelled}: give its shape in "
                                     f"shapes= (e.g. shapes={{{pname!r}: ('n',)}})")
            shape = tuple(shapes[pname])
            if pname in outputs:
                if const:
                    raise SignatureError(f"{where} {pname!r} is {spelled} (read only), but "
                                         "outputs= names it")
                args.append(Out(pname, shape, dtype))
            elif const or access in ("read", "none") or intent.get(pname) == "in":
                args.append(In(pname, shape, dtype, diff=pname not in nondiff))
            elif access == "write" or intent.get(pname) == "out":
                args.append(Out(pname, shape, dtype))
            elif access == "unknown":
                raise SignatureError(
                    f"{where} {pname!r} is {spelled}, and the function hands it to an OpenMP "
                    f"parallel region, where what it does with it cannot be inferred: name it in "
                    f"outputs= if it is an output (zeroed before each call), or {make_input} if "
                    f"it is an input")
            elif fortran and intent.get(pname) == "inout":
                raise SignatureError(
                    f"{where} {pname!r} is {spelled}, intent(inout): an argument updated in "
                    f"place is not supported; hint: split it into an intent(in) and an "
                    f"intent(out) argument")
            elif fortran:
                raise SignatureError(
                    f"{where} {pname!r} is {spelled}, and the routine both reads and writes it "
                    f"(no INTENT found in its declaration): name it in outputs= if it is an "
                    f"output (zeroed before each call, so accumulating into it works), or "
                    f"declare it intent(in) if it is an input; an argument updated in place "
                    f"is not supported")
            else:
                raise SignatureError(
                    f"{where} {pname!r} is {spelled}, and the function both reads and writes "
                    f"it: name it in outputs= if it is an output (zeroed before each call, "
                    f"so accumulating into it works), or {make_input} if it is an input; an "
                    f"argument updated in place is not supported")
        elif pname in outputs:
            raise SignatureError(f"{where} {pname!r} is {spelled}, passed by value: it cannot "
                                 "be an output")
        elif ir in ("double", "float"):
            if pname in shapes and tuple(shapes[pname]) != ():
                raise SignatureError(f"{where} {pname!r} is {spelled}, passed by value: its "
                                     "shape is ()")
            args.append(In(pname, (), "float64" if ir == "double" else "float32",
                           diff=pname not in nondiff))
        elif re.fullmatch(r"i(1|32|64)", ir):            # (i1: C's _Bool, C++'s bool)
            ctype = c if c in INT_CTYPES and _INT_BITS[c] == int(ir[1:]) else \
                {"i1": "bool", "i32": "int"}.get(ir, "long")
            args.append(Int(pname, ctype))
        else:
            raise SignatureError(f"{where} {pname!r} is {spelled}, which a Python caller "
                                 "cannot pass; declare its Signature")
    if ret_ir == "ptr":
        raise SignatureError(f"{name}: the C function returns a pointer, which a Python caller "
                             "cannot take; declare its Signature")
    dtype = {"double": "float64", "float": "float32"}.get(ret_ir)
    # (an integer result, a status, is dropped)
    ident = re.sub(r"\W", "_", name.split("::")[-1])
    if symbol == name.lower() + "_" and symbol != name:
        ident = name.lower()           # (Fortran: the routine's name, its symbol name_)
    return Signature(ident, args, ret=Ret(ret, dtype) if dtype else None,
                     symbol=symbol if symbol != ident else None)


def _to_json(sig):
    out = []
    for a in sig.args:
        if isinstance(a, Int):
            out.append(["Int", a.name, a.ctype])
        elif isinstance(a, In):
            out.append(["In", a.name, list(a.shape), a.dtype, a.diff])
        else:
            out.append(["Out", a.name, list(a.shape), a.dtype])
    ret = [sig.ret.name, sig.ret.dtype] if sig.ret else None
    return {"name": sig.name, "args": out, "ret": ret, "symbol": sig.symbol}


def _from_json(name, d):
    args = []
    for a in d["args"]:
        if a[0] == "Int":
            args.append(Int(a[1], a[2]))
        elif a[0] == "In":
            args.append(In(a[1], tuple(a[2]), a[3], a[4]))
        else:
            args.append(Out(a[1], tuple(a[2]), a[3]))
    ident = d.get("name", name)
    return Signature(ident, args, ret=Ret(*d["ret"]) if d["ret"] else None,
                     symbol=d["symbol"] if d["symbol"] != ident else None)
