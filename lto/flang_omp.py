"""flang's OpenMP forks in the shapes clang writes: capture records unpacked into the arguments
clang would pass, and the `if` clause's fork as a team of one thread.

clang passes a parallel region's captured variables to `__kmpc_fork_call` one by one; flang
(its OpenMPIRBuilder) stores their addresses into one local record and passes the record's
address, which the outlined function reads the addresses back from. The AD core sees each of
clang's arguments with its own activity, but flang's record as one piece of memory: an
`enzyme_const` array or scalar captured beside an active one was "a pointer without a shadow
stored into memory that has one", and refused. This merge-stage pass rewrites each such fork
the way clang writes it: the stored addresses become the fork's arguments and the outlined
function's parameters, where its loads from the record were.

Only the plain shape is rewritten: a record of pointers that the calling function only fills
(one store per field, before the fork in its block) and hands to the fork, read by an outlined
function called from that fork alone through field loads only. Anything else stays as it is.
"""
from __future__ import annotations

import re

from enzyme_cc.ad.structure.type_layout import decompose
from enzyme_cc.ir.model import parse_module

_FORK = "@__kmpc_fork_call("
_RECORD = re.compile(r"alloca \{ ptr(?:\s*,\s*ptr)*\s*\}")


def unpack_capture_records(text: str) -> str:
    if "..omp_par" not in text or _FORK not in text:
        return text
    module = parse_module(text)
    lines = module._lines
    edits: dict[int, str | None] = {}
    for name, (lo, hi) in module._bodies.items():
        if not any(_FORK in x for x in lines[lo:hi]):
            continue
        fn = module.function(name)
        for inst in fn.insts():
            if inst.op == "call" and inst.callee == _FORK[:-1] and len(inst.ops) == 4:
                plan = _plan(module, fn, inst)
                if plan is not None:
                    edits.update(plan)
    if not edits:
        return text
    out = [edits.get(k, line) for k, line in enumerate(lines)]
    return "\n".join(line for line in out if line is not None)


def _plan(module, fn, fork) -> dict | None:
    """The line edits that unpack the record of this fork, or None where its shape is not the
    plain one (module docstring)."""
    rec, outlined = fork.ops[3].value, fork.ops[2].value
    alloca = fn.defs.get(rec)
    if getattr(alloca, "op", None) != "alloca" or not _RECORD.search(str(alloca)) or \
            not outlined.startswith("@") or outlined not in module._bodies or \
            fork.ops[1].value != "1":
        return None
    fields = str(alloca).count("ptr")
    # the caller: one store of an address per field, in the fork's block before it
    stored, dead = {}, [alloca.line]
    block, uses = fork.block.insts, fn.users()
    for inst in fn.insts():
        if inst is fork or inst is alloca or rec not in inst.locals_used():
            continue
        if inst.op == "call" and (inst.callee or "").startswith("@llvm.lifetime."):
            dead.append(inst.line)
        elif inst.op == "getelementptr" and inst.ops[0].value == rec:
            if not all(u.op == "store" and u.ops[1].value == inst.name and
                       inst.name not in u.ops[0].value for u in uses.get(inst.name, [])):
                return None
            dead.append(inst.line)
        elif not (inst.op == "store" and inst.ops[1].value == rec and rec not in inst.ops[0].value):
            return None
    for inst in fn.insts():
        base, off = decompose(module, fn, inst.ops[1].value) if inst.op == "store" else (None, 0)
        if base == rec:
            if inst.ops[0].ty != "ptr" or off is None or off % 8 or off in stored or \
                    inst not in block or block.index(inst) > block.index(fork):
                return None
            stored[off], dead = inst.ops[0].value, dead + [inst.line]
    if sorted(stored) != [8 * k for k in range(fields)]:
        return None
    # the outlined function: called from this fork alone, reading the record by field loads
    callee = module.function(outlined)
    if len(callee.params) != 3 or sum(line.count(outlined) for line in module._lines) != 2:
        return None
    param = callee.params[2].name
    loads, gone, uses = {}, [], callee.users()
    for inst in callee.insts():
        if param not in inst.locals_used():
            continue
        if inst.op == "getelementptr" and inst.ops[0].value == param:
            if not all(u.op == "load" and u.ty == "ptr" for u in uses.get(inst.name, [])):
                return None
            gone.append(inst.line)
        elif not (inst.op == "load" and inst.ty == "ptr"):
            return None
    for inst in callee.insts():
        base, off = decompose(module, callee, inst.ops[0].value) if inst.op == "load" \
            else (None, 0)
        if base == param:
            if off not in stored:
                return None
            loads[inst.line] = (inst.name, off)
    edits: dict[int, str | None] = {}
    for f, insts in ((fn, dead), (callee, gone)):
        for k in insts:
            inst = next(i for i in f.insts() if i.line == k)
            if inst.line_end != inst.line:
                return None
            # (a value's name stays defined: numbered values must stay in sequence)
            edits[k] = f"  {inst.name} = getelementptr i8, ptr null, i64 0" if inst.name \
                else None
    args = ", ".join(f"ptr {stored[8 * k]}" for k in range(fields))
    line = module._lines[fork.line]
    new = re.sub(r"i32 1, (ptr [^,]*" + re.escape(outlined) + r"), ptr [^,)]*" +
                 re.escape(rec) + r"\)", lambda m: f"i32 {fields}, {m.group(1)}, {args})", line)
    if new == line:
        return None
    edits[fork.line] = new
    head = module._lines[_header_line(module, outlined)]
    # (the first keeps the record parameter's name: it may be a number in sequence)
    cap = [param] + [f"%ecc.omp.cap{k}" for k in range(1, fields)]
    params = ", ".join(f"ptr {c}" for c in cap)
    new_head = re.sub(r", ptr [^,]*?" + re.escape(param) + r"\)", lambda m: f", {params})",
                      head, count=1)
    if new_head == head:
        return None
    edits[_header_line(module, outlined)] = new_head
    for k, (name, off) in loads.items():
        load = next(i for i in callee.insts() if i.line == k)
        if load.line_end != load.line:
            return None
        edits[k] = f"  {name} = getelementptr i8, ptr {cap[off // 8]}, i64 0"
    return edits


def _header_line(module, name: str) -> int:
    """The line of the `define` of function `name` (where its parameters are)."""
    lo = module._bodies[name][0]
    return next(k for k in range(lo, lo + 8) if module._lines[k].startswith("define "))


# ---- `!$omp parallel if(cond)` -----------------------------------------------------------------
# flang calls __kmpc_fork_call_if(loc, n, outlined, cond, record); a false cond runs the region
# on a team of the encountering thread alone. It becomes the plain fork after a push of the
# thread count: the region's num_threads where one was pushed in the same block, else
# omp_get_max_threads() (the team size a fork gets unasked), and 1 where cond is false; the
# derivative forks its teams the same way (ad/parallel/openmp.py).
_FORK_IF = re.compile(r"^(\s*)(?:tail |notail )?call void @__kmpc_fork_call_if\(ptr ([^,]+), "
                      r"i32 ([^,]+), ptr ([^,]+), i32 ([^,]+), ptr ([^,)]+)\)(.*)$")
_PUSH = re.compile(r"@__kmpc_push_num_threads\(ptr [^,]+, i32 [^,]+, i32 ([^,)]+)\)")
_DECLS = {"@__kmpc_fork_call(": "declare void @__kmpc_fork_call(ptr, i32, ptr, ...)",
          "@__kmpc_push_num_threads(": "declare void @__kmpc_push_num_threads(ptr, i32, i32)",
          "@__kmpc_global_thread_num(": "declare i32 @__kmpc_global_thread_num(ptr)",
          "@omp_get_max_threads(": "declare i32 @omp_get_max_threads()"}


def fork_if_as_fork(text: str) -> str:
    if "@__kmpc_fork_call_if(" not in text:
        return text
    lines, out, n = text.split("\n"), [], 0
    for k, line in enumerate(lines):
        m = _FORK_IF.match(line)
        if not m:
            out.append(line)
            continue
        ind, loc, nargs, fn, cond, rec, rest = m.groups()
        pushed = None
        for prev in reversed(out):        # the clause's count, pushed in this block
            if prev.rstrip().endswith(":") or prev.startswith("define") or "@__kmpc_fork" in prev:
                break
            if (p := _PUSH.search(prev)) is not None:
                pushed = p.group(1)
                break
        n += 1
        t = f"%ad.forkif{n}"
        if pushed is None:
            out.append(f"{ind}{t}.max = call i32 @omp_get_max_threads()")
            pushed = f"{t}.max"
        out += [f"{ind}{t}.on = icmp ne i32 {cond}, 0",
                f"{ind}{t}.n = select i1 {t}.on, i32 {pushed}, i32 1",
                f"{ind}{t}.gtid = call i32 @__kmpc_global_thread_num(ptr {loc})",
                f"{ind}call void @__kmpc_push_num_threads(ptr {loc}, i32 {t}.gtid, i32 {t}.n)",
                f"{ind}call void (ptr, i32, ptr, ...) @__kmpc_fork_call(ptr {loc}, i32 {nargs}, "
                f"ptr {fn}, ptr {rec}){rest}"]
    text = "\n".join(out)
    for name, decl in _DECLS.items():
        if not re.search(r"^(declare|define)\b[^@\n]*" + re.escape(name), text, re.M):
            text += "\n" + decl + "\n"
    return text
