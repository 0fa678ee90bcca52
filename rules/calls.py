"""Rules for calls: library functions with formula rules, memory functions, allocation, and
calls to functions whose bitcode we have (differentiated recursively: augmented forward + reverse).
"""
import ast
import functools
import re
from types import SimpleNamespace

from enzyme_cc.ir.lexer import is_fp, float_cast, split_fields
from .registry import reverse, forward, call_rule, allocator
from .formula import FormulaCompiler, FUNCS, callees
from .copy_adjoint import copy_fields, len64, move_fields_at_once, rev_memcpy
from .call_kinds import ALLOC, SHADOW_ALLOCATOR, allocated_here, is_variadic, kind_of
from .shadow_blocks import defer_free, zero_shadow_block
from enzyme_cc.ad.analysis.inert import blocker
from enzyme_cc.ad.analysis.typeinfo import TypeInfo
from enzyme_cc.ad.structure.type_layout import tbaa_kind, underlying
from enzyme_cc.ad.api.checkpoint import is_wrapper, functions as checkpoint_functions
from enzyme_cc.ad.structure.diagnostics import located, quoted_name
from enzyme_cc.ad.api.checkpoint_tangent import loop_source
from .mpi import forward as mpi_forward, reverse as mpi_reverse
from .tape import forward_sweep, defer_shadows, reverse_sweep
from enzyme_cc.ad.parallel.openmp import forward_call, reverse_call
from enzyme_cc.ad.api.fixed_point import (reverse_reads_alloca, augment as fixed_point_augment,
                                      reverse as fixed_point_reverse)
from .realloc import realloc_forward, rev_realloc
from .blas import capture_after, forward_copies, own_with_active_scale
from .blas_tangent import tangent_before
from .fortran import refuse_runtime_call, refuse_associated_pointer
from .c_sort import FORWARD_DOES_PRIMAL, sort_once
from enzyme_cc.ad.api.global_shadows_nested import outer_call
from .libm_out import reverse as libm_out_reverse
from .blas_reverse import reverse as blas_reverse
from enzyme_cc.ad.structure.cfg import dominators, doomed_blocks


# call kinds that run as a plain primal call in a block that never returns (cfg.doomed_blocks)
_PRIMAL_WHEN_DOOMED = ("diff", "unknown", "custom", "rule", "blas", "mirror", "memcpy", "memset",
                       "alloc", "free", "realloc", "memalign", "checkpoint", "libm_out")


def call_kind(ctx, inst) -> str:
    kind = kind_of(ctx.gen(), inst)
    if kind == "blas" and own_with_active_scale(ctx, inst):
        kind = "diff"          # the program's own dgemm_ with an active alpha: its code
    if kind == "custom" and not _custom_for_mode(ctx, inst):
        kind = "diff"          # registered for the other mode only: its body, as Enzyme does
    if kind == "diff" and id(inst) in ctx.act.inert_calls:
        return "inactive"           # its result needs no shadow (analysis/shadow_demand.py)
    block = getattr(ctx, "block", None)
    if kind in _PRIMAL_WHEN_DOOMED and block is not None and \
            block.label in doomed_blocks(ctx.synth.fn):
        return "inactive"           # never returns (Activity.doomed): no derivative needed
    if kind in ("diff", "unknown") and any(o.value in ctx.act.punned for o in inst.ops) and not (
            kind == "diff" and _bits_passed(ctx, inst)):
        # the callee would see an integer and carry no derivative: never a silent zero
        into = "an indirect call" if (inst.callee or "").startswith("%") else \
            f"'{(inst.callee or '?').lstrip('@')}'"
        ctx.error(inst, "an integer argument carries float data (its bits were copied from a "
                  f"float) into {into}, whose derivative would drop it",
                  "pass the value as a double (or float), not as its bits (a record holding "
                  "a float beside other data: pass it through a pointer)")
    if kind == "diff" and is_variadic(ctx.gen().module, inst.callee or "") and _involved(ctx, inst):
        _refuse_variadic(ctx, inst)
    if kind == "diff" and ctx.synth.mode != "forward":
        if is_wrapper(inst.callee):
            return "checkpoint"     # reverse mode: the schedule's driver, not a taped loop
    return kind


_COMM_FREES = ("@MPI_Comm_free", "@mpi_comm_free_")


def _custom_for_mode(ctx, inst) -> bool:
    """The callee's registration covers this derivative's mode, or it has no body to
    differentiate instead (then the mode's missing rule is reported)."""
    gen = ctx.gen()
    rules = gen.reg.derivative if ctx.synth.mode == "forward" else gen.reg.gradient
    return inst.callee in rules or not gen.module.defines(inst.callee)


def _bits_passed(ctx, inst) -> bool:
    """Every float's bits among the call's arguments go to an integer parameter that the
    callee's derivative takes as that float (callee_summary.takes_bits)."""
    return all(ctx.gen().takes_bits(inst, k, ctx.act)
               for k, o in enumerate(inst.ops) if o.value in ctx.act.punned)


def _refuse_variadic(ctx, inst):
    """A call carrying derivatives into a variadic function that is not inert (ad/analysis/inert.py):
    say what in it needs a derivative."""
    fn, at = blocker(ctx.gen(), inst.callee)
    why = f"it returns a {'pointer' if fn.ret_ty == 'ptr' else 'float'}" if at is None else \
        f"it writes memory outside its stack frame ({located(ctx.gen().module, fn, at)})"
    ctx.error(inst, f"cannot differentiate the variadic function {quoted_name(inst.callee)} "
              f"(it reads its arguments through a va_list), and {why}",
              "pass the values in an array or as fixed parameters; if the function carries no "
              "derivative, declare it with __enzyme_inactivefn")


def _host_data_active(ctx, inst) -> bool:
    """flang's host tuple of an internal procedure (init.trampoline's third argument) reaches
    active data: through the pointers stored in it and in the locals they point to, a C
    pointer among them kept as an integer (a type(c_ptr) user-data argument: its shadow was
    lost, and the callback's derivative with it, silently)."""
    fn, seen, todo = ctx.synth.fn, set(), [inst.ops[2].value]
    stored = {}
    for i in fn.insts():
        if i.op == "store" and i.ops[0].ty in ("ptr", "i64"):
            stored.setdefault(underlying(fn, i.ops[1].value), []).append(i.ops[0].value)
    while todo:
        v = todo.pop()
        d = fn.defs.get(v)
        if getattr(d, "op", None) == "ptrtoint":
            v = d.ops[0].value
        v = underlying(fn, v)
        if v in seen or not v.startswith("%"):
            continue
        seen.add(v)
        if ctx.active(v) or ctx.shadowed(v) and getattr(fn.defs.get(v), "op", "") != "alloca":
            return True
        todo += stored.get(v, [])
    return False


def _involved(ctx, inst) -> bool:
    return any(ctx.active(o.value) or ctx.shadowed(o.value) for o in inst.ops) or \
        (inst.name is not None and (ctx.active(inst.name) or ctx.shadowed(inst.name))) or \
        inst.callee in ctx.gen().global_users


@forward("call")
def _fwd_call(ctx, inst, before):
    if inst.callee == "@__enzyme_cc_defer_free":
        if not before:
            defer_shadows(ctx, inst)
        return None
    kind = call_kind(ctx, inst)
    synth = ctx.synth
    fwd_mode = synth.mode == "forward"
    if before and inst.callee == "@llvm.init.trampoline" and _host_data_active(ctx, inst):
        ctx.gen().fail_where_run(
            synth, inst, "an internal procedure that uses its host's variables, passed as an "
            "argument, reads host data that carries a derivative, through the trampoline flang "
            "builds for it on the stack, which enzyme-cc does not differentiate", "move the "
            "procedure into a module and pass the data it reads from its host as arguments (or "
            "through module variables); where a library's C interface hands your callback its "
            "user-data pointer this way, call the library's Fortran routine directly, with a "
            "callback that reads the data from a global or module variable", ctx.emit)
    if before and not fwd_mode and inst.callee in _COMM_FREES and any(
            i.op in ("call", "invoke") and kind_of(ctx.gen(), i) == "mpi"
            for i in synth.fn.insts()):
        ctx.gen().fail(synth, inst, f"'{inst.callee[1:]}' frees a communicator this function "
                       "communicates over: the reverse pass runs the adjoint communication after "
                       "the forward pass freed it", "create and free the communicator outside "
                       "the differentiated function (pass it in), or differentiate in forward "
                       "mode")
    if kind == "ckpt_driver" and before:
        refuse_checkpoint_driver(ctx.gen(), synth, inst)
    if kind == "ckpt_fn" and before and not fwd_mode and _involved(ctx, inst):
        ctx.gen().fail(synth, inst, "a checkpointed loop (__enzyme_checkpoint_for/while)"
                       f"{loop_source(ctx.gen(), inst.callee)} inside a gradient that is "
                       "differentiated again in reverse mode is not supported (forward over "
                       "reverse is)", "differentiate the gradient in forward mode "
                       "(__enzyme_fwddiff), or differentiate the plain loop")
    if kind == "custom" and fwd_mode and _involved(ctx, inst) and \
            ctx.gen().reg.derivative.get(inst.callee) in FORWARD_DOES_PRIMAL:
        if before and getattr(synth, "width", 1) > 1 and getattr(synth, "lane", 0) == 0:
            sort_once(ctx, inst)            # (vector forward mode: each lane's shadow after)
        return False if before else None    # (the derivative makes the primal call's effect)
    if kind == "mpi":                  # always: every rank takes part in the derivative's messages
        return mpi_forward(ctx, inst, before)
    if kind == "tape":
        forward_sweep(ctx, inst, before)
        return None
    if kind.startswith("omp") and before:
        return forward_call(ctx, inst, kind)
    if before and (inst.callee or "").startswith("@llvm.lifetime."):
        if synth.mode == "combined":
            # the reverse sweep (a fixed point's too) still reads the primal's locals: their
            # lifetime ends with the gradient, or stack colouring lays other objects over them
            return False
        if synth.mode == "split" and inst.ops and reverse_reads_alloca(synth, inst.ops[-1].value):
            return False               # that alloca lives on the heap here (rules/shadow_rules.py)
    if synth.mode == "combined" and (inst.callee or "").startswith("@llvm.stackrestore"):
        # a VLA (and its shadow) freed here is still read by the reverse sweep: keep the stack
        # until the gradient returns
        return False if before else None
    if kind == "free":
        if fwd_mode:
            return None                # forward mode frees both at once (see the tangent rule)
        if before and inst.ops and ctx.act.has_shadow(inst.ops[0].value) and \
                not (allocated_here(ctx, inst.ops[0]) and inst.ops[0].value in synth.freed):
            # not one allocation of this function (a callee's, or reached through memory or a
            # phi): the reverse sweep may still read it; free both when the gradient returns
            one_arg = {"@_ZdlPvm": "@_ZdlPv", "@_ZdaPvm": "@_ZdaPv"}.get(inst.callee, inst.callee)
            if one_arg in ("@free", "@_ZdlPv", "@_ZdaPv"):
                defer_free(ctx, ctx.p(inst.ops[0].value), ctx.s(inst.ops[0].value), one_arg)
            return False
        return False if before and inst.ops and ctx.act.has_shadow(inst.ops[0].value) else None
    if kind == "realloc" and fwd_mode and not before and inst.name in ctx.act.shadowed:
        # forward mode: the shadow follows the primal (grown part uninitialized in both)
        n = inst.ops[1]
        nv = ctx.p(n.value) if n.is_local else n.value
        ctx.emit(f"{synth.sname(inst.name)} = call ptr @realloc(ptr {ctx.s(inst.ops[0].value)}, "
                 f"{n.ty} {nv})")
        return None
    if kind == "realloc" and before and inst.name in ctx.act.shadowed and not fwd_mode:
        realloc_forward(ctx, inst)
        return False
    if kind == "alloc" and not before and inst.name in ctx.act.shadowed:
        s = synth.sname(inst.name)
        if inst.callee in SHADOW_ALLOCATOR:
            size = _alloc_size(ctx, inst)
            ctx.emit(f"{s} = call ptr {SHADOW_ALLOCATOR[inst.callee]}(i64 {size})")
            ctx.gen().declare_raw(SHADOW_ALLOCATOR[inst.callee],
                                  f"declare ptr {SHADOW_ALLOCATOR[inst.callee]}(i64)")
            ctx.gen().zero_memory(ctx.emit, s, size)
            return None
        args = ", ".join(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}" for o in inst.ops)
        ctx.emit(f"{s} = call ptr {inst.callee}({args})")
        zero_shadow_block(ctx, inst.callee, s, _alloc_size(ctx, inst))
        return None
    if kind == "memalign" and not before and ctx.shadowed(inst.ops[0].value):
        # posix_memalign(&p, align, n): the shadow block goes into p's shadow
        out, al, n = inst.ops[:3]
        nv = ctx.p(n.value) if n.is_local else n.value
        alv = ctx.p(al.value) if al.is_local else al.value
        ctx.emit(f"{ctx.tmp('rc')} = call i32 @posix_memalign(ptr {ctx.s(out.value)}, "
                 f"{al.ty} {alv}, {n.ty} {nv})")
        s = ctx.tmp("blk")
        ctx.emit(f"{s} = load ptr, ptr {ctx.s(out.value)}")
        zero_shadow_block(ctx, "@posix_memalign", s, nv)
        return None
    if kind == "memcpy" and not before and len(inst.ops) >= 3 and not fwd_mode:
        dst, src, n = inst.ops[:3]
        if not ctx.shadowed(dst.value):
            return None
        if not ctx.shadowed(src.value):           # no shadow comes in: null pointers, zeros
            refuse_associated_pointer(synth.gen, synth, inst, src.value)
            nv = ctx.p(n.value) if n.is_local else n.value
            synth.gen.zero_memory(ctx.emit, ctx.s(dst.value), nv, n.ty)
            return None
        # pointers copied in the forward sweep carry their shadows along
        ranges = ctx.gen().copy_ranges(synth, inst)
        if ranges[0][2] == "bytes":         # a moved block of unknown type: all its shadow bytes
            copy_fields(ctx.gen(), ctx.emit, ctx.tmp, "move", ctx.s(dst.value), ctx.s(src.value),
                        0, len64(ctx, n), ranges, len64(ctx, n))
            return None
        fields = [(off, size) for off, size, k in ranges if k == "ptr"]
        if len(fields) > 1 and getattr(ranges, "stride", None) is None and \
                all(size is not None for _, size in fields) and \
                (inst.callee or "").startswith(("@llvm.memmove", "@memmove")):
            move_fields_at_once(ctx.emit, ctx.tmp, ctx.s(dst.value), ctx.s(src.value), fields)
            return None
        for off, size, k in ranges:
            if k != "ptr":
                continue
            nv = str(size) if size is not None else len64(ctx, n)
            copy_fields(ctx.gen(), ctx.emit, ctx.tmp, "move", ctx.s(dst.value), ctx.s(src.value),
                                  off, nv, ranges, len64(ctx, n))
        return None
    if kind == "blas" and before and _involved(ctx, inst):
        tangent_before(ctx, inst) if fwd_mode else forward_copies(ctx, inst)
        return None
    if kind == "blas" and not before and not fwd_mode and _involved(ctx, inst):
        capture_after(ctx, inst)
        return None
    if kind in ("custom", "checkpoint") and before and _involved(ctx, inst) and not fwd_mode:
        _custom_augment(ctx, inst)
        return False
    if kind == "mirror" and not before and _involved(ctx, inst):
        _mirror_call(ctx, inst)
        return None
    if kind == "fixedpoint" and not before and not fwd_mode and _involved(ctx, inst):
        fixed_point_augment(ctx, inst)
        return None
    if kind == "diff" and before and _involved(ctx, inst):
        if fwd_mode:
            return False               # the tangent rule emits the call of the derivative
        ctx.gen().emit_augmented_call(ctx, inst)
        return False
    if kind == "unknown" and before and _involved(ctx, inst) and \
            not _sorts_integers(ctx.synth.module, inst):
        what = "indirect call" if (inst.callee or "").startswith("%") else \
            "call to " + quoted_name(inst.callee or "")
        if re.match(r'@"?__enzyme_(post_sparse_)?todense', inst.callee or ""):
            name = inst.callee.strip('@"')
            ctx.gen().fail(synth, inst, f"'{name}' with arguments that carry "
                           "derivatives inside a function that is differentiated is not supported "
                           "yet (the pointer is lowered to its load/store calls after "
                           "differentiation)",
                           "call __enzyme_todense outside the differentiated function and pass "
                           "the pointer in as an argument (or as a shadow)")
        if (inst.callee or "").startswith("@_FortranA"):
            refuse_runtime_call(ctx.gen(), synth, inst)
        bare = (inst.callee or "").strip('@"')
        pointers = any(o.ty == "ptr" and ctx.shadowed(o.value) for o in inst.ops)
        hint = _no_rule_hint(bare) or (
                    "rebuild the object defining it with enzyme-cc, add a rule in an enzyme.toml "
                    "rule file, or declare it inactive with __enzyme_inactivefn" + (
                        " (only if it does not read, write or keep the floats its pointer "
                        "arguments lead to: else the derivative would be wrong)"
                        if pointers else ""))
        # (a link error where every run of the derivative makes the call; else the derivative
        # stops there if it ever runs it: a diagnostic under `if (verbose)`)
        ctx.gen().fail_where_run(synth, inst, f"no derivative rule for {what} and no bitcode "
                                 "for it", hint, ctx.emit)
    return None


def _sorts_integers(module, inst) -> bool:
    """A qsort of integers (an index array: its elements carry no derivative), by its element
    size and its comparator's accesses through both arguments, all integer loads of the whole
    element: it runs as in the primal. (Records keyed by an integer field are not: their other
    fields move.)"""
    if (inst.callee or "").strip('@"') != "qsort" or len(inst.ops) < 4:
        return False
    size, cmp = inst.ops[2].value, inst.ops[3].value
    fn = module.function(cmp) if cmp.startswith("@") else None
    if not size.isdigit() or int(size) not in (1, 2, 4, 8) or fn is None or len(fn.params) != 2:
        return False
    info = TypeInfo(module, fn)
    return all(_loads_whole(module, fn, info, p.name, int(size)) for p in fn.params)


def _loads_whole(module, fn, info, ptr: str, size: int) -> bool:
    """Pointer ptr (or a copy of it, spilled or not) is used by loads only, each of an integer
    of `size` bytes at its start (an i32 of a 4-byte element) that C's type tag, where there is
    one, calls an integer."""
    cls = info._find(ptr)
    uses = [i for i in fn.insts() if any(info._find(o.value) == cls for o in i.ops)
            and not (i.op == "store" and info._find(i.ops[0].value) == cls)]   # (spills)
    loads = [i for i in uses if i.op == "load" and info._find(i.ops[0].value) == cls]
    return bool(loads) and len(loads) == len(uses) and all(
        i.ty == f"i{8 * size}" and tbaa_kind(module, i.md.get("!tbaa")) in (None, "int")
        for i in loads)


# library functions whose data flow no rule can state, and for which declaring them inactive
# would give a wrong derivative: what to do instead
_NO_RULE_HINTS = (
    (("qsort",), "qsort moves the elements of the array, so declaring it inactive would give a "
     "wrong derivative; sort an array of indices (they carry none) and read the data through "
     "it, or sort with code built by enzyme-cc (std::sort, a sort of your own)"),
    (("bsearch",), "bsearch returns a pointer into the array without its shadow; search for "
     "the index instead (a loop, or std::lower_bound)"),
    (("CFI_establish", "CFI_section", "CFI_select_part", "CFI_setpointer", "CFI_allocate"),
     "the ISO_Fortran_binding routines keep the data address in a descriptor, so declaring them "
     "inactive would give a wrong derivative; build the descriptors outside the differentiated "
     "function and pass them enzyme_dup with shadow descriptors over the shadow data, or call "
     "the Fortran routine with explicit-shape arrays (plain pointers)"),
    (("asm",),
     "inline assembly is not differentiated (apart from Eigen's SSE max/min and FMA forms and "
     "its optimization barriers); keep the assembly out of the differentiated code, or, for "
     "Eigen, build with -DEIGEN_DONT_VECTORIZE"),
    (("llvm.init.trampoline", "llvm.adjust.trampoline"),
     "this is an internal procedure that uses its host's variables, passed as an argument: "
     "flang builds it a trampoline on the stack, which enzyme-cc does not differentiate; move "
     "the procedure into a module and pass the data it reads from its host as arguments (or "
     "through module variables)"),
    (("pthread_create", "_ZNSt6thread15_M_start_thread", "thrd_create"),
     "enzyme-cc differentiates OpenMP parallel regions (#pragma omp parallel for, -fopenmp), "
     "not threads the program starts itself; declaring it inactive would lose what the threads "
     "compute"),
)


def _no_rule_hint(bare: str) -> str | None:
    return next((h for names, h in _NO_RULE_HINTS if bare.startswith(names)), None)


def _alloc_size(ctx, inst):
    """The byte count an allocation call requests."""
    idx = ALLOC[inst.callee][0] if inst.callee in ALLOC else (allocator(inst.callee)[0],)
    vals = []
    for k in idx:
        if isinstance(k, str):                   # "*K+1": the i64 argument K points to, plus one
            v, t = ctx.tmp("cap"), ctx.tmp("sz")
            ctx.emit(f"{v} = load i64, ptr {ctx.p(inst.ops[int(k[1:-2])].value)}")
            ctx.emit(f"{t} = add i64 {v}, 1")
            vals.append(t)
        else:
            vals.append(ctx.p(inst.ops[k].value) if inst.ops[k].is_local else inst.ops[k].value)
    while len(vals) > 1:
        t = ctx.tmp("sz")
        ctx.emit(f"{t} = mul i64 {vals[-2]}, {vals[-1]}")
        vals[-2:] = [t]
    return vals[0]


def zero_shadow_like(ctx, dst, n):
    """The shadow of `memset(dst, 0, n)`. When n is the usable size of dst itself (a derivative's
    own shadow zeroing, differentiated again), the shadow's usable size, which may be smaller."""
    d = ctx.synth.fn.defs.get(n.value)
    if getattr(d, "op", None) == "call" and d.callee == "@malloc_usable_size" and \
            d.ops[0].value == dst.value:
        u = ctx.tmp("usable")
        ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {ctx.s(dst.value)})")
        ctx.gen().zero_memory(ctx.emit, ctx.s(dst.value), u, n.ty)
        return
    sh, size = ctx.s(dst.value), ctx.p(n.value)
    if not sh.startswith("@"):            # a shadow read from memory may be null: a Fortran
        z, size0 = ctx.tmp("shnull"), ctx.tmp("shsize")   # LOGICAL or INTEGER array's descriptor
        ctx.emit(f"{z} = icmp eq ptr {sh}, null")
        ctx.emit(f"{size0} = select i1 {z}, {n.ty} 0, {n.ty} {size}")
        size = size0
    ctx.gen().zero_memory(ctx.emit, sh, size, n.ty)


def _mirror_call(ctx, inst):
    """The same call on the shadows: the shadow container gets the same links."""
    args = []
    for o in inst.ops:
        if o.ty != "ptr" or o.value == "null" or not o.is_local and not ctx.shadowed(o.value):
            # (a constant a shadow shares: flang's type information for a descriptor)
            args.append(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}")
        elif not ctx.shadowed(o.value) and o.is_local:
            ctx.gen().fail(ctx.synth, inst, f"'{inst.callee[1:]}' links memory with and without "
                           f"a shadow ('{o.value}' has none)", "give every container involved a "
                           "shadow (enzyme_dup), or keep active data out of it")
        else:
            args.append(f"ptr {ctx.s(o.value)}")
    call = f"call {inst.ty} {inst.callee}({', '.join(args)})"
    if inst.name and inst.ty == "ptr" and ctx.shadowed(inst.name):
        ctx.emit(f"{ctx.synth.sname(inst.name)} = {call}")
    elif inst.name:
        ctx.emit(f"{ctx.tmp()} = {call}")
    else:
        ctx.emit(call)


@reverse("call")
def _rev_call(ctx, inst, d):
    kind = call_kind(ctx, inst)
    if (inst.callee or "").startswith("@ad.gs."):
        return outer_call(ctx, inst)
    if kind == "rule":
        _rev_formula(ctx, inst, d)
    elif kind == "libm_out":
        libm_out_reverse(ctx, inst, d)
    elif kind == "memcpy":
        rev_memcpy(ctx, inst)
    elif kind == "memset":
        dst, n = inst.ops[0], inst.ops[2]
        if ctx.shadowed(dst.value):
            zero_shadow_like(ctx, dst, n)
    elif kind == "alloc":
        if inst.name in ctx.synth.freed:
            f = ALLOC[inst.callee][1] if inst.callee in ALLOC else allocator(inst.callee)[1]
            ctx.emit(f"call void {f}(ptr {ctx.s(inst.name)})")
            ctx.emit(f"call void {f}(ptr {ctx.p(inst.name)})")
            ctx.gen().declare_raw(f, f"declare void {f}(ptr)")
    elif kind == "realloc" and inst.name in ctx.act.shadowed:
        rev_realloc(ctx, inst)
    elif kind == "tape":
        reverse_sweep(ctx, inst)
    elif kind.startswith("omp"):
        reverse_call(ctx, inst, kind)
    elif kind == "diff" and _involved(ctx, inst):
        ctx.gen().emit_reverse_call(ctx, inst, d)
    elif kind in ("custom", "checkpoint") and _involved(ctx, inst):
        _custom_reverse(ctx, inst, d)
    elif kind == "fixedpoint" and _involved(ctx, inst):
        fixed_point_reverse(ctx, inst, d)
    elif kind == "blas" and _involved(ctx, inst):
        blas_reverse(ctx, inst, d)
    elif kind == "mpi":
        mpi_reverse(ctx, inst)


def refuse_checkpoint_driver(gen, synth, inst):
    gen.fail(synth, inst, "a checkpointed loop (__enzyme_checkpoint_for/while) inside a "
             "derivative that is differentiated again (higher order) is not supported",
             "differentiate the plain loop for higher-order derivatives")


def _custom_fns(ctx, inst, which):
    gen = ctx.gen()
    if call_kind(ctx, inst) == "checkpoint":     # generated: enzyme_cc/ad/api/checkpoint.py
        fns = checkpoint_functions(gen, ctx, inst)
        return fns[2 * which], SimpleNamespace(ret_ty=fns[2 * which + 1])
    pair = gen.reg.gradient.get(inst.callee)
    if pair is None:
        gen.fail(ctx.synth, inst, f"'{inst.callee[1:]}' has a custom derivative for forward mode "
                 "only", f"register its gradient with __enzyme_register_gradient_{inst.callee[1:]}")
    fn = pair[which]
    if gen.module.function(fn) is None:
        gen.fail(ctx.synth, inst, f"the registered custom gradient function '{fn[1:]}' has no "
                 "bitcode", "define it in a file compiled with enzyme-cc")
    return fn, gen.module.function(fn)


def _custom_args(ctx, inst, get_p, get_s):
    args = []
    for o in inst.ops:
        args.append(f"{o.ty} {get_p(o.value) if o.is_local else o.value}")
        if o.ty == "ptr":
            args.append(f"ptr {get_s(o.value) if ctx.shadowed(o.value) else 'null'}")
    return args


def _custom_augment(ctx, inst):
    """Forward sweep of a call with a registered gradient: call the user's augmented function."""
    synth = ctx.synth
    aug, fn = _custom_fns(ctx, inst, 0)
    args = _custom_args(ctx, inst, ctx.p, ctx.s)
    call = f"call {fn.ret_ty} {aug}({', '.join(args)})"
    tape = f"%ad.ctape.{inst.line}"
    if fn.ret_ty == "void":
        ctx.emit(call)
        if inst.name:
            # the augmented function returns neither tape nor result: the result is the
            # original function's
            args = ", ".join(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}" for o in inst.ops)
            ctx.emit(f"{synth.r(inst.name)} = call {inst.ty} {inst.callee}({args})")
    elif fn.ret_ty == inst.ty:
        ctx.emit(f"{synth.r(inst.name) if inst.name else synth.tmp('cr')} = {call}")
    elif fn.ret_ty == "ptr" and inst.ty == "void":
        ctx.emit(f"{tape} = {call}")
        if call_kind(ctx, inst) == "checkpoint" and ctx.gen().in_multi:
            # reversed once per lane (reverse vector mode): the run lives as long as the tape
            defer_free(ctx, tape, "null", "@__enzyme_cc_ckpt_release")
    else:                                   # { ptr tape, T result }
        _check_augmented_return(ctx, inst, aug, fn.ret_ty)
        t = synth.tmp("ca")
        ctx.emit(f"{t} = {call}")
        ctx.emit(f"{tape} = extractvalue {fn.ret_ty} {t}, 0")
        if inst.name:
            ctx.emit(f"{synth.r(inst.name)} = extractvalue {fn.ret_ty} {t}, 1")


def _field_types(ty: str) -> list[str]:
    """The field types of a literal struct type, spaces left out (to compare with other type
    texts); [] for any other type."""
    return [f.replace(" ", "") for f in split_fields(ty)] if ty.strip().startswith("{") else []


def _check_augmented_return(ctx, inst, aug, ret_ty):
    """A registered augmented forward returning something other than the forms of the ABI
    (registrations.py) is the user's mistake: say which forms are accepted."""
    if call_kind(ctx, inst) == "checkpoint":
        return                                  # (generated: always a record)
    if _field_types(ret_ty) == ["ptr", inst.ty.replace(" ", "")]:
        return
    f = inst.callee[1:]
    res = "nothing" if inst.ty == "void" else f"'{inst.ty}'"
    forms = (f"'{inst.ty}' (the result, no tape), a struct {{ void *tape; {inst.ty} result; }} "
             "(the reverse function then takes the tape as its last argument), or nothing"
             if inst.ty != "void" else "a 'void *' tape, or nothing")
    ctx.gen().fail(ctx.synth, inst, f"the augmented forward function '{aug[1:]}' registered "
                   f"for '{f}' (__enzyme_register_gradient) returns '{ret_ty}', while '{f}' "
                   f"returns {res}", f"make '{aug[1:]}' return {forms}")


def _custom_reverse(ctx, inst, d):
    rev, fn = _custom_fns(ctx, inst, 1)
    _, aug_fn = _custom_fns(ctx, inst, 0)
    args = _custom_args(ctx, inst, ctx.p, ctx.s)
    if inst.name and is_fp(inst.ty):
        args.append(f"{inst.ty} {d if d is not None else '0.0'}")
    if aug_fn.ret_ty not in ("void", inst.ty):
        args.append(f"ptr {ctx._get(('ctape', inst.line))}")
    call = f"call {fn.ret_ty} {rev}({', '.join(args)})"
    active = [o for o in inst.ops if is_fp(o.ty)]
    if fn.ret_ty == "void":
        ctx.emit(call)
        return
    if call_kind(ctx, inst) != "checkpoint" and not (len(active) == 1 and is_fp(fn.ret_ty)) and \
            _field_types(fn.ret_ty) != [o.ty.replace(" ", "") for o in active]:
        want = "nothing" if not active else f"'{active[0].ty}'" if len(active) == 1 else \
            "a struct of " + ", ".join(o.ty for o in active)
        ctx.gen().fail(ctx.synth, inst, f"the reverse function '{rev[1:]}' registered for "
                       f"'{inst.callee[1:]}' (__enzyme_register_gradient) returns "
                       f"'{fn.ret_ty}'", f"return the adjoints of its {len(active)} float "
                       f"arguments: {want} (in argument order), or void when it adds them "
                       "through pointers")
    t = ctx.tmp("cg")
    ctx.emit(f"{t} = {call}")
    if len(active) == 1 and is_fp(fn.ret_ty):
        ctx.add(active[0].value, active[0].ty, t)
        return
    for k, o in enumerate(active):
        e = ctx.tmp()
        ctx.emit(f"{e} = extractvalue {fn.ret_ty} {t}, {k}")
        ctx.add(o.value, o.ty, e)


def _rev_formula(ctx, inst, d):
    if d is None:
        return
    rule = call_rule(inst.callee)
    check_arity(ctx, inst, rule)
    ty = inst.ty
    live = [(name, partial, o) for name, partial, o in zip(rule.args, rule.partials, inst.ops)
            if partial is not None and ctx.active(o.value)]
    used = set()
    for _, partial, _ in live:
        used |= _names_in(partial)
    env = {name: (ctx.p(o.value), o.ty) for name, o in zip(rule.args, inst.ops) if name in used}
    if "r" in used:
        env["r"] = (ctx.p(inst.name), ty)
    known = sibling_calls(ctx, inst, rule, [p for _, p, _ in live], env)
    for name, partial, o in live:
        fc = FormulaCompiler(ctx.emit, ctx.tmp, ctx.gen().declare, ty, env,
                             f"{rule.source}: rule '{rule.name}'", known)
        g = fc.compile(partial)
        if g in ("0x3FF0000000000000",):          # partial derivative 1: pass d through
            t = d
        else:
            t = ctx.tmp()
            ctx.emit(f"{t} = fmul {ty} {g}, {d}")
        ctx.add(o.value, o.ty, convert_float(ctx, t, ty, o.ty))


def sibling_calls(ctx, inst, rule, partials, env, forward=False) -> dict:
    """Calls in the partials that the primal itself makes on the same operands (sin's partial
    cos(x) where the code computes cos(x) too, as a rotation does): {(function, argument
    values): the primal call's value}, so the derivative reads that value instead of calling the
    function again. The call must run on every path to inst: in a dominating block (the reverse
    of inst's block has every value of that block; forward mode: an earlier one in inst's)."""
    synth, out = ctx.synth, {}
    dom, calls = _dominators(synth), _calls_by_operands(synth)
    here = inst.block.label
    order = {id(i): k for k, i in enumerate(inst.block.insts)} if forward else {}

    def placed(cand):
        if cand.block.label != here:
            return cand.block.label in dom.get(here, ())
        return not forward or order.get(id(cand), len(order)) < order[id(inst)]
    where = {name: o.value for name, o in zip(rule.args, inst.ops)}
    for partial in partials:
        for node in _function_calls(partial):
            if not all(a.id in where and a.id in env for a in node.args):
                continue
            ops = tuple(where[a.id] for a in node.args)
            cand = next((c for name in sorted(callees(node.func.id, inst.ty))
                         for c in calls.get((name, ops), ()) if c.ty == inst.ty and placed(c)),
                        None)
            if cand is not None:
                out[(node.func.id, tuple(env[a.id][0] for a in node.args))] = ctx.p(cand.name)
    return out


@functools.cache
def _function_calls(partial):
    """The calls in a partial's formula of a function the primal may compute too, with plain
    names as arguments (walked once per partial: AST nodes hash by identity, and a rule's
    parsed partials live as long as the process)."""
    return tuple(node for node in ast.walk(partial)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and
                 node.func.id in FUNCS and node.args and
                 all(isinstance(a, ast.Name) for a in node.args))


def _dominators(synth):
    """The reverse synth's dominators; a forward synth has none of its own: computed once."""
    dom = getattr(synth, "dom", None) or synth.__dict__.get("_sibling_dom")
    if dom is None:
        dom = synth._sibling_dom = dominators(synth.fn)
    return dom


def _calls_by_operands(synth) -> dict:
    """{(callee without @, operand values): the named calls}, built once per function (every
    formula call of the function looks its siblings up here)."""
    index = synth.__dict__.get("_calls_by_operands")
    if index is None:
        index = synth._calls_by_operands = {}
        for c in synth.fn.insts():
            if c.op == "call" and c.name and c.callee:
                key = (c.callee.lstrip("@"), tuple(o.value for o in c.ops))
                index.setdefault(key, []).append(c)
    return index


def check_arity(ctx, inst, rule):
    if len(rule.args) != len(inst.ops):
        ctx.gen().fail(ctx.synth, inst, f"the rule '{rule.name}' ({rule.source}) has "
                       f"{len(rule.args)} arguments but the call passes {len(inst.ops)}",
                       "give the rule one entry in 'args' and 'partials' per argument")


def convert_float(ctx, v, from_ty, to_ty):
    """fpext/fptrunc between float types (a rule's partial is in the result's type)."""
    if from_ty == to_ty or not (is_fp(from_ty) and is_fp(to_ty)):
        return v
    t = ctx.tmp("cv")
    ctx.emit(f"{t} = {float_cast(from_ty, to_ty)} {from_ty} {v} to {to_ty}")
    return t


@functools.cache
def _names_in(node):
    """The names a partial's formula reads (walked once per partial: every call of a libm
    function in a whole program asks again)."""
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
