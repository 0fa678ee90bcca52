"""Checkpointed loops: `__enzyme_checkpoint_for` / `__enzyme_checkpoint_while` (<enzyme/checkpoint.h>).

`lower` (before any derivative is synthesized) replaces each call by a call of a generated
function `@__enzyme_cc_ckpt.<for|while>.R<nregions>.<k>(scheme, config, start, n, regions...,
args...)` whose body is the plain loop calling the step. The primal and forward mode use that
body as it is. Reverse mode does not tape it: `rules/calls.py` treats a call of it like a call
with a registered gradient, and `functions` generates that gradient: an augmented function that
hands the run to the header's driver (`__enzyme_cc_ckpt_forward`) and a reverse function that
finishes it (`__enzyme_cc_ckpt_reverse`). The driver walks the scheme's actions, snapshotting the
regions plus every mutable global the step may touch; its two callbacks, generated here, run
steps untaped (`advance`) and differentiate one step (`uturn`: the combined gradient of the step,
so each step's tape lives only while that step is reversed).
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, type_size, zero_of
from enzyme_cc.ir.model import parse_module
from ..structure.diagnostics import located
from ..structure.type_layout import global_type

PREFIX = "@__enzyme_cc_ckpt."
DRIVERS = ("@__enzyme_cc_ckpt_forward", "@__enzyme_cc_ckpt_reverse")
# a run reversed more than once (reverse vector mode: once per lane; enzyme_nofree): see the
# header's __enzyme_cc_ckpt_forward_again
AGAIN = ("@__enzyme_cc_ckpt_forward_again", "@__enzyme_cc_ckpt_reverse_again",
         "@__enzyme_cc_ckpt_release")
INFO = "@__enzyme_cc_ckpt_info."
_CALL = re.compile(r"@__enzyme_checkpoint_(for|while)\b")
_TAGS = ("enzyme_scheme", "enzyme_checkpoint_region")
# the driver's run record (<enzyme/checkpoint.h>: __enzyme_cc_ckpt_run)
RUN_TY = "{ ptr, ptr, ptr, ptr, i64, ptr, ptr, ptr, i64, i64, ptr, i64, i64 }"
REGION_TY = "{ ptr, i64, i32, i32 }"


def is_wrapper(name: str | None) -> bool:
    return (name or "").startswith(PREFIX)


def _tag(fn, value: str) -> str | None:
    """'enzyme_scheme' / 'enzyme_checkpoint_region' when value is that marker (or a load of it)."""
    if not value.startswith("@"):
        d = fn.defs.get(value)
        if d is None or getattr(d, "op", None) != "load" or not d.ops[0].value.startswith("@"):
            return None
        value = d.ops[0].value
    name = value[1:].strip('"')
    return name if name in _TAGS else None


def _convert(pre, value, have, want, where, what):
    """Text of `value` as type `want` (C's default promotions changed it in the variadic call)."""
    if have == want:
        return value
    t = f"%ckpt.cv.{len(pre)}"
    if have.startswith("i") and want.startswith("i"):
        op = "sext" if int(have[1:]) < int(want[1:]) else "trunc"
    elif have == "double" and want == "float":
        op = "fptrunc"
    else:
        raise UserError(f"{where}: {what} is passed as {have} but the step takes {want}; hint: "
                        "pass it with the step's parameter type")
    pre.append(f"{t} = {op} {have} {value} to {want}")
    return t


_BUDGET = re.compile(r"(?m)^@__enzyme_cc_ckpt_default_budget = extern_weak (?:global|constant) i64.*$")


def define_budget(text: str, budget: int) -> str:
    """enzyme.toml's [checkpoint] budget_bytes: the header's weak declaration becomes a
    definition (a program not using <enzyme/checkpoint.h>'s schemes has none to define)."""
    return _BUDGET.sub(f"@__enzyme_cc_ckpt_default_budget = constant i64 {budget}", text)


def lower(text: str) -> str:
    """Replace every checkpoint call by a call of its loop function (see the module doc)."""
    if not _CALL.search(text):
        return text
    module = parse_module(text)
    lines = list(module._lines)
    new_fns, count = [], 0
    for name, (start, end) in list(module._bodies.items()):
        if not _CALL.search("\n".join(module._lines[start:end])):
            continue
        fn = module.function(name)
        for inst in fn.insts():
            if inst.op not in ("call", "invoke") or not _CALL.match(inst.callee or ""):
                continue
            where = located(module, fn, inst)
            if inst.op == "invoke":
                raise UserError(f"{where}: a checkpointed loop whose call may throw; hint: include "
                                "<enzyme/checkpoint.h>, which declares it nothrow")
            kind = _CALL.match(inst.callee).group(1)
            count += 1
            call, wrapper = _lower_call(module, fn, inst, kind, count, where)
            lines[inst.line] = call
            for k in range(inst.line + 1, inst.line_end + 1):
                lines[k] = ""
            new_fns.append(wrapper)
    return "\n".join(lines) + "\n" + "\n".join(new_fns) + "\n"


def _lower_call(module, fn, inst, kind, count, where):
    ops = list(inst.ops)
    step = ops[0].value if ops else ""
    target = module.function(step) if step.startswith("@") else None
    if target is None:
        raise UserError(f"{where}: the step of __enzyme_checkpoint_{kind} must be a function with "
                        f"bitcode known at compile time, got '{step}'; hint: pass (void *)step and "
                        "build its file with enzyme-cc")
    pre: list[str] = []
    if kind == "for":
        if len(ops) < 3:
            raise UserError(f"{where}: __enzyme_checkpoint_for needs (step, start, n, ...)")
        bounds = [_convert(pre, o.value, o.ty, "i64", where, what)
                  for o, what in ((ops[1], "start"), (ops[2], "n"))]
        rest = ops[3:]
    else:
        bounds, rest = ["0", "-1"], ops[1:]
    scheme = config = None
    regions, args, k = [], [], 0
    while k < len(rest):
        tag = _tag(fn, rest[k].value)
        if tag == "enzyme_scheme":
            if k + 2 >= len(rest):
                raise UserError(f"{where}: enzyme_scheme needs the scheme and its config")
            scheme, config = rest[k + 1], rest[k + 2]
            k += 3
        elif tag == "enzyme_checkpoint_region":
            if k + 2 >= len(rest):
                raise UserError(f"{where}: enzyme_checkpoint_region needs a pointer and a size")
            regions.append((rest[k + 1].value,
                            _convert(pre, rest[k + 2].value, rest[k + 2].ty, "i64", where,
                                     "a region's size")))
            k += 3
        else:
            args.append(rest[k])
            k += 1
    if scheme is None:
        raise UserError(f"{where}: __enzyme_checkpoint_{kind} without a scheme; hint: pass "
                        "enzyme_scheme, &EnzymeCkptRevolve, &config (see <enzyme/checkpoint.h>)")
    params = target.params
    if not params or not params[0].ty.startswith("i") or len(params) - 1 != len(args):
        raise UserError(f"{where}: the step '{step[1:]}' takes {len(params)} parameters; "
                        f"__enzyme_checkpoint_{kind} passes the step index and {len(args)} "
                        "arguments; hint: the step is step(int64_t i, args...)")
    if kind == "while" and not target.ret_ty.startswith("i"):
        raise UserError(f"{where}: the step of __enzyme_checkpoint_while must return whether to "
                        f"go on (an integer), '{step[1:]}' returns {target.ret_ty}")
    vals = [_convert(pre, a.value, a.ty, p.ty, where, f"argument {j + 1}")
            for j, (a, p) in enumerate(zip(args, params[1:]))]
    name = f"{PREFIX}{kind}.R{len(regions)}.{count}"
    call_args = [f"ptr {scheme.value}", f"ptr {config.value}", f"i64 {bounds[0]}",
                 f"i64 {bounds[1]}"]
    for p, b in regions:
        call_args += [f"ptr {p}", f"i64 {b}"]
    call_args += [f"{p.ty} {v}" for p, v in zip(params[1:], vals)]
    # the call keeps the marker's location: inlined into a function with debug info, the step
    # call inside would otherwise have none (the verifier rejects that with -g)
    dbg = f", !dbg {inst.md['!dbg']}" if "!dbg" in inst.md else ""
    call = "\n".join(pre + [f"call void {name}({', '.join(call_args)}){dbg}"])
    fparams = ["ptr %scheme", "ptr %config", "i64 %start", "i64 %n"]
    fparams += [x for j in range(len(regions)) for x in (f"ptr %r{j}", f"i64 %b{j}")]
    fparams += [f"{p.ty} %a{j}" for j, p in enumerate(params[1:])]
    argl = [f"{p.ty} %a{j}" for j, p in enumerate(params[1:])]
    body = _loop(kind, step, target, "%start", "%n", argl)
    return call, f"define internal void {name}({', '.join(fparams)}) {{\n" + "\n".join(body) + "\n}\n"


def _step_call(target, step, i, argl, res="%r"):
    ity = target.params[0].ty
    pre = [] if ity == "i64" else [f"%ii = trunc i64 {i} to {ity}"]
    iv = i if ity == "i64" else "%ii"
    rt = target.ret_ty
    call = f"call {rt} {step}({', '.join([f'{ity} {iv}'] + argl)})"
    return pre + [call if rt == "void" else f"{res} = {call}"]


def _loop(kind, step, target, start, n, argl):
    """The plain loop: for (i = start; i < start + n; i++) step(i, ...), or the while loop."""
    if kind == "for":
        return ["entry:", f"%end = add i64 {start}, {n}", f"%go = icmp slt i64 {start}, %end",
                "br i1 %go, label %loop, label %done", "loop:",
                f"%i = phi i64 [ {start}, %entry ], [ %i.next, %loop ]",
                *_step_call(target, step, "%i", argl), "%i.next = add i64 %i, 1",
                "%more = icmp slt i64 %i.next, %end", "br i1 %more, label %loop, label %done",
                "done:", "ret void"]
    rt = target.ret_ty
    return ["entry:", "br label %loop", "loop:", "%i = phi i64 [ 0, %entry ], [ %i.next, %loop ]",
            *_step_call(target, step, "%i", argl), "%i.next = add i64 %i, 1",
            f"%more = icmp ne {rt} %r, 0", "br i1 %more, label %loop, label %done", "done:",
            "ret void"]


# ---- reverse mode ------------------------------------------------------------------------------

def _site(gen, wrapper: str):
    fn = gen.module.function(wrapper)
    kind, nreg = wrapper[len(PREFIX):].split(".")[:2]
    step = next(i.callee for i in fn.insts() if i.op == "call")
    return kind, int(nreg[1:]), step, gen.module.function(step)


def touched_globals(gen, step: str) -> list[tuple[str, int]]:
    """Mutable globals defined in the module that the step or its callees name: the snapshot
    holds them (a superset of what it writes; reading one costs only snapshot memory)."""
    seen, todo, out = set(), [step], {}
    while todo:
        f = todo.pop()
        if f in seen or f not in gen.module._bodies:
            continue
        seen.add(f)
        body = gen._body(f)
        for g in re.findall(r"@[-\w.$]+", body):
            line = gen.module.globals.get(g)
            if g in out or line is None or gen.module.is_constant_global(g) or \
                    " external " in f" {line} " or g.startswith(("@llvm.", "@__enzyme_cc")):
                continue
            ty = global_type(gen.module, g)
            if ty:
                out[g] = type_size(ty, gen.module.named_types)
        todo.extend(gen._callees(f))
    return sorted(out.items())


def _store_fields(body, ty, ptr, fields):
    """Store each (type, value) into its field of the struct at ptr (values may be locals)."""
    for k, (fty, v) in enumerate(fields):
        f = f"{ptr}.f{k}"
        body += [f"{f} = getelementptr inbounds {ty}, ptr {ptr}, i32 0, i32 {k}",
                 f"store {fty} {v}, ptr {f}"]


class Layout:
    """One checkpointed call for one activity of its operands. Its env record holds each step
    argument, followed by its shadow when it has one (the layout a scheme's save_state sees),
    then start, then one adjoint accumulator per active float argument; forward over reverse
    (checkpoint_tangent.py) appends the tangents."""

    def __init__(self, gen, callee, acts):
        self.callee, self.acts = callee, tuple(acts)
        self.kind, self.nreg, self.step, self.target = _site(gen, callee)
        self.wrapper = gen.module.function(callee)
        self.first = 4 + 2 * self.nreg
        self.sparams = self.target.params[1:]
        self.sacts = ["const"] + list(acts[self.first:])
        self.members, self.where = [], {}
        for j, (p, a) in enumerate(zip(self.sparams, acts[self.first:])):
            self.add(("a", j), p.ty)
            if a == "dup":
                self.add(("s", j), "ptr")
        self.add("start", "i64")
        self.active = [j for j, a in enumerate(acts[self.first:]) if a == "active"]
        for j in self.active:
            self.add(("acc", j), self.sparams[j].ty)

    def add(self, key, ty):
        self.where[key] = len(self.members)
        self.members.append(ty)

    @property
    def env_ty(self) -> str:
        return "{ " + ", ".join(self.members) + " }"

    def field(self, out, key, ptr="%env"):
        t = f"%f{self.where[key]}.{len(out)}"
        out.append(f"{t} = getelementptr inbounds {self.env_ty}, ptr {ptr}, i32 0, "
                   f"i32 {self.where[key]}")
        return t

    def load(self, out, key, ty, name):
        out.append(f"{name} = load {ty}, ptr {self.field(out, key)}")

    def aug_params(self) -> list[str]:
        """The custom-gradient ABI's parameters: each wrapper parameter, pointers with a shadow."""
        out = []
        for k, p in enumerate(self.wrapper.params):
            out.append(f"{p.ty} %p{k}")
            if p.ty == "ptr":
                out.append(f"ptr %q{k}")
        return out

    def fp_params(self):
        """The custom ABI's adjoints: every float parameter of the wrapper, in order."""
        fps = [(k, p.ty) for k, p in enumerate(self.wrapper.params) if is_fp(p.ty)]
        rty = "void" if not fps else fps[0][1] if len(fps) == 1 else \
            "{ " + ", ".join(t for _, t in fps) + " }"
        return fps, rty


def advance_fn(L, name, load, call) -> str:
    """advance(env, a, b): steps a..b-1 untaped; -1, or j + 1 when a while step j said stop.
    load(body) emits the loads of the arguments (and %start), call(body, argl) the step call of
    step %i (its result %r for a while loop)."""
    body = ["entry:"]
    argl = load(body)
    body += ["%go = icmp slt i64 %a, %b", "br i1 %go, label %loop, label %done", "loop:",
             "%j = phi i64 [ %a, %entry ], [ %j.next, %cont ]", "%i = add i64 %start, %j"]
    call(body, argl)
    body.append("%j.next = add i64 %j, 1")
    if L.kind == "while":
        body += [f"%stop = icmp eq {L.target.ret_ty} %r, 0",
                 "br i1 %stop, label %ended, label %cont", "ended:", "ret i64 %j.next"]
    else:
        body += ["br label %cont"]
    body += ["cont:", "%more = icmp slt i64 %j.next, %b", "br i1 %more, label %loop, label %done",
             "done:", "ret i64 -1"]
    return f"define internal i64 {name}(ptr %env, i64 %a, i64 %b) {{\n" + "\n".join(body) + "\n}\n"


def step_index(L, body) -> str:
    """%i (i64) as the step's index type."""
    ity = L.target.params[0].ty
    if ity == "i64":
        return "i64 %i"
    body.append(f"%ii = trunc i64 %i to {ity}")
    return f"{ity} %ii"


def region_entries(gen, L) -> list[tuple[str, str]]:
    """(pointer, bytes) of the regions given (the aug parameters) and the globals the step names."""
    return [(f"%p{4 + 2 * r}", f"%p{5 + 2 * r}") for r in range(L.nreg)] + \
        [(g, str(size)) for g, size in touched_globals(gen, L.step)]


def start_run(gen, L, body, entries, env, adv, turn, driver):
    """The regions table and the run record; then the forward part of the schedule."""
    nr = len(entries)
    body.append(f"%regs = call ptr @malloc(i64 {max(nr, 1) * 24})")
    for r, (ptr, size) in enumerate(entries):
        body.append(f"%regs.{r} = getelementptr inbounds {REGION_TY}, ptr %regs, i64 {r}")
        _store_fields(body, REGION_TY, f"%regs.{r}", [("ptr", ptr), ("i64", size), ("i32", "0"),
                                                      ("i32", "0")])
    if L.kind == "for":
        body += ["%neg = icmp slt i64 %p3, 0", "%steps = select i1 %neg, i64 0, i64 %p3"]
    steps = "%steps" if L.kind == "for" else "-1"
    body.append(f"%run = call ptr @malloc(i64 {type_size(RUN_TY, gen.module.named_types)})")
    _store_fields(body, RUN_TY, "%run", [("ptr", "%p0"), ("ptr", "%p1"), ("ptr", "null"),
                                         ("ptr", "%regs"), ("i64", str(nr)), ("ptr", env),
                                         ("ptr", adv), ("ptr", turn), ("i64", steps), ("i64", "0"),
                                         ("ptr", "null"), ("i64", "0"), ("i64", "0")])
    body.append(f"call void {driver}(ptr %run)")
    gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
    gen.declare_raw("@free", "declare void @free(ptr)")


def _info(gen, n, L, diffe, drty, multi):
    """What a later round (forward over reverse, checkpoint_tangent.py) needs to know about
    @ckpt.aug.n / @ckpt.rev.n: a private string global (bytes other than letters, digits and
    -_.@% escaped)."""
    text = "|".join([L.callee, ",".join(L.acts), diffe, drty, str(int(multi))])
    enc = "".join(chr(b) if re.match(r"[-\w.@%]", chr(b)) else f"\\{b:02X}" for b in text.encode())
    gen.out.append(f"{INFO}{n} = private unnamed_addr constant [{len(text.encode())} x i8] "
                   f"c\"{enc}\"\n")


def functions(gen, ctx, inst):
    """(augmented, its return type, reverse, its return type) of a checkpointed loop call, for
    the activity of its arguments at this call (rules/calls.py's custom-gradient ABI). Under
    reverse vector mode (gen.in_multi: the reverse sweep runs once per lane on one forward
    sweep) the run is kept until the tape is freed and reversed again (AGAIN)."""
    acts = tuple("dup" if o.ty == "ptr" and ctx.shadowed(o.value) else
                 "active" if is_fp(o.ty) and ctx.active(o.value) else "const" for o in inst.ops)
    multi = bool(getattr(gen, "in_multi", False))
    key = ("ckpt", inst.callee, acts, multi)
    if key in gen.done:
        return gen.done[key]
    for d in DRIVERS + (AGAIN if multi else ()):
        if not gen.module.defines(d):
            gen.fail(ctx.synth, inst, "the checkpointing driver is missing from the program",
                     "include <enzyme/checkpoint.h> in the file that calls "
                     "__enzyme_checkpoint_for / __enzyme_checkpoint_while")
    L = Layout(gen, inst.callee, acts)
    diffe, drty = gen.gradient(L.step, L.sacts, False)
    gen.counter += 1
    n = gen.counter
    target, step, first = L.target, L.step, L.first
    adv, turn = f"@ckpt.advance.{n}", f"@ckpt.uturn.{n}"
    aug, rev = f"@ckpt.aug.{n}", f"@ckpt.rev.{n}"
    _info(gen, n, L, diffe, drty, multi)

    def load_args(out, with_shadows):
        argl = []
        for j, p in enumerate(L.sparams):
            L.load(out, ("a", j), p.ty, f"%a{j}")
            argl.append(f"{p.ty} %a{j}")
            if with_shadows and ("s", j) in L.where:
                L.load(out, ("s", j), "ptr", f"%s{j}")
                argl.append(f"ptr %s{j}")
        L.load(out, "start", "i64", "%start")
        return argl

    gen.out.append(advance_fn(L, adv, lambda b: load_args(b, False),
                              lambda b, argl: b.extend(_step_call(target, step, "%i", argl))))
    # uturn(env, j): the combined gradient of step j from the current state
    body = ["entry:"]
    argl = load_args(body, True)
    body.append("%i = add i64 %start, %j")
    call = f"call {drty} {diffe}({', '.join([step_index(L, body)] + argl)})"
    body.append(call if drty == "void" else f"%g = {call}")
    for k, j in enumerate(L.active):
        ty = L.sparams[j].ty
        g = "%g" if len(L.active) == 1 else f"%g{k}"
        if len(L.active) > 1:
            body.append(f"{g} = extractvalue {drty} %g, {k}")
        slot = L.field(body, ("acc", j))
        body += [f"%o{k} = load {ty}, ptr {slot}", f"%n{k} = fadd {ty} %o{k}, {g}",
                 f"store {ty} %n{k}, ptr {slot}"]
    body.append("ret void")
    gen.out.append(f"define internal void {turn}(ptr %env, i64 %j) {{\n" + "\n".join(body) + "\n}\n")
    # augmented: fill env, regions and the run record, run the forward part of the schedule
    params = L.aug_params()
    env_size = type_size(L.env_ty, gen.module.named_types)
    body = ["entry:", f"%env = call ptr @malloc(i64 {env_size})"]
    for j, p in enumerate(L.sparams):
        body.append(f"store {p.ty} %p{first + j}, ptr {L.field(body, ('a', j))}")
    body.append(f"store i64 %p2, ptr {L.field(body, 'start')}")
    start_run(gen, L, body, region_entries(gen, L), "%env", adv, turn,
              AGAIN[0] if multi else DRIVERS[0])
    body.append("ret ptr %run")
    gen.out.append(f"define internal ptr {aug}({', '.join(params)}) {{\n" + "\n".join(body)
                   + "\n}\n")
    # reverse: this sweep's shadows (one lane's in reverse vector mode), the rest of the
    # schedule, the adjoints of the float arguments (custom ABI: zero for inactive ones)
    fps, rty = L.fp_params()
    body = ["entry:", f"%envp = getelementptr inbounds {RUN_TY}, ptr %tape, i32 0, i32 5",
            "%env = load ptr, ptr %envp"]
    for j, p in enumerate(L.sparams):
        if ("s", j) in L.where:
            body.append(f"store ptr %q{first + j}, ptr {L.field(body, ('s', j))}")
    for j in L.active:
        body.append(f"store {L.sparams[j].ty} {zero_of(L.sparams[j].ty)}, "
                    f"ptr {L.field(body, ('acc', j))}")
    body.append(f"call void {AGAIN[1] if multi else DRIVERS[1]}(ptr %tape)")
    vals = []
    for k, ty in fps:
        j = k - first
        if j in L.active:
            L.load(body, ("acc", j), ty, f"%adj{k}")
            vals.append((ty, f"%adj{k}"))
        else:
            vals.append((ty, zero_of(ty)))
    if not multi:                 # else freed with the tape (rules/calls.py defers it)
        body += ["call void @free(ptr %env)", "call void @free(ptr %tape)"]
    body += ret_values(rty, vals)
    gen.out.append(f"define internal {rty} {rev}({', '.join(params + ['ptr %tape'])}) {{\n"
                   + "\n".join(body) + "\n}\n")
    gen.done[key] = (aug, "ptr", rev, rty)
    return gen.done[key]


def ret_values(rty, vals) -> list[str]:
    if rty == "void":
        return ["ret void"]
    if len(vals) == 1:
        return [f"ret {rty} {vals[0][1]}"]
    out, acc = [], "poison"
    for k, (ty, v) in enumerate(vals):
        out.append(f"%agg{k} = insertvalue {rty} {acc}, {ty} {v}, {k}")
        acc = f"%agg{k}"
    return out + [f"ret {rty} {acc}"]
