"""`__enzyme_virtualreverse(p)`: Enzyme's shadow of a vtable (or of a function pointer), stored
in a shadow object so that the object's virtual calls reach derivatives.

enzyme-cc never calls through a shadow function pointer: a derivative dispatches an indirect
call on the primal pointer over the module's address-taken functions (generate.py,
forward_indirect / split_indirect), and a shadow pointer to a function or a vtable is only
copied alongside. So a shadow object needs no table of derivatives, and the call is lowered
before AD to its argument: the shadow object keeps a valid vtable (and stays usable as an
object), whichever class it has.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from ..structure.diagnostics import located
from .marker_values import _identity
from enzyme_cc.ir.model import parse_module

_CALL = re.compile(r"@\"?[\w.$]*__enzyme_virtualreverse[\w.$]*\"?\(")


def lower(text: str) -> str:
    """Replace every __enzyme_virtualreverse(p) by p."""
    if not _CALL.search(text):
        return text
    module = parse_module(text)
    lines = list(module._lines)
    for name, (start, end) in list(module._bodies.items()):
        if not _CALL.search("\n".join(module._lines[start:end])):
            continue
        fn = module.function(name)
        for inst in fn.insts():
            if inst.op not in ("call", "invoke") or \
                    "__enzyme_virtualreverse" not in (inst.callee or ""):
                continue
            where = located(module, fn, inst)
            if len(inst.ops) != 1 or inst.ops[0].ty != inst.ty:
                raise UserError(f"{where}: __enzyme_virtualreverse takes one pointer (a vtable or "
                                "a function) and returns its shadow of the same type; hint: "
                                "*(void **)d_obj = __enzyme_virtualreverse(*(void **)d_obj)")
            if inst.op == "invoke":
                raise UserError(f"{where}: __enzyme_virtualreverse in a try block is not "
                                "supported; hint: call it outside the try block")
            new = f"{inst.name} = {_identity(inst.ty, inst.ops[0].value)}" if inst.name else ""
            lines[inst.line] = new
            for k in range(inst.line + 1, inst.line_end + 1):
                lines[k] = ""
    return "\n".join(lines) + "\n"
