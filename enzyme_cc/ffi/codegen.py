"""The C wrapper around one declared function: three entry points with one ABI,
`void ecc_{primal,vjp,jvp}_<name>(int64_t B, const int64_t *ints, void *const *bufs,
const int64_t *strides)`, each looping over a flattened batch of B items in C (stride 0: a buffer
shared by every item). Buffers, in order:
  primal: inputs, outputs
  vjp:    inputs, output cotangents (read only), input cotangents (diff inputs; overwritten)
  jvp:    inputs, input tangents (diff inputs), output tangents (overwritten)
The VJP copies each cotangent into scratch because Enzyme's reverse pass consumes (zeroes) the
shadow of an output, and zeroes the input cotangents because it accumulates into them; a shared
(stride 0) input cotangent thus receives the sum over the batch. Outputs start at zero in all
three, so functions that accumulate into their outputs behave the same in each."""
from .signature import DTYPES, In, Int, Out

HEADER = """#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
extern void __enzyme_autodiff(void *, ...);
extern void __enzyme_fwddiff(void *, ...);
"""


def _ctype(a):
    return DTYPES[a.dtype]


def _count(sig, a):
    """C expression of the element count of argument a (ints from the `ints` array)."""
    idx = {x.name: i for i, x in enumerate(sig.ints)}
    factors = [str(d) if isinstance(d, int) else f"ints[{idx[d]}]" for d in a.shape]
    return "((int64_t)1" + "".join(f" * (int64_t){f}" for f in factors) + ")"


def wrapper_source(sig):
    n, name = sig.name, sig.name
    params = []
    for a in sig.args:
        if isinstance(a, Int):
            params.append(f"{a.ctype} {a.name}")
        elif isinstance(a, In):
            params.append(f"const {_ctype(a)} *{a.name}")
        else:
            params.append(f"{_ctype(a)} *{a.name}")
    rett = _ctype(sig.ret) if sig.ret else "void"
    lines = [HEADER]
    if any(a.ctype in ("int64_t", "int32_t") for a in sig.ints):
        pass  # stdint.h is included
    if any(a.ctype in ("size_t", "ptrdiff_t") for a in sig.ints):
        lines.append("#include <stddef.h>")
    lines.append(f"{rett} {name}({', '.join(params) or 'void'});")
    # the differentiated core: the user's function with its return value (if any) stored
    core_params = params + ([f"{_ctype(sig.ret)} *{sig.ret.name}"] if sig.ret else [])
    call = f"{name}({', '.join(a.name for a in sig.args)})"
    body = f"*{sig.ret.name} = {call};" if sig.ret else f"{call};"
    lines.append(f"static void ecc_core_{n}({', '.join(core_params)}) {{ {body} }}")
    lines += [_primal(sig), _vjp(sig), _jvp(sig)]
    return "\n".join(lines) + "\n"


def _int_arg(sig, a):
    return f"({a.ctype})ints[{sig.ints.index(a)}]"


def _buf(a, slot):
    return f"(({_ctype(a)} *)bufs[{slot}] + b * strides[{slot}])"


def _entry(kind, sig):
    return (f"void ecc_{kind}_{sig.name}(int64_t B, const int64_t *ints, void *const *bufs, "
            "const int64_t *strides)")


def _core_args(sig, per_arg):
    """Arguments of the core in C order plus the returned value; per_arg(a) gives their text."""
    order = list(sig.args) + ([sig.ret] if sig.ret else [])
    return ", ".join(per_arg(a) for a in order)


def _zero(a, slot, count):
    """Zero a buffer of B items (or one, when shared)."""
    return (f"  memset(bufs[{slot}], 0, (size_t)(strides[{slot}] ? B : 1) * {count} * "
            f"sizeof({_ctype(a)}));")


def _primal(sig):
    slots = {a.name: i for i, a in enumerate(sig.inputs + sig.outputs)}
    out = [_entry("primal", sig) + " {"]
    out += [_zero(a, slots[a.name], _count(sig, a)) for a in sig.outputs]
    args = _core_args(sig, lambda a: _int_arg(sig, a) if isinstance(a, Int) else
                      _buf(a, slots[a.name]))
    out += ["  for (int64_t b = 0; b < B; b++)", f"    ecc_core_{sig.name}({args});", "}"]
    return "\n".join(out)


def _scratch(sig, names):
    """malloc'd scratch for each output (and its shadow), freed at the end."""
    decl, free = [], []
    for a in sig.outputs:
        for pre in names:
            decl.append(f"  {_ctype(a)} *{pre}{a.name} = calloc((size_t){_count(sig, a)} + 1, "
                        f"sizeof({_ctype(a)}));")
            free.append(f"  free({pre}{a.name});")
    return decl, free


def _vjp(sig):
    ni, no = len(sig.inputs), len(sig.outputs)
    ct_out = {a.name: ni + k for k, a in enumerate(sig.outputs)}
    ct_in = {a.name: ni + no + k for k, a in enumerate(sig.diff_inputs)}
    slot = {a.name: k for k, a in enumerate(sig.inputs)}
    decl, free = _scratch(sig, ("ecc_y_", "ecc_dy_"))
    out = [_entry("vjp", sig) + " {"] + decl
    out += [_zero(a, ct_in[a.name], _count(sig, a)) for a in sig.diff_inputs]
    out.append("  for (int64_t b = 0; b < B; b++) {")
    for a in sig.outputs:
        c = _count(sig, a)
        out.append(f"    memset(ecc_y_{a.name}, 0, (size_t){c} * sizeof({_ctype(a)}));")
        out.append(f"    memcpy(ecc_dy_{a.name}, {_buf(a, ct_out[a.name])}, (size_t){c} * "
                   f"sizeof({_ctype(a)}));")

    def arg(a):
        if isinstance(a, Int):
            return f"enzyme_const, {_int_arg(sig, a)}"
        if isinstance(a, In):
            x = _buf(a, slot[a.name])
            return f"enzyme_dup, {x}, {_buf(a, ct_in[a.name])}" if a.diff else f"enzyme_const, {x}"
        return f"enzyme_dup, ecc_y_{a.name}, ecc_dy_{a.name}"
    out.append(f"    __enzyme_autodiff((void *)ecc_core_{sig.name}, {_core_args(sig, arg)});")
    out += ["  }"] + free + ["}"]
    return "\n".join(out)


def _jvp(sig):
    ni, nd = len(sig.inputs), len(sig.diff_inputs)
    slot = {a.name: k for k, a in enumerate(sig.inputs)}
    t_in = {a.name: ni + k for k, a in enumerate(sig.diff_inputs)}
    t_out = {a.name: ni + nd + k for k, a in enumerate(sig.outputs)}
    decl, free = _scratch(sig, ("ecc_y_",))
    out = [_entry("jvp", sig) + " {"] + decl
    out += [_zero(a, t_out[a.name], _count(sig, a)) for a in sig.outputs]
    out.append("  for (int64_t b = 0; b < B; b++) {")
    for a in sig.outputs:
        out.append(f"    memset(ecc_y_{a.name}, 0, (size_t){_count(sig, a)} * "
                   f"sizeof({_ctype(a)}));")

    def arg(a):
        if isinstance(a, Int):
            return f"enzyme_const, {_int_arg(sig, a)}"
        if isinstance(a, In):
            x = _buf(a, slot[a.name])
            return f"enzyme_dup, {x}, {_buf(a, t_in[a.name])}" if a.diff else f"enzyme_const, {x}"
        return f"enzyme_dup, ecc_y_{a.name}, {_buf(a, t_out[a.name])}"
    out.append(f"    __enzyme_fwddiff((void *)ecc_core_{sig.name}, {_core_args(sig, arg)});")
    out += ["  }"] + free + ["}"]
    return "\n".join(out)
