"""Control-flow analyses the synthesis needs: dominators and which blocks lie on a cycle."""
from __future__ import annotations


def pred_edges(b):
    """b's predecessors once per edge into b, the entries a phi of b needs: a switch with two
    case values jumping to b is one predecessor (prepare.py keeps them unique) but two edges."""
    for p in b.preds:
        for _ in range(max(1, p.term.targets.count(b.label))):
            yield p


def doomed_blocks(fn) -> frozenset:
    """Labels of the blocks from which no `ret` is reachable: an abort, a throw and the code
    building its message (C++'s `throw std::domain_error("..." + std::to_string(v))` spans
    several blocks of invokes before `unreachable`), the cleanups ending in `resume`. The
    program never returns through them, so nothing there needs a derivative (Activity.doomed).
    A predecessor of a block that reaches a return reaches it too, so no such block is doomed.
    Kept per function object (its blocks do not change once parsed)."""
    memo = fn.__dict__.get("_doomed_blocks")
    if memo is None:
        live = {b.label for b in fn.blocks if b.term.op == "ret"}
        todo = [b for b in fn.blocks if b.label in live]
        while todo:
            for p in todo.pop().preds:
                if p.label not in live:
                    live.add(p.label)
                    todo.append(p)
        memo = fn.__dict__["_doomed_blocks"] = frozenset(
            b.label for b in fn.blocks if b.label not in live)
    return memo


def dominators(fn) -> dict[str, set[str]]:
    """Block label -> labels of the blocks dominating it (itself included). Iterative data flow."""
    labels = [b.label for b in fn.blocks]
    entry = labels[0]
    order = reverse_postorder(fn)
    dom = {lab: set(labels) for lab in labels}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in order:
            if b.label == entry:
                continue
            preds = [p.label for p in b.preds if p.label in dom]
            new = set.intersection(*(dom[p] for p in preds)) if preds else set()
            new = new | {b.label}
            if new != dom[b.label]:
                dom[b.label] = new
                changed = True
    return dom


def reverse_postorder(fn):
    seen, post = set(), []
    stack = [(fn.blocks[0], iter(fn.blocks[0].term.targets))]
    seen.add(fn.blocks[0].label)
    while stack:
        b, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            post.append(b)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            s = fn.block(nxt)
            stack.append((s, iter(s.term.targets)))
    return post[::-1]


def strongly_connected(nodes, successors) -> list[list]:
    """The strongly connected components of a graph (Tarjan, iterative), each a list of nodes:
    `nodes` to start from, in order; `successors(v)` the nodes v has edges to."""
    index, low, on, stack, out = {}, {}, set(), [], []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        work = [(root, iter(successors(root)))]
        while work:
            node, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(successors(w))))
                elif w in on:
                    low[node] = min(low[node], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == node:
                        break
                out.append(comp)
    return out


def cyclic_blocks(fn, skip_edge=None, within=None) -> set[str]:
    """Labels of blocks on some CFG cycle (non-trivial SCC or self loop).
    `skip_edge` (src, dst) is left out of the graph; `within`: the graph is these blocks only
    (cycles inside a loop's body, not through the loops around it)."""
    def succ(v):
        return [t for t in fn.block(v).term.targets
                if (v, t) != skip_edge and (within is None or t in within)]

    out = set()
    for comp in strongly_connected([b.label for b in fn.blocks
                                    if within is None or b.label in within], succ):
        if len(comp) > 1 or comp[0] in succ(comp[0]):
            out.update(comp)
    return out


def always_passes(fn, src: str, via) -> bool:
    """Does every path from block src to a return go through block via (a label, or a set of
    labels: through one of them)?"""
    via = {via} if isinstance(via, str) else via
    if src in via:
        return True
    seen, todo = {src}, [src]
    while todo:
        b = fn.block(todo.pop())
        if b.term.op == "ret":
            return False
        for t in b.term.targets:
            if t not in via and t not in seen:
                seen.add(t)
                todo.append(t)
    return True
