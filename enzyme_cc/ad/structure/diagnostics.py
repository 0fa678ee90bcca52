"""Source locations for error messages: `file:line:col in function 'f'` from debug info."""
import re
import subprocess
from types import SimpleNamespace

from enzyme_cc import toolchain


def md_field(text: str, name: str):
    """The value of field `name` of a metadata node's text (a string, a !N reference or a word)."""
    m = re.search(rf"\b{name}: (\"[^\"]*\"|![0-9]+|[-\w.]+)", text or "")
    return m.group(1) if m else None


def source_of(module, md_id: str | None) -> str | None:
    """'file.c:12:5' for a !DILocation id, or None."""
    loc = module.metadata.get(md_id or "")
    if not loc or "DILocation" not in loc:
        return None
    line, col = md_field(loc, "line"), md_field(loc, "column")
    scope = md_field(loc, "scope")
    seen = 0
    while scope and seen < 20:
        node = module.metadata.get(scope, "")
        f = md_field(node, "file")
        if f and f in module.metadata:
            fname = md_field(module.metadata[f], "filename")
            if fname:
                return f"{fname.strip(chr(34))}:{line}" + (f":{col}" if col and col != "0" else "")
        scope = md_field(node, "scope")
        seen += 1
    return None


def declared_name(module, fn_name: str, v: str) -> str | None:
    """The source name of the variable a `#dbg_declare` of the function's value v (a local's
    address) declares, or None."""
    span = module._bodies.get(fn_name)
    key = f"#dbg_declare(ptr {v}, "
    for line in module._lines[span[0]:span[1]] if span else ():
        if key in line:
            var = module.metadata.get(line.split(key, 1)[1].split(",", 1)[0].strip(), "")
            name = md_field(var, "name")
            return name.strip('"') if name else None
    return None


def inlined_from(module, md_id: str | None) -> str | None:
    """The name of the function whose code a !DILocation inside an inlined call is (the
    subprogram its scope belongs to, where the location has `inlinedAt`), or None."""
    loc = module.metadata.get(md_id or "", "")
    if "DILocation" not in loc or md_field(loc, "inlinedAt") is None:
        return None
    scope, seen = md_field(loc, "scope"), 0
    while scope and seen < 20:
        node = module.metadata.get(scope, "")
        if "DISubprogram" in node:
            name = md_field(node, "name")
            return name.strip('"') if name else None
        scope, seen = md_field(node, "scope"), seen + 1
    return None


_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")     # legacy Rust mangling's hash segment
_demangled: dict[str, str] = {}


def demangled(names: list[str]) -> list[str]:
    """C++ and Rust symbols demangled (one llvm-cxxfilt run for those not seen yet; legacy Rust
    mangling's hash left out), other names as they are."""
    todo = [n for n in dict.fromkeys(names) if n.startswith(("_Z", "_R")) and n not in _demangled]
    if todo:
        _demangled.update((n, n) for n in todo)
        try:
            r = subprocess.run([toolchain.tool("cxxfilt")], input="\n".join(todo),
                               capture_output=True, text=True, timeout=10)
            out = r.stdout.splitlines()
            if r.returncode == 0 and len(out) == len(todo):
                _demangled.update((n, _RUST_HASH.sub("", o.strip()) or n)
                                  for n, o in zip(todo, out))
        except Exception:            # (a message never fails for want of a demangler)
            pass
    return [_demangled.get(n, n) for n in names]


_RUST_LEGACY = re.compile(r"17h[0-9a-f]{16}E$")


def is_rust(name: str) -> bool:
    """A Rust symbol (legacy mangling, whose last segment is the hash, or v0)."""
    raw = name.lstrip("@").strip('"')
    return raw.startswith("_R") or (raw.startswith("_ZN") and bool(_RUST_LEGACY.search(raw)))


_MANGLED_FREE = re.compile(r"_Z(\d+)(.*)")


def free_function_name(symbol: str) -> str | None:
    """The C++ name of a free function's Itanium-mangled symbol (`_Z15__enzyme_shadowPvii` ->
    `__enzyme_shadow`: the length-prefixed name before the parameter types), or None."""
    m = _MANGLED_FREE.fullmatch(symbol)
    if m is None or len(m.group(2)) < int(m.group(1)):
        return None
    return m.group(2)[:int(m.group(1))]


def is_flang(name: str) -> bool:
    """A symbol flang made for a Fortran procedure or variable (`_QM...`, `_QQmain`, ...)."""
    return name.lstrip("@").strip('"').startswith("_Q")


def from_fortran(module, fn) -> bool:
    """fn is flang's code: a name flang made (a procedure's `_Q...`, an OpenMP region's
    `..omp_par`), or a compile unit of Fortran in its debug info (a bind(c) procedure)."""
    name = fn.name.lstrip("@").strip('"')
    if is_flang(name) or "..omp_par" in name:
        return True
    return "DW_LANG_Fortran" in _compile_unit(module, fn)


def _compile_unit(module, fn) -> str:
    """The text of fn's compile unit in its debug info ("" without)."""
    sp = module.metadata.get(getattr(fn, "dbg", None) or "", "")
    return module.metadata.get(md_field(sp, "unit") or "", "")


def _written_in_cxx(module, fn_name: str) -> bool:
    """fn_name is C++ code: a mangled name, or a compile unit of C++ in its debug info (a
    function with C linkage); without debug info, a module that holds any C++ function."""
    if fn_name.lstrip("@").strip('"').startswith("_Z"):
        return True
    unit = _compile_unit(module, module.function(fn_name))
    if unit:
        return "DW_LANG_C_plus_plus" in unit
    return any(n.lstrip("@").strip('"').startswith("_Z") for n in module._bodies)


def untyped_copy_hint(fn_name: str, module=None) -> str:
    """What to change where an untyped copy's data cannot be typed: rustc emits no type-based
    alias metadata at any level, so for Rust the optimization level helps only by inlining.
    module: where the function is a `#[no_mangle]` one, Rust's runtime in the module says the
    code is Rust."""
    if is_rust(fn_name) or module is not None and "@rust_eh_personality" in \
            (*module.declarations, *module._bodies):
        return ("rustc emits no type information for memory: enzyme-cc types such a copy from "
                "the code that reads the data where the standard library's generic code is "
                "inlined, or from full debug info, which types the standard library's element "
                "copies (cargo's dev profile has it; in the release profile add `debug = true` "
                "under `[profile.release]` in Cargo.toml, or pass rustc `-C debuginfo=2`); where "
                "neither shows the type, copy element by element (`iter().copied()`, a loop) or "
                "keep this data out of the differentiated function. A copy of bytes "
                "(`copy_nonoverlapping::<u8>`: a String's text, a HashMap's buckets) stays "
                "untyped with debug info too: build Strings and HashMaps keyed by them outside "
                "the differentiated function and pass them Const")
    if is_flang(fn_name) or module is not None and "@_QQmain" in module.text:
        return ("flang copied data whose type nothing around the copy shows (a deferred-length "
                "character assigned or concatenated, an integer array constructor stored into "
                "a derived type's component): assign the elements one by one, or keep that "
                "data out of the differentiated procedure")
    if "_Rb_tree" in fn_name or "_Hashtable" in fn_name:
        # (a node container's copy clones each node's value into a fresh node: nothing there
        # types the value)
        return ("copying a std::map/std::set/std::unordered_map whose values carry derivatives "
                "(its nodes' values are copied with no type in view) is not supported: build "
                "the copy by inserting the values (`for (auto &kv : a) b[kv.first] = "
                "kv.second;`), or keep one container and iterate it")
    if module is not None and "!tbaa" in module.text and not _written_in_cxx(module, fn_name):
        # C: a byte buffer packed and unpacked by other code (a halo exchange's messages)
        return ("the copy moves bytes whose type nothing around it shows (a `char *` buffer "
                "that other functions pack and unpack): enzyme-cc follows such a copy where "
                "the function that copies allocates the buffer, hands it only to functions "
                "that keep no pointer to it, and does not read it after the copy; otherwise "
                "copy through typed pointers (double *) or field by field")
    if module is not None and "!tbaa" in module.text:
        # built with type information already: the data's type is what is unknown (libstdc++
        # moves a growing vector's elements with memmove, typed only by the element accesses
        # the optimizer left in view)
        return ("the copy moves data whose type nothing around it shows (a std::vector grown "
                "by push_back inside a struct with vectors of other types: reserve() each "
                "vector's capacity before filling it, or build the vector outside the "
                "differentiated function); or copy through typed pointers (double*)")
    return ("copy through typed pointers (double*), or compile with -O1 or higher so TBAA type "
            "information is emitted")


def demangle_hint(name: str) -> str:
    """The function's source-level name for messages (demangled, at most 100 characters)."""
    out = demangled([name.lstrip("@").strip('"')])[0]
    return out if len(out) <= 100 else out[:97] + "..."


def argument_label(fn, k: int) -> str:
    """'argument N' (1-based) of fn's parameter k for a message, with "('this')" where that is
    a C++ member function's implicit object: the source lists one parameter fewer than the IR
    (a returned record's `sret` pointer aside)."""
    label = f"argument {k + 1}"
    shown = demangled([fn.name.lstrip("@").strip('"')])[0]
    listed = _listed_params(shown)
    explicit = [j for j, p in enumerate(fn.params) if "sret" not in " ".join(p.attrs)]
    if listed is not None and len(explicit) == listed + 1 and explicit[0] == k:
        return label + " ('this')"
    return label


def _listed_params(shown: str) -> int | None:
    """The number of parameters in a demangled C++ member function's last parameter list
    ('Model::total(double const*) const': 1), or None where it is no member function."""
    text = re.sub(r"(\s*(const|volatile|&&|&))+$", "", shown)
    if not text.endswith(")"):
        return None
    depth, k = 0, len(text) - 1
    for k in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[k], 0)
        if depth == 0:
            break
    if "::" not in text[:k]:
        return None
    inner, depth, count = text[k + 1:-1].strip(), 0, 1
    if inner in ("", "void"):
        return 0
    for c in inner:
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(c, 0)
        count += c == "," and depth == 0
    return count


def quoted_name(name: str) -> str:
    """"'f'" for a message; a mangled symbol as its source name, then the symbol."""
    raw, shown = name.lstrip("@").strip('"'), demangle_hint(name)
    return f"'{shown}'" + (f" (symbol {raw})" if shown != raw else "")


def subprogram_source(module, sp: str | None) -> str | None:
    """'file.f:12' for a function's !DISubprogram id, or None."""
    node = module.metadata.get(sp or "", "")
    f, line = md_field(node, "file"), md_field(node, "line")
    fname = md_field(module.metadata.get(f or "", ""), "filename")
    return f"{fname.strip(chr(34))}:{line}" if fname and line else None


def located(module, fn, inst) -> str:
    """Prefix for an error about `inst` in `fn`: an instruction, a parameter (a Param: it has
    no opcode nor metadata) or None."""
    where = f"in function {quoted_name(fn.name)}"
    if inst is not None and not hasattr(inst, "op"):       # a parameter of fn
        src = subprogram_source(module, getattr(fn, "dbg", None))
        where += f", argument '{inst.name}'"
        return f"{src}: {where}" if src else where + " (compile with -g for the source line)"
    src = _nearest_source(module, fn, inst) if inst is not None else None
    inner = inlined_from(module, inst.md.get("!dbg")) if inst is not None else None
    if inner:
        where += f" (code of '{inner}', inlined there)"
    if inst is not None:
        text = str(inst)
        if len(text) > 120:
            text = text[:117] + "..."
        where += f", instruction '{text}'"
    if src:
        return f"{src}: {where}"
    return where + " (compile with -g for the source line)"


def _nearest_source(module, fn, inst):
    """inst's source line; for one LLVM made without a location (a select merging two
    constructors' stores), the nearest located instruction of its block, after it first, or
    else the function's own line (so that a -g build never asks for -g)."""
    src = source_of(module, inst.md.get("!dbg"))
    block = getattr(inst, "block", None)
    if src or block is None or inst not in block.insts or getattr(fn, "dbg", None) is None:
        return src      # (a function compiled without -g: its neighbours' lines, if any, are
    k = block.insts.index(inst)     # those of code inlined into it from a library built with -g)
    for other in block.insts[k + 1:] + block.insts[:k][::-1]:
        src = source_of(module, other.md.get("!dbg"))
        if src and not inlined_from(module, other.md.get("!dbg")):
            return src
    return subprogram_source(module, getattr(fn, "dbg", None))


# Generated functions' names (generate.py): kind prefix, the primal's name, a counter.
_GENERATED = (("diffe.", "the combined reverse-mode derivative"),
              ("aug.", "the augmented forward sweep"), ("rev.", "the reverse sweep"),
              ("fwddiffe.", "the forward-mode derivative"), ("fwderr.", "the forward-mode "
                                                                         "error estimate"),
              ("omp.aug.", "a parallel region's forward sweep"),
              ("omp.rev.", "a parallel region's reverse sweep"))


def generated_origin(text: str, message: str) -> str:
    """' in <what> of '<primal>' (generated '<fn>', <primal source>)' for the IR line an LLVM
    parser message names (`<string>:LINE:COL: error: ...`), or '' when it cannot tell."""
    lines = text.split("\n")
    m = re.search(r"<string>:(\d+):", message)
    if m:                                   # the parser's line
        k = min(int(m.group(1)) - 1, len(lines) - 1)
    else:                                   # the verifier quotes the instruction
        quoted = [q.strip() for q in message.split("\n") if re.match(r"\s+%[-\w.$]+ = ", q)]
        k = next((i for i, ln in enumerate(lines) if quoted and ln.strip() == quoted[0]), -1)
        if k < 0:
            return ""
    while k >= 0 and not lines[k].startswith("define "):
        k -= 1
    d = re.search(r'@("[^"]+"|[-\w.$]+)\(', lines[k]) if k >= 0 else None
    if not d:
        return ""
    fn = d.group(1).strip('"')
    gen = generated_primal(fn)
    if gen:
        what, primal = gen
        src = _primal_source(text, primal)
        return f" in {what} of '{primal}' (generated function '{fn}'" + \
            (f", from {src})" if src else ")")
    return f" in function '{fn}'"


def generated_primal(name: str) -> tuple[str, str] | None:
    """(what it is, the primal's name) for the name of a generated function, or None."""
    for prefix, what in _GENERATED:
        if name.startswith(prefix):
            # (vector forward mode puts the width first: fwddiffe.4.f.7)
            return what, re.sub(r"\.\d+$", "", re.sub(r"^\d+\.", "", name[len(prefix):]))
    return None


def _primal_source(text: str, primal: str) -> str | None:
    """'file.c:12' of the primal's definition, from its DISubprogram."""
    m = re.search(r"^define [^\n]*@\"?" + re.escape(primal) + r"\"?\([^\n]*!dbg (![0-9]+)", text,
                  re.M)
    if not m:
        return None

    def node(ref):
        n = re.search(r"^" + re.escape(ref) + r" = (.*)$", text, re.M)
        return n.group(1) if n else ""
    sp = m.group(1)
    md = {sp: node(sp)}
    f = md_field(md[sp], "file")
    if f:
        md[f] = node(f)
    return subprogram_source(SimpleNamespace(metadata=md), sp)
