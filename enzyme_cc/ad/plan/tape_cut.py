"""Which arithmetic values of a loop body to tape so that the reverse sweep recomputes the rest
from the fewest tape bytes: a minimum vertex cut (ValuePlan._cheaper_taped).

The value plan tapes what it cannot recompute, a load of memory that changes later (a leaf), and
recomputes arithmetic from the leaves. Where several leaves feed a few values that everything
the reverse needs is made of, taping those values is cheaper: a hydrodynamics element loop sums
its 8 corner velocities into 4 hourglass modes per component, and the reverse needs the modes
(or combinations of them), not the velocities: 4 doubles per component instead of 8.

The group of a value: its dependencies that the reverse would recompute (arithmetic of the same
loops, not hoisted out of them) down to the leaves it would tape, and, going up from every
member, the users of the same kind with their own dependencies. In it, taping a member costs its
size; a leaf must be taped unless every way from it to a value the reverse needs passes a taped
member. The cheapest such set is a minimum cut between the leaves and the needed values, each
member split into an in and an out vertex joined by an edge of its size (max flow, Edmonds-Karp;
on a tie the cut nearest the leaves, the plan's choice without it).

Any answer is a correct plan: a taped member holds its value, a recomputed one asks for its
dependencies, and leaves are taped whenever they are asked for; the cut only decides which
members are taped. Groups larger than MAX_GROUP are left to the per-value rule."""
from __future__ import annotations

from collections import deque

from enzyme_cc.ir.lexer import type_size
from enzyme_cc.ir.model import Inst
from ..structure import exit_count
from .plan import hoist_loop

MAX_GROUP = 160             # members of a group (inner values and leaves) worth a flow
_INF = 1 << 60


def cut_members(plan, key, user: str) -> dict | None:
    """{member key: taped?} for the recomputed members of key's group in the reverse of block
    `user`, or None where the group has nothing to cut (no leaf) or is too large. Judged once
    per group, for the first user that asks: a value is pushed once for all the reverse blocks
    that read it, and any answer is a correct plan."""
    groups = plan.__dict__.setdefault("_cut_groups", {})
    if key not in groups:
        large = plan.__dict__.setdefault("_cut_large", set())
        groups[key] = None if key in large else _group_cut(plan, key, user, groups, large)
    return groups[key]


def _group_cut(plan, key, user, groups, large):
    """cut_members of a group not judged yet; a group found larger than MAX_GROUP leaves its
    members seen so far in `large`, and a later walk that meets one of them stops there: the
    group of any member is the same one (the walk goes both ways along its edges; for another
    reverse block it may differ a little, and any answer is a correct plan). Walking a large
    group again from each member, or up to the size limit from each member not yet seen, cost
    LULESH's differentiate stage more than half its time, then a fifth of the OpenMP build's
    (117,266 members judged; 10,534 now, the derivatives byte-identical)."""
    loops = _loops_of(plan, key)
    inner, leaves, sinks = {}, set(), set()
    users, needed = plan.value_users(), plan.needed_keys()
    todo, seen, kinds = [key], set(), {}

    def kind_of(k):                     # (a user is asked before it is walked, and again then)
        if k not in kinds:
            kinds[k] = _member(plan, k, user, loops)
        return kinds[k]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        if len(seen) > MAX_GROUP or k in large:     # (k's group is this one)
            large.update(inner)
            large.update(leaves)
            return None
        kind = kind_of(k)
        if kind == "free":
            continue
        if kind == "leaf":
            leaves.add(k)
        else:
            deps = [d for d in plan.deps(k, user) if d[0] == "p" and d[1].startswith("%")]
            inner[k] = deps
            todo.extend(deps)
        if k in needed:
            sinks.add(k)
        for u in users.get(k[1], ()):
            uk = ("p", u.name)
            if u.name is None or uk in seen:
                continue
            if u.op == "phi":
                sinks.add(k)        # (a phi may be recomputed as a select of its inputs)
            elif kind_of(uk) == "inner":
                todo.append(uk)
            elif plan._recomputable(uk, user):
                sinks.add(k)        # recomputed from k elsewhere: k must be available
    out = None
    if leaves and key in inner:
        taped = _min_cut(plan, inner, leaves, sinks)
        out = {k: k in taped for k in inner}
    for k in inner:
        groups.setdefault(k, out)
    return out


def _loops_of(plan, key) -> frozenset:
    """The headers of the loops around key's definition (per block, made once)."""
    blk = plan.def_block(key)
    memo = plan.__dict__.setdefault("_loops_around", {})
    if blk not in memo:
        memo[blk] = frozenset(h for h, lp in plan.loops.items() if blk in lp.blocks)
    return memo[blk]


def _member(plan, k, user, loops):
    """How k takes part in the group: "inner" (arithmetic recomputed, of the same loops,
    taped at a cost), "leaf" (taped per iteration where asked for) or "free" (what the group
    does not judge: a parameter, a value of a block that runs once or of other loops, a phi,
    a reloaded load, a value recomputed from the loop's counter, a leaf taped once per loop;
    whatever it costs, it costs that with any cut)."""
    blk = plan.def_block(k)
    d = plan.fn.defs.get(k[1])
    if blk is None or not isinstance(d, Inst):
        return "free"
    if _loops_of(plan, k) != loops or not plan.would_tape(blk, user) or d.op == "phi":
        return "free"           # (a phi's plan asks for its inputs' own: not judged here)
    if plan._recomputable(k, user):
        if d.op == "load" or k[1] in plan.affine or \
                exit_count.exit_value(plan, k[1], user) is not None:
            return "free"       # (reloaded, or recomputed from the loop's counter)
        return "inner"
    if plan.classify(k, user) != "tape" or hoist_loop(plan, k, user) is not None:
        return "free"           # (taped once per loop, not per iteration)
    return "leaf"


def _min_cut(plan, inner, leaves, sinks) -> set:
    """The members of the minimum cut (see the module docstring), nearest the leaves."""
    cap: dict = {}

    def edge(a, b, c):
        cap.setdefault(a, {})[b] = cap.get(a, {}).get(b, 0) + c
        cap.setdefault(b, {}).setdefault(a, 0)

    for k in list(inner) + list(leaves):
        edge(("in", k), ("out", k), type_size(plan._key_type(k), plan.module.named_types) or 8)
    for k, deps in inner.items():
        for d in deps:
            if d in inner or d in leaves:
                edge(("out", d), ("in", k), _INF)
    for k in leaves:
        edge("S", ("in", k), _INF)
    for k in sinks:
        edge(("out", k), "T", _INF)
    while True:                         # augmenting paths, shortest first
        prev, q = {"S": None}, deque(["S"])
        while q and "T" not in prev:
            a = q.popleft()
            for b, c in cap[a].items():
                if c > 0 and b not in prev:
                    prev[b] = a
                    q.append(b)
        if "T" not in prev:
            break
        path, b = [], "T"
        while prev[b] is not None:
            path.append((prev[b], b))
            b = prev[b]
        f = min(cap[a][b] for a, b in path)
        for a, b in path:
            cap[a][b] -= f
            cap[b][a] += f
    reach = set(prev)                   # (the last search: what the source still reaches)
    return {k for k in list(inner) + list(leaves)
            if ("in", k) in reach and ("out", k) not in reach}
