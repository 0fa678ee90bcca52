"""Tokens of one line of LLVM IR text, and typed-value parsing over them.

The IR model keeps each instruction as its token list: printing is joining tokens, renaming a
value is replacing a token. Only local values (`%x` that is not a named type) are ever renamed.
"""
import re

_TOKEN = re.compile(r"""
    c"[^"]*"                      # C string constant
  | "[^"]*"                       # quoted name / string
  | [%@!$#]"[^"]*"                # quoted identifier (%"a b", @"x", ...)
  | ![A-Za-z._$][-\w.$]*          # metadata kind or named node (!tbaa, !DIExpression)
  | !\{                           # inline metadata tuple
  | [%@!#][-\w.$]+                # %1 %x.y @f !12 #3
  | \#dbg_\w+                     # debug record
  | 0x[0-9A-Fa-f]+ | 0x[KLMHR][0-9A-Fa-f]+
  | -?\d+\.\d*(?:[eE][-+]?\d+)?   # float literal
  | -?\d+                         # integer
  | \.\.\.
  | [A-Za-z_$][\w.$]*:?           # keyword / type / label definition
  | [()\[\]{}<>,=*|]
""", re.VERBOSE)

FLOAT_TYPES = ("double", "float", "half", "bfloat", "x86_fp80", "fp128", "ppc_fp128")

# a local value's name in IR text (`%x`, `%1`, `%"a b"`), for text passes over whole lines
LOCAL = r'%(?:[-\w.$]+|"[^"]*")'
LOCAL_NAME = re.compile(LOCAL)


# every token, a comment (the rest of the line) or a character no token starts with, in one
# findall per line: about 40 % faster than matching token by token from Python, and the most
# called function of the differentiate stage's parse
_SCAN = re.compile(_TOKEN.pattern + r"""
  | ;.*                           # a comment
  | \S                            # no token starts here
""", re.VERBOSE)
# the characters that the last alternative alone can match in an ASCII line
_NO_TOKEN = frozenset(c for c in map(chr, range(128)) if not c.isspace() and
                      not _TOKEN.fullmatch(c))


def tokenize(line: str) -> list[str]:
    """Tokens of one IR line; comments (`; ...` outside strings) are dropped."""
    if not line.isascii():
        return _tokens_one_by_one(line)
    out = _SCAN.findall(line)
    if ";" in line:
        for k, t in enumerate(out):
            if t[0] == ";":
                del out[k:]
                break
    if not _NO_TOKEN.isdisjoint(out):
        return _tokens_one_by_one(line)         # (raises, naming where)
    return out


def _tokens_one_by_one(line: str) -> list[str]:
    out = []
    pos, n = 0, len(line)
    while pos < n:
        ch = line[pos]
        if ch in " \t":
            pos += 1
            continue
        if ch == ";":
            break
        m = _TOKEN.match(line, pos)
        if not m:
            raise ValueError(f"cannot tokenize IR near: {line[pos:pos + 40]!r}")
        out.append(m.group(0))
        pos = m.end()
    return out


def join(tokens) -> str:
    """Print tokens back as IR text (LLVM's lexer is whitespace-insensitive between tokens)."""
    return " ".join(tokens)


_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def skip_balanced(toks, i):
    """Index after the bracket group opening at toks[i]."""
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t in _OPEN:
            depth += 1
        elif t in (")", "]", "}", ">"):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets in IR")


def parse_type(toks, i):
    """(type text, next index) for the type starting at toks[i] (`ptr addrspace(N)` included)."""
    t = toks[i]
    if t in _OPEN:
        j = skip_balanced(toks, i)
    else:
        j = i + 1
        if t == "ptr" and j < len(toks) and toks[j] == "addrspace":
            j = skip_balanced(toks, j + 1)
    text = " ".join(toks[i:j])
    if text.startswith("< {") and text.endswith("} >"):    # a packed struct: `<{ ... }>`
        text = "<{" + text[3:-3] + "}>"
    return text, j


_CONST_EXPR = {"getelementptr", "bitcast", "ptrtoint", "inttoptr", "addrspacecast", "trunc",
               "zext", "sext", "add", "sub", "mul", "xor", "shl", "and", "or", "lshr", "ashr",
               "icmp", "fcmp", "select", "extractelement", "insertelement", "shufflevector",
               "blockaddress", "dso_local_equivalent", "no_cfi", "ptrauth", "splat"}


def parse_value(toks, i):
    """(value text, next index) for a value at toks[i] (constant expressions included)."""
    t = toks[i]
    if t in _OPEN:
        j = skip_balanced(toks, i)
        return " ".join(toks[i:j]), j
    if t in _CONST_EXPR or t in ("nuw", "nsw", "inbounds"):
        j = i + 1
        while j < len(toks) and toks[j] not in ("(",):
            if toks[j] == "inrange":          # getelementptr inrange(-16, 24) (...)
                j = skip_balanced(toks, j + 1)
                continue
            j += 1
        j = skip_balanced(toks, j)
        return " ".join(toks[i:j]), j
    return t, i + 1


_FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "x86_fp80": 80, "fp128": 128}
_FLOAT_ZERO = {"double": "0.0", "float": "0.0", "half": "0.0", "bfloat": "0xR0000",
               "x86_fp80": "0xK00000000000000000000", "fp128": "0xL00000000000000000000000000000000"}


_FLOAT_ONE = {"bfloat": "0xR3F80", "x86_fp80": "0xK3FFF8000000000000000",
              "fp128": "0xL00000000000000003FFF000000000000"}


def zero_of(ty: str) -> str:
    """The zero constant of a type, as IR text."""
    return _FLOAT_ZERO.get(ty, "zeroinitializer")


def one_of(ty: str) -> str:
    """1.0 of a float type, as IR text (x86_fp80, fp128 and bfloat take only hexadecimal)."""
    return _FLOAT_ONE.get(ty, "1.0")


def float_cast(from_ty: str, to_ty: str) -> str:
    """The cast between two float types: fpext to a wider one, fptrunc to a narrower one."""
    return "fpext" if _FLOAT_BITS.get(from_ty, 64) < _FLOAT_BITS.get(to_ty, 64) else "fptrunc"


def is_float_type(ty: str) -> bool:
    return ty in FLOAT_TYPES


_VECTOR = re.compile(r"<\s*(\d+)\s*x\s*(\w+)\s*>")
GLOBAL_REF = re.compile(r'@(?:"[^"]*"|[-\w.$]+)')     # a global's name where it is used


def vector_shape(ty: str) -> tuple[int, str] | None:
    """(lanes, element type) of a vector type of scalars `< N x T >`, else None."""
    m = _VECTOR.fullmatch(ty.strip())
    return (int(m.group(1)), m.group(2)) if m else None


def same_floats(a: str, b: str) -> bool:
    """Float types holding the same floats in another shape (double and <1 x double>): a
    bitcast between them moves no bits from one float to another."""
    sa, sb = vector_shape(a) or (1, a.strip()), vector_shape(b) or (1, b.strip())
    return sa[1].strip() in FLOAT_TYPES and (sa[0], sa[1].strip()) == (sb[0], sb[1].strip())


def compare_type(ty: str) -> str:
    """The type of a comparison of values of type ty (and of a select's condition over them):
    i1, or a vector of i1 with ty's lanes."""
    shape = vector_shape(ty)
    return f"<{shape[0]} x i1>" if shape else "i1"


def scalar_of(ty: str) -> str:
    """Element type of a vector type `< N x T >`, else the type itself."""
    if ty.startswith("<") and " x " in ty:
        return ty[1:-1].split(" x ", 1)[1].strip()
    return ty



def carries_float(ty: str) -> bool:
    """A float type, or an aggregate or vector holding floats (named types not looked into)."""
    return is_fp(ty) or (ty.startswith(("{", "[", "<{")) and any(
        f in ty for f in ("double", "float", "half", "x86_fp80", "fp128")))


def name_ref(name: str) -> re.Pattern:
    """A global's or local's name where it stands as a whole token of IR text."""
    return re.compile(r'(?<![-\w.$"])' + re.escape(name) + r'(?![-\w.$"])')


def adjoint_type_of(ty: str) -> str:
    """The type of a value's adjoint: its own for floats, the float of the same width for an
    integer that carries one's bits (i64: double, i32: float)."""
    return {64: "double", 32: "float"}.get(int_bits(ty), ty) if not is_fp(ty) else ty


def int_bits(ty: str) -> int:
    """Bits of an integer or integer-vector type (0 for anything else)."""
    elem = scalar_of(ty)
    if not (elem.startswith("i") and elem[1:].isdigit()):
        return 0
    n = int(ty.strip()[1:-1].split(" x ")[0]) if ty.startswith("<") else 1
    return n * int(elem[1:])

def is_fp(ty: str) -> bool:
    """Float, or a vector of floats."""
    return scalar_of(ty) in FLOAT_TYPES


_PRIM_SIZE = {"double": 8, "float": 4, "half": 2, "bfloat": 2, "x86_fp80": 16, "fp128": 16,
              "ptr": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16}


def type_size(ty: str, named: dict | None = None) -> int:
    """ABI size in bytes of an x86-64 type (named structs resolved through `named`)."""
    ty = ty.strip()
    if ty in _PRIM_SIZE:
        return _PRIM_SIZE[ty]
    if ty.startswith("i") and ty[1:].isdigit():
        return max(1, (int(ty[1:]) + 7) // 8)
    if ty.startswith("ptr"):
        return 8
    if ty.startswith("%") and named and ty in named:
        return type_size(named[ty], named)
    if ty.startswith("[") or (ty.startswith("<") and not ty.startswith("<{")):
        count, elem = ty[1:-1].split(" x ", 1)
        n = int(count)
        es = type_size(elem.strip(), named)
        if ty.startswith("<"):
            total = n * es
            p = 1
            while p < total:
                p *= 2
            return p
        return n * es
    if ty.startswith("{") or ty.startswith("<{"):
        packed = ty.startswith("<{")
        fields = split_fields(ty)
        off, align = 0, 1
        for f in fields:
            s, a = type_size(f, named), type_align(f, named)
            if not packed:
                off = (off + a - 1) // a * a
                align = max(align, a)
            off += s
        return (off + align - 1) // align * align
    raise ValueError(f"unknown type size: {ty}")


def type_align(ty: str, named: dict | None = None) -> int:
    ty = ty.strip()
    if ty.startswith("%") and named and ty in named:
        return type_align(named[ty], named)
    if ty.startswith("["):
        return type_align(ty[1:-1].split(" x ", 1)[1].strip(), named)
    if ty.startswith("{"):
        return max([type_align(f, named) for f in split_fields(ty)] or [1])
    if ty.startswith("<{"):
        return 1
    return min(16, max(1, type_size(ty, named)))


def split_fields(ty: str) -> list[str]:
    """Field types of a literal struct type text `{ a , b }` / `<{ a , b }>`."""
    toks = tokenize(ty)
    if toks[0] == "<":
        toks = toks[1:-1]
    toks = toks[1:-1]
    out, i = [], 0
    while i < len(toks):
        f, i = parse_type(toks, i)
        out.append(f)
        if i < len(toks) and toks[i] == ",":
            i += 1
    return out


def record_leaves(ty: str, path=()) -> list[tuple[list[int], str]]:
    """(index path, type) of every scalar field of a literal struct or array type, nested ones
    included, in order: the paths extractvalue and insertvalue take."""
    ty = ty.strip()
    if ty.startswith(("{", "<{")):
        return [leaf for k, f in enumerate(split_fields(ty)) for leaf in record_leaves(f, (*path, k))]
    if ty.startswith("["):
        n, elem = ty[1:-1].split(" x ", 1)
        return [leaf for k in range(int(n)) for leaf in record_leaves(elem, (*path, k))]
    return [(list(path), ty)]


def mixed_record(ty: str) -> bool:
    """A literal record holding pointers and floats (`{ ptr, double }` returned by value): its
    shadow carries the pointers' shadows, its adjoint the floats'."""
    return ty.startswith(("{", "[", "<{")) and "ptr" in ty and carries_float(ty)


_AFTER_PARAMS = re.compile(r"(?:\s+(?:local_unnamed_addr|unnamed_addr|addrspace\(\d+\)))*")


def fn_attr_position(text: str, open_paren: int) -> int:
    """Where a function attribute goes in a `define` whose parameter list opens at index
    `open_paren` of `text`: after the list's closing parenthesis (on the same line) and the
    `unnamed_addr` and `addrspace` markers, which LLVM's parser wants before any attribute."""
    depth, j = 0, open_paren
    while j < len(text) and text[j] != "\n":
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            break
        j += 1
    return _AFTER_PARAMS.match(text, j + 1).end()


def c_string(name: str, data: bytes) -> str:
    """The definition of a private constant `name` holding the bytes `data` (include the NUL of
    a C string), printable characters as they are and the others escaped."""
    esc = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
    return f'{name} = private unnamed_addr constant [{len(data)} x i8] c"{esc}"'


_ONE_ELEMENT = re.compile(r"^(?:\[ ?1 x (.+?) ?\]|\{ ?([^,{}]+?) ?\})$")


def one_element(ty: str) -> str | None:
    """The element type of `[1 x T]` / `{ T }` (T a scalar), else None."""
    m = _ONE_ELEMENT.match(ty.strip())
    return (m.group(1) or m.group(2)).strip() if m else None
