"""The possible targets of an indirect call in a whole-program module: the functions with
bitcode and the call's signature whose address the module uses as a value."""
from __future__ import annotations

import re

# a global name not followed by an argument list: a use of its address
_VALUE_NAME = re.compile(r'(@[-\w.$]+|@"[^"]+")(?![-\w.$])(?!\s*\()')
# the function a derivative marker is handed (ad/api/markers.py's DERIVATIVE_MARKERS): the
# marker becomes a call of its derivative, so that use lets no pointer to it escape
_MARKER_ARG = re.compile(r'(@"?[\w.$]*__enzyme_(?:autodiff|fwddiff|augmentfwd|reverse|augmentsize|'
                         r'error_estimate)[\w.$]*"?\()ptr(?: \w+)* (@[-\w.$]+|@"[^"]+")(?=[,)])')


def names_used_as_values(module) -> set:
    """The global names the module uses other than as a callee, in their own definition or as
    the function a derivative marker is handed (one scan of the text, memoized on the module:
    a search per function was quadratic, minutes with Rust's std)."""
    memo = module.__dict__.get("_value_names")
    if memo is None:
        text = "\n".join(_MARKER_ARG.sub(r"\1", l) if "__enzyme_" in l else l
                         for l in module._lines if not l.startswith("define "))
        memo = module.__dict__["_value_names"] = set(_VALUE_NAME.findall(text))
    return memo


def address_taken(module, ret_ty: str, param_tys: list[str]) -> list[str]:
    """Functions with bitcode of this signature whose address is used as a value."""
    memo = module.__dict__.setdefault("_address_taken", {})
    key = (ret_ty, tuple(param_tys))
    if key not in memo:
        values = names_used_as_values(module)
        memo[key] = [name for name in module._bodies if name in values and
                     has_signature(module.function(name), ret_ty, param_tys)]
    return memo[key]


def has_signature(fn, ret_ty, param_tys) -> bool:
    return fn.ret_ty == ret_ty and [p.ty for p in fn.params] == param_tys


def no_capture(attrs) -> bool:
    """A parameter's attributes say the function keeps no copy of the pointer."""
    return "nocapture" in attrs or "captures(none)" in "".join(attrs)


def keep_no_copy(module, names, positions) -> bool:
    """Every function of `names` has a body and keeps no copy of its parameters at
    `positions` (`captures(none)`); False for no names."""
    for name in names:
        f = module.function(name)
        if f is None or not f.blocks or not all(
                k < len(f.params) and no_capture(f.params[k].attrs) for k in positions):
            return False
    return bool(names)
