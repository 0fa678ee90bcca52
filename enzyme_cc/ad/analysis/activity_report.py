"""ENZYME_CC_PRINT_ACTIVITY / ENZYME_CC_PRINT_TYPE: what a reverse synthesis decided, on stderr."""
from __future__ import annotations

import os
import sys


def report(synth):
    """ENZYME_CC_PRINT_ACTIVITY=<function>|all: activity and how each primal reaches the
    reverse sweep, on stderr (like Enzyme's -enzyme-print-activity)."""
    name = synth.fn.name[1:].strip('"')
    want_types = os.environ.get("ENZYME_CC_PRINT_TYPE", "")
    if want_types and want_types in ("all", name):
        lines = [f"enzyme-cc: type analysis of '{name}' (byte offset: kind per memory object)"]
        objs = set(synth.types.facts) | set(synth.types.uniform)
        for o in sorted(objs):
            facts = ", ".join(f"{k}: {v}" for k, v in sorted(synth.types.facts.get(o, {}).items()))
            uni = ", ".join(sorted(synth.types.uniform.get(o, set())))
            lines.append(f"  {o}: {{{facts}}}" + (f" elements: {uni}" if uni else ""))
        for p_, h in synth.hints.items():
            lines.append(f"  argument {p_} (from the caller): {h}")
        print("\n".join(lines), file=sys.stderr)
    want = os.environ.get("ENZYME_CC_PRINT_ACTIVITY", "")
    if not want or (want != "all" and want != name):
        return
    out = [f"enzyme-cc: activity of '{name}' ({synth.mode} mode), arguments "
           + ", ".join(f"{p.name}:{a!r}" if hasattr(a, "fields") else f"{p.name}:{a}"
                       for p, a in zip(synth.fn.params, synth.arg_act))]   # (DupFields' paths)
    for inst in synth.fn.insts():
        if not inst.name:
            continue
        tags = []
        if inst.name in synth.act.active:
            tags.append("active" + (f" (integer copy of {synth.act.punned[inst.name]})"
                                    if inst.name in synth.act.punned else ""))
        if inst.name in synth.act.shadowed:
            tags.append("shadowed")
        out.append(f"  {inst.name} = {inst.op} {inst.ty}: {', '.join(tags) or 'inactive'}")
    for lab, plan in getattr(synth, "plan", {}).items():
        for (kind, v), how in plan:
            if how in ("tape", "slot"):
                out.append(f"  reverse of {lab} reads {kind}:{v} from a {how}")
            elif how == "hoist":
                out.append(f"  reverse of {lab} reads {kind}:{v} from a tape entry pushed "
                           f"once per loop {synth.hoist_of[(lab, (kind, v))]}")
            elif how == "iter":
                out.append(f"  reverse of {lab} reads {kind}:{v} from a tape entry pushed "
                           f"once per iteration by latch {synth.iter_of[(lab, (kind, v))]}")
    for inst in synth.fn.insts():
        if id(inst) in getattr(synth, "accumulators", {}):
            out.append(f"  adjoint of {inst.name} accumulated in a register over loop "
                       f"{synth.accumulators[id(inst)][0]}")
    print("\n".join(out), file=sys.stderr)
