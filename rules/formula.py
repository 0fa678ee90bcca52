"""Derivative formulas written as Python expressions, compiled to LLVM IR with `ast` (never eval).

A formula sees the call's arguments by the names the rule gives them, `r` for the call's result,
numeric constants, + - * / ** and unary -, comparisons inside `where(cond, a, b)`, `float(n)` for
integer arguments, and the math functions in FUNCS.
"""
import ast

from enzyme_cc.errors import UserError

# name -> (LLVM intrinsic base or None, libm name)
FUNCS = {
    "sin": ("llvm.sin", "sin"), "cos": ("llvm.cos", "cos"), "exp": ("llvm.exp", "exp"),
    "log": ("llvm.log", "log"), "sqrt": ("llvm.sqrt", "sqrt"), "fabs": ("llvm.fabs", "fabs"),
    "pow": ("llvm.pow", "pow"), "exp2": ("llvm.exp2", "exp2"), "log2": ("llvm.log2", "log2"),
    "tan": (None, "tan"), "tanh": (None, "tanh"), "cosh": (None, "cosh"),
    "sinh": (None, "sinh"), "atan": (None, "atan"), "erf": (None, "erf"), "copysign":
    ("llvm.copysign", "copysign"), "floor": ("llvm.floor", "floor"), "exp10": (None, "exp10"),
    "tgamma": (None, "tgamma"), "digamma": (None, None),
}
_SUFFIX = {"double": "f64", "float": "f32", "x86_fp80": "f80", "fp128": "f128", "half": "f16"}
_CMP = {ast.Gt: "ogt", ast.GtE: "oge", ast.Lt: "olt", ast.LtE: "ole", ast.Eq: "oeq",
        ast.NotEq: "une"}
_BIN = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}


def parse(expr: str, where: str) -> ast.expr:
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError as e:
        raise UserError(f"{where}: cannot parse formula '{expr}': {e.msg}")


def fconst(x: float, ty: str) -> str:
    """An exactly representable IR float literal (hex of the double value)."""
    import struct
    if ty == "float":           # LLVM wants float literals as doubles exactly representable in float
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


class FormulaCompiler:
    """Emits IR for formulas into `emit` (a callable taking one line); `tmp()` gives fresh names."""

    def __init__(self, emit, tmp, declare, ty: str, env: dict[str, tuple[str, str]], where: str):
        self.emit, self.tmp, self.declare, self.ty, self.env, self.where = \
            emit, tmp, declare, ty, env, where

    def compile(self, node) -> str:
        ty = self.ty
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return fconst(node.value, ty)
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise UserError(f"{self.where}: unknown name '{node.id}' in formula")
            val, vty = self.env[node.id]
            if vty != ty:
                raise UserError(f"{self.where}: '{node.id}' is {vty}, use float({node.id})")
            return val
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self.compile(node.operand)
            return self._inst(f"fneg {ty} {a}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.compile(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            a, b = self.compile(node.left), self.compile(node.right)
            return self._inst(f"{_BIN[type(node.op)]} {ty} {a}, {b}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            a, b = self.compile(node.left), self.compile(node.right)
            return self._call("pow", [a, b])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fname, args = node.func.id, node.args
            if fname == "where" and len(args) == 3:
                c = self._cond(args[0])
                a, b = self.compile(args[1]), self.compile(args[2])
                return self._inst(f"select i1 {c}, {ty} {a}, {ty} {b}")
            if fname == "float" and len(args) == 1 and isinstance(args[0], ast.Name):
                val, vty = self.env[args[0].id]
                return self._inst(f"sitofp {vty} {val} to {ty}")
            if fname in FUNCS:
                return self._call(fname, [self.compile(a) for a in args])
        raise UserError(f"{self.where}: unsupported formula element '{ast.unparse(node)}'")

    def _cond(self, node) -> str:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
            a, b = self.compile(node.left), self.compile(node.comparators[0])
            return self._inst(f"fcmp {_CMP[type(node.ops[0])]} {self.ty} {a}, {b}")
        raise UserError(f"{self.where}: where() needs one comparison, got '{ast.unparse(node)}'")

    def _inst(self, text: str) -> str:
        name = self.tmp()
        self.emit(f"{name} = {text}")
        return name

    def _call(self, fname: str, args: list[str]) -> str:
        intr, libm = FUNCS[fname]
        ty = self.ty
        if intr:
            callee = f"{intr}.{_SUFFIX[ty]}"
        else:
            callee = libm + ("f" if ty == "float" else "")
        self.declare(callee, ty, len(args))
        argtext = ", ".join(f"{ty} {a}" for a in args)
        return self._inst(f"call {ty} @{callee}({argtext})")
