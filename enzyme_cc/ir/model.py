"""A Python model of LLVM IR functions, read from module text (`str(module)`).

Only what AD needs is structured: functions, parameters, blocks, instructions with opcode,
result name and type, typed operands, flags, metadata attachments. Every instruction keeps its
tokens, so it prints back exactly (with local names renamed on request).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lexer import tokenize, parse_type, parse_value, skip_balanced, join

FAST_MATH = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}
INT_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nneg", "samesign"}
BINARY = {"fadd", "fsub", "fmul", "fdiv", "frem", "add", "sub", "mul", "udiv", "sdiv", "urem",
          "srem", "shl", "lshr", "ashr", "and", "or", "xor"}
CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
         "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}
# Parameter/return attributes that may precede a type or follow it.
_RET_ATTR_ARGS = {"dereferenceable", "dereferenceable_or_null", "align", "nofpclass", "range",
                  "noundef", "nonnull", "noalias", "signext", "zeroext", "inreg", "returned"}


@dataclass
class Operand:
    ty: str
    value: str          # token text: '%x', '@g', '1.0', constant expression text

    @property
    def is_local(self) -> bool:
        return self.value.startswith("%")


@dataclass
class Inst:
    name: str | None           # local result name with '%' (None for void)
    op: str                    # opcode ('call' for tail/musttail calls too)
    ty: str                    # result type ('void' when none)
    toks: list[str]            # the whole instruction's tokens (without metadata attachments)
    md: dict[str, str]         # metadata attachments: kind -> '!N'
    block: "Block" = None
    ops: list[Operand] = field(default_factory=list)   # typed value operands, in textual order
    flags: list[str] = field(default_factory=list)     # fast-math / wrap flags
    pred: str | None = None                            # icmp/fcmp predicate
    callee: str | None = None                          # call/invoke: '@f' or '%fp'
    fnty: str | None = None                            # call/invoke: explicit function type if printed
    incoming: list[tuple[str, str]] = field(default_factory=list)  # phi: (value, block) pairs
    targets: list[str] = field(default_factory=list)   # terminators: successor labels
    src_ty: str | None = None                          # gep source type / alloca type / cast target
    indices: list[int] = field(default_factory=list)   # extractvalue/insertvalue indices
    line: int = -1                                     # line index in the module text
    line_end: int = -1                                 # its last line (multi-line instructions)

    def __str__(self):
        return join(self.toks)

    @property
    def is_terminator(self) -> bool:
        return self.op in ("ret", "br", "switch", "unreachable", "invoke", "resume", "indirectbr",
                           "callbr", "cleanupret", "catchret", "catchswitch")

    def locals_used(self) -> list[str]:
        return [o.value for o in self.ops if o.is_local]


@dataclass
class Block:
    label: str                 # local name with '%'
    insts: list[Inst] = field(default_factory=list)
    preds: list["Block"] = field(default_factory=list)

    @property
    def term(self) -> Inst:
        return self.insts[-1]

    @property
    def phis(self):
        return [i for i in self.insts if i.op == "phi"]


@dataclass
class Param:
    ty: str
    name: str
    attrs: list[str]


@dataclass
class Function:
    name: str                  # '@f'
    ret_ty: str
    params: list[Param]
    header: str                # the full `define ...` line
    attr_group: str | None     # '#N'
    blocks: list[Block]
    cconv: str = ""
    personality: str | None = None
    dbg: str | None = None

    def block(self, label: str) -> Block:
        return self._by_label[label]

    def index(self):
        self._by_label = {b.label: b for b in self.blocks}
        self.defs = {}
        for p in self.params:
            self.defs[p.name] = p
        for b in self.blocks:
            b.preds = []
        for b in self.blocks:
            for i in b.insts:
                i.block = b
                if i.name:
                    self.defs[i.name] = i
        for b in self.blocks:
            for t in b.term.targets:
                self._by_label[t].preds.append(b)
        return self

    def insts(self):
        for b in self.blocks:
            yield from b.insts


@dataclass
class Module:
    text: str
    named_types: dict[str, str]          # '%struct.S' -> '{ double , ptr }'
    globals: dict[str, str]              # '@g' -> its definition line
    functions: dict[str, Function]       # definitions, parsed lazily via function()
    declarations: dict[str, str]         # '@f' -> declare line
    attr_groups: dict[str, str]          # '#0' -> '{ ... }' text
    metadata: dict[str, str]             # '!5' -> right-hand side text
    _bodies: dict[str, tuple[int, int]] = field(default_factory=dict)
    _lines: list[str] = field(default_factory=list)

    def function(self, name: str) -> Function | None:
        if name in self.functions:
            return self.functions[name]
        span = self._bodies.get(name)
        if span is None:
            return None
        fn = parse_function(self._lines[span[0]:span[1]], self.named_types)
        for inst in fn.insts():
            inst.line += span[0]
            inst.line_end += span[0]
        self.functions[name] = fn
        return fn

    def defines(self, name: str) -> bool:
        return name in self._bodies

    def is_constant_global(self, name: str) -> bool:
        line = self.globals.get(name, "")
        return bool(re.search(r"=\s.*?\bconstant\b", line))


_GLOBAL_NAME = re.compile(r'^(@[-\w.$]+|@"[^"]*")\s*=')


def parse_module(text: str) -> Module:
    """Index a module's text; function bodies are parsed on demand."""
    lines = text.split("\n")
    m = Module(text, {}, {}, {}, {}, {}, {}, {}, lines)
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("define "):
            j = i
            while not lines[j].rstrip().endswith("{"):
                j += 1
            end = j + 1
            while lines[end] != "}":
                end += 1
            name = _define_name(" ".join(lines[i:j + 1]))
            m._bodies[name] = (i, end + 1)
            i = end + 1
            continue
        if line.startswith("%") and " = type " in line:
            nm, rhs = line.split(" = type ", 1)
            m.named_types[nm.strip()] = rhs.strip()
        elif line.startswith("@"):
            g = _GLOBAL_NAME.match(line)
            if g:
                m.globals[g.group(1)] = line
        elif line.startswith("declare "):
            m.declarations[_define_name(line)] = line
        elif line.startswith("attributes #"):
            k, rhs = line[len("attributes "):].split(" = ", 1)
            m.attr_groups[k.strip()] = rhs.strip()
        elif line.startswith("!"):
            k, _, rhs = line.partition(" = ")
            m.metadata[k.strip()] = rhs.strip()
        i += 1
    return m


def _define_name(line: str) -> str:
    toks = tokenize(line)
    for k, t in enumerate(toks):
        if t.startswith("@") and k + 1 < len(toks) and toks[k + 1] == "(":
            return t
    raise ValueError(f"cannot find function name in: {line[:80]}")


def split_commas(toks, i, end):
    """Split toks[i:end] at top-level commas into token lists."""
    parts, cur, depth = [], [], 0
    for t in toks[i:end]:
        if t in ("(", "[", "{", "<"):
            depth += 1
        elif t in (")", "]", "}", ">"):
            depth -= 1
        if t == "," and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        parts.append(cur)
    return parts


def parse_header(header: str, named_types) -> tuple:
    toks = tokenize(header)
    k = next(k for k, t in enumerate(toks) if t.startswith("@") and toks[k + 1] == "(")
    name = toks[k]
    ret_ty = _type_before(toks, k)
    cconv = next((t for t in toks[1:k] if t in ("fastcc", "coldcc", "ccc") or t.startswith("cc")
                  and t[2:].isdigit()), "")
    close = skip_balanced(toks, k + 1)
    params = []
    for part in split_commas(toks, k + 2, close - 1):
        if part == ["..."]:
            params.append(Param("...", "", []))
            continue
        ty, j = parse_type(part, 0)
        pname = part[-1] if len(part) > j and part[-1].startswith("%") else ""
        params.append(Param(ty, pname, part[j:len(part) - (1 if pname else 0)]))
    rest = toks[close:]
    group = next((t for t in rest if t.startswith("#") and t[1:].isdigit()), None)
    personality = dbg = None
    for q, t in enumerate(rest):
        if t == "personality":
            personality = parse_value(rest, q + 2)[0]
        if t == "!dbg":
            dbg = rest[q + 1]
    return name, ret_ty, cconv, params, group, personality, dbg


def _type_before(toks, k):
    """The return type printed just before the function name at toks[k]."""
    j = k - 1
    if toks[j] in (")", "]", "}", ">"):
        closer = toks[j]
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}[closer]
        depth = 0
        while True:
            if toks[j] == closer:
                depth += 1
            elif toks[j] == opener:
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if opener == "{" and j > 0 and toks[j - 1] == "<":
            j -= 1
        return " ".join(toks[j:k])
    return toks[j]


def parse_function(lines: list[str], named_types) -> Function:
    hdr_end = 0
    while not lines[hdr_end].rstrip().endswith("{"):
        hdr_end += 1
    header = " ".join(lines[:hdr_end + 1])
    name, ret_ty, cconv, params, group, personality, dbg = parse_header(header, named_types)
    numbered = [int(p.name[1:]) for p in params if p.name[1:].isdigit()]
    entry_label = "%" + str(max(numbered) + 1 if numbered else 0)
    blocks: list[Block] = []
    cur = None
    # Instructions spanning several lines (invoke's `to label`, switch tables, landingpad
    # clauses) are joined first; each keeps the index of its first line.
    joined: list[tuple[int, str]] = []
    open_table = False
    for lineno, raw in enumerate(lines[hdr_end + 1:-1], hdr_end + 1):
        s = raw.strip()
        if not s or s.startswith(";") or s.startswith("#dbg_"):
            continue
        if joined and (open_table or s.startswith(("to label", "cleanup", "catch ", "filter "))):
            joined[-1] = (joined[-1][0], joined[-1][1] + " " + s, lineno)
            open_table = open_table and "]" not in s
            continue
        joined.append((lineno, s, lineno))
        open_table = s.rstrip().endswith("[") or (" [" in s and s.split(";")[0].startswith(
            ("switch", "indirectbr")) and "]" not in s)
    for lineno, s, last in joined:
        lab = re.match(r'^("[^"]*"|[-\w.$]+):', s)
        if lab and not s.startswith("%"):
            cur = Block("%" + lab.group(1))
            blocks.append(cur)
            continue
        if cur is None:
            cur = Block(entry_label)
            blocks.append(cur)
        inst = parse_inst(s, named_types)
        inst.line, inst.line_end = lineno, last
        cur.insts.append(inst)
    fn = Function(name, ret_ty, params, header, group, blocks, cconv, personality, dbg)
    return fn.index()


def _strip_md(toks):
    md = {}
    while len(toks) >= 3 and toks[-2].startswith("!") and toks[-3] == ",":
        md[toks[-2]] = toks[-1]
        toks = toks[:-3]
    # `!{...}` inline attachments
    while len(toks) >= 4 and toks[-1] == "}" and "!" in toks:
        k = len(toks) - 1
        while toks[k] != "!{" and k > 0:
            k -= 1
        if k < 2 or toks[k - 2] != ",":
            break
        md[toks[k - 1]] = " ".join(toks[k:])
        toks = toks[:k - 2]
    return toks, md


def parse_inst(line: str, named_types=None) -> Inst:
    if named_types is not None and named_types is not _NAMED_TYPES:
        _NAMED_TYPES.clear()
        _NAMED_TYPES.update(named_types)
    toks, md = _strip_md(tokenize(line))
    name = None
    body = toks
    if len(toks) > 2 and toks[1] == "=" and toks[0].startswith("%"):
        name, body = toks[0], toks[2:]
    k = 0
    while body[k] in ("tail", "musttail", "notail"):
        k += 1
    op = body[k]
    inst = Inst(name, op, "void", toks, md)
    p = _PARSERS.get(op)
    if p:
        p(inst, body, k + 1)
    return inst


def _flags(inst, body, i, allowed):
    while i < len(body) and body[i] in allowed:
        inst.flags.append(body[i])
        i += 1
    return i


def _typed_list(inst, body, i, end=None):
    for part in split_commas(body, i, len(body) if end is None else end):
        if not part:
            continue
        ty, j = parse_type(part, 0)
        j = _skip_attrs(part, j)
        if j < len(part):
            inst.ops.append(Operand(ty, parse_value(part, j)[0]))


_TYPE_WORDS = {"void", "double", "float", "half", "bfloat", "x86_fp80", "fp128", "ppc_fp128", "ptr",
               "label", "token", "x86_amx", "target"}
_VALUE_WORDS = {"null", "true", "false", "undef", "poison", "zeroinitializer", "none", "splat",
                "blockaddress", "dso_local_equivalent", "no_cfi", "ptrauth", "asm", "metadata"}


def _skip_attrs(part, j):
    """Skip parameter attributes (noundef, align 8, captures(none), dead_on_return, sret(T), any
    other bare word with optional parenthesized argument) up to the value itself."""
    from .lexer import _CONST_EXPR
    while j < len(part) - 1:
        t = part[j]
        if t in _VALUE_WORDS or t in _CONST_EXPR or t in _TYPE_WORDS or re.match(r"^i\d+$", t) \
                or not re.match(r"^[a-z_][a-z0-9_]*$", t):
            break
        j += 1
        if j < len(part) and part[j] == "(":
            j = skip_balanced(part, j)
        elif t == "align" and part[j].isdigit():
            j += 1
    return j


def _p_binary(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH | INT_FLAGS)
    ty, i = parse_type(body, i)
    inst.ty = ty
    a, i = parse_value(body, i)
    b, _ = parse_value(body, i + 1)
    inst.ops = [Operand(ty, a), Operand(ty, b)]


def _p_fneg(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    ty, i = parse_type(body, i)
    inst.ty = ty
    inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_cmp(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH | {"samesign"})
    inst.pred = body[i]
    ty, i = parse_type(body, i + 1)
    a, i = parse_value(body, i)
    b, _ = parse_value(body, i + 1)
    inst.ops = [Operand(ty, a), Operand(ty, b)]
    inst.ty = "i1" if not ty.startswith("<") else "<" + ty[1:].split(" x ")[0] + " x i1 >"


def _p_cast(inst, body, i):
    i = _flags(inst, body, i, INT_FLAGS | FAST_MATH)
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    inst.ops = [Operand(ty, v)]
    inst.ty, _ = parse_type(body, i + 1)      # after 'to'
    inst.src_ty = ty


def _p_select(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    _typed_list(inst, body, i)
    inst.ty = inst.ops[1].ty


def _p_phi(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    ty, i = parse_type(body, i)
    inst.ty = ty
    for part in split_commas(body, i, len(body)):
        # part = ['[', value..., ',', '%bb', ']'] already split at top-level; inside brackets
        inner = part[1:-1]
        cm = max(k for k, t in enumerate(inner) if t == ",")
        val = " ".join(inner[:cm])
        inst.incoming.append((val, inner[cm + 1]))
        inst.ops.append(Operand(ty, val))


def _p_load(inst, body, i):
    while body[i] in ("volatile", "atomic"):
        inst.flags.append(body[i])
        i += 1
    ty, i = parse_type(body, i)
    inst.ty = ty
    pty, j = parse_type(body, i + 1)
    inst.ops = [Operand(pty, parse_value(body, j)[0])]


def _p_store(inst, body, i):
    while body[i] in ("volatile", "atomic"):
        inst.flags.append(body[i])
        i += 1
    parts = split_commas(body, i, len(body))
    for part in parts[:2]:
        ty, j = parse_type(part, 0)
        inst.ops.append(Operand(ty, parse_value(part, j)[0]))


def _p_gep(inst, body, i):
    while body[i] in ("inbounds", "nuw", "nusw") or body[i] == "inrange":
        if body[i] == "inrange":
            i = skip_balanced(body, i + 1)
            continue
        inst.flags.append(body[i])
        i += 1
    parts = split_commas(body, i, len(body))
    inst.src_ty = " ".join(parts[0])
    for part in parts[1:]:
        if part[0] == "inrange":
            part = part[skip_balanced(part, 1):]
        ty, j = parse_type(part, 0)
        inst.ops.append(Operand(ty, parse_value(part, j)[0]))
    inst.ty = inst.ops[0].ty if not any(o.ty.startswith("<") for o in inst.ops) else \
        next(o.ty for o in inst.ops if o.ty.startswith("<")).split(" x ")[0] + " x ptr >"


def _p_alloca(inst, body, i):
    if body[i] == "inalloca":
        i += 1
    ty, i = parse_type(body, i)
    inst.src_ty = ty
    inst.ty = "ptr"
    parts = split_commas(body, i, len(body))
    for part in parts:
        if part and part[0] not in ("align", "addrspace"):
            t2, j = parse_type(part, 0)
            inst.ops.append(Operand(t2, parse_value(part, j)[0]))


def _p_call(inst, body, i):
    # [fast-math] [cconv] [ret attrs] <ty> [(fnargs)] <callee>(args) [fn attrs] [bundles]
    i = _flags(inst, body, i, FAST_MATH)
    while body[i] in ("fastcc", "coldcc", "ccc", "swiftcc", "tailcc") or \
            (body[i].startswith("cc") and body[i][2:].isdigit()):
        i += 1
    i = _skip_attrs(body, i)
    ty, i = parse_type(body, i)
    if body[i] == "(":                      # explicit function type: ret (params)
        j = skip_balanced(body, i)
        inst.fnty = ty + " " + " ".join(body[i:j])
        i = j
    inst.ty = ty
    if body[i] == "asm":                    # inline asm: asm [flags] "code", "constraints"
        while body[i] != "," or not body[i - 1].startswith('"'):
            i += 1
        callee, i = "asm", i + 2
    else:
        callee, i = parse_value(body, i)
    inst.callee = callee
    close = skip_balanced(body, i)
    _typed_list(inst, body, i + 1, close - 1)
    rest = body[close:]
    if inst.op == "invoke":
        inst.targets = [t for k, t in enumerate(rest) if k > 0 and rest[k - 1] == "label"]


def _p_br(inst, body, i):
    inst.targets = [body[k + 1] for k in range(i, len(body) - 1) if body[k] == "label"]
    if body[i] == "i1":
        inst.ops = [Operand("i1", body[i + 1])]


def _p_switch(inst, body, i):
    ty, i = parse_type(body, i)
    inst.ops = [Operand(ty, body[i])]
    inst.targets = [body[k + 1] for k in range(i, len(body) - 1) if body[k] == "label"]


def _p_ret(inst, body, i):
    if body[i] != "void":
        ty, i = parse_type(body, i)
        inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_extractvalue(inst, body, i):
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    inst.ops = [Operand(ty, v)]
    inst.indices = [int(t) for t in body[i:] if t.lstrip("-").isdigit()]
    inst.ty = element_type(ty, inst.indices, _NAMED_TYPES)


_NAMED_TYPES: dict = {}


def element_type(ty: str, indices, named) -> str:
    """Type reached by extractvalue-style indices into an aggregate type."""
    from .lexer import split_fields
    for k in indices:
        ty = named.get(ty.strip(), ty).strip()
        if ty.startswith(("{", "<{")):
            ty = split_fields(ty)[k]
        elif ty.startswith("["):
            ty = ty[1:-1].split(" x ", 1)[1].strip()
        else:
            return "void"
    return ty


def _p_insertvalue(inst, body, i):
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    ety, j = parse_type(body, i + 1)
    e, j = parse_value(body, j)
    inst.ops = [Operand(ty, v), Operand(ety, e)]
    inst.indices = [int(t) for t in body[j:] if t.lstrip("-").isdigit()]
    inst.ty = ty


def _p_freeze(inst, body, i):
    ty, i = parse_type(body, i)
    inst.ty = ty
    inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_generic(inst, body, i):
    """Vector ops, landingpad, ...: typed operand list; result type = first operand's."""
    try:
        _typed_list(inst, body, i)
    except (ValueError, IndexError):
        pass


def _vector_parts(ty: str):
    """'< 4 x double >' -> (4, 'double')."""
    n, elem = ty.strip()[1:-1].split(" x ", 1)
    return int(n), elem.strip()


def _p_extractelement(inst, body, i):
    _p_generic(inst, body, i)
    if inst.ops and inst.ops[0].ty.startswith("<"):
        inst.ty = _vector_parts(inst.ops[0].ty)[1]


def _p_insertelement(inst, body, i):
    _p_generic(inst, body, i)
    if inst.ops:
        inst.ty = inst.ops[0].ty


def _p_shufflevector(inst, body, i):
    """ops: the two vectors and the mask; inst.indices: the mask (-1 for a poison lane)."""
    _p_generic(inst, body, i)
    if len(inst.ops) != 3 or not inst.ops[0].ty.startswith("<"):
        return
    m, _ = _vector_parts(inst.ops[2].ty)
    inst.ty = f"< {m} x {_vector_parts(inst.ops[0].ty)[1]} >"
    mask = inst.ops[2].value
    if mask == "zeroinitializer":
        inst.indices = [0] * m
    elif mask in ("poison", "undef"):
        inst.indices = [-1] * m
    else:
        lanes = [t for t in tokenize(mask) if t not in ("<", ">", ",", "i32")]
        inst.indices = [int(t) if t.lstrip("-").isdigit() else -1 for t in lanes]


def _p_atomicrmw(inst, body, i):
    """[volatile] <operation> ptr %p, <ty> %v [syncscope] <ordering>: ops [p, v]; inst.pred is
    the operation; the result (the old value) has v's type."""
    if body[i] == "volatile":
        i += 1
    inst.pred = body[i]
    ty, j = parse_type(body, i + 1)
    p, j = parse_value(body, j)
    vty, j = parse_type(body, j + 1)
    v, j = parse_value(body, j)
    inst.ops = [Operand(ty, p), Operand(vty, v)]
    inst.ty = vty


def _p_cmpxchg(inst, body, i):
    while body[i] in ("weak", "volatile"):
        i += 1
    ty, j = parse_type(body, i)
    p, j = parse_value(body, j)
    cty, j = parse_type(body, j + 1)
    c, j = parse_value(body, j)
    nty, j = parse_type(body, j + 1)
    n, j = parse_value(body, j)
    inst.ops = [Operand(ty, p), Operand(cty, c), Operand(nty, n)]
    inst.ty = "{ " + cty + ", i1 }"


_PARSERS = {**{op: _p_binary for op in BINARY}, **{op: _p_cast for op in CASTS},
            "fneg": _p_fneg, "icmp": _p_cmp, "fcmp": _p_cmp, "select": _p_select, "phi": _p_phi,
            "load": _p_load, "store": _p_store, "getelementptr": _p_gep, "alloca": _p_alloca,
            "call": _p_call, "invoke": _p_call, "br": _p_br, "switch": _p_switch, "ret": _p_ret,
            "extractvalue": _p_extractvalue, "insertvalue": _p_insertvalue, "freeze": _p_freeze,
            "extractelement": _p_extractelement, "insertelement": _p_insertelement,
            "shufflevector": _p_shufflevector, "atomicrmw": _p_atomicrmw, "cmpxchg": _p_cmpxchg}


def rename_tokens(toks, mapping: dict[str, str]) -> str:
    return join(mapping.get(t, t) for t in toks)
