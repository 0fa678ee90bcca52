"""OpenMP reverse mode: gathered loads tracked by their index, once per index, not per array.

A team's forward sweep records where each load's adjoint will be added (openmp_ranges). An
element loop of a hydrodynamics code gathers its corners' coordinates and velocities through
one index array: `x[nl[8*e+c]]`, `y[...]`, `z[...]`, `xd[...]`, ... are six loads per corner,
each recorded in its array's two ranges (openmp_classes.track): four integers per array live
through the loop, more than x86-64 has registers, and a compare and a branch per load. LULESH's
2-thread OpenMP gradient ran 6 % slower with two ranges per gathered array than with one.

Here a gathered load `gep T, B, I` whose index is made from a value X read from memory (I is
X or its extension, or that plus a value F fixed in the loop, or times a constant: split_index)
records X, once per value and block, in the two ranges of its index class (one per index array,
the underlying object X is read from, and outermost loop L around the load). At L's exits each
index range [x0, x1] becomes [B' + x0*stride, B' + x1*stride + n) in the load's address class,
where B' is B's shadow moved by F's offset and by a constant field offset after the element (n:
the load's size), and the index ranges start empty again. A base fixed in L reaches the exits
through a phi; one that changes inside L (reloaded every iteration) is kept in a slot, checked
once per block: a different base first turns the index ranges into addresses from the previous
one. Every path out of L passes an exit, so a thread's class ranges hold every address its loads
there touched before its function returns; an exit block also entered from outside L finds the
ranges empty on that edge (emptied at L's last exit, and filled only inside L), and a null base.

A short loop over the components of node data kept in one block (`u[d * nn + nl[...]]`, d =
0..2, tracked one class per iteration by openmp_affine) reads from rows `u + nl[...]` fixed in
it: each row's index goes into its index class where the short loop is entered, and each
iteration's addresses are made at L's exits (_rows).

Indices are compared in a biased form (the sign bit flipped), so that unsigned order is the
index's signed order: the runtime's ranges compare unsigned.
"""
from __future__ import annotations

from types import SimpleNamespace

from enzyme_cc.ir.lexer import type_size
from ..structure.cfg import pred_edges
from ..structure.type_layout import underlying
from .openmp_affine import (_affine, at_iteration, gathers, hoisted, iteration_classes, plan as
                            hoisted_plan, range_check)
from .openmp_classes import load_class, pair, shared_in

MAX_INDEX_CLASSES = 4       # index classes per function (4 integers each live through loops)


def plan(synth) -> dict:
    """{"loads": {id(load): (index class j, tracked value, slot m, B, addend, tail, stride,
    whether m is kept in memory)}, "exits": {loop header: [(m, j, k, stride, n, tail, (B,
    addend) fixed in the loop or None, iteration or None)]}, "count": index classes,
    "rows": {short loop's preheader: [(j, tracked value)]}, "covered": {id(load): ...}} of a
    team derivative (cached). A tracked value or an addend is (value, its type, the extension
    making it i64 or None); tail: a constant byte offset after the indexed element (a field of
    a record); an iteration (short loop's header, J, element size, i): see _rows."""
    cache = synth.__dict__.get("_omp_index")
    if cache is not None:
        return cache
    cache = synth._omp_index = {"loads": {}, "exits": {}, "count": 0, "rows": {},
                                "covered": {}}
    keys, slots = {}, {}
    for b in synth.fn.blocks:
        for inst in b.insts:
            if inst.op != "load" or inst.name not in synth.act.active or \
                    not shared_in(synth, inst.ops[0].value) or hoisted(synth, inst) or \
                    not gathers(synth, inst):
                continue
            found = _eligible(synth, inst.ops[0].value, inst.block.label)
            if found is None:
                continue
            lp, tracked, key, stride, base, addend, tail = found
            j = _index_class(keys, lp, key)
            if j is None:
                continue
            k = load_class(synth, inst.ops[0].value)
            n = max(type_size(inst.ty, synth.module.named_types), 1)
            fixed = (base, addend) if _fixed_in(synth, lp, base) and \
                (addend is None or _fixed_in(synth, lp, addend[0])) else None
            m = _slot(cache, slots, lp, (j, k, stride, n, tail, fixed, None))
            cache["loads"][id(inst)] = (j, tracked, m, base, addend, tail, stride, fixed is None)
    _rows(synth, cache, keys, slots)
    cache["count"] = len(keys)
    return cache


def _index_class(keys, lp, key):
    """The index class of index array `key` in loop lp (None: no class left)."""
    if (lp.header, key) not in keys:
        if len(keys) == MAX_INDEX_CLASSES:
            return None
        keys[(lp.header, key)] = len(keys)
    return keys[(lp.header, key)]


def _slot(cache, slots, lp, slot) -> int:
    """The number of slot (an address class the index ranges go into at lp's exits)."""
    if slot not in slots:
        slots[slot] = len(slots)
        cache["exits"].setdefault(lp.header, []).append((slots[slot],) + slot)
    return slots[slot]


def _rows(synth, cache, keys, slots):
    """Loads tracked one class per iteration of a short loop (openmp_affine.iteration_classes)
    whose address is `gep T, R, J`, R a gathered row (`u + nl[8*e+c]`, eligible as a load's
    address is) fixed in the short loop and J affine in it (`d * nn`): R's index goes into its
    index class once, where the short loop is entered, and at the exits of R's loop each
    iteration i becomes the addresses from B moved by J's value at i, in that iteration's
    class. A hydrodynamics element's velocity components (d = 0..2 over 8 corners) were 24
    two-range tracks per element; their corners' indices are tracked for the coordinates
    already. J's inputs other than the short loop's phis must be fixed in R's loop."""
    for pre, loads in hoisted_plan(synth).items():
        for inst, inner, chain in loads:
            ks = iteration_classes(synth, inst)
            g = synth.fn.defs.get(inst.ops[0].value)
            if not ks or not _gep2(g) or g.ops[1].ty != "i64" or g is not chain[-1] or \
                    g.ops[1].value not in {d.name for d in chain}:
                continue
            found = _eligible(synth, g.ops[0].value, pre)
            if found is None:
                continue
            lp, tracked, key, stride, base, addend, tail = found
            row = synth.fn.defs.get(g.ops[0].value)
            if inner.header not in lp.blocks or row in chain or \
                    not _fixed_in(synth, lp, base) or \
                    addend is not None and not _fixed_in(synth, lp, addend[0]) or \
                    not all(_fixed_in(synth, lp, v) for v in _inputs(synth, inner, chain[:-1],
                                                                     g.ops[1].value)):
                continue
            j = _index_class(keys, lp, key)
            if j is None:
                continue
            n = max(type_size(inst.ty, synth.module.named_types), 1)
            size = type_size(g.src_ty, synth.module.named_types)
            for i, k in enumerate(ks):
                _slot(cache, slots, lp, (j, k, stride, n, tail, (base, addend),
                                         (inner.header, g.ops[1].value, size, i)))
            rows = cache["rows"].setdefault(pre, [])
            if (j, tracked) not in rows and not _recorded_before(synth, cache, j, tracked, pre):
                rows.append((j, tracked))
            cache["covered"][id(inst)] = (j, tracked, base, addend, tail, stride,
                                          g.ops[1].value, size)


def _recorded_before(synth, cache, j, tracked, pre) -> bool:
    """Index class j already holds the row's index when block pre runs: a gather of the same
    class, in a block dominating pre (so in the same iteration of their loop), records an
    index loaded from the same address, of memory nothing in the gradient writes (so the same
    value): hydro's rows read again the connectivity entries its coordinate gathers read."""
    fn = synth.fn
    mine = fn.defs.get(tracked[0])
    if getattr(mine, "op", None) != "load":
        return False
    for inst in (i for b in fn.blocks for i in b.insts):
        entry = cache["loads"].get(id(inst))
        if entry is None or entry[0] != j or inst.block.label not in synth.dom[pre]:
            continue
        v, ty, ext = entry[1]
        d = fn.defs.get(v)
        if getattr(d, "op", None) == "load" and (ty, ext) == tracked[1:] and \
                d.ops[0].value == mine.ops[0].value and \
                synth.fixed_memory(mine.ops[0].value):
            return True
    return False


def _inputs(synth, inner, chain, v):
    """The values J = v (computed by chain in loop inner) takes from outside inner: its
    operands defined outside, and the starts of inner's phis it uses."""
    out, seen = [], {d.name for d in chain}
    for u in [v] + [o.value for d in chain for o in d.ops]:
        a = synth.affine.get(u)
        if a is not None and a[0] is inner:
            out.append(a[1])
        elif u.startswith("%") and u not in seen:
            out.append(u)
    return out


def _offset_at(synth, lp, b, it, tag, phis, lines) -> str:
    """Exit b of lp: the i64 value of J at iteration i of the short loop (it = (its header,
    J, element size, i)), recomputed from its inputs (fixed in lp: through phis of b, 0 on
    edges from outside lp, where no load it serves ran)."""
    header, v, _, i = it
    inner = synth.loops[header]
    chain = []
    _affine(synth, inner, v, chain, set())
    types = {o.value: o.ty for d in chain for o in d.ops}
    types.update({a[1]: types[u] for u, a in ((u, synth.affine.get(u)) for u in list(types))
                  if a is not None and a[0] is inner})     # (a phi's start has its type)

    def prim(u):
        name = f"%ad.tixi.{tag}.{len(phis)}"
        phis.append(_exit_phi(synth, lp, b, name, types[u], synth.r(u), "0"))
        return name
    ctx = SimpleNamespace(synth=synth, tmp=synth.tmp, emit=lines.append)
    return at_iteration(ctx, inner, chain, str(i), prim)(v)


def _fixed_in(synth, lp, v) -> bool:
    """v is a constant, or defined before lp in a block dominating its header (or is a
    parameter): one value while lp runs, available at its exits along the edges leaving it."""
    if not v.startswith("%"):
        return True
    d = synth.fn.defs.get(v)
    block = getattr(getattr(d, "block", None), "label", None)
    return block is None or block not in lp.blocks and block in synth.dom[lp.header]


def _eligible(synth, ptr, label):
    """(loop L, tracked value, index array, stride, B, addend, tail) for an address ptr = `gep
    T, B, I` (or a constant offset from it, the tail) used in block label, with B shadowed and
    I made from a value X read from memory (split_index: where both operands of its add are,
    the one not fixed in L is X), in a loop; L is the outermost loop around it whose exits can
    take code after their phis. None otherwise."""
    fn = synth.fn
    g, tail = fn.defs.get(ptr), 0
    if _gep2(g) and not g.ops[1].value.startswith("%") and _gep2(fn.defs.get(g.ops[0].value)):
        try:                            # `gep i8 (gep double, B, I), 8`: a record's field
            tail = int(g.ops[1].value) * type_size(g.src_ty, synth.module.named_types)
        except ValueError:
            return None
        g = fn.defs.get(g.ops[0].value)
    if not _gep2(g) or g.ops[1].ty != "i64" or not g.ops[1].value.startswith("%"):
        return None
    base = g.ops[0].value
    stride = type_size(g.src_ty, synth.module.named_types)
    splits = split_index(fn, g.ops[1].value)
    if not base.startswith("%") or base not in synth.act.shadowed or stride <= 0 or \
            not splits:
        return None
    around = [lp for lp in synth.loops.values() if label in lp.blocks and
              _plain_exits(synth, lp)]
    if not around:
        return None
    lp = max(around, key=lambda lp: len(lp.blocks))
    # the value read in the loop is the one tracked, an addend fixed in it goes to the base
    tracked, addend, loaded, scale = next((t for t in splits if t[1] is None or
                                           _fixed_in(synth, lp, t[1][0])), splits[0])
    return lp, _canonical(fn, tracked), underlying(fn, loaded.ops[0].value), stride * scale, \
        base, addend, tail


def _canonical(fn, tracked):
    """A tracked value that is an extension of a load, named by the load and the extension:
    `x[nl[i]]` indexes with `sext %X` and `x[n + nl[i]]` with `sext (%n + %X)`, both tracking
    X extended, so the block tracks it once."""
    v, ty, ext = tracked
    d = fn.defs.get(v) if ext is None and v.startswith("%") else None
    if getattr(d, "op", None) in ("sext", "zext"):
        return d.ops[0].value, d.ops[0].ty, d.op
    return tracked


def _gep2(d) -> bool:
    """d is a GEP with one index over a known element type."""
    return getattr(d, "op", None) == "getelementptr" and len(d.ops) == 2 and \
        d.src_ty is not None


def split_index(fn, index) -> list:
    """The ways [(tracked, addend, the load of X, scale)] a GEP index is made from a value X
    read from memory: X itself or its extension (tracked: the index); an extension of X * C,
    C a constant (tracked: X extended, scale C); an extension of X + F (tracked: X extended,
    addend F extended: the index is their sum); ext(X) + F in 64 bits (tracked: ext(X), addend
    F). The mul or add must not wrap in the extension's sense; either operand of an add may be
    X where both are read from memory."""
    d = fn.defs.get(index)
    op = getattr(d, "op", None)
    if op == "load" or op in ("sext", "zext") and _loaded(fn, d.ops[0].value):
        return [((index, "i64", None), None, _loaded(fn, index), 1)]
    out = []
    if op in ("sext", "zext"):
        inner = fn.defs.get(d.ops[0].value)
        if getattr(inner, "op", None) in ("add", "mul") and \
                ("nsw" if op == "sext" else "nuw") in inner.flags:
            for x, f in ((0, 1), (1, 0)):
                v, c = inner.ops[x].value, inner.ops[f].value
                if not v.startswith("%") or getattr(fn.defs.get(v), "op", None) != "load":
                    continue
                if inner.op == "add":
                    out.append(((v, inner.ty, op), (c, inner.ty, op), fn.defs[v], 1))
                elif c.lstrip("-").isdigit() and int(c) > 0:
                    out.append(((v, inner.ty, op), None, fn.defs[v], int(c)))
    elif op == "add":
        for x, f in ((0, 1), (1, 0)):
            load = _loaded(fn, d.ops[x].value)
            if load is not None:
                out.append(((d.ops[x].value, "i64", None), (d.ops[f].value, "i64", None), load, 1))
    return out


def _loaded(fn, v):
    """The load v is (or v's extension of), else None."""
    d = fn.defs.get(v) if v.startswith("%") else None
    if getattr(d, "op", None) in ("sext", "zext"):
        d = fn.defs.get(d.ops[0].value)
    return d if getattr(d, "op", None) == "load" else None


def _plain_exits(synth, lp) -> bool:
    """Code can go after the phis of each of lp's exit blocks (no landing pad there)."""
    for e in lp.exits:
        first = next((i for i in synth.fn.block(e).insts if i.op != "phi"), None)
        if getattr(first, "op", None) == "landingpad":
            return False
    return True


def allocas(synth) -> list[str]:
    """Prologue: each index class's two ranges, empty, and the slots of bases not fixed in their
    loop, null, in locals (SROA makes them registers)."""
    p, out = plan(synth), []
    for j in range(p["count"]):
        out += [f"%ad.tix.{e}{j}.{r} = alloca i64" for r in (0, 1) for e in "lh"] + _empty(j)
    for m in sorted(c[0] for conv in p["exits"].values() for c in conv if c[6] is None):
        out += [f"%ad.tixs.{m} = alloca ptr", f"store ptr null, ptr %ad.tixs.{m}"]
    return out


def _empty(j: int) -> list[str]:
    """Index class j's two ranges made empty ([-1, 0))."""
    return [f"store i64 {v}, ptr %ad.tix.{e}{j}.{r}"
            for r in (0, 1) for e, v in (("l", -1), ("h", 0))]


def _ranges(j: int) -> str:
    return ", ".join(f"ptr %ad.tix.l{j}.{r}, ptr %ad.tix.h{j}.{r}" for r in (0, 1))


def _i64(ctx, val) -> str:
    """The sweep's i64 of a tracked value or addend (value, type, extension)."""
    v, ty, ext = val
    v = ctx.synth.r(v) if v.startswith("%") else v
    if ext is None:
        return v
    out = ctx.tmp("tx")
    ctx.emit(f"{out} = {ext} {ty} {v} to i64")
    return out


def _effective(ctx, base, addend, stride, tail) -> str:
    """The shadow of B moved by the addend's offset and the tail: the address of index 0 of
    the tracked value (emitted in the forward sweep)."""
    out = ctx.s(base)
    if addend is not None:
        f, off, moved = _i64(ctx, addend), ctx.tmp("to"), ctx.tmp("tb")
        ctx.emit(f"{off} = mul i64 {f}, {stride}")
        ctx.emit(f"{moved} = getelementptr i8, ptr {out}, i64 {off}")
        out = moved
    if tail:
        moved = ctx.tmp("tb")
        ctx.emit(f"{moved} = getelementptr i8, ptr {out}, i64 {tail}")
        out = moved
    return out


def track(ctx, inst) -> bool:
    """Forward sweep at load inst: its index into its index class's ranges (once per block and
    index value), and where its base is not fixed in the loop, the base's shadow into its slot
    (once per block and base, unless another base of the slot came between): where the slot
    held another base, the index ranges are first recorded as addresses from that one. False
    where inst is not tracked by its index."""
    synth = ctx.synth
    entry = plan(synth)["loads"].get(id(inst))
    if entry is None:
        return False
    j, tracked, m, base, addend, tail, stride, in_memory = entry
    done = ctx.__dict__.setdefault("_omp_index_done", {})     # (a context per block)
    if tracked not in done:
        done[tracked] = _i64(ctx, tracked)
        ctx.emit(f"call void @__enzyme_cc_omp_track_index({_ranges(j)}, i64 {done[tracked]})")
    ptr = inst.ops[0].value
    if range_check():           # the address is the base's shadow plus the index's offset
        ctx.emit(f"call void @__enzyme_cc_omp_index_assert(ptr {ctx.s(ptr)}, "
                 f"ptr {_effective(ctx, base, addend, stride, tail)}, i64 {done[tracked]}, "
                 f"i64 {stride})")
    if not in_memory:           # a base fixed in the loop: its exits take it (at_exit)
        return True
    last = ctx.__dict__.setdefault("_omp_index_base", {})
    if last.get(m) != (base, addend):      # (the block's previous check of m had another)
        last[m] = (base, addend)
        n = max(type_size(inst.ty, synth.module.named_types), 1)
        ctx.emit(f"call void @__enzyme_cc_omp_index_base(ptr %ad.tixs.{m}, "
                 f"ptr {_effective(ctx, base, addend, stride, tail)}, "
                 f"{pair(load_class(synth, ptr))}, {_ranges(j)}, i64 {stride}, i64 {n})")
    return True


def covered(synth) -> dict:
    """The loads (by id) tracked one class per iteration whose rows are tracked by their index
    (_rows): openmp_affine does not track them."""
    return plan(synth)["covered"]


def track_rows(ctx, b):
    """End of block b, the preheader of a short loop, in the forward sweep: the indices of the
    rows its covered loads read from, into their index classes (once per block and value)."""
    done = ctx.__dict__.setdefault("_omp_index_done", {})
    for j, tracked in plan(ctx.synth)["rows"].get(b.label, ()):
        if tracked not in done:
            done[tracked] = _i64(ctx, tracked)
            ctx.emit(f"call void @__enzyme_cc_omp_track_index({_ranges(j)}, "
                     f"i64 {done[tracked]})")


def check_covered(ctx, inst) -> bool:
    """ENZYME_CC_OMP_RANGE_CHECK: at a covered load, its shadow address is its row's base moved
    by J and by the index its row's preheader tracked (False: inst is not covered)."""
    c = plan(ctx.synth)["covered"].get(id(inst))
    if c is None:
        return False
    j, tracked, base, addend, tail, stride, v, size = c
    at, off, moved = _effective(ctx, base, addend, stride, tail), ctx.tmp("tj"), ctx.tmp("tb")
    ctx.emit(f"{off} = mul i64 {ctx.synth.r(v)}, {size}")
    ctx.emit(f"{moved} = getelementptr i8, ptr {at}, i64 {off}")
    ctx.emit(f"call void @__enzyme_cc_omp_index_assert(ptr {ctx.s(inst.ops[0].value)}, "
             f"ptr {moved}, i64 {_i64(ctx, tracked)}, i64 {stride})")
    return True


def at_exit(synth, b) -> tuple[list[str], list[str]]:
    """(phis, lines after the phis) of block b in the forward sweep: for each loop b is an exit
    of, its index ranges into the address classes of the loads they served, with each slot's
    base (a base fixed in the loop, and its addend, through phis: null and 0 on edges from
    outside the loop, where the ranges are empty), then the ranges and slots emptied."""
    phis, lines = [], []
    for header, conv in sorted(plan(synth)["exits"].items()):
        lp = synth.loops[header]
        if b.label not in lp.exits:
            continue
        tag = f"{synth.r(b.label)[1:]}"
        for m, j, k, stride, n, tail, fixed, it in conv:
            base = f"%ad.tixb.{tag}.{m}"
            if fixed is None:
                lines += [f"{base} = load ptr, ptr %ad.tixs.{m}, align 8",
                          f"store ptr null, ptr %ad.tixs.{m}"]
            else:
                at, addend = fixed
                phis.append(_exit_phi(synth, lp, b, f"%ad.tixp.{tag}.{m}", "ptr",
                                      synth.sname(at), "null"))
                if addend is None:
                    base = f"%ad.tixp.{tag}.{m}"
                else:
                    f, ty, ext = addend
                    if f.startswith("%"):
                        phis.append(_exit_phi(synth, lp, b, f"%ad.tixf.{tag}.{m}", ty,
                                              synth.r(f), "0"))
                        f = f"%ad.tixf.{tag}.{m}"
                    if ext is not None:
                        lines.append(f"%ad.tixe.{tag}.{m} = {ext} {ty} {f} to i64")
                        f = f"%ad.tixe.{tag}.{m}"
                    lines += [f"%ad.tixo.{tag}.{m} = mul i64 {f}, {stride}",
                              f"{base} = getelementptr i8, ptr %ad.tixp.{tag}.{m}, "
                              f"i64 %ad.tixo.{tag}.{m}"]
                if tail:
                    lines.append(f"%ad.tixt.{tag}.{m} = getelementptr i8, ptr {base}, i64 {tail}")
                    base = f"%ad.tixt.{tag}.{m}"
                if it is not None:          # a row's iteration: moved by J there
                    at = _offset_at(synth, lp, b, it, f"{tag}.{m}", phis, lines)
                    lines += [f"%ad.tixj.{tag}.{m} = mul i64 {at}, {it[2]}",
                              f"%ad.tixr.{tag}.{m} = getelementptr i8, ptr {base}, "
                              f"i64 %ad.tixj.{tag}.{m}"]
                    base = f"%ad.tixr.{tag}.{m}"
            lines.append(f"call void @__enzyme_cc_omp_index_span({pair(k)}, {_ranges(j)}, "
                         f"ptr {base}, i64 {stride}, i64 {n})")
        for j in sorted({c[1] for c in conv}):
            lines += _empty(j)
    return phis, lines


def _exit_phi(synth, lp, b, name, ty, inside, outside) -> str:
    """A phi of exit block b: `inside` on the edges from lp, `outside` on the others."""
    inc = ", ".join(f"[ {inside if p.label in lp.blocks else outside}, {synth.r(p.label)} ]"
                    for p in pred_edges(b))
    return f"{name} = phi {ty} {inc}"
