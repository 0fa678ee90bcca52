"""Derivative formulas written as Python expressions, compiled to LLVM IR with `ast` (never eval).

A formula sees the call's arguments by the names the rule gives them, `r` for the call's result,
numeric constants, + - * / ** and unary -, comparisons inside `where(cond, a, b)`, `float(n)` for
integer arguments, the math functions in FUNCS and the formula-defined functions in MACROS
(digamma). `check` validates a formula when its rule file is loaded; `FormulaCompiler` emits it.
User-facing description: docs/rules.md.
"""
import struct
import ast

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import compare_type, float_cast, vector_shape

# name -> (LLVM intrinsic base or None, libm name); the float variant of a libm name ends in 'f'
FUNCS = {
    "sin": ("llvm.sin", "sin"), "cos": ("llvm.cos", "cos"), "tan": (None, "tan"),
    "asin": (None, "asin"), "acos": (None, "acos"), "atan": (None, "atan"),
    "atan2": (None, "atan2"), "sinh": (None, "sinh"), "cosh": (None, "cosh"),
    "tanh": (None, "tanh"), "asinh": (None, "asinh"), "acosh": (None, "acosh"),
    "atanh": (None, "atanh"), "exp": ("llvm.exp", "exp"), "exp2": ("llvm.exp2", "exp2"),
    "exp10": (None, "exp10"), "expm1": (None, "expm1"), "log": ("llvm.log", "log"),
    "log2": ("llvm.log2", "log2"), "log10": ("llvm.log10", "log10"), "log1p": (None, "log1p"),
    "pow": ("llvm.pow", "pow"), "sqrt": ("llvm.sqrt", "sqrt"), "cbrt": (None, "cbrt"),
    "hypot": (None, "hypot"), "fabs": ("llvm.fabs", "fabs"),
    "copysign": ("llvm.copysign", "copysign"), "fmin": ("llvm.minnum", "fmin"),
    "fmax": ("llvm.maxnum", "fmax"), "floor": ("llvm.floor", "floor"),
    "ceil": ("llvm.ceil", "ceil"), "trunc": ("llvm.trunc", "trunc"),
    "round": ("llvm.round", "round"), "erf": (None, "erf"), "erfc": (None, "erfc"),
    "tgamma": (None, "tgamma"), "lgamma": (None, "lgamma"),
    "j0": (None, "j0"), "j1": (None, "j1"), "y0": (None, "y0"), "y1": (None, "y1"),
    "jn": (None, "jn"), "yn": (None, "yn"),
}
# functions whose first argument is an `int` (the order of jn, yn): given as an integer rule
# argument, plus or minus an integer constant
_INT_FIRST = ("jn", "yn")

# Functions defined by formulas of their own (inlined where used; arguments are evaluated once).
# digamma (psi = Gamma'/Gamma) is not in libm: for x >= 0 the recurrence
# psi(x) = psi(x + 10) - sum 1/(x + k), k = 0..9, then the asymptotic series at w = x + 10 >= 10
# (truncation error below 1e-15); for x < 0 the reflection psi(x) = psi(1 - x) - pi / tan(pi x).
MACROS = {
    "digamma": (["x"], "where(x < 0, _digamma_pos(1 - x) - 3.141592653589793 / "
                       "tan(3.141592653589793 * x), _digamma_pos(x))"),
    "_digamma_pos": (["z"], "_digamma_asym(z + 10) - (1/z + 1/(z + 1) + 1/(z + 2) + 1/(z + 3) + "
                            "1/(z + 4) + 1/(z + 5) + 1/(z + 6) + 1/(z + 7) + 1/(z + 8) + "
                            "1/(z + 9))"),
    "_digamma_asym": (["w"], "log(w) - 0.5 / w - _digamma_series(1 / (w * w))"),
    "_digamma_series": (["t"], "t * (1/12 - t * (1/120 - t * (1/252 - t * (1/240 - t * (1/132 - "
                               "t * 691/32760)))))"),
}

BUILTINS = ("where", "float")   # where(cond, a, b), float(n)
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
    """An exactly representable IR float literal of type ty (hex of the value); a splat for a
    vector type."""
    if ty.startswith("<"):
        n, elem = ty.strip()[1:-1].split(" x ", 1)
        lit = f"{elem.strip()} {fconst(x, elem.strip())}"
        return "<" + ", ".join([lit] * int(n)) + ">"
    if ty == "float":           # LLVM wants float literals as doubles exactly representable in float
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    if ty == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", x))[0]
    if ty == "bfloat":
        return "0xR%04X" % (struct.unpack("<I", struct.pack("<f", x))[0] >> 16)
    bits = struct.unpack("<Q", struct.pack("<d", float(x)))[0]
    if ty not in ("x86_fp80", "fp128"):
        return "0x%016X" % bits
    sign, exp, frac = bits >> 63, (bits >> 52) & 0x7FF, bits & ((1 << 52) - 1)
    if exp == 0 and frac == 0:
        e, m = 0, 0
    elif exp == 0x7FF:                               # inf / nan
        e, m = 0x7FFF, frac
    else:
        if exp == 0:                                 # a subnormal double is normal in both
            shift = 53 - frac.bit_length()
            frac, exp = (frac << shift) & ((1 << 52) - 1), 1 - shift
        e, m = exp - 1023 + 16383, frac
    if ty == "x86_fp80":                             # explicit integer bit, 64-bit mantissa
        lead = 0 if e == 0 else 1 << 63
        return "0xK%04X%016X" % ((sign << 15) | e, lead | (m << 11))
    hi = (sign << 63) | (e << 48) | (m >> 4)         # fp128: 112-bit fraction, LLVM prints
    lo = (m & 0xF) << 60                             # the low 64 bits first
    return "0xL%016X%016X" % (lo, hi)


_ARITY = {"pow": 2, "atan2": 2, "hypot": 2, "copysign": 2, "fmin": 2, "fmax": 2, "jn": 2,
          "yn": 2}
_LIBM_SUFFIX = {"double": "", "float": "f", "x86_fp80": "l"}    # (x86-64's long double)


def callees(fname: str, ty: str) -> set[str]:
    """The names a call of formula function fname on type ty has in IR (libm, intrinsic)."""
    intr, libm = FUNCS[fname]
    out = {libm + _LIBM_SUFFIX[ty]} if ty in _LIBM_SUFFIX else set()
    if intr and ty in _SUFFIX:
        out.add(f"{intr}.{_SUFFIX[ty]}")
    return out


def check(node, names, where: str) -> set[str]:
    """Checks a parsed formula before it is ever compiled: every name is one of `names` (the
    rule's arguments and `r`), every call is where()/float()/a function of FUNCS or MACROS with
    the right number of arguments. Returns the names it uses."""
    used = set()

    def bad(msg):
        raise UserError(f"{where}: {msg} in formula '{ast.unparse(root)}'")

    def walk(n):
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool) or not isinstance(n.value, (int, float)):
                bad(f"unsupported constant {n.value!r}")
        elif isinstance(n, ast.Name):
            if n.id not in names:
                bad(f"unknown name '{n.id}' (known: {', '.join(sorted(names))})")
            used.add(n.id)
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            walk(n.operand)
        elif isinstance(n, ast.BinOp) and (type(n.op) in _BIN or isinstance(n.op, ast.Pow)):
            walk(n.left), walk(n.right)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and not n.keywords:
            f, args = n.func.id, n.args
            if f == "where":
                if len(args) != 3:
                    bad("where() takes 3 arguments (condition, value if true, value if false)")
                c = args[0]
                if not (isinstance(c, ast.Compare) and len(c.ops) == 1 and type(c.ops[0]) in _CMP):
                    bad(f"where() needs one comparison (< <= > >= == !=), got "
                        f"'{ast.unparse(c)}'")
                walk(c.left), walk(c.comparators[0]), walk(args[1]), walk(args[2])
            elif f == "float":
                if len(args) != 1 or not isinstance(args[0], ast.Name):
                    bad("float() takes one argument name")
                walk(args[0])
            elif f in FUNCS or f in MACROS:
                want = len(MACROS[f][0]) if f in MACROS else _ARITY.get(f, 1)
                if len(args) != want:
                    bad(f"{f}() takes {want} argument{'s' if want > 1 else ''}")
                for x in args:
                    walk(x)
            else:
                bad(f"unknown function '{f}'")
        else:
            bad(f"unsupported element '{ast.unparse(n)}'")

    root = node
    walk(node)
    return used


class FormulaCompiler:
    """Emits IR for formulas into `emit` (a callable taking one line); `tmp()` gives fresh names."""

    def __init__(self, emit, tmp, declare, ty: str, env: dict[str, tuple[str, str]], where: str,
                 known: dict | None = None):
        self.emit, self.tmp, self.declare, self.ty, self.env, self.where = \
            emit, tmp, declare, ty, env, where
        self.known = known or {}      # (function, argument values) -> a value that holds it

    def compile(self, node) -> str:
        ty = self.ty
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return fconst(node.value, ty)
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise UserError(f"{self.where}: unknown name '{node.id}' in formula")
            val, vty = self.env[node.id]
            if vty != ty and vty in _SUFFIX and ty in _SUFFIX:      # e.g. a float argument of
                return self._inst(f"{float_cast(vty, ty)} {vty} {val} to {ty}")  # of a double fn
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
                return self._inst(f"select {compare_type(ty)} {c}, {ty} {a}, {ty} {b}")
            if fname == "float" and len(args) == 1 and isinstance(args[0], ast.Name):
                if args[0].id not in self.env:
                    raise UserError(f"{self.where}: unknown name '{args[0].id}' in formula")
                val, vty = self.env[args[0].id]
                if vty == ty:
                    return val
                if (vector_shape(vty) or (None, vty))[1].startswith("i"):   # (or lanes of ints)
                    return self._inst(f"sitofp {vty} {val} to {ty}")
                raise UserError(f"{self.where}: float({args[0].id}): '{args[0].id}' is {vty}")
            if fname in MACROS:
                params, body = MACROS[fname]
                env = {p: (self.compile(a), ty) for p, a in zip(params, args)}
                sub = FormulaCompiler(self.emit, self.tmp, self.declare, ty, env, self.where)
                return sub.compile(_macro_ast(fname))
            if fname in _INT_FIRST:
                order, ity = self._integer(args[0])
                x = self.compile(args[1])
                callee = FUNCS[fname][1] + _LIBM_SUFFIX.get(self.ty, "")
                # (declared by the program, whose call of it the rule differentiates)
                return self._inst(f"call {self.ty} @{callee}({ity} {order}, {self.ty} {x})")
            if fname in FUNCS:
                vals = [self.compile(a) for a in args]
                return self.known.get((fname, tuple(vals))) or self._call(fname, vals)
        raise UserError(f"{self.where}: unsupported formula element '{ast.unparse(node)}'")

    def _integer(self, node) -> tuple[str, str]:
        """(value, type) of an integer argument `n`, `n + k` or `n - k` (k an integer)."""
        if isinstance(node, ast.Name) and self.env.get(node.id, ("", ""))[1].startswith("i"):
            return self.env[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                isinstance(node.right, ast.Constant) and isinstance(node.right.value, int):
            v, ity = self._integer(node.left)
            op = "add" if isinstance(node.op, ast.Add) else "sub"
            return self._inst(f"{op} {ity} {v}, {node.right.value}"), ity
        raise UserError(f"{self.where}: the order of jn()/yn() must be an integer argument, "
                        f"plus or minus an integer, not '{ast.unparse(node)}'")

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
        if intr and ty.startswith("<"):
            n, elem = ty.strip()[1:-1].split(" x ", 1)
            callee = f"{intr}.v{n.strip()}{_SUFFIX[elem.strip()]}"
        elif intr:
            callee = f"{intr}.{_SUFFIX[ty]}"
        elif ty in _LIBM_SUFFIX:
            callee = libm + _LIBM_SUFFIX[ty]
        else:
            raise UserError(f"{self.where}: {fname}() has no {ty} version to call")
        self.declare(callee, ty, len(args))
        argtext = ", ".join(f"{ty} {a}" for a in args)
        return self._inst(f"call {ty} @{callee}({argtext})")


_MACRO_AST: dict = {}


def _macro_ast(name: str):
    if name not in _MACRO_AST:
        params, body = MACROS[name]
        _MACRO_AST[name] = parse(body, f"formula.py: {name}")
    return _MACRO_AST[name]
