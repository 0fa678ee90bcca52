"""MPI (Open MPI): derivatives of point-to-point, nonblocking and collective calls on float data,
as Enzyme defines them (Moses et al., SC'22): the adjoint of a send is a receive of the adjoint,
of a receive a send of the shadow (then zeroed), of Bcast a sum-Reduce to the root, of a sum
reduction a Bcast (Allreduce: an Allreduce) of the result's adjoint, of max/min the winner's
element, of a prefix sum (Scan, Exscan) the suffix sum of the results' adjoints, Gather <->
Scatter, Allgather -> Reduce_scatter, Alltoall -> Alltoall. Forward mode sends the tangent
along. The work is done by the C runtime (rules/mpi_runtime.h, .c and
mpi_collectives.c: one aug/rev/fwd function per call, see there), linked into the derivative
(`link_runtime`).

Every float MPI call in differentiated code takes part in the derivative communication, active
or not (a null shadow is zero data), so the ranks' communication patterns match; functions that
reach one are differentiated even without active arguments (shared_globals.find_shared_globals).
Datatypes and ops must be Open MPI's predefined ones; a datatype held in a variable is compared
at run time with the float types (substitute_c_datatypes, rules/mpi_c_typed.c), and any other
must be integer data, checked at run time; integer data is inactive; anything else (derived
types, user ops, one-sided MPI, calls without a rule) is refused.
"""
from __future__ import annotations

import re
from .c_runtime import link_needed


# name -> (runtime function, [(buffer argument, its datatype argument)], op argument or None,
#          buffers it writes)
FUNCS = {
    "MPI_Send": ("send", [(0, 2)], None, []),
    "MPI_Ssend": ("send", [(0, 2)], None, []),
    "MPI_Rsend": ("send", [(0, 2)], None, []),     # (sent as MPI_Send, which is always valid)
    "MPI_Recv": ("recv", [(0, 2)], None, [0]),
    "MPI_Isend": ("isend", [(0, 2)], None, []),
    "MPI_Irecv": ("irecv", [(0, 2)], None, [0]),
    "MPI_Wait": ("wait", [], None, []),
    "MPI_Waitall": ("waitall", [], None, []),
    "MPI_Test": ("test", [], None, []),
    "MPI_Testall": ("testall", [], None, []),
    "MPI_Waitany": ("waitany", [], None, []),
    "MPI_Testany": ("testany", [], None, []),
    "MPI_Waitsome": ("waitsome", [], None, []),
    "MPI_Testsome": ("testsome", [], None, []),
    "MPI_Sendrecv": ("sendrecv", [(0, 2), (5, 7)], None, [5]),
    "MPI_Bcast": ("bcast", [(0, 2)], None, [0]),
    "MPI_Reduce": ("reduce", [(0, 3), (1, 3)], 4, [1]),
    "MPI_Allreduce": ("allreduce", [(0, 3), (1, 3)], 4, [1]),
    "MPI_Scan": ("scan", [(0, 3), (1, 3)], 4, [1]),
    "MPI_Exscan": ("exscan", [(0, 3), (1, 3)], 4, [1]),
    "MPI_Gather": ("gather", [(0, 2), (3, 5)], None, [3]),
    "MPI_Gatherv": ("gatherv", [(0, 2), (3, 6)], None, [3]),
    "MPI_Scatter": ("scatter", [(0, 2), (3, 5)], None, [3]),
    "MPI_Scatterv": ("scatterv", [(0, 3), (4, 6)], None, [4]),
    "MPI_Allgather": ("allgather", [(0, 2), (3, 5)], None, [3]),
    "MPI_Allgatherv": ("allgatherv", [(0, 2), (3, 6)], None, [3]),
    "MPI_Alltoall": ("alltoall", [(0, 2), (3, 5)], None, [3]),
    "MPI_Alltoallv": ("alltoallv", [(0, 3), (4, 7)], None, [4]),
    "MPI_Barrier": ("barrier", [], None, []),
}
# point-to-point calls whose MPI_BYTE messages carry their shadow bytes (a halo exchange of
# packed records): the adjoint bytes go into a send buffer whose shadow is all zero (nothing
# read it after the send), else the run stops (mpi_runtime.h add)
_BYTE_CALLS = ("send", "recv", "isend", "irecv", "sendrecv")
# the datatypes of raw bytes: MPI_BYTE, and the one-byte characters a program moves memory as
# (jl's comm.h sends every message as MPI_UNSIGNED_CHAR, Nekbone's doubles among them); where
# the memory has no shadow they are integer data
_RAW = ("byte", "char", "signed_char", "unsigned_char", "int8_t", "uint8_t")
K_BYTES = 4
# request completion: always handled (the request may belong to a float Isend/Irecv)
_WAITS = ("MPI_Wait", "MPI_Waitall", "MPI_Test", "MPI_Testall", "MPI_Waitany", "MPI_Testany",
          "MPI_Waitsome", "MPI_Testsome")
# Open MPI's predefined datatypes (MPI_DOUBLE is &ompi_mpi_double): element kinds of
# mpi_runtime.c, or None for integer data (inactive)
KINDS = {"float": 0, "real": 0, "real4": 0, "double": 1, "dblprec": 1, "real8": 1,
         "float_int": 2, "double_int": 3}
_INTEGER = {"int", "long", "short", "unsigned", "unsigned_long", "unsigned_short", "long_long_int",
            "long_long", "unsigned_long_long", "char", "signed_char", "unsigned_char", "wchar",
            "c_bool", "cxx_bool", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
            "uint16_t", "uint32_t", "uint64_t", "2int", "long_int", "short_int", "aint",
            "offset", "count", "integer", "logical", "character", "integer4", "integer8"}
_ONE_SIDED = ("MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
              "MPI_Compare_and_swap", "MPI_Raccumulate")
OPS = {"sum": 0, "max": 1, "min": 2, "maxloc": 3, "minloc": 4}
IN_PLACE = "inttoptr (i64 1 to ptr)"         # Open MPI's MPI_IN_PLACE, (void *)1


def in_place(v: str) -> bool:
    return "".join(v.split()) == "inttoptr(i641toptr)"
_AUG = "{ ptr, i32 }"


# calls of rules/mpi_fortran.c whose datatype is none of the float types it names: the C call's
# arguments, the datatype known at run time only (mpi_dynamic.c defines them after AD)
DYNAMIC = "__enzyme_cc_fmpi_dyn_"
_BY_LOWER = {n[4:].lower(): n for n in FUNCS}


class _Checked:
    """classify's answer for such a call given a datatype that is not a constant: integer data,
    checked at run time (__enzyme_cc_mpi_integer_data)."""


CHECKED = _Checked()


def c_name(callee: str) -> str:
    """The C function a call stands for: MPI_Allreduce for __enzyme_cc_fmpi_dyn_allreduce."""
    name = (callee or "").lstrip("@")
    return _BY_LOWER.get(name[len(DYNAMIC):], name) if name.startswith(DYNAMIC) else name


def is_mpi(callee: str) -> bool:
    """An MPI call that is not declared inactive (stdlib_rules/mpi.toml): it gets a rule here,
    or is refused."""
    name = (callee or "").lstrip("@")
    # C names, and the Fortran bindings' that substitute_fortran leaves (mpi_scan_, the
    # mpi_f08 module's mpi_send_f08_ ...), which have no rules
    return name.startswith(("MPI_", "PMPI_", DYNAMIC)) or \
        name.startswith(("mpi_", "pmpi_")) and name.endswith("_")


def _global(v: str) -> str | None:
    """'@ompi_mpi_double' -> 'double' (None: not an Open MPI predefined handle)."""
    return v[len("@ompi_mpi_"):] if v.startswith("@ompi_mpi_") else None


def classify(inst):
    """(runtime name, [kind per distinct datatype argument], op code or None), None when the
    call moves no float data, CHECKED, or a string saying why it cannot be differentiated."""
    name, dynamic = c_name(inst.callee), inst.callee.lstrip("@").startswith(DYNAMIC)
    if name.startswith(("MPI_Win_", "MPI_Rput", "MPI_Rget")) or name in _ONE_SIDED:
        return f"one-sided MPI ('{name}') is not supported"
    if name not in FUNCS:
        return f"no derivative rule for the MPI call '{name}'"
    fn, bufs, op, _ = FUNCS[name]
    if name in _WAITS or name == "MPI_Barrier":
        return fn, [], None
    kinds, seen, checked = [], [], False
    for _, d in bufs:
        if d in seen:
            continue
        seen.append(d)
        v = inst.ops[d].value
        t = _global(v)
        if t in KINDS:
            kinds.append(KINDS[t])
        elif t in _RAW and fn in _BYTE_CALLS:
            kinds.append(K_BYTES)
        elif t in _RAW or t == "packed":
            kinds.append("bytes")
        elif t in _INTEGER:
            kinds.append(None)
        elif t is None and dynamic:
            checked = True
        elif t is None:
            return (f"the datatype of {name} ('{v}') is not a predefined Open MPI datatype known "
                    "at compile time (derived datatypes and datatypes chosen at run time are not "
                    "supported)")
        else:
            return f"MPI datatype MPI_{t.upper()} in {name} is not supported"
    if checked:
        return CHECKED if all(k is None for k in kinds) else \
            f"{name} with a datatype held in a variable beside a float one is not supported"
    if all(k is None or k == "bytes" for k in kinds):
        return None if "bytes" not in kinds else "bytes"
    if len(set(kinds)) != 1:
        return f"{name} with different datatypes on its two sides is not supported"
    code = None
    if op is not None:
        o = _global(inst.ops[op].value.replace("@ompi_mpi_op_", "@ompi_mpi_"))
        if dynamic and not inst.ops[op].value.startswith("@"):
            return CHECKED                # a reduction held in a variable: integer data only
        if not inst.ops[op].value.startswith("@ompi_mpi_op_") or o not in OPS:
            return (f"the reduction operation of {name} ('{inst.ops[op].value}') is not "
                    "MPI_SUM, MPI_MAX, MPI_MIN, MPI_MAXLOC or MPI_MINLOC")
        code = OPS[o]
        if fn in ("scan", "exscan") and code != OPS["sum"]:
            return (f"{name} with MPI_{o.upper()} on float data has no derivative rule (a "
                    "prefix sum, MPI_SUM, has one)")
        if (code >= 3) != (kinds[0] >= 2):
            return (f"{name}: MPI_MAXLOC/MPI_MINLOC need MPI_DOUBLE_INT or MPI_FLOAT_INT data, "
                    "and those types need them")
    for k, _ in bufs:
        if in_place(inst.ops[k].value) and not (op is not None and k == 0):
            return f"MPI_IN_PLACE in {name} is not supported"
    return fn, kinds, code


def received(inst) -> list[int]:
    """Arguments whose memory the call fills with float data (activity: they get shadows)."""
    name = c_name(inst.callee)
    c = classify(inst) if name in FUNCS else None
    if not isinstance(c, tuple):
        return []
    return FUNCS[name][3]


# pointer arguments besides the receive buffers that a call writes: the status or the request
# (the datatypes, the op and the communicator are handles it reads: in Open MPI pointers to the
# library's own objects, whose memory the program never reads as data)
_OUTPUTS = {"MPI_Recv": [6], "MPI_Sendrecv": [11], "MPI_Isend": [6], "MPI_Irecv": [6]}


def written(inst):
    """Argument indices the call may write (None: any memory, a request completion)."""
    name = c_name(inst.callee)
    if name not in FUNCS or name in _WAITS:
        return None
    return [k for k in FUNCS[name][3] + _OUTPUTS.get(name, [])
            if k < len(inst.ops) and inst.ops[k].ty == "ptr"]


def _args(ctx, inst, kinds, code, get_p):
    """The runtime function's arguments: the call's, the buffers' shadows, kinds, op code."""
    out = []
    for o in inst.ops:
        out.append(f"{o.ty} {get_p(o.value) if o.is_local else o.value}")
    name = inst.callee.lstrip("@")
    for k, _ in FUNCS[name][1]:
        sh = _shadow(ctx, inst.ops[k].value)
        if sh == "null" and k in FUNCS[name][3] and inst.ops[k].value != "null":
            # received float data would land in memory without a shadow: never a silent zero
            ctx.gen().fail(ctx.synth, inst, f"the receive buffer of {name} "
                           f"('{inst.ops[k].value}') has no shadow",
                           "receive into a local, heap or global array (not a constant "
                           "expression), or into memory passed with enzyme_dup")
        out.append(f"ptr {sh}")
    out += [f"i32 {k}" for k in kinds]
    if code is not None:
        out.append(f"i32 {code}")
    return out


def _shadow(ctx, v):
    if in_place(v):
        return IN_PLACE
    if v.startswith("%") and ctx.shadowed(v) or v in ctx.act.global_shadows:
        return ctx.s(v)
    return "null"


def _declare(ctx, fn, ret, args):
    ctx.gen().declare_raw(f"@{fn}", f"declare {ret} @{fn}({', '.join(a.split(' ')[0] for a in args)})")


def _check(ctx, inst, emit=None):
    """The call's classification; refuses what cannot be differentiated: at the link where
    every run of the derivative makes the call, else where it runs (emit: the forward sweep's;
    the call is then left as it is, after the stop)."""
    c = classify(inst)
    synth = ctx.synth
    if c == "bytes":
        if any(_shadow(ctx, o.value) != "null" for o in inst.ops if o.ty == "ptr"):
            ctx.gen().fail_where_run(synth, inst, f"{c_name(inst.callee)} moves memory with a "
                                     "shadow as raw bytes (MPI_BYTE, MPI_PACKED or a character "
                                     "type: its derivative is unknown)",
                                     "send float data as MPI_DOUBLE or MPI_FLOAT",
                                     emit)
        return None
    if isinstance(c, str):
        if inst.callee[1:].startswith(("mpi_", "pmpi_")):
            # (a Fortran binding substitute_fortran does not cover: mpi_reduce_scatter_,
            # mpi_f08's ...)
            hint = ("Fortran's MPI_SEND/RECV, ISEND/IRECV, WAIT/TEST (ALL, ANY, SOME), "
                    "SENDRECV, BCAST, (ALL)REDUCE, (EX)SCAN, (ALL)GATHER(V), SCATTER(V), "
                    "ALLTOALL(V) and BARRIER of mpif.h or `use mpi` have derivatives; keep other "
                    "MPI calls out of the differentiated procedure")
        elif "known at compile time" in c:
            hint = ("name a predefined datatype in the call itself (MPI_DOUBLE, MPI_FLOAT), "
                    "not one held in a variable")
        else:
            hint = ("differentiate only MPI_Send/Recv, Isend/Irecv, Wait/Test(all/any/some), "
                    "Sendrecv, Bcast, (All)Reduce, (Ex)Scan, (All)Gather(v), Scatter(v), "
                    "Alltoall(v) and Barrier on predefined datatypes, or declare the call "
                    "inactive with __enzyme_inactivefn if it moves no float data")
        ctx.gen().fail_where_run(synth, inst, c, hint, emit)
        return None
    if c is not None and getattr(synth, "error", False):
        ctx.gen().fail(synth, inst, f"{c_name(inst.callee)} in __enzyme_error_estimate is not "
                       "supported", "estimate the error of the code around it")
    return c


# the source argument of receives (reverse mode refuses MPI_ANY_SOURCE, see _wildcard)
_SOURCE_ARG = {"MPI_Recv": 3, "MPI_Irecv": 3, "MPI_Sendrecv": 8}


def _wildcard(ctx, inst):
    """Reverse mode: a receive from MPI_ANY_SOURCE could match another rank's adjoint message
    (sent on the same communicator while this rank still runs its forward sweep)."""
    k = _SOURCE_ARG.get(inst.callee.lstrip("@"))
    if k is not None and ctx.synth.mode != "forward" and inst.ops[k].value == "-1":
        ctx.gen().fail(ctx.synth, inst, f"{inst.callee[1:]} from MPI_ANY_SOURCE in reverse mode "
                       "is not supported (it could receive another rank's adjoint message)",
                       "receive from a known rank (MPI_ANY_TAG is fine), or use forward mode")


def forward(ctx, inst, before):
    """Forward sweep (reverse mode) and forward mode: the runtime's aug/fwd call replaces the
    primal call. Returns False to drop the primal."""
    if not before:
        return None
    c = _check(ctx, inst, ctx.emit)
    if c is CHECKED:                      # integer data if the run-time check passes
        _check_integer_data(ctx, inst)
        return None
    if c is None:
        return None                       # integer data: the primal call as it is
    fn, kinds, code = c
    synth = ctx.synth
    _wildcard(ctx, inst)
    args = _args(ctx, inst, kinds, code, ctx.p)
    if synth.mode == "forward" and getattr(synth, "width", 1) > 1:
        if synth.lane > 0:             # lane 0's call moves every lane's tangent
            return False
        if FUNCS[inst.callee[1:]][1]:
            _vector_call(ctx, inst, fn, args)
            return False
    if synth.mode == "forward":
        name = f"__enzyme_cc_mpi_fwd_{fn}"
        _declare(ctx, name, "i32", args)
        call = f"call i32 @{name}({', '.join(args)})"
        ctx.emit(f"{synth.r(inst.name)} = {call}" if inst.name else call)
        return False
    name = f"__enzyme_cc_mpi_aug_{fn}"
    _declare(ctx, name, _AUG, args)
    t = ctx.tmp("mpi")
    ctx.emit(f"{t} = call {_AUG} @{name}({', '.join(args)})")
    ctx.emit(f"%ad.ctape.{inst.line} = extractvalue {_AUG} {t}, 0")
    if inst.name:
        ctx.emit(f"{synth.r(inst.name)} = extractvalue {_AUG} {t}, 1")
    return False


def _vector_call(ctx, inst, fn, args):
    """Vector forward mode (enzyme_width N): one runtime call with, for each buffer, an array of
    its N lanes' shadows (on the stack for the call only: the runtime copies what it keeps)."""
    synth = ctx.synth
    bufs = FUNCS[inst.callee[1:]][1]
    nops, width = len(inst.ops), synth.width
    sp = ctx.tmp("mpisp")
    ctx.emit(f"{sp} = call ptr @llvm.stacksave.p0()")
    ctx.gen().declare_raw("@llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()")
    ctx.gen().declare_raw("@llvm.stackrestore.p0", "declare void @llvm.stackrestore.p0(ptr)")
    arrays = []
    for k, _ in bufs:
        arr = ctx.tmp("mpilanes")
        ctx.emit(f"{arr} = alloca [{width} x ptr]")
        for lane in synth.lanes():
            slot = ctx.tmp("mpilane")
            ctx.emit(f"{slot} = getelementptr [{width} x ptr], ptr {arr}, i64 0, i64 {lane}")
            ctx.emit(f"store ptr {_shadow(ctx, inst.ops[k].value)}, ptr {slot}")
        arrays.append(f"ptr {arr}")
    vargs = args[:nops] + arrays + args[nops + len(bufs):] + [f"i32 {width}"]
    name = f"__enzyme_cc_mpi_fwdv_{fn}"
    _declare(ctx, name, "i32", vargs)
    call = f"call i32 @{name}({', '.join(vargs)})"
    ctx.emit(f"{synth.r(inst.name)} = {call}" if inst.name else call)
    ctx.emit(f"call void @llvm.stackrestore.p0(ptr {sp})")


def _check_integer_data(ctx, inst):
    """Before a call given its datatype at run time: stop unless it is integer data."""
    name = c_name(inst.callee)
    text = ctx.gen().private_string(name.upper())
    seen = []
    for _, d in FUNCS[name][1]:
        v = inst.ops[d].value
        if v in seen or _global(v) is not None and _global(v) in _INTEGER:
            continue
        seen.append(v)
        op = ctx.p(v) if inst.ops[d].is_local else v
        _declare(ctx, "__enzyme_cc_mpi_integer_data", "void", ["ptr", "ptr"])
        ctx.emit(f"call void @__enzyme_cc_mpi_integer_data(ptr {op}, ptr {text})")


def reverse(ctx, inst):
    c = _check(ctx, inst)
    if c is None or c is CHECKED:
        return
    fn, kinds, code = c
    args = [f"ptr {ctx._get(('ctape', inst.line))}"] + _args(ctx, inst, kinds, code, ctx.p)
    name = f"__enzyme_cc_mpi_rev_{fn}"
    _declare(ctx, name, "void", args)
    ctx.emit(f"call void @{name}({', '.join(args)})")


# ---- the runtime ---------------------------------------------------------------------------
_SOURCES = ("mpi_runtime.c", "mpi_collectives.c", "mpi_dynamic.c")   # include mpi_runtime.h


def link_runtime(module, text: str, ctx):
    """Link the runtime into the derivative module when it calls it."""
    if "@__enzyme_cc_mpi_" not in text and "@" + DYNAMIC not in text:
        return
    link_needed(module, ctx, _SOURCES, ("mpi_runtime.h", "mpi_abi.h"), "MPI runtime", text)


# ---- Fortran's bindings ------------------------------------------------------------------
# the Fortran bindings (mpif.h, `use mpi`) of the calls above, by our wrappers (mpi_fortran.c)
# that convert the handles and call the C functions; inlined before AD
_FORTRAN = re.compile(r"@mpi_(" + "|".join(_BY_LOWER) + r")_(?![\w.$])")


def substitute_fortran(text: str) -> tuple[str, bool]:
    """The module text with calls of those bindings renamed to our wrappers, and whether there
    were any (then link_fortran_bindings links them in)."""
    if "@mpi_" not in text:
        return text, False
    # a program that brings its own MPI (serial stubs: Nekbone's mpi_dummy.f) keeps its calls
    own = set(re.findall(r"^define [^@\n]*@mpi_(\w+)_\(", text, re.M))
    new = _FORTRAN.sub(lambda m: m.group(0) if m.group(1) in own
                       else f"@__enzyme_cc_fmpi_{m.group(1)}", text)
    return new, new != text


def link_fortran_bindings(module, ctx, text: str):
    """The wrappers module `text` calls (c_runtime.link_needed: the others dropped before AD)."""
    link_needed(module, ctx, ("mpi_fortran.c",), ("mpi_abi.h", "mpi_typed.h"),
                "Fortran MPI bindings", text)


# ---- C calls given their datatype at run time ----------------------------------------------
_C_TYPED = [n for n in FUNCS if FUNCS[n][1]]
_C_CALL = re.compile(r"@(" + "|".join(_C_TYPED) + r")\(")
C_TYPED_PREFIX = "__enzyme_cc_cmpi_"


def _call_args(line: str, start: int) -> list[str] | None:
    """The arguments of the call whose '(' is at line[start - 1], split at top-level commas."""
    depth, out, cur = 0, [], start
    for k in range(start, len(line)):
        ch = line[k]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and depth:
            depth -= 1
        elif ch == ")":
            out.append(line[cur:k])
            return out
        elif ch == "," and depth == 0:
            out.append(line[cur:k])
            cur = k + 1
    return None


def substitute_c_datatypes(text: str) -> tuple[str, bool]:
    """The module text with each call whose datatype or reduction is not a constant (a struct
    field, a global set at start-up, a phi of two calls the optimizer sank into one) renamed to
    our wrapper (rules/mpi_c_typed.c), which compares it at run time with the float types (and
    the reductions with derivatives) and calls the function with constants in each branch; and
    whether there were any (then link_c_datatypes links the wrappers in)."""
    if "@MPI_" not in text:
        return text, False
    lines, renamed = text.split("\n"), set()
    for k, line in enumerate(lines):
        if "call " not in line and "invoke " not in line or line.startswith("declare"):
            continue                      # (C++ calls MPI by invoke where cleanups are due)
        m = _C_CALL.search(line)
        args = _call_args(line, m.end()) if m else None
        name = m.group(1) if m else None
        if not args or len(args) <= max(d for _, d in FUNCS[name][1]):
            continue
        op = FUNCS[name][2]
        if all(args[d].split()[-1].startswith("@ompi_mpi_") for _, d in FUNCS[name][1]) and \
                (op is None or args[op].split()[-1].startswith("@ompi_mpi_op_")):
            continue
        lines[k] = f"{line[:m.start()]}@{C_TYPED_PREFIX}{name[4:].lower()}({line[m.end():]}"
        renamed.add(name)
    for k, line in enumerate(list(lines)):
        if line.startswith("declare") and (m := _C_CALL.search(line)) and m.group(1) in renamed:
            lines.append(f"{line[:m.start()]}@{C_TYPED_PREFIX}{m.group(1)[4:].lower()}("
                         f"{line[m.end():]}")
    return ("\n".join(lines), True) if renamed else (text, False)


def link_c_datatypes(module, ctx, text: str):
    """The dispatchers module `text` calls (c_runtime.link_needed)."""
    link_needed(module, ctx, ("mpi_c_typed.c",), ("mpi_abi.h", "mpi_typed.h"),
                "MPI datatype dispatch", text)
