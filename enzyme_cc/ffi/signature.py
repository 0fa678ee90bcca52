"""A C function's declared signature: which pointer arguments are inputs and outputs, their shapes
(fixed or named integer arguments) and dtypes, which inputs are differentiable; and the checks and
shape arithmetic every front end (numpy, torch, jax) shares."""
import operator
from dataclasses import dataclass
from math import prod

DTYPES = {"float64": "double", "float32": "float", "complex128": "double _Complex",
          "complex64": "float _Complex", "int32": "int32_t", "int64": "int64_t"}
COMPLEX = ("complex128", "complex64")
INTEGER_ARRAYS = ("int32", "int64")     # inputs only, with diff=False (an index array)
INT_CTYPES = ("int", "long", "long long", "int64_t", "int32_t", "size_t", "ptrdiff_t", "bool")


class SignatureError(ValueError):
    """A declaration or a call that does not match the declared signature (names the argument)."""


@dataclass(frozen=True)
class In:
    """A pointer input (`const T *name`). shape: ints and names of Int arguments; diff=False passes
    it as a constant (its gradient is then an error, not a silent zero)."""
    name: str
    shape: tuple = ()
    dtype: str = "float64"
    diff: bool = True


@dataclass(frozen=True)
class Out:
    """A pointer output (`T *name`), zeroed before each call. Written fully or accumulated into."""
    name: str
    shape: tuple = ()
    dtype: str = "float64"


@dataclass(frozen=True)
class Int:
    """An integer argument passed by value: a size named in shapes (inferred from the inputs'
    shapes where possible) or any other integer the caller gives."""
    name: str
    ctype: str = "int"


@dataclass(frozen=True)
class Ret:
    """The function's float return value, exposed as a 0-d output."""
    name: str = "result"
    dtype: str = "float64"
    shape: tuple = ()


class Signature:
    """`Signature("f", [In("x", ("n",)), Int("n"), Out("y", ("n",))])`: arguments in C order.
    symbol: the function's symbol when it is not `name` (a C++ function without extern "C")."""

    def __init__(self, name, args, ret=None, symbol=None):
        if not name.isidentifier():
            raise SignatureError(f"function name {name!r} is not a C identifier")
        self.name, self.args, self.ret = name, tuple(args), ret
        self.symbol = symbol or name
        if ret is not None and not isinstance(ret, Ret):
            raise SignatureError(f"{name}: ret must be a Ret(...), not {ret!r}")
        seen = set()
        for a in self.args + ((ret,) if ret else ()):
            if not isinstance(a, (In, Out, Int)) and a is not ret:
                raise SignatureError(f"{name}: argument {a!r} is not In, Out or Int")
            if not a.name.isidentifier() or a.name in seen:
                raise SignatureError(f"{name}: argument name {a.name!r} is not a new identifier")
            seen.add(a.name)
            if isinstance(a, Int):
                if a.ctype not in INT_CTYPES:
                    raise SignatureError(f"{name}: Int {a.name!r}: ctype must be one of "
                                         f"{', '.join(INT_CTYPES)}")
                continue
            if a.dtype not in DTYPES:
                raise SignatureError(f"{name}: argument {a.name!r}: dtype must be float64, "
                                     f"float32, complex128 or complex64 (or int32, int64 for an "
                                     f"In with diff=False), not {a.dtype!r}")
            if a.dtype in INTEGER_ARRAYS and not (isinstance(a, In) and not a.diff):
                raise SignatureError(f"{name}: argument {a.name!r}: an integer array carries no "
                                     f"derivative: it is an In with diff=False (an index "
                                     f"array), not {type(a).__name__}"
                                     + ("" if not isinstance(a, In) else " with diff=True"))
            if a is ret and a.dtype in COMPLEX:
                raise SignatureError(f"{name}: a complex return value is not supported; hint: "
                                     "return it through an Out argument")
            if isinstance(a.shape, (int, str)):
                raise SignatureError(f"{name}: argument {a.name!r}: shape must be a tuple")
        self.ints = [a for a in self.args if isinstance(a, Int)]
        int_names = {a.name for a in self.ints}
        self.inputs = [a for a in self.args if isinstance(a, In)]
        self.outputs = [a for a in self.args if isinstance(a, Out)] + ([ret] if ret else [])
        self.diff_inputs = [a for a in self.inputs if a.diff]
        for a in self.inputs + self.outputs:
            for d in a.shape:
                if isinstance(d, str) and d not in int_names:
                    raise SignatureError(f"{name}: argument {a.name!r}: shape names {d!r}, "
                                         "which is not an Int argument")
                if not isinstance(d, (str, int)) or isinstance(d, bool) or \
                        (isinstance(d, int) and d < 0):
                    raise SignatureError(f"{name}: argument {a.name!r}: bad dimension {d!r}")

    def __repr__(self):
        ret = f", ret={self.ret!r}" if self.ret else ""
        sym = f", symbol={self.symbol!r}" if self.symbol != self.name else ""
        return f"Signature({self.name!r}, {list(self.args)!r}{ret}{sym})"

    def check_complete(self):
        """Something to differentiate: checked after the prototype (ffi/prototype.py), whose
        messages name the argument a Signature got wrong (an output left out, an input
        declared Out)."""
        if not self.outputs:
            raise SignatureError(f"{self.name}: declares no output (Out or ret=Ret())")
        if not self.diff_inputs:
            raise SignatureError(f"{self.name}: declares no differentiable input")

    def key(self):
        return repr((self.name, self.args, self.ret) +
                    ((self.symbol,) if self.symbol != self.name else ()))

    # ---- shapes of one call ------------------------------------------------------------------
    def resolve(self, input_shapes, given_ints):
        """Checks the inputs' shapes (each the declared shape, possibly under leading batch axes)
        and the integers. Returns (ints in declared order, batch lead shape, leads per input)."""
        given = dict(given_ints)
        unknown = set(given) - {a.name for a in self.ints}
        if unknown:
            raise SignatureError(f"{self.name}: no Int argument named {sorted(unknown)[0]!r}")
        values = {k: integer(self.name, k, v, self) for k, v in given.items()}
        origin = {k: "as given" for k in values}   # size -> where its value came from
        leads = []
        for a, shape in zip(self.inputs, input_shapes):
            shape = tuple(int(s) for s in shape)
            k = len(shape) - len(a.shape)
            if k < 0:
                raise SignatureError(f"{self.name}: argument {a.name!r} has shape {shape}, "
                                     f"expected {self._show(a.shape)}")
            leads.append(shape[:k])
            for d, s in zip(a.shape, shape[k:]):
                if isinstance(d, int):
                    ok = d == s
                elif d in values:
                    ok = values[d] == s
                else:
                    values[d], ok = s, True
                    origin[d] = f"from the shape {shape} of argument {a.name!r}"
                if not ok:
                    said = "" if isinstance(d, int) else \
                        f"; {d} = {values[d]} {origin[d]}"
                    raise SignatureError(
                        f"{self.name}: argument {a.name!r} has shape {shape}, expected "
                        f"{self._show(a.shape, self._sizes_but(a, input_shapes, given))} (with "
                        f"leading batch axes allowed){said}")
        missing = [a.name for a in self.ints if a.name not in values]
        if missing:
            raise SignatureError(f"{self.name}: integer argument {missing[0]!r} is not given "
                                 "and no input's shape determines it")
        for a in self.ints:
            if values[a.name] < 0 and any(a.name in x.shape for x in self.inputs + self.outputs):
                raise SignatureError(f"{self.name}: size {a.name!r} is negative")
            lo, hi = _INT_RANGE.get(a.ctype, (-(1 << 63), (1 << 63) - 1))
            if not lo <= values[a.name] <= hi:     # (C would see it wrapped around)
                raise OverflowError(f"{self.name}: integer argument {a.name!r} = "
                                    f"{values[a.name]} does not fit C's `{a.ctype}` "
                                    f"({lo} to {hi})")
        return tuple(values[a.name] for a in self.ints), common_lead(self.name, self.inputs, leads), leads

    def _sizes_but(self, arg, input_shapes, given) -> dict:
        """The sizes the given integers and the other inputs' shapes say (for an error about
        arg's shape: not the sizes arg's own wrong shape set)."""
        values = {k: integer(self.name, k, v, self) for k, v in given.items()}
        for a, shape in zip(self.inputs, input_shapes):
            shape = tuple(int(x) for x in shape)
            k = len(shape) - len(a.shape)
            if a is arg or k < 0:
                continue
            for d, n in zip(a.shape, shape[k:]):
                if not isinstance(d, int):
                    values.setdefault(d, n)
        return values

    def shape_of(self, arg, ints):
        values = dict(zip((a.name for a in self.ints), ints))
        return tuple(d if isinstance(d, int) else values[d] for d in arg.shape)

    @staticmethod
    def _show(shape, values=None):
        values = values or {}
        return "(" + ", ".join(str(values.get(d, d)) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# the values an Int of each C type holds (64-bit types by default; size_t as passed, an int64)
_INT_RANGE = {"int": (-(1 << 31), (1 << 31) - 1), "int32_t": (-(1 << 31), (1 << 31) - 1),
              "size_t": (0, (1 << 63) - 1), "bool": (0, 1)}


def no_keyword_inputs(sig, ints) -> None:
    """An input given by keyword (`f(x, s=s)`): inputs are positional (keywords are the Ints);
    the count's message would not say why."""
    named = [k for k in ints if k in {a.name for a in sig.inputs}]
    if named:
        raise TypeError(f"{sig.name}: input {named[0]!r} was given by keyword: inputs are "
                        f"passed positionally, in the declared order "
                        f"({', '.join(a.name for a in sig.inputs)}); keywords are for Int values")


def integer(fname, name, v, sig=None):
    """An Int's value: an integer (Python's, numpy's, an integer scalar array or tensor, a
    symbolic size), never a float, string or bool silently converted; a bool for an Int whose
    C type is bool (in Signature sig)."""
    if isinstance(v, bool) and sig is not None and \
            any(a.name == name and a.ctype == "bool" for a in sig.ints):
        return int(v)
    if not isinstance(v, bool):
        try:
            return operator.index(v)
        except TypeError:
            pass
    raise TypeError(f"{fname}: integer argument {name!r} must be an int, not "
                    f"{type(v).__name__} {v!r}")


def common_lead(fname, args, leads):
    """The batch shape of a call: every argument's leading axes are either empty (the same value
    for the whole batch) or one shape shared by all the others."""
    common, owner = (), None
    for a, lead in zip(args, leads):
        if lead and common and lead != common:
            raise SignatureError(f"{fname}: argument {a.name!r} has batch axes {lead}, but "
                                 f"{owner.name!r} has {common} (batch axes must match or be "
                                 "absent)")
        if lead and not common:
            common, owner = tuple(lead), a
    return common


def strides(lead, common, shape):
    """Element stride of one buffer in the flattened batch loop: 0 when it is shared."""
    return prod(shape) if lead else 0
