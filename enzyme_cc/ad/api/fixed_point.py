"""Enzyme's fixed-point API (enzyme/fixed_point.h) and `__enzyme_iter`.

`__enzyme_fixed_point(step, enzyme_fp_state, z, bytes, ..., args...)` is lowered before AD
(`lower`) into a call of a loop function `@__enzyme_cc_fp.K.<state args>.<regions>` running
`while (step(i++, args...));`. Derivatives treat that call as one operation (rules/calls.py,
rules/tangent.py call kind "fixedpoint") and never go through its iterations:

- reverse mode: the forward sweep keeps a snapshot of the converged state (and the checkpoint
  regions) on the tape; the reverse sweep runs the step's combined gradient at that state
  repeatedly. Pass 1 starts from the state's adjoint zbar (and the adjoints of other outputs);
  pass k maps the update delta_k in the state's shadow to delta_{k+1} = phi_z^T delta_k and adds
  phi_x^T delta_k to the inputs' adjoints, so the inputs get phi_x^T (sum of updates) =
  phi_x^T w with w = zbar + phi_z^T w: the implicit-function theorem, by linearity.
- forward mode: the tangent s <- phi_z s + phi_x xdot is iterated from s = 0 with the step's
  forward derivative at the converged state.

Both stop as Enzyme's header says (relative reduction of the squared norm of the update,
growth after five passes, max iterations, or Tapenade's control protocol).

`__enzyme_iter` is ad/api/iter_marker.py's.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp
from ..analysis.const_fields import act_key
from ..structure.diagnostics import located
from .checkpoint import touched_globals, PREFIX as CKPT
from .marker_args import _marker_of
from enzyme_cc.ir.model import parse_module
from enzyme_cc.rules.shadow_blocks import defer_free
from ..structure.type_layout import underlying

PREFIX = "@__enzyme_cc_fp."
_FP_CALL = re.compile(r"@\"?[\w.$]*__enzyme_(fixed_point|set_fixed_point)\w*\"?\(")
# enzyme_cc_fp_measured (the loop outliner's, not Enzyme's): a region whose shadow's update also
# counts in the convergence test, but is not cleared (a value a marked loop carries in a register)
_OPTS = ("enzyme_fp_state", "enzyme_fp_reduction", "enzyme_fp_max_iters", "enzyme_fp_control",
         "enzyme_checkpoint_region", "enzyme_cc_fp_measured")
_HINT = ("call __enzyme_fixed_point((void *)step, enzyme_fp_state, z, bytes, [options,] args...) "
         "with int step(int64_t i, args...) updating z in place")


def _tag(fn, value: str) -> str | None:
    return _marker_of(fn, value, _OPTS)


def _same_pointer(fn, a: str, b: str) -> bool:
    """a and b are the same pointer: the same value or, in unoptimized code, the same address
    computation (array decay twice, loads of a local variable that is stored once)."""
    if a == b:
        return True
    da, db = fn.defs.get(a), fn.defs.get(b)
    op = getattr(da, "op", None)
    if op not in ("load", "getelementptr") or getattr(db, "op", None) != op or \
            len(da.ops) != len(db.ops) or da.ty != db.ty or \
            not all(x.ty == y.ty and _same_pointer(fn, x.value, y.value)
                    for x, y in zip(da.ops, db.ops)):
        return False
    if op == "getelementptr":           # the same source element type and flags
        def head(d):
            t = d.toks[d.toks.index("getelementptr"):]
            return t[:t.index(d.ops[0].value)] if d.ops[0].value in t else None
        return head(da) is not None and head(da) == head(db)
    slot = da.ops[0].value
    if getattr(fn.defs.get(slot), "op", None) != "alloca":
        return False
    return len([i for i in fn.insts() if i.op == "store" and i.ops[1].value == slot]) == 1


def _convert(pre, name, ty, value, want, where, what):
    """value (as passed through `...`) converted to the step's parameter type."""
    if ty == want:
        return value
    if ty.startswith("i") and want.startswith("i") and ty[1:].isdigit() and want[1:].isdigit():
        op = "trunc" if int(ty[1:]) > int(want[1:]) else "sext"
    elif ty == "double" and want == "float":
        op = "fptrunc"
    else:
        raise UserError(f"{where}: {what} has type {ty}, but the step takes {want}; hint: {_HINT}")
    pre.append(f"{name} = {op} {ty} {value} to {want}")
    return name


def lower(text: str) -> str:
    """Rewrite every __enzyme_fixed_point call into a call of its loop function."""
    if not _FP_CALL.search(text):
        return text
    module = parse_module(text)
    lines, extra, count = list(module._lines), [], 0
    for name, (start, end) in list(module._bodies.items()):
        if not _FP_CALL.search("\n".join(module._lines[start:end])):
            continue
        fn = module.function(name)
        for inst in list(fn.insts()):
            callee = inst.callee or ""
            if inst.op not in ("call", "invoke") or "__enzyme_" not in callee:
                continue
            where = located(module, fn, inst)
            if "__enzyme_set_fixed_point" in callee:
                raise UserError(f"{where}: '__enzyme_set_fixed_point' (a loop marked from inside) is "
                                f"not supported; hint: move one iteration into a function and "
                                f"{_HINT}")
            if "__enzyme_fixed_point" not in callee:
                continue
            if inst.op == "invoke":
                raise UserError(f"{where}: __enzyme_fixed_point in a try block is not supported; "
                                "hint: call it from a function without exception handlers")
            count += 1
            call, define = _loop_function(module, fn, inst, count, where)
            extra.append(define)
            lines[inst.line] = call
            for k in range(inst.line + 1, inst.line_end + 1):
                lines[k] = ""
    return "\n".join(lines) + "\n" + "\n".join(extra) + "\n"


def _loop_function(module, fn, inst, count, where):
    ops = list(inst.ops)
    if not ops or not ops[0].value.startswith("@") or module.function(ops[0].value) is None:
        raise UserError(f"{where}: the first argument of __enzyme_fixed_point must be a step "
                        f"function with bitcode; hint: {_HINT}")
    step = module.function(ops[0].value)
    if not step.params or step.params[0].ty != "i64" or not re.fullmatch(r"i\d+", step.ret_ty):
        raise UserError(f"{where}: the step '{step.name[1:]}' must be int step(int64_t i, ...) "
                        f"returning whether to iterate again; hint: {_HINT}")
    if re.search(r"\b(load|store) float\b", "\n".join(
            module._lines[slice(*module._bodies[step.name])])):
        raise UserError(f"{where}: the step '{step.name[1:]}' computes in float; only states of "
                        "doubles are supported (the convergence test reads the state as doubles)"
                        "; hint: use a double state")
    pre, states, regions, measured = [], [], [], []
    red, maxit, ctrl = "-1.0", "-1", "null"
    k = 1
    while k < len(ops):
        tag = _tag(fn, ops[k].value)
        if tag is None:
            break
        need = 3 if tag in ("enzyme_fp_state", "enzyme_checkpoint_region",
                            "enzyme_cc_fp_measured") else 2
        if k + need > len(ops):
            raise UserError(f"{where}: {tag} needs {need - 1} value(s) after it; hint: {_HINT}")
        tmp = f"%ad.fpc.{count}.{k}"
        if tag in ("enzyme_fp_state", "enzyme_checkpoint_region", "enzyme_cc_fp_measured"):
            p, n = ops[k + 1], ops[k + 2]
            if p.ty != "ptr":
                raise UserError(f"{where}: {tag} must be followed by a pointer and a byte count")
            size = _convert(pre, tmp, n.ty, n.value, "i64", where, f"the byte count of {tag}")
            if tag == "enzyme_cc_fp_measured":
                measured.append((p.value, len(regions)))
            (states if tag == "enzyme_fp_state" else regions).append((p.value, size))
        elif tag == "enzyme_fp_reduction":
            red = _convert(pre, tmp, ops[k + 1].ty, ops[k + 1].value, "double", where,
                           "enzyme_fp_reduction's value")
        elif tag == "enzyme_fp_max_iters":
            maxit = _convert(pre, tmp, ops[k + 1].ty, ops[k + 1].value, "i64", where,
                             "enzyme_fp_max_iters's value")
        else:
            if ops[k + 1].ty != "ptr":
                raise UserError(f"{where}: enzyme_fp_control must be followed by a function "
                                "int control(double *cumul, double *reduction)")
            ctrl = ops[k + 1].value
        k += need
    args, params = ops[k:], step.params[1:]
    if len(args) != len(params):
        raise UserError(f"{where}: the step '{step.name[1:]}' takes {len(params)} argument(s) "
                        f"after i, but __enzyme_fixed_point passes {len(args)}; hint: {_HINT}")
    if not states:
        raise UserError(f"{where}: __enzyme_fixed_point needs the state: enzyme_fp_state, z, "
                        f"bytes; hint: {_HINT}")
    state_idx, extra = [], []
    for sv, _ in states:
        j = next((j for j, a in enumerate(args) if a.ty == "ptr" and _same_pointer(fn, a.value, sv)),
                 None)
        if j is None:               # memory the step reaches itself (a global, say)
            j = len(args) + len(extra)
            extra.append(_named_state(pre, sv, f"%ad.fps.{count}.{len(extra)}"))
        state_idx.append(j)
    vals = [_convert(pre, f"%ad.fpa.{count}.{j}", a.ty, a.value, p.ty, where,
                     f"argument {j + 1} of the step") for j, (a, p) in enumerate(zip(args, params))]
    # measured regions: <step argument>x<region>, for the step arguments that are those pointers
    meas = [f"{j}x{r}" for mv, r in measured for j, a in enumerate(args)
            if a.ty == "ptr" and _same_pointer(fn, a.value, mv)]
    name = f"{PREFIX}{count}.{'_'.join(map(str, state_idx))}.{len(regions)}.{'_'.join(meas)}"
    ptys = [p.ty for p in params]
    call_args = [f"{t} {v}" for t, v in zip(ptys, vals)] + [f"ptr {z}" for z in extra]
    call_args += [f"i64 {n}" for _, n in states]
    call_args += [f"ptr {p}, i64 {n}" for p, n in regions]
    call_args += [f"double {red}", f"i64 {maxit}", f"ptr {ctrl}"]
    dbg = inst.md.get("!dbg")
    call = "\n".join(pre + [f"call void {name}({', '.join(call_args)})" +
                            (f", !dbg {dbg}" if dbg else "")])
    decl = [f"{t} %a{j}" for j, t in enumerate(ptys + ["ptr"] * len(extra))]
    decl += [f"i64 %sb{i}" for i in range(len(states))]
    decl += [f"ptr %rp{i}, i64 %rb{i}" for i in range(len(regions))]
    decl += ["double %red", "i64 %maxit", "ptr %ctrl"]
    rt = step.ret_ty
    body = [f"define internal void {name}({', '.join(decl)}) {{", "entry:", "  br label %loop",
            "loop:", "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]",
            "  %i.next = add i64 %i, 1",
            f"  %more = call {rt} {step.name}("
            + ", ".join(["i64 %i"] + [f"{t} %a{j}" for j, t in enumerate(ptys)]) + ")",
            f"  %go = icmp ne {rt} %more, 0", "  br i1 %go, label %loop, label %done",
            "done:", "  ret void", "}"]
    return call, "\n".join(body)


_CONST_GEP = re.compile(r"getelementptr((?:\s+(?:inbounds|nuw|nusw))*)\s*\(([^()]*)\)")


def _named_state(pre, sv, name):
    """A state the step does not take as an argument but reaches itself: a global it names (or
    a member of one), or memory behind a pointer it loads. The loop function takes it as an
    extra pointer, so that derivatives pass its shadow to the fixed-point helpers (acts_of).
    A constant GEP becomes an instruction, which activity gives the global's shadow."""
    m = _CONST_GEP.fullmatch(sv.strip())
    if m:
        pre.append(f"{name} = getelementptr{m.group(1)} {m.group(2)}")
        return name
    return sv


# ---- derivatives of a loop-function call ---------------------------------------------------------
class _Info:
    def __init__(self, gen, callee):
        fn = gen.module.function(callee)
        tail = callee[len(PREFIX):].strip('"').split(".")
        self.callee, self.fn = callee, fn
        self.states = [int(x) for x in tail[1].split("_")]
        self.nreg = int(tail[2])
        # (step argument, byte count) of each memory whose shadow's update the convergence test
        # measures: the states, then the measured regions
        self.meas = [(j, f"%sb{i}") for i, j in enumerate(self.states)]
        for jr in (tail[3].split("_") if len(tail) > 3 and tail[3] else []):
            j, r = jr.split("x")
            self.meas.append((int(j), f"%rb{r}"))
        self.step = gen.module.function(next(i.callee for i in fn.insts() if i.op == "call"))
        self.n = len(self.step.params) - 1
        # the step's arguments, then the states it reaches itself (globals, say)
        self.nx = sum(1 for p in fn.params if re.fullmatch(r"%a\d+", p.name))
        # (pointer, byte count) of what the snapshot holds: the states, then the regions
        self.areas = [(f"%a{j}", f"%sb{i}") for i, j in enumerate(self.states)] + \
                     [(f"%rp{i}", f"%rb{i}") for i in range(self.nreg)]
        # and, as Enzyme keeps them without being listed, the mutable globals the step or its
        # callees name (a superset of those it writes)
        self.areas += [(g, str(size)) for g, size in touched_globals(gen, self.step.name)]

    def params(self, acts, with_tangents=False):
        out = []
        for p in self.fn.params:
            out.append(f"{p.ty} {p.name}")
            j = int(p.name[2:]) if re.fullmatch(r"%a\d+", p.name) else None
            if j is not None and acts[j] == "dup":
                out.append(f"ptr {p.name}.s")
            elif j is not None and acts[j] == "active" and with_tangents:
                out.append(f"{p.ty} {p.name}.t")
        return out

    def step_args(self, acts, with_tangents=False):
        out = ["i64 %k"]
        for j, p in enumerate(self.step.params[1:]):
            out.append(f"{p.ty} %a{j}")
            if acts[j] == "dup":
                out.append(f"ptr %a{j}.s")
            elif acts[j] == "active" and with_tangents:
                out.append(f"{p.ty} %a{j}.t")
        return out


def reverse_reads_alloca(synth, name: str) -> bool:
    """Is the alloca `name` (the memory of) an argument of a fixed-point or checkpointed-loop
    call of synth's function? Its reverse runs the step on that memory again (and the
    checkpoint driver keeps pointers to it: regions, config)."""
    found = getattr(synth, "_fp_allocas", None)
    if found is None:
        found = set()
        for inst in synth.fn.insts():
            if inst.op == "call" and (inst.callee or "").startswith((PREFIX, CKPT)):
                found |= {underlying(synth.fn, o.value) for o in inst.ops if o.ty == "ptr"}
        synth._fp_allocas = found
    return name in found


def acts_of(ctx, inst, info) -> list[str]:
    acts = []
    for o in inst.ops[:info.nx]:
        if o.ty == "ptr":           # a global with a shadow (shared globals) too
            acts.append("dup" if ctx.shadowed(o.value) or o.value in ctx.act.global_shadows
                        else "const")
        else:
            acts.append("active" if is_fp(o.ty) and ctx.active(o.value) else "const")
    for k, j in enumerate(info.states):
        v = inst.ops[j].value
        if j >= info.n and acts[j] != "dup" and v not in ctx.act.inactive_globals:
            # the step reaches it without an argument, but no active data does: without its
            # shadow the adjoint iteration could neither measure nor clear it
            step = info.step.name[1:].strip('"')
            ctx.gen().fail(ctx.synth, inst, f"fixed-point state {k + 1} ('{v}'), which the step "
                           f"'{step}' does not take as an argument, has no shadow here: the step "
                           "reaches it neither by name nor through a pointer with active data",
                           "pass the state to the step as an argument")
    return acts


def _prim(ctx, o):
    return ctx.p(o.value) if o.is_local else o.value


def _copy(out, areas, snap, to_snap, tag):
    off = "0"
    for k, (p, n) in enumerate(areas):
        at, nxt = f"%{tag}.at{k}", f"%{tag}.end{k}"
        out.append(f"  {at} = getelementptr i8, ptr {snap}, i64 {off}")
        dst, src = (at, p) if to_snap else (p, at)
        out.append(f"  call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {n}, i1 false)")
        out.append(f"  {nxt} = add i64 {off}, {n}")
        off = nxt
    return off


def _total(out, areas):
    """The snapshot's byte count."""
    off = "0"
    for k, (_, n) in enumerate(areas):
        out.append(f"  %size{k} = add i64 {off}, {n}")
        off = f"%size{k}"
    return off


def _declare(gen):
    gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
    gen.declare_raw("@free", "declare void @free(ptr)")
    gen.declare_raw("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
    gen.declare_raw("@llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    name = "@__enzyme_cc_fp_sqdiff"
    if gen.module.defines(name) or ("fp-sqdiff",) in gen.done:
        return name
    gen.done[("fp-sqdiff",)] = name
    # sum over the doubles of a of (a[i] - b[i])^2 (b null: a[i]^2)
    gen.out.append(f"""define internal double {name}(ptr %a, ptr %b, i64 %bytes) {{
entry:
  %n = udiv i64 %bytes, 8
  %hasb = icmp ne ptr %b, null
  %any = icmp ne i64 %n, 0
  br i1 %any, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %tail ]
  %s = phi double [ 0.0, %entry ], [ %s1, %tail ]
  %pa = getelementptr double, ptr %a, i64 %i
  %va = load double, ptr %pa
  br i1 %hasb, label %withb, label %tail
withb:
  %pb = getelementptr double, ptr %b, i64 %i
  %vb = load double, ptr %pb
  %dv = fsub double %va, %vb
  br label %tail
tail:
  %d = phi double [ %va, %loop ], [ %dv, %withb ]
  %sq = fmul double %d, %d
  %s1 = fadd double %s, %sq
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  %r = phi double [ 0.0, %entry ], [ %s1, %tail ]
  ret double %r
}}
""")
    return name


def _prologue(out):
    """Defaults (Enzyme's), and the control function's first call (cumul = -1)."""
    out += ["  %cum = alloca double", "  %redp = alloca double",
            "  %redneg = fcmp olt double %red, 0.0",
            "  %r = select i1 %redneg, double 1.0e-12, double %red",
            "  store double %r, ptr %redp",
            "  %mneg = icmp slt i64 %maxit, 0",
            "  %m = select i1 %mneg, i64 1000, i64 %maxit",
            "  %hasctl = icmp ne ptr %ctrl, null",
            "  br i1 %hasctl, label %start, label %loop",
            "start:", "  store double -1.0, ptr %cum",
            "  %c0 = call i32 %ctrl(ptr %cum, ptr %redp)",
            "  %go0 = icmp ne i32 %c0, 0", "  br i1 %go0, label %loop, label %done",
            "loop:", "  %k = phi i64 [ 0, %entry ], [ 0, %start ], [ %k1, %decide ]",
            "  %first = phi double [ 0.0, %entry ], [ 0.0, %start ], [ %first1, %decide ]",
            "  %prev = phi double [ 0.0, %entry ], [ 0.0, %start ], [ %norm, %decide ]"]


def _decide(out, norm):
    """After a pass whose update has squared norm `norm`: iterate again?"""
    out += [f"  %norm = fadd double {norm}, 0.0", "  %k1 = add i64 %k, 1",
            "  br i1 %hasctl, label %askctl, label %builtin",
            "askctl:", "  store double %norm, ptr %cum",
            "  %c = call i32 %ctrl(ptr %cum, ptr %redp)", "  %goc = icmp ne i32 %c, 0",
            "  br label %decide",
            "builtin:", "  %isfirst = icmp eq i64 %k, 0",
            "  %f = select i1 %isfirst, double %norm, double %first",
            "  %lim = fmul double %r, %f", "  %small = fcmp ole double %norm, %lim",
            "  %late = icmp ugt i64 %k1, 5", "  %grew = fcmp ogt double %norm, %prev",
            "  %up = and i1 %late, %grew", "  %stop = or i1 %small, %up",
            "  %gob = xor i1 %stop, true", "  br label %decide",
            "decide:", "  %go = phi i1 [ %goc, %askctl ], [ %gob, %builtin ]",
            "  %first1 = phi double [ %first, %askctl ], [ %f, %builtin ]",
            "  %capped = icmp ne i64 %m, 0", "  %over = icmp sge i64 %k1, %m",
            "  %stopm = and i1 %capped, %over", "  %keep = xor i1 %stopm, true",
            "  %again = and i1 %go, %keep", "  br i1 %again, label %loop, label %done"]


def _norms(out, info, acts, old):
    """Squared norm of the update of the shadowed measured memory (old: its previous shadows)."""
    sq = _declare_name()
    acc, off = "0.0", "0"
    for i, (j, size) in enumerate(info.meas):
        if acts[j] != "dup":
            continue
        b = "null"
        if old:
            b = f"%old.at{i}"
            out.append(f"  {b} = getelementptr i8, ptr %old, i64 {off}")
            out.append(f"  %old.end{i} = add i64 {off}, {size}")
            off = f"%old.end{i}"
        out.append(f"  %sq{i} = call double {sq}(ptr %a{j}.s, ptr {b}, i64 {size})")
        out.append(f"  %acc{i} = fadd double {acc}, %sq{i}")
        acc = f"%acc{i}"
    return acc, off


def _declare_name():
    return "@__enzyme_cc_fp_sqdiff"


def _snapshot_fn(gen, info):
    key = ("fp-snap", info.callee)
    if key in gen.done:
        return gen.done[key]
    _declare(gen)
    gen.counter += 1
    name = f"@__enzyme_cc_fpsnap.{gen.counter}"
    params = ", ".join(info.params(["const"] * info.nx))
    out = [f"define internal ptr {name}({params}) {{", "entry:"]
    total = _total(out, info.areas)
    out.append(f"  %buf = call ptr @malloc(i64 {total})")
    _copy(out, info.areas, "%buf", True, "c")
    out += ["  ret ptr %buf", "}"]
    gen.out.append("\n".join(out) + "\n")
    gen.done[key] = name
    return name


def augment(ctx, inst):
    """Reverse mode, forward sweep, after the loop ran: keep the converged state."""
    gen = ctx.gen()
    info = _Info(gen, inst.callee)
    snap = _snapshot_fn(gen, info)
    args = ", ".join(f"{o.ty} {_prim(ctx, o)}" for o in inst.ops)
    ctx.emit(f"%ad.ctape.{inst.line} = call ptr {snap}({args})")
    defer_free(ctx, f"%ad.ctape.{inst.line}", "null")


def reverse(ctx, inst, d):
    gen = ctx.gen()
    info = _Info(gen, inst.callee)
    acts = acts_of(ctx, inst, info)
    name, rty = _reverse_fn(gen, info, acts)
    args = []
    for j, o in enumerate(inst.ops):
        args.append(f"{o.ty} {_prim(ctx, o)}")
        if j < info.nx and acts[j] == "dup":
            args.append(f"ptr {ctx.s(o.value)}")
    args.append(f"ptr {ctx._get(('ctape', inst.line))}")
    call = f"call {rty} {name}({', '.join(args)})"
    active = [o for j, o in enumerate(inst.ops[:info.n]) if acts[j] == "active"]
    if not active:
        ctx.emit(call)
        return
    t = ctx.tmp("fpg")
    ctx.emit(f"{t} = {call}")
    for k, o in enumerate(active):
        v = t
        if len(active) > 1:
            v = ctx.tmp()
            ctx.emit(f"{v} = extractvalue {rty} {t}, {k}")
        ctx.add(o.value, o.ty, v)


def _reverse_fn(gen, info, acts):
    key = ("fp-rev", info.callee, act_key(acts))
    if key in gen.done:
        return gen.done[key]
    grad, grty = gen.gradient(info.step.name, ["const"] + acts[:info.n], False)
    _declare(gen)
    gen.counter += 1
    name = f"@__enzyme_cc_fprev.{gen.counter}"
    gen.done[key] = (name, grty)
    active = [(j, p.ty) for j, p in enumerate(info.step.params[1:]) if acts[j] == "active"]
    out = [f"define internal {grty} {name}({', '.join(info.params(acts) + ['ptr %snap'])}) {{",
           "entry:"]
    out += [f"  %adj{j} = alloca {t}" for j, t in active]
    out += [f"  store {t} 0.0, ptr %adj{j}" for j, t in active]
    # the primal memory as the reverse pass found it, put back at the end (Enzyme's rule: the
    # code reversed before this call may have overwritten the converged state)
    total = _total(out, info.areas)
    out.append(f"  %entry.state = call ptr @malloc(i64 {total})")
    _copy(out, info.areas, "%entry.state", True, "es")
    _prologue(out)
    _copy(out, info.areas, "%snap", False, "rs")
    g = "%g"
    out.append(f"  {g} = call {grty} {grad}({', '.join(info.step_args(acts))})"
               if active else f"  call void {grad}({', '.join(info.step_args(acts))})")
    for k, (j, t) in enumerate(active):
        v = g
        if len(active) > 1:
            v = f"%g{k}"
            out.append(f"  {v} = extractvalue {grty} {g}, {k}")
        out += [f"  %o{j} = load {t}, ptr %adj{j}", f"  %n{j} = fadd {t} %o{j}, {v}",
                f"  store {t} %n{j}, ptr %adj{j}"]
    acc, _ = _norms(out, info, acts, False)
    _decide(out, acc)
    out.append("done:")
    for i, j in enumerate(info.states):
        if acts[j] == "dup":            # the converged state does not depend on the first guess
            out.append(f"  call void @llvm.memset.p0.i64(ptr %a{j}.s, i8 0, i64 %sb{i}, i1 false)")
    _copy(out, info.areas, "%entry.state", False, "rd")
    out.append("  call void @free(ptr %entry.state)")
    if not active:
        out.append("  ret void")
    else:
        res = "poison"
        for k, (j, t) in enumerate(active):
            out.append(f"  %res{j} = load {t}, ptr %adj{j}")
            if len(active) == 1:
                res = f"%res{j}"
            else:
                out.append(f"  %agg{k} = insertvalue {grty} {res}, {t} %res{j}, {k}")
                res = f"%agg{k}"
        out.append(f"  ret {grty} {res}")
    gen.out.append("\n".join(out + ["}"]) + "\n")
    return name, grty


def tangent(ctx, inst):
    """Forward mode: after the loop ran (the primal call), iterate the tangent."""
    gen = ctx.gen()
    if getattr(ctx.synth, "width", 1) > 1:
        gen.fail(ctx.synth, inst, "__enzyme_fixed_point in vector forward mode (enzyme_width) is "
                 "not supported", "call __enzyme_fwddiff once per direction")
    info = _Info(gen, inst.callee)
    acts = acts_of(ctx, inst, info)
    name = _forward_fn(gen, info, acts)
    args = []
    for j, o in enumerate(inst.ops):
        args.append(f"{o.ty} {_prim(ctx, o)}")
        if j < info.nx and acts[j] == "dup":
            args.append(f"ptr {ctx.s(o.value)}")
        elif j < info.n and acts[j] == "active":
            args.append(f"{o.ty} {ctx.t(o.value, o.ty)}")
    ctx.emit(f"call void {name}({', '.join(args)})")
    return None


def _forward_fn(gen, info, acts):
    key = ("fp-fwd", info.callee, act_key(acts))
    if key in gen.done:
        return gen.done[key]
    fwd, _ = gen.forward(info.step.name, ["const"] + acts[:info.n], callee=False)
    _declare(gen)
    gen.counter += 1
    name = f"@__enzyme_cc_fpfwd.{gen.counter}"
    gen.done[key] = name
    out = [f"define internal void {name}({', '.join(info.params(acts, True))}) {{", "entry:"]
    total = _total(out, info.areas)
    out.append(f"  %snap = call ptr @malloc(i64 {total})")
    _copy(out, info.areas, "%snap", True, "c")
    out.append(f"  %old = call ptr @malloc(i64 {total})")
    for i, j in enumerate(info.states):
        if acts[j] == "dup":            # s = 0: the tangent of the first guess has no effect
            out.append(f"  call void @llvm.memset.p0.i64(ptr %a{j}.s, i8 0, i64 %sb{i}, i1 false)")
    _prologue(out)
    _copy(out, info.areas, "%snap", False, "rs")
    shadowed = [(f"%a{j}.s", size) for j, size in info.meas if acts[j] == "dup"]
    _copy(out, shadowed, "%old", True, "o")
    out.append(f"  call void {fwd}({', '.join(info.step_args(acts, True))})")
    acc, _ = _norms(out, info, acts, True)
    _decide(out, acc)
    out.append("done:")
    _copy(out, info.areas, "%snap", False, "rd")
    out += ["  call void @free(ptr %snap)", "  call void @free(ptr %old)", "  ret void", "}"]
    gen.out.append("\n".join(out) + "\n")
    return name
