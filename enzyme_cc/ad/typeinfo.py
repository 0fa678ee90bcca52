"""Type analysis, the part synthesis needs: what kind of data an untyped copy moves (Figure 2).

A copy's type comes from every typed access to the same underlying object in the function:
loads, stores, GEP source types, the allocated type of an alloca. Doubles only -> 'double',
floats only -> 'float', pointers only -> 'pointer', integers only -> 'integer'.
"""
from enzyme_cc.ir.lexer import tokenize

FLOATS = {"double", "float"}


def underlying(fn, v: str, depth=0) -> str:
    d = fn.defs.get(v)
    if depth > 32 or d is None or not hasattr(d, "op"):
        return v
    if d.op in ("getelementptr", "bitcast", "addrspacecast"):
        return underlying(fn, d.ops[0].value, depth + 1)
    return v


def _leaf_types(ty: str) -> set:
    out = set()
    for t in tokenize(ty):
        if t in FLOATS or t == "ptr" or (t.startswith("i") and t[1:].isdigit()):
            out.add(t)
    return out


def access_types(module, fn, base: str) -> set:
    types = set()
    for inst in fn.insts():
        if inst.op == "load" and underlying(fn, inst.ops[0].value) == base:
            types.add(inst.ty)
        elif inst.op == "store" and underlying(fn, inst.ops[1].value) == base:
            types.add(inst.ops[0].ty)
        elif inst.op == "getelementptr" and underlying(fn, inst.ops[0].value) == base and \
                inst.src_ty not in ("i8",):
            src = module.named_types.get(inst.src_ty, inst.src_ty)
            types |= _leaf_types(src)
        elif inst.op == "alloca" and inst.name == base and inst.src_ty not in ("i8",) and \
                not inst.src_ty.startswith("[") or (inst.op == "alloca" and inst.name == base
                                                    and "x i8" not in inst.src_ty):
            types |= _leaf_types(module.named_types.get(inst.src_ty, inst.src_ty))
    return types


def infer_copy_type(module, fn, inst) -> str:
    types = set()
    for o in inst.ops[:2]:
        types |= access_types(module, fn, underlying(fn, o.value))
    types = {t for t in types if t != "i8"} or types
    fl = types & FLOATS
    if fl == {"double"} and not (types & {"ptr"}):
        return "double"
    if fl == {"float"} and not (types & {"ptr"}):
        return "float"
    if not fl and "ptr" in types:
        return "pointer"
    if types and not fl:
        return "integer"
    return "unknown"
