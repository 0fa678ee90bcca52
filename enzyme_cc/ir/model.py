"""A Python model of LLVM IR functions, read from module text (`str(module)`).

Only what AD needs is structured: functions, parameters, blocks, instructions with opcode,
result name and type, typed operands, flags, metadata attachments. Every instruction keeps its
tokens, so it prints back exactly (with local names renamed on request).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lexer import tokenize, parse_type, parse_value, skip_balanced, join
from .inst import (BINARY, CASTS, FAST_MATH, INT_FLAGS, Inst, Operand,  # noqa: F401 (re-exported)
                   split_commas)
from .inst_parse import parse_inst

# Parameter/return attributes that may precede a type or follow it.
_RET_ATTR_ARGS = {"dereferenceable", "dereferenceable_or_null", "align", "nofpclass", "range",
                  "noundef", "nonnull", "noalias", "signext", "zeroext", "inreg", "returned"}


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
        """The phis, which lead the block (LLVM's rule): the scan stops at the first other
        instruction (asked for about once per block and analysis)."""
        out = []
        for i in self.insts:
            if i.op != "phi":
                break
            out.append(i)
        return out


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

    def users(self) -> dict[str, list]:
        """Local value -> the instructions using it (phi incomings included), each once, in
        order. Computed afresh: a rewrite of the function changes it."""
        out: dict[str, list] = {}
        for inst in self.insts():
            for v in dict.fromkeys(inst.locals_used()):
                out.setdefault(v, []).append(inst)
        return out


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
        fn = self.fresh_function(name)
        if fn is not None:
            self.functions[name] = fn
        return fn

    def fresh_function(self, name: str) -> Function | None:
        """A new parse of a definition, shared with no one (a copy to rewrite)."""
        span = self._bodies.get(name)
        if span is None:
            return None
        fn = parse_function(self._lines[span[0]:span[1]], self.named_types)
        for inst in fn.insts():
            inst.line += span[0]
            inst.line_end += span[0]
        return fn

    def defines(self, name: str) -> bool:
        return name in self._bodies

    @property
    def triple(self) -> str:
        """The module's target triple ("" where it names none)."""
        m = re.search(r'^target triple = "([^"]*)"', self.text, re.M)
        return m.group(1) if m else ""

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


def parse_header(header: str, named_types) -> tuple:
    toks = tokenize(header)
    k = next(k for k, t in enumerate(toks) if t.startswith("@") and toks[k + 1] == "(")
    name = toks[k]
    ret_ty = _type_before(toks, k)
    cconv = next((t for t in toks[1:k] if t in ("fastcc", "coldcc", "ccc", "preserve_allcc",
                                                  "preserve_mostcc") or
                  t.startswith("cc") and t[2:].isdigit()), "")
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


_LABEL = re.compile(r'^("[^"]*"|[-\w.$]+):')


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
        # (a block may be named `cleanup:` too: a C label, kept by -fsanitize=address)
        clause = s.startswith(("to label", "catch ", "filter ")) or \
            s.startswith("cleanup") and not _LABEL.match(s)
        if joined and (open_table or clause):
            joined[-1] = (joined[-1][0], joined[-1][1] + " " + s, lineno)
            open_table = open_table and "]" not in s
            continue
        joined.append((lineno, s, lineno))
        open_table = s.rstrip().endswith("[") or (" [" in s and s.split(";")[0].startswith(
            ("switch", "indirectbr")) and "]" not in s)
    for lineno, s, last in joined:
        lab = _LABEL.match(s)
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


def rename_tokens(toks, mapping: dict[str, str]) -> str:
    return join(mapping.get(t, t) for t in toks)

