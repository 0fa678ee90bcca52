"""An LLVM IR instruction and its operands, as the model (model.py) keeps them and the
instruction parser (inst_parse.py) builds them, with the opcode and flag sets both use."""
from __future__ import annotations

from dataclasses import dataclass, field

from .lexer import join, skip_balanced

FAST_MATH = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}
# the fast-math flags a call may carry in IR text, each followed by a space (for text passes)
FAST_MATH_FLAGS_RE = "(?:(?:" + "|".join(sorted(FAST_MATH)) + ") )*"
INT_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nneg", "samesign"}
BINARY = {"fadd", "fsub", "fmul", "fdiv", "frem", "add", "sub", "mul", "udiv", "sdiv", "urem",
          "srem", "shl", "lshr", "ashr", "and", "or", "xor"}
CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
         "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}


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
    block: object = None       # its model.Block, set by Function.index
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


def argument_groups(toks, name):
    """(open, close, arguments) of the call of `name` in toks: the index of the '(' after it,
    the index just after the matching ')', and each argument's tokens; None where name is not
    followed by '('."""
    for i in range(len(toks) - 1):
        if toks[i] == name and toks[i + 1] == "(":
            end = skip_balanced(toks, i + 1)
            return i + 1, end, split_commas(toks, i + 2, end - 1)
    return None


def with_arguments(toks, open_, close, groups) -> list:
    """toks with the arguments between positions open_ and close (argument_groups) replaced by
    the token lists of groups."""
    args = []
    for g in groups:
        args += ([","] if args else []) + g
    return toks[:open_ + 1] + args + toks[close - 1:]
