"""OpenMP in derivatives (clang's lowering onto libomp's `__kmpc_*` entry points).

A parallel region is `__kmpc_fork_call(loc, n, @outlined, captured...)`; the runtime calls
`@outlined(ptr gtid, ptr btid, captured...)` on every thread of the team. Its derivatives are
forked the same way (Enzyme's scheme, SC'21/SC'22):

- forward mode: a fork of the outlined function's tangent with the shadows beside the captured
  pointers (one fork carries every lane in vector mode);
- reverse mode: the forward sweep forks the augmented outlined function, the reverse sweep forks
  its reverse with the same team size (recorded, pushed with `__kmpc_push_num_threads`). Each
  thread number keeps one tape for all the forks of a gradient (a set hung on the forking code's
  tape, indexed by `omp_get_thread_num()`; openmp_tapes.py); each fork has a record {team size,
  capacity, ticket counter, set}, made by the caller and freed after the reverse fork, which
  reaches the reverse sweep like a custom gradient's tape (`('ctape', line)`).

Derivatives run by several threads at once are synthesized with `Synth.parallel`: adjoints added
into memory that is not a local of the function (an alloca, private to the thread) are atomic,
except inside the thread's exclusive range (openmp_ranges.py). A thread with no team of several
threads runs the serial split pair instead (plain adds; _wrapper chooses).
Worksharing bounds written by `__kmpc_for_static_init_*`/`__kmpc_dispatch_next_*` are ordinary
integers in memory the call writes, so each thread reverses exactly the iterations it ran.
Reductions run libomp's critical method (`__kmpc_reduce*` becomes `__kmpc_critical`, the combine
code runs under the reduction lock): its tree method combines in the runtime's own reduction
function, which no derivative would see. Barriers are mirrored in the reverse sweep; critical
sections are reversed in the reverse of the order the threads passed them (tickets, below).
"""
import re

from enzyme_cc.ir.lexer import is_fp
from enzyme_cc.ir.model import Inst, Operand
from . import openmp_classes, openmp_range_runtime, openmp_ranges, openmp_tapes
from .openmp_classes import shared_in
from ..tape.tape import oom_ir
from .openmp_affine import range_check

FORK = "@__kmpc_fork_call"
FORK_PREFIX = "@__kmpc_fork"           # a parallel region or a teams region
PREFIXES = ("@__kmpc_", "@omp_", "@GOMP_", "@__tgt_", "@kmp_")

# integer bookkeeping kept as it is in every sweep (no derivative, nothing to undo)
KEPT = {
    "__kmpc_global_thread_num", "__kmpc_push_num_threads", "__kmpc_for_static_fini",
    "__kmpc_single", "__kmpc_end_single", "__kmpc_master", "__kmpc_end_master",
    "__kmpc_masked", "__kmpc_end_masked", "__kmpc_barrier", "__kmpc_critical",
    "__kmpc_critical_with_hint", "__kmpc_end_critical", "__kmpc_reduce", "__kmpc_reduce_nowait",
    "__kmpc_end_reduce", "__kmpc_end_reduce_nowait", "__kmpc_flush",
    "omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads", "omp_get_num_procs",
    "omp_in_parallel", "omp_get_wtime", "omp_get_wtick", "omp_get_level", "omp_get_thread_limit",
    "omp_get_dynamic", "omp_get_active_level", "omp_get_team_size", "omp_get_ancestor_thread_num",
}
for _w in ("4", "4u", "8", "8u"):
    KEPT |= {f"__kmpc_for_static_init_{_w}", f"__kmpc_dispatch_init_{_w}",
             f"__kmpc_dispatch_next_{_w}", f"__kmpc_dispatch_fini_{_w}"}
KEPT |= {"__kmpc_dispatch_deinit", "__kmpc_serialized_parallel", "__kmpc_end_serialized_parallel",
         "__kmpc_push_proc_bind", "omp_set_num_threads", "omp_set_dynamic"}
# the address of the thread's copy of a threadprivate variable (NPB's timers): memory without
# a shadow, so an active value stored there is refused where it is stored (rules/instructions)
KEPT.add("__kmpc_threadprivate_cached")

# what a refused runtime entry point lowers (for the error message)
CONSTRUCTS = [
    ("__kmpc_omp_task", "OpenMP tasks (#pragma omp task / taskwait / taskgroup / taskloop)"),
    ("__kmpc_taskloop", "OpenMP taskloop"), ("__kmpc_taskgroup", "OpenMP taskgroup"),
    ("__kmpc_end_taskgroup", "OpenMP taskgroup"),
    ("__kmpc_ordered", "OpenMP ordered"), ("__kmpc_end_ordered", "OpenMP ordered"),
    ("__kmpc_doacross", "OpenMP ordered(n) / doacross loops"),
    ("__kmpc_fork_teams", "OpenMP teams"), ("__kmpc_push_num_teams", "OpenMP teams"),
    ("__tgt_", "OpenMP target offloading"), ("__kmpc_fork_call_if", "'#pragma omp parallel if(...)'"),
    ("__kmpc_copyprivate", "OpenMP single copyprivate"),
    ("__kmpc_distribute", "OpenMP distribute"), ("__kmpc_dist_", "OpenMP distribute"),
    ("omp_set_lock", "OpenMP locks"), ("omp_unset_lock", "OpenMP locks"),
    ("omp_init_lock", "OpenMP locks"), ("omp_set_nest_lock", "OpenMP locks"),
    ("__kmpc_threadprivate", "OpenMP threadprivate"), ("__kmpc_alloc", "OpenMP allocators"),
    ("__kmpc_omp_taskwait", "OpenMP taskwait"), ("__kmpc_cancel", "OpenMP cancel"),
]


def is_openmp(callee: str | None) -> bool:
    return (callee or "").startswith(PREFIXES)


def kind(callee: str) -> str:
    name = callee.lstrip("@").strip('"')
    if name.startswith("omp_") and name.endswith("_"):
        # libomp's Fortran entries (`omp_get_thread_num_`: an old-style `INTEGER ::
        # OMP_GET_THREAD_NUM` external, CloverLeaf's), the same queries by reference
        name = name.rstrip("_")
    if callee == FORK:
        return "omp_fork"
    return "omp" if name in KEPT else "omp_refused"


def refuse(gen, synth, inst):
    name = (inst.callee or "").lstrip("@")
    what = next((c for p, c in CONSTRUCTS if name.startswith(p) and c), None)
    what = what or f"the OpenMP runtime function '{name}'"
    lock = ("; where a lock only guards sums into shared data (`a[k] += t`), list omp_set_lock "
            "and omp_unset_lock in __enzyme_inactivefn: the forward sweep keeps them, the "
            "reverse adds atomically") if "lock" in name else ""
    gen.fail(synth, inst, f"{what} in differentiated code is not supported ('{name}')",
             "supported: parallel (num_threads, if), for (static/dynamic/guided), sections, "
             "reductions, private/firstprivate/lastprivate, critical, atomic, single, "
             "master/masked, barrier; move the rest out of the differentiated function (or, where "
             "it only touches data without derivatives, mark the function holding it "
             "__enzyme_inactivefn; data with derivatives would then get none)" + lock)


# ---- the outlined function as a call -------------------------------------------------------
def outlined_call(inst) -> Inst:
    """The fork as the call the runtime makes: @outlined(gtid, btid, captured...) (gtid/btid
    are the runtime's, inactive: stand-ins `undef`; a `null` argument is its own shadow)."""
    fn = inst.ops[2].value
    ops = [Operand("ptr", "undef"), Operand("ptr", "undef")] + list(inst.ops[3:])
    return Inst(name=None, op="call", ty="void", toks=inst.toks, md=inst.md, block=inst.block,
                ops=ops, callee=fn)


def involved(ctx, inst) -> bool:
    gen, fn = ctx.gen(), inst.ops[2].value
    # a fork of a value (two regions merged by the optimizer into a fork of a select: -flto
    # objects) counts as involved, so that _check refuses it rather than run it as primal code
    return any(ctx.active(o.value) or ctx.shadowed(o.value) for o in inst.ops[3:]) or \
        fn in gen.global_users or not fn.startswith("@")


def _check(ctx, inst, call):
    gen, synth = ctx.gen(), ctx.synth
    fn = gen.module.function(call.callee)
    if call.callee.startswith(("@omp.aug.", "@omp.rev.")):
        gen.fail(synth, inst, "a reverse-mode derivative of a parallel region differentiated "
                 "again (higher order) is not supported", "differentiate the primal region in "
                 "forward mode for higher derivatives, or move the region out of the inner "
                 "derivative")
    if inst.ops[2].value.startswith("%"):
        gen.fail(synth, inst, "a fork whose outlined function is chosen at run time (the "
                 "optimizer merged the parallel regions of two branches into one fork of "
                 f"'{inst.ops[2].value}')", "compile the file with the parallel regions without "
                 "-flto: enzyme-cc's link step keeps such forks apart")
    if fn is None:
        gen.fail(synth, inst, "a parallel region whose outlined function has no bitcode",
                 "compile the file with the parallel region with enzyme-cc")
    for p, o in zip(fn.params[2:], call.ops[2:]):
        d = ctx.synth.fn.defs.get(o.value)
        # a value reloaded from shadowed memory (unoptimized code) may be a float's bits
        reload = p.ty != "ptr" and getattr(d, "op", None) == "load" and \
            ctx.shadowed(d.ops[0].value)
        if is_fp(p.ty) or o.value in ctx.act.punned or _boxed_bits(ctx, inst, o.value) or \
                reload or (p.ty != "ptr" and ctx.active(o.value)):
            gen.fail(synth, inst, "a float captured by value by a parallel region (firstprivate "
                     "or a scalar shared copy) carries a derivative through the runtime's "
                     "integer arguments", "read the value through a pointer inside the region "
                     "(e.g. a shared variable), or copy it into a local inside the region")
    return fn


def _boxed_bits(ctx, fork, slot) -> bool:
    """A by-value capture `lower` put into memory as integer bits of a float (no shadow)."""
    if not slot.startswith("%ad.box."):       # slots made by openmp_capture.lower
        return False
    for i in fork.block.insts:
        if i.op == "store" and i.ops[1].value == slot:
            return i.ops[0].value in ctx.act.punned and not ctx.shadowed(slot)
    return False


def _fork_args(ctx, call, acts, get_p, get_s, lanes=(None,)):
    """Arguments after gtid/btid of the outlined function's derivative."""
    args = []
    for o, a in zip(call.ops[2:], acts[2:]):
        args.append(f"{o.ty} {get_p(o.value) if o.is_local else o.value}")
        if a in ("dup", "dupnoneed"):
            for _ in lanes:
                args.append(f"ptr {get_s(o.value)}")
    return args


def _fork(loc, fn, args):
    return (f"call void (ptr, i32, ptr, ...) {FORK}(ptr {loc}, i32 {len(args)}, ptr {fn}"
            + "".join(f", {a}" for a in args) + ")")


def _wrapper(gen, name, targets, tys, ret, what, track):
    """void name(gtid, btid, tys..., rec): the thread's tape header, then target(..., header):
    targets = (team version, alone version): a thread with no enclosing team of several threads
    (omp_in_parallel() false, the same in the forward and the reverse fork, whose teams have the
    same size) runs the derivative synthesized for serial code, with plain adds and no range
    tracking. Around it the forward sweep records the thread's adjoint ranges, the reverse its
    exclusive ranges (openmp_ranges; track: whether the region is trackable)."""
    params = ["ptr %gtid", "ptr %btid"] + [f"{t} %a{k}" for k, t in enumerate(tys)]
    args = ", ".join(params + ["ptr %h"])
    pre, post = ("track_begin", "track_end") if what == "true" else ("excl_begin", "excl_end")
    gen.out.append(f"define internal void {name}({', '.join(params + ['ptr %rec'])}) nounwind {{\n"
                   f"  %h = call ptr @__enzyme_cc_omp_tape(ptr %rec, i1 {what})\n"
                   f"  %save = alloca [{2 * openmp_classes.R} x i64], align 8\n"
                   f"  call void @__enzyme_cc_omp_{pre}(ptr %rec, i1 {track}, ptr %save)\n"
                   "  %outer = load ptr, ptr @__enzyme_cc_omp_rec, align 8\n"
                   "  store ptr %rec, ptr @__enzyme_cc_omp_rec, align 8\n"
                   "  %in = call i32 @omp_in_parallel()\n"
                   "  %many = icmp ne i32 %in, 0\n"
                   "  br i1 %many, label %team, label %alone\n"
                   f"team:\n  {'' if ret == 'void' else '%r1 = '}call {ret} {targets[0]}({args})\n"
                   "  br label %done\n"
                   f"alone:\n  {'' if ret == 'void' else '%r2 = '}call {ret} {targets[1]}({args})\n"
                   "  br label %done\n"
                   "done:\n"
                   f"  call void @__enzyme_cc_omp_{post}(ptr %rec, ptr %save)\n"
                   "  store ptr %outer, ptr @__enzyme_cc_omp_rec, align 8\n"
                   "  ret void\n}\n")


def _split(ctx, inst):
    gen, synth = ctx.gen(), ctx.synth
    call = outlined_call(inst)
    fn = _check(ctx, inst, call)
    acts = gen.call_activity(call, synth.act)
    hints = gen.call_hints(synth, call)
    openmp_classes.mark_root(gen, call.callee)
    aug, aug_ret, rev, rev_ret = gen.split(call.callee, acts, False, hints, parallel=True)
    aug1, _, rev1, _ = gen.split(call.callee, acts, False, hints, parallel=False)
    tys = [t for p, a in zip(fn.params[2:], acts[2:]) for t in
           ([p.ty, "ptr"] if a in ("dup", "dupnoneed") else [p.ty])]
    key = (aug, rev)
    names = gen.__dict__.setdefault("_omp_wrappers", {})
    _helpers(gen)
    if key not in names:
        gen.counter += 1
        names[key] = (f"@omp.aug.{gen.counter}", f"@omp.rev.{gen.counter}")
        track = "true" if openmp_ranges.trackable(gen, call.callee, set(), is_openmp, kind,
                                                  FORK) else "false"
        _wrapper(gen, names[key][0], (aug, aug1), tys, aug_ret, "true", track)
        _wrapper(gen, names[key][1], (rev, rev1), tys, rev_ret, "false", track)
    return call, acts, names[key]


def augment_fork(ctx, inst):
    """Reverse mode, forward sweep: per-thread tapes, then the fork of the augmented region."""
    call, acts, (aug, _) = _split(ctx, inst)
    synth = ctx.synth
    mx = ctx.tmp("omx")
    ctx.emit(f"{mx} = call i32 @omp_get_max_threads()")
    cap = mx
    k = _pushed_threads(inst)
    if k is not None:
        cap = ctx.tmp("ocap")
        ctx.emit(f"{cap} = call i32 @llvm.smax.i32(i32 {mx}, i32 {ctx.p(k) if k.startswith('%') else k})")
        ctx.gen().declare_raw("@llvm.smax.i32", "declare i32 @llvm.smax.i32(i32, i32)")
    rec = f"%ad.ctape.{inst.line}"
    ctx.emit(f"{rec} = call ptr @__enzyme_cc_omp_tapes(ptr %ad.tape, i32 {cap})")
    args = _fork_args(ctx, call, acts, synth.r, ctx.s) + [f"ptr {rec}"]
    ctx.emit(_fork(ctx.p(inst.ops[0].value) if inst.ops[0].is_local else inst.ops[0].value,
                   aug, args))


def _pushed_threads(inst):
    """The num_threads(k) value pushed right before the fork, if any."""
    insts = inst.block.insts
    k = insts.index(inst)
    for i in reversed(insts[:k]):
        if i.op == "call" and i.callee == "@__kmpc_push_num_threads":
            return i.ops[2].value
        if i.op == "call" and i.callee == FORK:
            return None
    return None


def reverse_fork(ctx, inst):
    """Reverse sweep: the reverse region forked on a team of the recorded size."""
    call, acts, (_, rev) = _split(ctx, inst)
    rec = ctx._get(("ctape", inst.line))
    loc = inst.ops[0].value
    nt, gt = ctx.tmp("ont"), ctx.tmp("ogt")
    ctx.emit(f"{nt} = load i32, ptr {rec}")
    ctx.emit(f"{gt} = call i32 @__kmpc_global_thread_num(ptr {loc})")
    ctx.emit(f"call void @__kmpc_push_num_threads(ptr {loc}, i32 {gt}, i32 {nt})")
    ctx.emit(_fork(loc, rev, _fork_args(ctx, call, acts, ctx.p, ctx.s) + [f"ptr {rec}"]))
    ctx.emit(f"call void @__enzyme_cc_omp_tapes_end(ptr {rec})")


def tangent_fork(ctx, inst):
    """Forward mode: one fork of the region's tangent (all lanes); the primal when inactive."""
    synth, gen = ctx.synth, ctx.gen()
    if not involved(ctx, inst):
        ctx.lines.append(synth.print_primal(inst))
        return
    call = outlined_call(inst)
    _check(ctx, inst, call)
    acts = gen.call_activity(call, synth.act)
    width = getattr(synth, "width", 1)
    name, _ = gen.forward(call.callee, acts, callee=True, hints=gen.call_hints(synth, call),
                          width=width, error=getattr(synth, "error", False))
    args = []
    for o, a in zip(call.ops[2:], acts[2:]):
        args.append(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}")
        if a in ("dup", "dupnoneed"):
            for _ in synth.lanes():
                args.append(f"ptr {ctx.s(o.value)}")
    ctx.emit(_fork(inst.ops[0].value, name, args))


# ---- the call rules' entry points (rules/calls.py) ------------------------------------------
def forward_call(ctx, inst, kind):
    """Forward sweep (any mode) of an OpenMP runtime call: None keeps the primal, False drops it
    (emitted here)."""
    if kind == "omp_refused":
        refuse(ctx.gen(), ctx.synth, inst)
    if kind == "omp":
        return forward_runtime(ctx, inst)
    if kind == "omp_fork" and ctx.synth.mode != "forward" and involved(ctx, inst):
        augment_fork(ctx, inst)
        return False
    return None


def reverse_call(ctx, inst, kind):
    if kind == "omp":
        reverse_runtime(ctx, inst)
    elif kind == "omp_fork" and involved(ctx, inst):
        reverse_fork(ctx, inst)


def fork_writes(gen, inst, caller_act):
    """Generator.callee_writes of a fork: its outlined function's summary, in fork positions."""
    call = outlined_call(inst)
    if not gen.module.defines(call.callee):
        return None
    res = gen._callee_summary(call.callee, gen.call_activity(call, caller_act),
                              gen._arg_hints(call, caller_act))
    return tuple({k + 1 for k in part if k >= 2} for part in (res[2], res[3], res[4], res[7]))


# ---- runtime calls inside a region -------------------------------------------------------------
# Critical sections (and reductions, which run as critical sections) in reverse mode: the
# reverse of a body that read-modify-writes shared data must run in the reverse of the order in
# which the threads ran it forward (y = y * f(part) is not order-free). Entering and leaving a
# critical section take tickets from one counter per fork (in its record, found through the
# thread-local @__enzyme_cc_omp_rec the region's wrappers set; outside our forks a per-thread
# counter); the reverse sweep passes each of these points when the counter has come back down
# to its ticket, so the reverse runs the same interleaving backwards.
LOCK_ARG = {"__kmpc_critical": 2, "__kmpc_critical_with_hint": 2, "__kmpc_end_critical": 2,
            "__kmpc_reduce": 6, "__kmpc_reduce_nowait": 6, "__kmpc_end_reduce": 2,
            "__kmpc_end_reduce_nowait": 2}
ENTER = ("__kmpc_critical", "__kmpc_critical_with_hint", "__kmpc_reduce", "__kmpc_reduce_nowait")


def _ticket(ctx, inst):
    """Forward sweep: take this point's ticket, kept for the reverse sweep (a ctape key)."""
    _helpers(ctx.gen())
    c, t = ctx.tmp("octr"), ctx.tmp("otk")
    ctx.emit(f"{c} = call ptr @__enzyme_cc_omp_counter()")
    ctx.emit(f"{t} = atomicrmw add ptr {c}, i64 1 monotonic, align 8")
    ctx.emit(f"%ad.ctape.{inst.line} = inttoptr i64 {t} to ptr")


def forward_runtime(ctx, inst):
    """A kept runtime call in a forward sweep; False when emitted here. Reductions take libomp's
    critical method (see the module docstring); reverse mode keeps critical-section tickets."""
    name = inst.callee[1:]
    if name not in LOCK_ARG:
        return None
    if getattr(ctx.synth, "lane", 0):
        return False                          # vector forward mode: lane 0 made the call
    p = (lambda o: ctx.p(o.value) if o.is_local else o.value)
    loc, gtid, lck = p(inst.ops[0]), p(inst.ops[1]), p(inst.ops[LOCK_ARG[name]])
    tape = ctx.synth.mode != "forward"
    _declare_sync(ctx.gen())
    if name in ENTER:
        if name.startswith("__kmpc_reduce"):
            ctx.emit(f"call void @__kmpc_critical(ptr {loc}, i32 {gtid}, ptr {lck})")
            ctx.emit(f"{ctx.synth.r(inst.name)} = add i32 0, 1")
        else:
            ctx.lines.append(ctx.synth.print_primal(inst))
        if tape:
            _ticket(ctx, inst)
        return False
    if tape:
        _ticket(ctx, inst)
    ctx.emit(f"call void @__kmpc_end_critical(ptr {loc}, i32 {gtid}, ptr {lck})")
    if name == "__kmpc_end_reduce":
        ctx.emit(f"call void @__kmpc_barrier(ptr {loc}, i32 {gtid})")
    return False


def reverse_runtime(ctx, inst):
    """The reverse sweep's mirror of a synchronisation call (fresh gtid: the reverse team's)."""
    name = inst.callee[1:]
    if name == "__kmpc_end_reduce" or name == "__kmpc_barrier":
        loc = inst.ops[0].value
        gt = ctx.tmp("ogt")
        ctx.emit(f"{gt} = call i32 @__kmpc_global_thread_num(ptr {loc})")
        ctx.emit(f"call void @__kmpc_barrier(ptr {loc}, i32 {gt})")
        _declare_sync(ctx.gen())
    if name not in LOCK_ARG:
        return
    _helpers(ctx.gen())
    c, t = ctx.tmp("octr"), ctx.tmp("otk")
    ctx.emit(f"{t} = ptrtoint ptr {ctx._get(('ctape', inst.line))} to i64")
    ctx.emit(f"{c} = call ptr @__enzyme_cc_omp_counter()")
    ctx.emit(f"call void @__enzyme_cc_omp_turn(ptr {c}, i64 {t})")


def _declare_sync(gen):
    for n in ("critical", "end_critical"):
        gen.declare_raw(f"@__kmpc_{n}", f"declare void @__kmpc_{n}(ptr, i32, ptr)")
    gen.declare_raw("@__kmpc_barrier", "declare void @__kmpc_barrier(ptr, i32)")
    gen.declare_raw("@__kmpc_global_thread_num", "declare i32 @__kmpc_global_thread_num(ptr)")


# ---- adjoints into shared memory -------------------------------------------------------------
def private_args(gen, synth, inst) -> frozenset:
    """The callee's pointer parameters to which a call in a function a team runs passes memory
    private to the thread (the caller's allocas, or what its own private parameters point at):
    its derivative neither tracks their loads' ranges nor tests their adds (hydrodynamics codes
    pass an element's gathered corners to helpers as local arrays)."""
    if synth is None or not getattr(synth, "parallel", False):
        return frozenset()
    fn = gen.module.function(inst.callee)
    if fn is None:
        return frozenset()
    return frozenset(p.name for p, o in zip(fn.params, inst.ops)
                     if p.ty == "ptr" and o.value.startswith("%") and not shared_in(synth, o.value))


def atomic_add(ctx, sp: str, ty: str, d: str, align: str, cls=0, tag: str = "") -> bool:
    """shadow[sp] += d in the team version of a region's derivative (a thread with no team of
    several threads runs the serial version: _wrapper), atomic unless sp lies in the thread's
    exclusive range of address class cls (openmp_ranges; a list: of any of those classes);
    False for types that have no atomic add here. tag: openmp_version's mark of an add its
    loop's copy makes plain."""
    ty = ty.strip()
    ks = [cls] if isinstance(cls, int) else list(cls)

    if len(ks) > 1:
        ks = (ks * 4)[:4]                 # the helper for several classes takes four

    def ranges(size):                     # the classes' exclusive ranges, read at entry
        return ", ".join(f"i64 {lo}, i64 {w}" for lo, w in
                         openmp_ranges.windows(ctx.synth, ks, size))
    if is_fp(ty):
        ctx.emit(f"call void {_add_helper(ctx.gen(), ty, align, len(ks) > 1)}(ptr {sp}, {ty} {d}, "
                 f"{ranges(_FP_SIZE.get(ty, 16))}){tag}")
        return True
    if ty.startswith("<") and " x " in ty:
        n, elem = ty[1:-1].split(" x ", 1)
        elem = elem.strip()
        size = {"double": 8, "float": 4}.get(elem)
        if size is None:
            return False
        for k in range(int(n)):
            e, q = ctx.tmp(), ctx.tmp()
            ctx.emit(f"{e} = extractelement {ty} {d}, i32 {k}")
            ctx.emit(f"{q} = getelementptr inbounds i8, ptr {sp}, i64 {k * size}")
            ctx.emit(f"call void {_add_helper(ctx.gen(), elem, '', len(ks) > 1)}(ptr {q}, "
                     f"{elem} {e}, {ranges(size)})")
        return True
    return False


def _add_helper(gen, ty, align, multi=False):
    """The add helper (and its plain twin, `_omp_padd.`), given the thread's two exclusive
    ranges of one class as (start, width) pairs (openmp_ranges.windows), or with multi those of
    four classes (openmp_affine.iteration_classes)."""
    a = align.split()[-1] if align else {"double": "8", "float": "4", "half": "2"}.get(ty, "16")
    tag = re.sub(r"[^\w]", "", ty.replace(" x ", "x"))      # (`< 2 x double >`: 2xdouble)
    name = f"@__enzyme_cc_omp_add.{tag}.a{a}" + (".m" if multi else "")
    made = gen.__dict__.setdefault("_omp_adds", set())
    if name not in made:
        made.add(name)
        _helpers(gen)
        gen.declare_raw("@llvm.expect.i1", "declare i1 @llvm.expect.i1(i1, i1)")
        js = range(8) if multi else range(2)
        params = ", ".join(f"i64 %l{j}, i64 %w{j}" for j in js)
        # an unsigned compare per range: the address's offset from the range's start is less
        # than the width (0 for an empty range)
        tests = "  %a = ptrtoint ptr %p to i64\n" + "".join(
            f"  %off{j} = sub i64 %a, %l{j}\n  %own{j} = icmp ult i64 %off{j}, %w{j}\n" for j in js)
        tests += _any("%own", len(js))
        check = ""
        if range_check():                  # the plain add is the thread's own: else abort
            check = tests + "  br i1 %own, label %go, label %bad\nbad:\n" \
                "  call void @__enzyme_cc_omp_own_fail()\n  unreachable\ngo:\n"
        # most adds are the thread's own: the plain add falls through, the atomic one is laid
        # out of line; one class's second range is tested only where its first fails (the
        # first holds the thread's block: openmp_range_runtime's insert keeps it there)
        if multi:
            test = tests + "  %likely = call i1 @llvm.expect.i1(i1 %own, i1 true)\n" \
                "  br i1 %likely, label %plain, label %atomic\n"
        else:
            test = ("  %a = ptrtoint ptr %p to i64\n  %off0 = sub i64 %a, %l0\n"
                    "  %own0 = icmp ult i64 %off0, %w0\n"
                    "  %likely = call i1 @llvm.expect.i1(i1 %own0, i1 true)\n"
                    "  br i1 %likely, label %plain, label %second\nsecond:\n"
                    "  %off1 = sub i64 %a, %l1\n  %own1 = icmp ult i64 %off1, %w1\n"
                    "  br i1 %own1, label %plain, label %atomic\n")
        gen.out.append(
            f"define internal void {name}(ptr %p, {ty} %d, {params}) alwaysinline nounwind {{\n"
            f"entry:\n{test}"
            f"atomic:\n{_atomic_fadd(ty, a)}  ret void\n"
            f"plain:\n  %v = load {ty}, ptr %p, align {a}\n  %s = fadd {ty} %v, %d\n"
            f"  store {ty} %s, ptr %p, align {a}\n  ret void\n}}\n"
            # the same add known to be the thread's own (openmp_version's loop copies)
            f"define internal void {name.replace('_omp_add.', '_omp_padd.')}(ptr %p, {ty} %d, "
            f"{params}) alwaysinline nounwind {{\nentry:\n{check}  %v = load {ty}, ptr %p, align {a}\n"
            f"  %s = fadd {ty} %v, %d\n  store {ty} %s, ptr %p, align {a}\n  ret void\n}}\n")
    return name


def _any(name: str, n: int) -> str:
    """`{name} = or` of the i1 values {name}0 .. {name}{n-1} (n a power of two)."""
    out, level = "", [f"{name}{j}" for j in range(n)]
    while len(level) > 1:
        nxt = [f"{name}.{len(level)}.{j}" for j in range(len(level) // 2)]
        if len(nxt) == 1:
            nxt = [name]
        out += "".join(f"  {t} = or i1 {level[2 * j]}, {level[2 * j + 1]}\n" for j, t in enumerate(nxt))
        level = nxt
    return out


_FP_SIZE = {"double": 8, "float": 4, "half": 2, "bfloat": 2}


def _atomic_fadd(ty: str, a: str) -> str:
    """`%d` added atomically at `%p`: a vector (a <2 x double> load in the region) lane by lane,
    each lane an atomic add of its own (no 16-byte atomics needed)."""
    m = re.match(r"<\s*(\d+)\s*x\s*(\w+)\s*>", ty)
    if not m:
        return f"  %o = atomicrmw fadd ptr %p, {ty} %d monotonic, align {a}\n"
    n, elem = int(m.group(1)), m.group(2)
    size = _FP_SIZE.get(elem, 8)
    out = ""
    for k in range(n):
        out += (f"  %e{k} = extractelement {ty} %d, i32 {k}\n"
                f"  %q{k} = getelementptr inbounds i8, ptr %p, i64 {k * size}\n"
                f"  %o{k} = atomicrmw fadd ptr %q{k}, {elem} %e{k} monotonic, align {size}\n")
    return out


def refuse_shared(ctx, inst, what):
    ctx.error(inst, f"{what} into memory shared by the threads of an OpenMP parallel region "
              "(reverse mode) has no atomic adjoint here", "copy element by element, or work "
              "on a thread-local copy inside the region")


# ---- per-thread tapes --------------------------------------------------------------------------
_HELPERS = r"""
; the record of the fork this thread runs a derivative region of (null outside)
@__enzyme_cc_omp_rec = internal thread_local global ptr null, align 8
@__enzyme_cc_omp_own = internal thread_local global i64 0, align 8

define internal ptr @__enzyme_cc_omp_counter() nounwind {
entry:
  %r = load ptr, ptr @__enzyme_cc_omp_rec, align 8
  %none = icmp eq ptr %r, null
  %c = getelementptr inbounds i8, ptr %r, i64 8
  %p = select i1 %none, ptr @__enzyme_cc_omp_own, ptr %c
  ret ptr %p
}

; reverse of a critical-section entry or exit: wait until the points with later tickets are
; reversed, then let the previous one go
define internal void @__enzyme_cc_omp_turn(ptr %ctr, i64 %mine) nounwind {
entry:
  %want = add i64 %mine, 1
  br label %spin
spin:
  %now = load atomic i64, ptr %ctr acquire, align 8
  %go = icmp eq i64 %now, %want
  br i1 %go, label %done, label %wait
wait:
  %y = call i32 @sched_yield()
  br label %spin
done:
  store atomic i64 %mine, ptr %ctr release, align 8
  ret void
}

@__enzyme_cc_omp_msg = private constant [113 x i8] c"enzyme-cc: the reverse sweep of an OpenMP parallel region did not get the team size of its forward sweep; abort\0A\00"
"""


def _helpers(gen):
    if getattr(gen, "_omp_helpers", False):
        return
    gen._omp_helpers = True
    gen.out.append(openmp_tapes.IR + _HELPERS + openmp_range_runtime.ir(gen.module.triple) + oom_ir("omp"))
    gen.helpers.add(("tape",))
    for n, d in (("@calloc", "declare ptr @calloc(i64, i64)"), ("@free", "declare void @free(ptr)"),
                 ("@realloc", "declare ptr @realloc(ptr, i64)"),
                 ("@abort", "declare void @abort()"), ("@write", "declare i64 @write(i32, ptr, i64)"),
                 ("@sched_yield", "declare i32 @sched_yield()"),
                 ("@omp_in_parallel", "declare i32 @omp_in_parallel()"),
                 ("@omp_get_thread_num", "declare i32 @omp_get_thread_num()"),
                 ("@omp_get_num_threads", "declare i32 @omp_get_num_threads()"),
                 ("@omp_get_max_threads", "declare i32 @omp_get_max_threads()"),
                 ("@__kmpc_push_num_threads", "declare void @__kmpc_push_num_threads(ptr, i32, i32)")):
        gen.declare_raw(n, d)
    for n, d in openmp_range_runtime.DECLS:
        gen.declare_raw(n, d)
    _declare_sync(gen)
    if gen.module.function(FORK) is None and FORK not in gen.module.declarations:
        gen.declare_raw(FORK, f"declare void {FORK}(ptr, i32, ptr, ...)")
