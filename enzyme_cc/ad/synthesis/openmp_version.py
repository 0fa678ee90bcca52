"""OpenMP reverse mode: reverse loops versioned on the thread's exclusive range.

In the team version of a region's reverse sweep, each load's adjoint goes into shared shadow
memory through a range test (openmp_ranges.own_range): a plain add inside the thread's exclusive
range, an atomic one outside. That test, a few instructions per add, was what kept the 2-thread
gradient of a row-parallel stencil from scaling like the primal.

For a counted loop whose loads are range-tracked once per entry (openmp_affine), each such load
adds, over one run of the reverse loop, into shadow addresses between its address at the first
and at the last iteration. Where the reverse sweep enters the loop (its exit edge, where the
iteration count is known) one test of those ranges decides for the whole run: the reverse loop is
emitted twice, a copy in which these adds are plain and the original with the per-add tests, and
the entry branches on the test (`flag`, in reverse._enter_loops; `version`, after the sweep is
emitted). The adds are tagged with their loop in the emitted text (`tag`), so that the copy turns
exactly those into plain adds and leaves any other add, an inner loop's included, as it was.
Where the emitted loop does not have the shape the copy needs (a value defined in it and used
after it), it is left unversioned: every add keeps its test.
"""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import LOCAL, LOCAL_NAME, type_size
from ..parallel import openmp_affine
from ..parallel.openmp_classes import load_class
from .sweep_ctx import RevCtx

_LABEL = re.compile(r'^([-\w.$]+|"[^"]*"):$')
_NAME = LOCAL_NAME
_TARGET = re.compile(r'label %([-\w.$]+|"[^"]*")')
_DEF = re.compile(r'\s*(' + LOCAL + r') = (\w+)')   # (name, opcode) of a definition
_TERMINATORS = ("br", "switch", "ret", "unreachable", "resume")


def loops(synth) -> dict:
    """{header: (loop, exit block)} of the team reverse's loops to version (cached): loops with
    range-tracked loads that only their latch leaves (the reverse enters them on that edge,
    once per run), whose tests read only values that dominate the exit block (the reverse
    of that block computes them for any edge it leaves by)."""
    cache = synth.__dict__.get("_omp_versioned")
    if cache is not None:
        return cache
    cache = synth._omp_versioned = {}
    if not getattr(synth, "parallel", False) or synth.mode != "split":
        return cache
    fn = synth.fn
    for pre, loads in openmp_affine.plan(synth).items():
        lp = loads[0][1]
        if any(openmp_affine.iteration_classes(synth, inst) for inst, _, _ in loads):
            continue              # its span covers several components: never one range
        outs = {t for b in lp.blocks for t in fn.block(b).term.targets if t not in lp.blocks}
        leaving = {b for b in lp.blocks if any(t not in lp.blocks for t in fn.block(b).term.targets)}
        if leaving != {lp.latch} or len(outs) != 1:
            continue
        exit_label = next(iter(outs))
        if all(_resolvable(synth, v, exit_label) for v in _inputs(synth, lp, loads)):
            cache[lp.header] = (lp, exit_label)
    return cache


def _inputs(synth, lp, loads):
    """The values defined outside lp that the tests of lp's tracked loads read."""
    for inst, _, chain in loads:
        ptr = inst.ops[0].value
        for d in chain:
            for o in d.ops:
                a = synth.affine.get(o.value)
                if a is not None and a[0] is lp:
                    yield a[1]                     # an affine phi's start
                elif not openmp_affine.inside(synth, lp, o.value):
                    yield o.value
        a = synth.affine.get(ptr)
        if a is not None and a[0] is lp:
            yield a[1]
        yield openmp_affine.root_of(synth, lp, ptr, chain)


# integer arithmetic the test recomputes where its result does not reach the exit block (a value
# of the loop's guarded preheader, e.g. a row offset): clones without wrap flags
_PURE = ("add", "sub", "mul", "shl", "sext", "zext", "trunc", "getelementptr")


def _dominates(synth, v, label) -> bool:
    """v (a constant, an argument or an instruction's value) is defined on every path to the
    end of block label, outside it."""
    d = synth.fn.defs.get(v) if v.startswith("%") else None
    blk = getattr(getattr(d, "block", None), "label", None)
    return blk is None or blk != label and blk in synth.dom[label]


def _resolvable(synth, v, label, depth=0) -> bool:
    """v can be had at the end of block label: it dominates label, or it is pure arithmetic of
    such values."""
    if _dominates(synth, v, label):
        return True
    d = synth.fn.defs[v]
    return depth < 8 and d.op in _PURE and (d.op != "getelementptr" or d.src_ty is not None) and \
        all(_resolvable(synth, o.value, label, depth + 1) for o in d.ops)


def _resolver(ctx, label):
    """prim(v) for openmp_affine.shadow_at in the reverse of block label (see _resolvable)."""
    synth, names = ctx.synth, {}

    def prim(v):
        if _dominates(synth, v, label):
            return ctx.p(v)
        if v not in names:
            names[v] = openmp_affine.clone_inst(ctx, synth.fn.defs[v],
                                                lambda o: prim(o) if o.startswith("%") else o)
        return names[v]
    return prim


def tag(synth, inst) -> str:
    """The line suffix of the adjoint add of load inst when the copy of its loop makes it plain
    ('' for any other add)."""
    lp = openmp_affine.loop_of(synth, inst)
    if lp is None or lp.header not in loops(synth):
        return ""
    return f" ; own.{synth.r(lp.header)[1:]}"


def needs(synth, label) -> list:
    """The primal values and shadows the reverse of block label reads to compute flags."""
    ctx = RevCtx(synth, synth.fn.block(label), dry=True)
    for lp, exit_label in loops(synth).values():
        if exit_label == label:
            flag(ctx, lp, "%ad.dry")
    return ctx.requests


def flag(ctx, lp, n: str) -> str:
    """At the reverse's entry into lp (iterations n down to 0 follow): an i1, true when every
    range-tracked load of lp adds, in all of them, inside the thread's exclusive range."""
    synth = ctx.synth
    out, prim = "true", _resolver(ctx, loops(synth)[lp.header][1])
    for inst, _, chain in openmp_affine.plan(synth)[lp.preheader]:
        size = max(type_size(inst.ty, synth.module.named_types), 1)
        ends = [_as_int(ctx, openmp_affine.shadow_at(ctx, lp, chain, inst.ops[0].value, it, prim))
                for it in ("0", n)]
        lo, hi, span, end, own, both = (ctx.tmp(h) for h in ("vlo", "vhi", "vsp", "ve", "vo", "vb"))
        ctx.emit(f"{lo} = call i64 @llvm.umin.i64(i64 {ends[0]}, i64 {ends[1]})")
        ctx.emit(f"{hi} = call i64 @llvm.umax.i64(i64 {ends[0]}, i64 {ends[1]})")
        ctx.emit(f"{end} = add i64 {hi}, {size}")
        ctx.emit(f"{span} = sub i64 {end}, {lo}")
        p = ctx.tmp("vp")
        ctx.emit(f"{p} = inttoptr i64 {lo} to ptr")
        ctx.emit(f"{own} = call i1 @__enzyme_cc_omp_own_range(ptr {p}, i64 {span}, "
                 f"i64 {load_class(synth, inst.ops[0].value)})")
        ctx.emit(f"{both} = and i1 {out}, {own}")
        out = both
    return out


def _as_int(ctx, p):
    a = ctx.tmp("va")
    ctx.emit(f"{a} = ptrtoint ptr {p} to i64")
    return a


# ---- the copy ------------------------------------------------------------------------------
def version(synth, lines: list[str], entries: dict) -> list[str]:
    """lines: the reverse function's body; entries: {header: flag name} from _enter_loops. Each
    loop whose entry computed a flag is copied, the copy's tagged adds plain."""
    if entries:
        lines = [part for ln in lines for part in ln.split("\n")]
    for k, (header, fl) in enumerate(entries.items()):
        lp = loops(synth)[header][0]
        # (each copy its own suffix: a loop copied inside an outer loop's copy is copied again)
        suffix = ".own" if k == 0 else f".own{k + 1}"
        lines = _version_one(lines, synth.r(header)[1:], synth.r(lp.latch)[1:], fl,
                             suffix) or lines
    return lines


def _blocks(lines):
    out, cur = [], None
    for ln in lines:
        m = _LABEL.match(ln)
        if m:
            cur = [m.group(1), []]
            out.append(cur)
        elif cur is not None and ln.strip() and not ln.lstrip().startswith(";"):
            cur[1].append(ln)
    return out


def _version_one(lines, h, latch, fl, suffix=".own"):
    """The copy of the reverse loop of primal header h (None: not versioned)."""
    head = f"rev.{latch}"
    blocks = _blocks(lines)
    if not blocks or not lines[0].endswith(":") or \
            any(not ls or ls[-1].split()[0] not in _TERMINATORS for _, ls in blocks):
        return None                        # not a function body of whole blocks
    succ = {lab: _TARGET.findall(ls[-1]) for lab, ls in blocks}
    preds = {lab: [] for lab, _ in blocks}
    for lab, ts in succ.items():
        for t in ts:
            preds.setdefault(t, []).append(lab)
    back = f"redge.{h}.latch"
    if head not in succ or head not in succ.get(back, ()):
        return None
    body = {head}
    todo = [back]
    while todo:                            # the natural loop of the back edge back -> head
        b = todo.pop()
        if b not in body:
            body.add(b)
            todo.extend(preds.get(b, ()))
    defined = {m.group(1): lab for lab, ls in blocks for m in map(_DEF.match, ls) if m}
    inner = {v for v, lab in defined.items() if lab in body}
    # the entry: the block computing the flag, branching to the loop's head
    entry = defined.get(fl)
    if entry is None or entry in body:
        return None
    entry_body = dict(blocks)[entry]
    if entry_body[-1].strip() != f"br label %{head}":
        return None
    # labels and values share one namespace: the copy renames both
    def suffixed(name):
        return name[:-1] + suffix + '"' if name.startswith(('%"', '"')) else name + suffix
    ren = {v: suffixed(v) for v in inner} | {f"%{lab}": f"%{suffixed(lab)}" for lab in body}

    def rename(ln):
        return _NAME.sub(lambda m: ren.get(m.group(0), m.group(0)), ln)
    out = []
    for lab, ls in blocks:
        if lab not in body:
            new = []
            for ln in ls:
                uses = set(_NAME.findall(ln.split("=", 1)[1] if _DEF.match(ln) else ln)) & inner
                if uses and (not _is_phi(ln) or any(
                        v.strip() in inner and src not in body for v, src in _incoming(ln))):
                    return None            # a loop value used after the loop: not handled
                new.append(_phi_copies(ln, body, rename, suffixed) if uses or _is_phi(ln)
                           else ln)
            if lab == entry:              # (not the function's first block: that is rev.entry)
                new[-1] = f"  br i1 {fl}, label %{suffixed(head)}, label %{head}"
            out.append(f"{lab}:")
            out.extend(new)
    for lab, ls in blocks:                 # the original loop, in place
        if lab in body:
            out.append(f"{lab}:")
            out.extend(ls)
    for lab, ls in blocks:                 # the copy
        if lab in body:
            out.append(f"{suffixed(lab)}:")
            for ln in ls:
                ln = rename(ln)
                if ln.endswith(f"; own.{h}"):
                    ln = ln.replace("@__enzyme_cc_omp_add.", "@__enzyme_cc_omp_padd.")
                out.append(ln)
    return out


def _is_phi(ln):
    m = _DEF.match(ln)
    return m is not None and m.group(2) == "phi"


def _phi_copies(ln, body, rename, suffixed):
    """A phi after the loop: its incoming edges from the loop get their copies' twins."""
    if not _is_phi(ln):
        return ln
    extra = [f"[ {rename(v.strip())}, %{suffixed(lab)} ]" for v, lab in _incoming(ln)
             if lab in body]
    return ln + (", " + ", ".join(extra) if extra else "")


def _incoming(phi_line):
    """[(value, label)] of a phi line."""
    return re.findall(r"\[\s*([^,\]]+),\s*%([-\w.$]+|\"[^\"]*\")\s*\]", phi_line)
