"""Forward mode over the reverse mode of a checkpointed loop (Hessian-vector products:
`__enzyme_fwddiff` of a function that calls `__enzyme_autodiff` of one holding
`__enzyme_checkpoint_for/while`).

The inner derivative calls `@ckpt.aug.N` (the schedule's forward part) and `@ckpt.rev.N` (the
rest), whose driver in <enzyme/checkpoint.h> is runtime code with no derivative. An outer forward
derivative replaces those calls (ForwardSynth: call kind `ckpt_fn`) by functions generated here
that run the same driver on the tangents of the callbacks: `advance` runs the forward-mode
derivative of the step (state and its tangent move together), `uturn` the forward-mode
derivative of the step's combined gradient (adjoints and their tangents), and the snapshots hold
each region and its tangent (the region pointer's shadow, per lane). The env record is the inner
one (checkpoint.Layout) followed by the tangents: of each step argument, of each shadow, of each
adjoint accumulator (W lanes each), and the activity signature the two halves must agree on.
A run the inner derivative reverses more than once (checkpoint.AGAIN) is reversed again here
too, each time from the regions and tangents kept before the loop.
"""
from __future__ import annotations

import hashlib
import re

from enzyme_cc.ir.lexer import is_fp, type_size, zero_of
from .checkpoint import (AGAIN, DRIVERS, INFO, RUN_TY, Layout, advance_fn, region_entries,
                         start_run, step_index, touched_globals)
from ..structure.diagnostics import source_of

PREFIXES = ("@ckpt.aug.", "@ckpt.rev.")
# the forward part, refusing schemes whose save_state would not copy the tangents (the header)
TANGENT = ("@__enzyme_cc_ckpt_forward_tangent", "@__enzyme_cc_ckpt_forward_tangent_again")


def is_ckpt_fn(callee: str | None) -> bool:
    return (callee or "").startswith(PREFIXES)


def _info(gen, n):
    line = gen.module.globals.get(f"{INFO}{n}") or ""
    m = re.search(r'c"([^"]*)"', line)
    if not m:
        return None
    text = re.sub(r"\\([0-9A-Fa-f]{2})", lambda x: chr(int(x.group(1), 16)), m.group(1))
    callee, acts, diffe, drty, multi = text.split("|")
    return callee, tuple(acts.split(",")) if acts else (), diffe, drty, multi == "1"


def loop_source(gen, callee) -> str:
    """' (the loop at file:line)' for an error about a call of @ckpt.aug.N / @ckpt.rev.N in
    generated code, from the debug location of the loop's own call; '' without one."""
    info = _info(gen, callee.rsplit(".", 1)[1])
    if info is None:
        return ""
    for line in gen.module._lines:
        if f"{info[0]}(" in line and "call " in line:
            m = re.search(r"!dbg (![0-9]+)", line)
            src = source_of(gen.module, m.group(1)) if m else None
            if src:
                return f" (the loop at {src})"
    return ""


def _ops(L):
    """The custom ABI's operands in order: (wrapper parameter index, 'p' or 'q')."""
    out = []
    for k, p in enumerate(L.wrapper.params):
        out.append((k, "p"))
        if p.ty == "ptr":
            out.append((k, "q"))
    return out


def _act2(ctx, o):
    if o.ty == "ptr" and o.value != "null" and ctx.shadowed(o.value):
        return "dup"
    if is_fp(o.ty) and ctx.active(o.value):
        return "active"
    return "const"


def _layout(gen, info, width):
    callee, acts, diffe, drty, _ = info
    L = Layout(gen, callee, acts)
    for j, p in enumerate(L.sparams):
        if p.ty == "ptr" or is_fp(p.ty):
            for lane in range(width):
                L.add(("ta", j, lane), p.ty)
        if ("s", j) in L.where:
            for lane in range(width):
                L.add(("ts", j, lane), "ptr")
    for j in L.active:
        for lane in range(width):
            L.add(("tacc", j, lane), L.sparams[j].ty)
    L.add("sig", "i64")
    return L


def _sig(L, a2) -> str:
    """The step arguments' outer activity, which the forward and the reverse part must share."""
    return str(int(hashlib.md5(",".join(a2).encode()).hexdigest()[:15], 16))


def _dname(k, pq, lane):
    return f"%{pq}{k}.d{lane}"


def tangent_call(ctx, inst):
    """Emit the outer derivative of a call of @ckpt.aug.N / @ckpt.rev.N in forward mode; the
    tangents of its result, one per lane (None: no float result)."""
    gen, synth = ctx.gen(), ctx.synth
    width = getattr(synth, "width", 1)
    n = inst.callee.rsplit(".", 1)[1]
    info = _info(gen, n)
    what = "a checkpointed loop (__enzyme_checkpoint_for/while) in a derivative that is " \
           "differentiated again in forward mode" + loop_source(gen, inst.callee)
    if info is None:
        gen.fail(synth, inst, f"{what}: its description is missing", "report this as a bug")
    if getattr(synth, "error", False):
        gen.fail(synth, inst, f"{what} for error estimates is not supported",
                 "estimate the error of the plain loop")
    for d in TANGENT + ("@__enzyme_cc_ckpt_fail",):
        if not gen.module.defines(d):
            gen.fail(synth, inst, f"{what}: the program's <enzyme/checkpoint.h> lacks '{d[1:]}'",
                     "rebuild every file including <enzyme/checkpoint.h> with this enzyme-cc")
    L = _layout(gen, info, width)
    ops = _ops(L)
    a2 = [_act2(ctx, o) for o in inst.ops[:len(ops)]]
    # per step argument: its outer activity (the primal argument, its inner shadow)
    pos = {kp: i for i, kp in enumerate(ops)}
    arg2 = [a2[pos[(L.first + j, "p")]] for j in range(len(L.sparams))]
    sh2 = [a2[pos[(L.first + j, "q")]] if ("s", j) in L.where else "const"
           for j in range(len(L.sparams))]
    aug = inst.callee.startswith(PREFIXES[0])
    key = ("ckpt-fwd", inst.callee, tuple(a2), width)
    if key not in gen.done:
        gen.done[key] = (_forward_part if aug else _reverse_part)(gen, synth, inst, L, info, ops,
                                                                  a2, arg2, sh2, width)
    name, rty = gen.done[key]
    args = []
    for o, a in zip(inst.ops, a2):
        args.append(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}")
        for _ in synth.lanes():
            if a == "dup":
                args.append(f"ptr {ctx.s(o.value)}")
            elif a == "active":
                args.append(f"{o.ty} {ctx.t(o.value, o.ty)}")
    if not aug:
        tape = inst.ops[-1]
        args.append(f"ptr {ctx.p(tape.value) if tape.is_local else tape.value}")
    call = f"call {rty} {name}({', '.join(args)})"
    if aug:
        ctx.emit(f"{synth.r(inst.name)} = {call}" if inst.name else call)
        if inst.name and inst.name in synth.act.shadowed:    # the run has no shadow: null
            for _ in synth.lanes():
                ctx.emit(f"{synth.sname(inst.name)} = getelementptr i8, ptr null, i64 0")
        return None
    if rty == "void":
        ctx.emit(call)
        return None
    t = synth.tmp("ckf")
    ctx.emit(f"{t} = {call}")
    if inst.name:
        ctx.emit(f"{synth.r(inst.name)} = extractvalue {rty} {t}, 0")
    out = []
    for lane in synth.lanes():
        tan = synth.tmp("ckt")
        ctx.emit(f"{tan} = extractvalue {rty} {t}, 1{f', {lane}' if width > 1 else ''}")
        out.append(tan)
    return out


def _params(L, ops, a2, width):
    params = []
    for (k, pq), a in zip(ops, a2):
        ty = L.wrapper.params[k].ty if pq == "p" else "ptr"
        params.append(f"{ty} %{pq}{k}")
        if a != "const":
            params += [f"{ty} {_dname(k, pq, lane)}" for lane in range(width)]
    return params


def _refuse_global_shadows(gen, synth, inst, L):
    shadowed = [g for g, _ in touched_globals(gen, L.step) if g in gen.shadow_lanes]
    if shadowed:
        gen.fail(synth, inst, f"the step of a checkpointed loop{loop_source(gen, inst.callee)} "
                 f"uses the global '{shadowed[0][1:]}'"
                 ", which has a derivative, in a gradient that is differentiated again in forward "
                 "mode (its one shadow would hold both the tangent and the adjoint)",
                 "pass the global's value to the step as an argument, or use the plain loop")


def _load_step_args(L, body, arg2, width, sh2=None) -> list[str]:
    """Load the step's arguments and their tangents (and, given sh2, the shadows the reverse
    sweep passes and their tangents) from the env into `body`; the call's argument list."""
    argl = []
    for j, p in enumerate(L.sparams):
        L.load(body, ("a", j), p.ty, f"%a{j}")
        argl.append(f"{p.ty} %a{j}")
        if arg2[j] != "const":
            for lane in range(width):
                L.load(body, ("ta", j, lane), p.ty, f"%ta{j}.{lane}")
                argl.append(f"{p.ty} %ta{j}.{lane}")
        if sh2 is not None and ("s", j) in L.where:
            L.load(body, ("s", j), "ptr", f"%s{j}")
            argl.append(f"ptr %s{j}")
            if sh2[j] != "const":
                for lane in range(width):
                    L.load(body, ("ts", j, lane), "ptr", f"%ts{j}.{lane}")
                    argl.append(f"ptr %ts{j}.{lane}")
    return argl


def _forward_part(gen, synth, inst, L, info, ops, a2, arg2, sh2, width):
    """@ckpt.aug.N's outer derivative: env and tangents, regions and their tangents, the
    forward part of the schedule with the step's forward-mode derivative."""
    gen.counter += 1
    n = gen.counter
    name, adv = f"@ckpt.faug.{n}", f"@ckpt.fadvance.{n}"
    facts = ["const"] + arg2
    fstep, frty = gen.forward(L.step, facts, callee=True, width=width)
    _refuse_global_shadows(gen, synth, inst, L)

    def load(body):
        argl = _load_step_args(L, body, arg2, width)
        L.load(body, "start", "i64", "%start")
        return argl

    def call(body, argl):
        c = f"call {frty} {fstep}({', '.join([step_index(L, body)] + argl)})"
        rt = L.target.ret_ty
        if rt == "void":
            body.append(c)
        elif frty == rt:
            body.append(f"%r = {c}")
        else:
            body += [f"%rr = {c}", f"%r = extractvalue {frty} %rr, 0"]
    gen.out.append(advance_fn(L, adv, load, call))
    pidx = {kp: i for i, kp in enumerate(ops)}
    body = ["entry:", f"%env = call ptr @malloc(i64 {type_size(L.env_ty, gen.module.named_types)})"]
    for j, p in enumerate(L.sparams):
        k = L.first + j
        body.append(f"store {p.ty} %p{k}, ptr {L.field(body, ('a', j))}")
        if ("ta", j, 0) in L.where:
            for lane in range(width):
                v = _dname(k, "p", lane) if arg2[j] != "const" else zero_of(p.ty)
                body.append(f"store {p.ty} {v}, ptr {L.field(body, ('ta', j, lane))}")
    body.append(f"store i64 %p2, ptr {L.field(body, 'start')}")
    body.append(f"store i64 {_sig(L, arg2)}, ptr {L.field(body, 'sig')}")
    entries = region_entries(gen, L)
    for r in range(L.nreg):          # each region's tangent is snapshot with it
        if a2[pidx[(4 + 2 * r, "p")]] == "dup":
            entries += [(_dname(4 + 2 * r, "p", lane), f"%p{5 + 2 * r}") for lane in range(width)]
    start_run(gen, L, body, entries, "%env", adv, "null", TANGENT[1 if info[4] else 0])
    body.append("ret ptr %run")
    gen.out.append(f"define internal ptr {name}({', '.join(_params(L, ops, a2, width))}) {{\n"
                   + "\n".join(body) + "\n}\n")
    return name, "ptr"


def _reverse_part(gen, synth, inst, L, info, ops, a2, arg2, sh2, width):
    """@ckpt.rev.N's outer derivative: this sweep's shadows and their tangents, the rest of the
    schedule with the forward-mode derivative of the step's gradient as its u-turn; returns
    {adjoints, their tangents}."""
    _, _, diffe, drty, _ = info
    gen.counter += 1
    n = gen.counter
    name, turn = f"@ckpt.frev.{n}", f"@ckpt.futurn.{n}"
    dacts = ["const"]
    for j in range(len(L.sparams)):
        dacts.append(arg2[j])
        if ("s", j) in L.where:
            dacts.append(sh2[j])
    fd, fdrty = gen.forward(diffe, dacts, callee=True, width=width)
    _refuse_global_shadows(gen, synth, inst, L)
    # u-turn: the forward-mode derivative of the step's combined gradient, accumulated
    body = ["entry:"]
    argl = _load_step_args(L, body, arg2, width, sh2)
    L.load(body, "start", "i64", "%start")
    body.append("%i = add i64 %start, %j")
    c = f"call {fdrty} {fd}({', '.join([step_index(L, body)] + argl)})"
    body.append(c if fdrty == "void" else f"%g = {c}")
    many = len(L.active) > 1
    for k, j in enumerate(L.active):
        ty = L.sparams[j].ty
        sub = f", {k}" if many else ""
        lanes = [f", {lane}" if width > 1 else "" for lane in range(width)]
        parts = [(("acc", j), f"0{sub}")] + [(("tacc", j, lane), f"1{lanes[lane]}{sub}")
                                             for lane in range(width)]
        for m, (fk, idx) in enumerate(parts):
            slot = L.field(body, fk)
            g, o, nv = f"%g{k}.{m}", f"%o{k}.{m}", f"%n{k}.{m}"
            body += [f"{g} = extractvalue {fdrty} %g, {idx}", f"{o} = load {ty}, ptr {slot}",
                     f"{nv} = fadd {ty} {o}, {g}", f"store {ty} {nv}, ptr {slot}"]
    body.append("ret void")
    gen.out.append(f"define internal void {turn}(ptr %env, i64 %j) {{\n" + "\n".join(body)
                   + "\n}\n")
    # the reverse part
    body = ["entry:", f"%envp = getelementptr inbounds {RUN_TY}, ptr %tape, i32 0, i32 5",
            "%env = load ptr, ptr %envp"]
    L.load(body, "sig", "i64", "%sig")
    body += [f"%same = icmp eq i64 %sig, {_sig(L, arg2)}", "br i1 %same, label %go, label %bad",
             "bad:", "call void @__enzyme_cc_ckpt_fail(ptr @ckpt.fmsg)", "unreachable", "go:"]
    for j, p in enumerate(L.sparams):
        if ("s", j) not in L.where:
            continue
        k = L.first + j
        body.append(f"store ptr %q{k}, ptr {L.field(body, ('s', j))}")
        for lane in range(width):
            v = _dname(k, "q", lane) if sh2[j] != "const" else "null"
            body.append(f"store ptr {v}, ptr {L.field(body, ('ts', j, lane))}")
    for j in L.active:
        ty = L.sparams[j].ty
        for fk in [("acc", j)] + [("tacc", j, lane) for lane in range(width)]:
            body.append(f"store {ty} {zero_of(ty)}, ptr {L.field(body, fk)}")
    body += [f"%turnp = getelementptr inbounds {RUN_TY}, ptr %tape, i32 0, i32 7",
             f"store ptr {turn}, ptr %turnp",
             f"call void {AGAIN[1] if info[4] else DRIVERS[1]}(ptr %tape)"]
    fps, rty = L.fp_params()
    vals = [[] for _ in range(width + 1)]
    for k, ty in fps:
        j = k - L.first
        for m, fk in enumerate([("acc", j)] + [("tacc", j, lane) for lane in range(width)]):
            if j in L.active:
                L.load(body, fk, ty, f"%v{k}.{m}")
                vals[m].append((ty, f"%v{k}.{m}"))
            else:
                vals[m].append((ty, zero_of(ty)))
    if not info[4]:     # else reversed again: freed with the inner tape (its deferred free)
        body += ["call void @free(ptr %env)", "call void @free(ptr %tape)"]
    _declare_fail(gen)
    params = _params(L, ops, a2, width) + ["ptr %tape"]
    if rty == "void":
        body.append("ret void")
        ret = "void"
    else:
        tvec = rty if width == 1 else f"[{width} x {rty}]"
        ret = "{ " + rty + ", " + tvec + " }"
        packed = [_pack(body, rty, vs, f"%pk{m}") for m, vs in enumerate(vals)]
        tv = packed[1]
        if width > 1:
            tv = "poison"
            for lane in range(width):
                body.append(f"%tv{lane} = insertvalue {tvec} {tv}, {rty} {packed[1 + lane]}, "
                            f"{lane}")
                tv = f"%tv{lane}"
        body += [f"%ret0 = insertvalue {ret} poison, {rty} {packed[0]}, 0",
                 f"%ret1 = insertvalue {ret} %ret0, {tvec} {tv}, 1", f"ret {ret} %ret1"]
    gen.out.append(f"define internal {ret} {name}({', '.join(params)}) {{\n" + "\n".join(body)
                   + "\n}\n")
    return name, ret


def _pack(body, rty, vals, name):
    """The custom ABI's adjoint value (one float, or a struct of them)."""
    if len(vals) == 1:
        return vals[0][1]
    acc = "poison"
    for k, (ty, v) in enumerate(vals):
        body.append(f"{name}.{k} = insertvalue {rty} {acc}, {ty} {v}, {k}")
        acc = f"{name}.{k}"
    return acc


_MSG = ("the forward and the reverse part of a checkpointed loop's derivative were "
        "differentiated with different activities")


def _declare_fail(gen):
    if ("ckpt-fmsg",) not in gen.done and "@ckpt.fmsg" not in gen.module.globals:
        gen.done[("ckpt-fmsg",)] = True
        gen.out.append(f"@ckpt.fmsg = private unnamed_addr constant [{len(_MSG) + 1} x i8] "
                       f"c\"{_MSG}\\00\"\n")
