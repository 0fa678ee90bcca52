"""The C wrapper around one declared function: entry points with one ABI,
`void ecc_<kind>_<name>(int64_t B, const int64_t *ints, void *const *bufs,
const int64_t *strides)`, each looping over a flattened batch of B items in C (stride 0: a buffer
shared by every item). Buffers, in order:
  primal:  inputs, outputs
  vjp:     inputs, output cotangents (read only), input cotangents (diff inputs; overwritten)
  jvp:     inputs, input tangents (diff inputs), output tangents (overwritten)
split mode (Enzyme's __enzyme_augmentfwd / __enzyme_reverse, one caller-allocated tape per item):
  augfwd:  inputs, outputs, shadows of the diff inputs, shadows of the outputs, tapes
           (outputs and shadows zeroed; each item's tape header at tapes + b * strides[tapes])
  reverse: the same buffers, the output shadows holding the cotangents: adds the input
           cotangents into their shadows and frees each item's tape
`int64_t ecc_tapesize_<name>(void)` is the bytes of one item's tape (__enzyme_augmentsize).
and with order=2 (Enzyme differentiating the one-item VJP/JVP helpers in forward mode):
  vjp_jvp: inputs, output cotangents, input tangents t, tangents of the input cotangents
           (sum_i ct_i H_i t; overwritten)
  jvp_jvp: inputs, input tangents t1, input tangents t2, f''[t1, t2] per output (overwritten)
The VJP copies each cotangent into scratch because Enzyme's reverse pass consumes (zeroes) the
shadow of an output, and zeroes the input cotangents because it accumulates into them; a shared
(stride 0) input cotangent thus receives the sum over the batch. Outputs start at zero in all
three, so functions that accumulate into their outputs behave the same in each."""
from .signature import DTYPES, In, Int, Out

HEADER = """#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
extern void __enzyme_autodiff(void *, ...);
extern void __enzyme_fwddiff(void *, ...);
extern int enzyme_allocated, enzyme_tape;
extern size_t __enzyme_augmentsize(void *, ...);
extern void __enzyme_augmentfwd(void *, ...);
extern void __enzyme_reverse(void *, ...);
"""


def _ctype(a):
    return DTYPES[a.dtype]


def _count(sig, a):
    """C expression of the element count of argument a (ints from the `ints` array)."""
    idx = {x.name: i for i, x in enumerate(sig.ints)}
    factors = [str(d) if isinstance(d, int) else f"ints[{idx[d]}]" for d in a.shape]
    return "((int64_t)1" + "".join(f" * (int64_t){f}" for f in factors) + ")"


def wrapper_source(sig, order=1, by_value=frozenset()):
    """by_value: the arguments the C function takes otherwise than the Signature's default (the
    prototype says so): scalar inputs by value (the wrapper's core takes them by pointer like
    every input and passes the value), and integers by reference (Fortran without bind(c):
    the core passes the address of its copy)."""
    n = sig.name
    # (a C++ function without extern "C": declared under a C name bound to its symbol)
    name = n if sig.symbol == n else f"ecc_user_{n}"
    params, decl = [], []
    for a in sig.args:
        if isinstance(a, Int):
            params.append(f"{a.ctype} {a.name}")
        elif isinstance(a, In):
            params.append(f"const {_ctype(a)} *{a.name}")
        else:
            params.append(f"{_ctype(a)} *{a.name}")
        if a.name not in by_value:
            decl.append(params[-1])
        elif isinstance(a, Int):
            decl.append(f"{a.ctype} *{a.name}")
        else:
            decl.append(f"{_ctype(a)} {a.name}")
    rett = _ctype(sig.ret) if sig.ret else "void"
    lines = [HEADER]
    if any(a.ctype in ("int64_t", "int32_t") for a in sig.ints):
        pass  # stdint.h is included
    if any(a.ctype in ("size_t", "ptrdiff_t") for a in sig.ints):
        lines.append("#include <stddef.h>")
    asm = f' __asm__("{sig.symbol}")' if sig.symbol != n else ""
    lines.append(f"{rett} {name}({', '.join(decl) or 'void'}){asm};")
    # the differentiated core: the user's function with its return value (if any) stored
    core_params = params + ([f"{_ctype(sig.ret)} *{sig.ret.name}"] if sig.ret else [])
    call = f"{name}({', '.join(_passed(a, by_value) for a in sig.args)})"
    body = f"*{sig.ret.name} = {call};" if sig.ret else f"{call};"
    lines.append(f"static void ecc_core_{n}({', '.join(core_params)}) {{ {body} }}")
    lines += [_helper(sig, "rev"), _helper(sig, "fwd"), _primal(sig), _vjp(sig), _jvp(sig)]
    lines += _split(sig)
    if order >= 2:
        lines += [_vjp_jvp(sig), _jvp_jvp(sig)]
    return "\n".join(lines) + "\n"


def _passed(a, by_value):
    if a.name not in by_value:
        return a.name
    return f"&{a.name}" if isinstance(a, Int) else f"*{a.name}"


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


def _scratch(args, names, sig):
    """calloc'd scratch for each of args under each name prefix, freed at the end."""
    decl, free = [], []
    for a in args:
        for pre in names:
            decl.append(f"  {_ctype(a)} *{pre}{a.name} = calloc((size_t){_count(sig, a)} + 1, "
                        f"sizeof({_ctype(a)}));")
            free.append(f"  free({pre}{a.name});")
    return decl, free


def _helper(sig, mode):
    """One item's VJP (mode "rev") or JVP ("fwd") as a function of its own, so that the
    second-order entries can differentiate it: every differentiable input and every output
    carries its shadow as the parameter after it (d_<name>)."""
    params, marks = [], []
    for a in list(sig.args) + ([sig.ret] if sig.ret else []):
        if isinstance(a, Int):
            params.append(f"{a.ctype} {a.name}")
            marks.append(f"enzyme_const, {a.name}")
        elif isinstance(a, In) and not a.diff:
            params.append(f"const {_ctype(a)} *{a.name}")
            marks.append(f"enzyme_const, {a.name}")
        else:
            const = "const " if isinstance(a, In) else ""
            d_const = "const " if isinstance(a, In) and mode == "fwd" else ""
            params += [f"{const}{_ctype(a)} *{a.name}", f"{d_const}{_ctype(a)} *d_{a.name}"]
            marks.append(f"enzyme_dup, {a.name}, d_{a.name}")
    marker = "__enzyme_autodiff" if mode == "rev" else "__enzyme_fwddiff"
    return (f"static void ecc_{mode}_{sig.name}({', '.join(params)}) {{\n"
            f"  {marker}((void *)ecc_core_{sig.name}, {', '.join(marks)});\n}}")


def _helper_call(sig, mode, per_arg, outer=None):
    """A call of the rev/fwd helper on one item (inputs are buffers 0..n-1); per_arg(a) gives
    (value, shadow) of a differentiable input or output. With outer, the call is differentiated
    again by __enzyme_fwddiff: outer(a, k) gives the 1-tuple of the outer shadow of the value
    (k = 0) and of the inner shadow (k = 1)."""
    parts = []
    for a in list(sig.args) + ([sig.ret] if sig.ret else []):
        if isinstance(a, Int) or (isinstance(a, In) and not a.diff):
            v = _int_arg(sig, a) if isinstance(a, Int) else _buf(a, sig.inputs.index(a))
            parts.append(f"enzyme_const, {v}" if outer else v)
            continue
        v, d = per_arg(a)
        if outer:
            parts.append("enzyme_dup, {}, {}, enzyme_dup, {}, {}".format(v, *outer(a, 0), d,
                                                                        *outer(a, 1)))
        else:
            parts += [v, d]
    if outer:
        return f"    __enzyme_fwddiff((void *)ecc_{mode}_{sig.name}, {', '.join(parts)});"
    return f"    ecc_{mode}_{sig.name}({', '.join(parts)});"


def _loop(kind, sig, zero, decl, free, per_item, call):
    out = [_entry(kind, sig) + " {"] + decl + zero
    out.append("  for (int64_t b = 0; b < B; b++) {")
    out += per_item + [call, "  }"] + free + ["}"]
    return "\n".join(out)


def _memset(prefixes, args, sig):
    return [f"    memset({p}{a.name}, 0, (size_t){_count(sig, a)} * sizeof({_ctype(a)}));"
            for a in args for p in prefixes]


def _copy_in(dst, a, src, sig):
    return (f"    memcpy({dst}{a.name}, {src}, (size_t){_count(sig, a)} * "
            f"sizeof({_ctype(a)}));")


def _slots(sig, groups):
    """Buffer slot of each (group, name) for the buffers after the inputs."""
    slot, k = {("in", a.name): i for i, a in enumerate(sig.inputs)}, len(sig.inputs)
    for g, args in groups:
        for a in args:
            slot[(g, a.name)] = k
            k += 1
    return slot


def _vjp(sig):
    S = _slots(sig, [("ct", sig.outputs), ("res", sig.diff_inputs)])
    decl, free = _scratch(sig.outputs, ("ecc_y_", "ecc_dy_"), sig)
    zero = [_zero(a, S[("res", a.name)], _count(sig, a)) for a in sig.diff_inputs]
    per = _memset(("ecc_y_",), sig.outputs, sig) + [
        _copy_in("ecc_dy_", a, _buf(a, S[("ct", a.name)]), sig) for a in sig.outputs]
    call = _helper_call(sig, "rev", lambda a: (_buf(a, S[("in", a.name)]), _buf(
        a, S[("res", a.name)])) if isinstance(a, In) else (f"ecc_y_{a.name}", f"ecc_dy_{a.name}"))
    return _loop("vjp", sig, zero, decl, free, per, call)


def _jvp(sig):
    S = _slots(sig, [("t", sig.diff_inputs), ("res", sig.outputs)])
    decl, free = _scratch(sig.outputs, ("ecc_y_",), sig)
    zero = [_zero(a, S[("res", a.name)], _count(sig, a)) for a in sig.outputs]
    call = _helper_call(sig, "fwd", lambda a: (_buf(a, S[("in", a.name)]), _buf(
        a, S[("t", a.name)])) if isinstance(a, In) else (f"ecc_y_{a.name}",
                                                         _buf(a, S[("res", a.name)])))
    return _loop("jvp", sig, zero, decl, free, _memset(("ecc_y_",), sig.outputs, sig), call)


def _vjp_jvp(sig):
    """Forward over reverse: the tangent of the VJP when the inputs move along t (cotangents
    fixed), i.e. sum_i ct_i H_i t, written to the results (one per differentiable input)."""
    S = _slots(sig, [("ct", sig.outputs), ("t", sig.diff_inputs), ("res", sig.diff_inputs)])
    d1, f1 = _scratch(sig.outputs, ("ecc_y_", "ecc_ty_", "ecc_dy_", "ecc_tdy_"), sig)
    d2, f2 = _scratch(sig.diff_inputs, ("ecc_g_",), sig)
    zero = [_zero(a, S[("res", a.name)], _count(sig, a)) for a in sig.diff_inputs]
    per = _memset(("ecc_y_", "ecc_ty_", "ecc_tdy_"), sig.outputs, sig) + [
        _copy_in("ecc_dy_", a, _buf(a, S[("ct", a.name)]), sig) for a in sig.outputs]

    def inner(a):
        return (_buf(a, S[("in", a.name)]), f"ecc_g_{a.name}") if isinstance(a, In) else \
            (f"ecc_y_{a.name}", f"ecc_dy_{a.name}")

    def outer(a, k):
        if isinstance(a, In):
            return (_buf(a, S[("t", a.name)]),) if k == 0 else (_buf(a, S[("res", a.name)]),)
        return (f"ecc_ty_{a.name}",) if k == 0 else (f"ecc_tdy_{a.name}",)
    call = _helper_call(sig, "rev", inner, outer)
    return _loop("vjp_jvp", sig, zero, d1 + d2, f1 + f2, per, call)


def _jvp_jvp(sig):
    """Forward over forward: the tangent of the JVP along t1 when the inputs move along t2,
    i.e. f''[t1, t2], written to the results (one per output)."""
    S = _slots(sig, [("t1", sig.diff_inputs), ("t2", sig.diff_inputs), ("res", sig.outputs)])
    d1, f1 = _scratch(sig.outputs, ("ecc_y_", "ecc_sy_", "ecc_ty_"), sig)
    d2, f2 = _scratch(sig.diff_inputs, ("ecc_st_",), sig)
    zero = [_zero(a, S[("res", a.name)], _count(sig, a)) for a in sig.outputs]
    per = _memset(("ecc_y_", "ecc_sy_", "ecc_ty_"), sig.outputs, sig)

    def inner(a):
        return (_buf(a, S[("in", a.name)]), _buf(a, S[("t1", a.name)])) if isinstance(a, In) \
            else (f"ecc_y_{a.name}", f"ecc_ty_{a.name}")

    def outer(a, k):
        if isinstance(a, In):
            return (_buf(a, S[("t2", a.name)]),) if k == 0 else (f"ecc_st_{a.name}",)
        return (f"ecc_sy_{a.name}",) if k == 0 else (_buf(a, S[("res", a.name)]),)
    call = _helper_call(sig, "fwd", inner, outer)
    return _loop("jvp_jvp", sig, zero, d1 + d2, f1 + f2, per, call)


def _split(sig):
    """Split mode: the augmented forward keeps each item's tape (in a caller-allocated header of
    __enzyme_augmentsize bytes) and the reverse runs on it later, so a framework's backward does
    not run the primal again. The shadows the augmented forward sees are the ones the reverse
    gets (it may keep pointers to them), so the caller keeps them between the two calls."""
    n, order = sig.name, list(sig.args) + ([sig.ret] if sig.ret else [])
    S = _slots(sig, [("out", sig.outputs), ("din", sig.diff_inputs), ("dout", sig.outputs)])
    tapes = len(S)

    def marks(a):
        if isinstance(a, Int):
            return f"enzyme_const, {_int_arg(sig, a)}"
        if isinstance(a, In) and not a.diff:
            return f"enzyme_const, {_buf(a, S[('in', a.name)])}"
        v, d = (("in", "din") if isinstance(a, In) else ("out", "dout"))
        return f"enzyme_dup, {_buf(a, S[(v, a.name)])}, {_buf(a, S[(d, a.name)])}"
    kinds = ", ".join("enzyme_const" if isinstance(a, Int) or (isinstance(a, In) and not a.diff)
                      else "enzyme_dup" for a in order)
    args = ", ".join(marks(a) for a in order)
    tape = f"enzyme_allocated, (size_t)strides[{tapes}], enzyme_tape, " \
        f"(char *)bufs[{tapes}] + b * strides[{tapes}]"
    zero = [_zero(a, S[(g, a.name)], _count(sig, a)) for g, group in
            (("out", sig.outputs), ("din", sig.diff_inputs), ("dout", sig.outputs))
            for a in group]
    out = [f"int64_t ecc_tapesize_{n}(void) {{\n  return (int64_t)__enzyme_augmentsize("
           f"(void *)ecc_core_{n}, {kinds});\n}}"]
    for kind, marker, pre in (("augfwd", "__enzyme_augmentfwd", zero),
                              ("reverse", "__enzyme_reverse", [])):
        out.append("\n".join([_entry(kind, sig) + " {"] + pre + [
            "  for (int64_t b = 0; b < B; b++)",
            f"    {marker}((void *)ecc_core_{n}, {tape}, {args});", "}"]))
    return out
