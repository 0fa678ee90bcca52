"""Enzyme's FPOpt logger callbacks: calls into functions the program defines, emitted beside the
derivative code of each active floating-point operation (arithmetic, and calls with a derivative
rule: the operations Enzyme's rule tables cover; loads, phis, casts and fneg are not logged).

  enzymeLogValue  after the primal operation, in every mode: its result and operands
  enzymeLogError  after the operation's error estimate (__enzyme_error_estimate)
  enzymeLogGrad   in the reverse sweep, after the operation's adjoint code: the adjoint of its
                  result

A callback is called only when the program defines a function of that name (C, or C++ with the
name mangled as a plain function). Its declared parameter types choose among the forms Enzyme's
versions used (FORMS); values are passed as double (float is extended), a vector operation logs
each lane. The identifier is "function:block:instruction", the indices of the operation in the
function as differentiated. Only operations whose value can reach the function's effects (its
return, memory, a differentiated call; a stack slot of unoptimized code counts when a load of it
does) are logged, as Enzyme's activity analysis excludes a value that only reaches printf. The logging reads the values it passes and changes nothing else: a
program without these callbacks gets the same derivative code as before."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.model import Inst, parse_function
from enzyme_cc.rules.call_kinds import kind_of
from enzyme_cc.rules.error import ROUNDING_OPS

_LONG = ("res", "val", "opcode", "callee", "module", "function", "block", "inst", "n", "ops")
# the accepted parameter lists: 'val' is the error or the adjoint, 'res' the operation's result
FORMS = {
    "enzymeLogValue": [("id", "res", "n", "ops")],
    "enzymeLogError": [("id", "val"), _LONG],
    "enzymeLogGrad": [("id", "val"), _LONG,
                      ("val", "opcode", "callee", "module", "function", "block", "inst")],
}
_TYPES = {"id": "ptr", "opcode": "ptr", "callee": "ptr", "module": "ptr", "function": "ptr",
          "ops": "ptr", "res": "double", "val": "double", "n": "i32", "block": "i32", "inst": "i32"}
_C = {"id": "const char *id", "opcode": "const char *opcodeName", "callee": "const char *calleeName",
      "module": "const char *moduleName", "function": "const char *functionName",
      "ops": "double *operands", "res": "double res", "n": "unsigned numOperands",
      "block": "unsigned blockIdx", "inst": "unsigned instIdx"}
_VAL = {"enzymeLogValue": "", "enzymeLogError": "double err", "enzymeLogGrad": "double grad"}
_DEFINE = re.compile(r"^define [^@\n]*@(?:_Z(\d+))?(enzymeLog(?:Value|Error|Grad))(\w*)\(", re.M)
_EXT = ("double", "float", "half", "bfloat")         # passed as double (fpext)


class Callback:
    def __init__(self, base: str, symbol: str, ret: str, fields: tuple):
        self.base, self.symbol, self.ret, self.fields = base, symbol, ret, fields


def find(module) -> dict[str, Callback]:
    """The callbacks the module defines, by base name (a C definition before C++ overloads); a
    callback none of whose definitions has a known form is an error."""
    found: dict[str, Callback] = {}
    wrong: dict[str, str] = {}
    for base, symbol in sorted(_defined(module), key=lambda d: d[1].startswith("@_Z")):
        fn = module.function(symbol)
        types = tuple(p.ty for p in fn.params)
        form = next((f for f in FORMS[base] if tuple(_TYPES[k] for k in f) == types), None)
        if form is None:
            wrong.setdefault(base, f"'{symbol[1:]}' as '{fn.ret_ty} {symbol[1:]}"
                                   f"({', '.join(types)})'")
        elif base not in found:
            found[base] = Callback(base, symbol, fn.ret_ty, form)
    for base, shown in wrong.items():
        if base not in found:
            forms = " or ".join(f"void {base}({', '.join(_C.get(k) or _VAL[base] for k in f)})"
                                for f in FORMS[base])
            raise UserError(f"the program defines {shown}, which is not a signature of Enzyme's "
                            f"FPOpt logger callback '{base}'; hint: declare it as {forms}")
    return found


def of(gen) -> dict[str, Callback]:
    if not hasattr(gen, "_fp_loggers"):
        gen._fp_loggers = find(gen.module)
    return gen._fp_loggers


def _defined(module):
    """(base name, symbol) of each definition named like a callback: C, or a C++ function."""
    if "enzymeLog" not in module.text:      # (a substring test: the regex scans every line)
        return
    for m in _DEFINE.finditer(module.text):
        length, base, rest = m.group(1), m.group(2), m.group(3)
        if (length is not None and int(length) != len(base)) or (length is None and rest):
            continue                       # a longer name that merely starts like a callback
        yield base, "@" + (f"_Z{length}" if length else "") + base + rest


def symbols(module) -> set[str]:
    """The defined callbacks' symbols (their calls carry no derivative)."""
    return {symbol for _, symbol in _defined(module)}


# ---- which operations are logged ----------------------------------------------------------------
def _float_elem(ty: str) -> str | None:
    elem = ty[1:-1].partition(" x ")[2].strip() if ty.startswith("<") else ty
    return elem if elem in _EXT else None


def loggable(gen, inst) -> bool:
    if not inst.name or _float_elem(inst.ty) is None:
        return False
    return inst.op in ROUNDING_OPS or (inst.op == "call" and kind_of(gen, inst) == "rule")


def useful(synth) -> set[str]:
    """Active values that reach the function's effects: a return, a store or atomic, an argument
    of a call other than an inactive one or a rule call (whose own result decides)."""
    if getattr(synth, "_fp_useful", None) is not None:
        return synth._fp_useful
    act, out, work = synth.act.active, set(), []
    slots = _slots(synth.fn)
    stored: dict[str, list[str]] = {}        # slot -> the values stored into it

    def mark(v):
        if v in act and v not in out:
            out.add(v)
            work.append(v)
    for inst in synth.fn.insts():
        if inst.op == "store" and inst.ops[1].value in slots:
            stored.setdefault(inst.ops[1].value, []).append(inst.ops[0].value)
        elif inst.op in ("ret", "store", "atomicrmw", "cmpxchg") or (
                inst.op in ("call", "invoke") and kind_of(synth.gen, inst) not in ("inactive",
                                                                                  "rule")):
            for o in inst.ops:
                mark(o.value)
    while work:
        d = synth.fn.defs.get(work.pop())
        if isinstance(d, Inst):
            for o in d.ops:
                mark(o.value)
            if d.op == "load" and d.ops[0].value in slots:
                for v in stored.get(d.ops[0].value, ()):
                    mark(v)
    synth._fp_useful = out
    return out


def _slots(fn) -> set[str]:
    """Allocas only loaded and stored through (unoptimized code's variables): what is stored
    there matters only if a load of it does."""
    slots = {i.name for i in fn.insts() if i.op == "alloca"}
    for inst in fn.insts():
        if inst.op == "call" and (inst.callee or "").startswith(("@llvm.lifetime.",
                                                                  "@llvm.dbg.")):
            continue
        for k, o in enumerate(inst.ops):
            if o.value in slots and not (inst.op == "load" or (inst.op == "store" and k == 1)):
                slots.discard(o.value)
    return slots


def wanted(ctx, inst, base: str):
    """The callback `base` if the program defines it and inst is logged there."""
    synth = ctx.synth
    cb = of(synth.gen).get(base)
    if cb is None or not loggable(synth.gen, inst) or inst.name not in useful(synth):
        return None
    return cb


# ---- emission -------------------------------------------------------------------------------------
def value(ctx, inst):
    """After inst's primal (forward sweeps, forward and error modes)."""
    cb = wanted(ctx, inst, "enzymeLogValue")
    if cb is not None:
        _emit(ctx, inst, cb, None)


def error(ctx, inst, err: str):
    cb = wanted(ctx, inst, "enzymeLogError")
    if cb is not None:
        _emit(ctx, inst, cb, err)


def grad(ctx, inst, d: str):
    """After inst's reverse rule, d being the adjoint of its result."""
    cb = wanted(ctx, inst, "enzymeLogGrad")
    if cb is not None:
        _emit(ctx, inst, cb, d)


def _lanes(ty: str) -> int:
    return int(ty[1:].split(" x ")[0]) if ty.startswith("<") else 0


def _as_double(ctx, inst, ty: str, v: str, lane: int) -> str:
    """Lane `lane` of v (type ty) as a double."""
    if ty.startswith("<"):
        e = ctx.tmp("lg")
        ctx.emit(f"{e} = extractelement {ty} {v}, i32 {lane}")
        ty, v = ty[1:-1].partition(" x ")[2].strip(), e
    if ty == "double":
        return v
    if ty in _EXT or ty.startswith("i"):
        op = "fpext" if ty in _EXT else ("uitofp" if ty == "i1" else "sitofp")
        x = ctx.tmp("lg")
        ctx.emit(f"{x} = {op} {ty} {v} to double")
        return x
    raise UserError(f"{ctx.synth.where(inst)}: an operand of type {ty} cannot be passed to "
                    "Enzyme's FPOpt logger, which takes operands as doubles; hint: define only "
                    "the logger forms without operands (enzymeLogError/enzymeLogGrad(const char *"
                    "id, double)) for this code")


def _emit(ctx, inst, cb: Callback, val: str | None):
    synth, gen = ctx.synth, ctx.synth.gen
    args = [o for o in inst.ops if not (inst.op == "call" and o.value == inst.callee)]
    need = set(cb.fields)
    strings = _strings(synth, inst) if need & {"id", "opcode", "callee", "module", "function"} \
        else {}
    for lane in range(max(_lanes(inst.ty), 1)):
        vals = {k: gen.private_string(s, "@ad.log.") for k, s in strings.items() if k in need}
        if "res" in need:
            vals["res"] = _as_double(ctx, inst, inst.ty, ctx.p(inst.name), lane)
        if "val" in need:
            vals["val"] = _as_double(ctx, inst, inst.ty, val, lane)
        save = None
        if "ops" in need:
            # a dynamic array between stacksave/stackrestore: no stack growth inside loops
            save, arr = ctx.tmp("lgsp"), ctx.tmp("lgops")
            ctx.emit(f"{save} = call ptr @llvm.stacksave.p0()")
            ctx.emit(f"{arr} = alloca [{max(len(args), 1)} x double]")
            for k, o in enumerate(args):
                x = _as_double(ctx, inst, o.ty, ctx.p(o.value), lane)
                at = ctx.tmp("lgat")
                ctx.emit(f"{at} = getelementptr inbounds [{len(args)} x double], ptr {arr}, "
                         f"i64 0, i64 {k}")
                ctx.emit(f"store double {x}, ptr {at}")
            vals["ops"] = arr
            gen.declare_raw("@llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()")
            gen.declare_raw("@llvm.stackrestore.p0", "declare void @llvm.stackrestore.p0(ptr)")
        vals["n"] = str(len(args))
        vals["block"], vals["inst"] = (str(i) for i in _index(synth, inst))
        call = ", ".join(f"{_TYPES[k]} {vals[k]}" for k in cb.fields)
        res = f"{ctx.tmp('lgr')} = " if cb.ret != "void" else ""
        # noinline: derivatives have no debug info, and a callback built with -g inlined at a
        # call without a location would leave its locations unparented (LLVM's verifier fails)
        ctx.emit(f"{res}call {cb.ret} {cb.symbol}({call}) noinline")
        if save is not None:
            ctx.emit(f"call void @llvm.stackrestore.p0(ptr {save})")


def _index(synth, inst) -> tuple[int, int]:
    """(block, instruction) indices of inst in its function's text as differentiated."""
    table = getattr(synth, "_fp_index", None)
    if table is None:
        module, table = synth.module, {}
        span = module._bodies.get(synth.fn.name)
        if span is not None:
            fresh = parse_function(module._lines[span[0]:span[1]], module.named_types)
            for b, block in enumerate(fresh.blocks):
                for i, x in enumerate(block.insts):
                    table[x.line + span[0]] = (b, i)
        synth._fp_index = table
    if inst.line in table:
        return table[inst.line]
    for b, block in enumerate(synth.fn.blocks):       # (an instruction our preparation made)
        if inst in block.insts:
            return b, block.insts.index(inst)
    return 0, 0


def _strings(synth, inst) -> dict[str, str]:
    fname = synth.fn.name[1:].strip('"')
    b, i = _index(synth, inst)
    m = re.search(r'^source_filename = "([^"]*)"', synth.module.text, re.M)
    callee = inst.callee[1:].strip('"') if inst.op == "call" and inst.callee else ""
    return {"id": f"{fname}:{b}:{i}", "opcode": inst.op, "callee": callee,
            "module": m.group(1) if m else "", "function": fname}


