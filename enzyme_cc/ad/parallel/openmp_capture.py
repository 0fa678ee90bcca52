"""OpenMP: values a parallel region captures by value, routed through memory before AD.

clang passes a `firstprivate` scalar to the outlined function by value, a double as the i64 of
its bits (`__kmpc_fork_call` arguments are pointer-sized); no derivative can follow a float
through the runtime's integer arguments. `lower` (run by ad/synthesis/generate.py before the rounds)
stores each such value into an entry-block slot of the caller and passes the slot's address;
the outlined function (when only such forks use it) takes a pointer and loads the value on
entry. The slot is then a captured pointer like any other, with the float's shadow
(ad/parallel/openmp.py refuses what could not be routed).
"""
import re
from collections import Counter

from enzyme_cc.ir.lexer import GLOBAL_REF, is_fp
from .openmp import FORK
from ..structure.type_layout import FLOATS, tbaa_kind
from enzyme_cc.ir.model import Operand, parse_module

_LABEL = re.compile(r'^\s*("[^"]*"|[-\w.$]+):')
_LOCAL = re.compile(r'%(?:"[^"]*"|[-\w.$]+)')


def _references(lines) -> Counter:
    """How often each global name occurs in the module (one scan: a search per outlined region
    over the whole text was quadratic, seconds on LULESH)."""
    return Counter(m for ln in lines if "@" in ln for m in GLOBAL_REF.findall(ln))


def _forks(text: str):
    """(module, its lines to rewrite, outlined function -> [(caller, fork inst)], references)."""
    module = parse_module(text)
    lines = list(module._lines)
    forks: dict = {}
    for name, (start, end) in module._bodies.items():
        if any(f"{FORK}(" in ln for ln in module._lines[start:end]):
            for inst in module.function(name).insts():
                if inst.op == "call" and inst.callee == FORK and inst.ops[2].value.startswith("@"):
                    forks.setdefault(inst.ops[2].value, []).append((name, inst))
    return module, lines, forks, _references(lines)


def lower(text: str) -> str:
    """Captured values the fork passes by value (a firstprivate double travels as the i64 of its
    bits, which no derivative can follow through the runtime) go through memory instead: the
    caller stores them into an entry-block slot and passes its address, the outlined function
    (when only such forks use it) takes a pointer and loads the value on entry. A pointer
    argument then carries the value's shadow like any captured variable."""
    if f"{FORK}(" not in text:
        return text
    module, lines, forks, refs = _forks(text)   # (the rewrites below move no region reference)
    entry_slots: dict = {}
    for target, uses in forks.items():
        boxed = {tuple(k for k, o in enumerate(i.ops[3:]) if o.ty != "ptr") for _, i in uses}
        if len(boxed) != 1 or not next(iter(boxed)) or not module.defines(target):
            continue
        boxed = next(iter(boxed))
        floats = _box_params(module, lines, target, boxed) if refs[target] == len(uses) + 1 \
            else None
        if floats is None:
            continue                   # used elsewhere too: the fork rule refuses active values
        for caller, inst in uses:
            pre, args = [], []
            defs = module.function(caller).defs
            for k, o in enumerate(inst.ops[3:]):
                if k in boxed:
                    d = defs.get(o.value)
                    if _reloaded(d, inst, defs):
                        # unoptimized code reloads the value from the local it was stored to
                        # (as a double): that local is the box, with the float's shadow
                        args.append(f"ptr {d.ops[0].value}")
                        continue
                    slot = f"%ad.box.{inst.line}.{k}"
                    entry_slots.setdefault(caller, []).append(f"  {slot} = alloca {o.ty}, align 8")
                    if getattr(d, "op", None) == "bitcast" and is_fp(d.ops[0].ty):
                        o = d.ops[0]           # the float itself: an active store, a shadow
                    elif k in floats:          # float bits in an integer: stored as the float
                        o = _as_float(pre, o, floats[k], f"%ad.boxf.{inst.line}.{k}", defs)
                    pre.append(f"  store {o.ty} {o.value}, ptr {slot}, align 8")
                    args.append(f"ptr {slot}")
                else:
                    args.append(f"{o.ty} {o.value}")
            dbg = f", !dbg {inst.md['!dbg']}" if "!dbg" in inst.md else ""
            lines[inst.line] = "\n".join(pre + [
                f"  call void (ptr, i32, ptr, ...) {FORK}(ptr {inst.ops[0].value}, "
                f"i32 {inst.ops[1].value}, ptr {target}, {', '.join(args)}){dbg}"])
            for j in range(inst.line + 1, inst.line_end + 1):
                lines[j] = ""
    for caller, slots in entry_slots.items():
        _at_entry(module, lines, caller, slots)
    return "\n".join(lines) + "\n"


def _reloaded(d, fork, defs) -> bool:
    """d loads the value from an alloca right before the fork (nothing in between writes)."""
    if getattr(d, "op", None) != "load" or d.block is not fork.block:
        return False
    insts = d.block.insts
    between = insts[insts.index(d) + 1:insts.index(fork)]
    slot = d.ops[0].value
    return getattr(defs.get(slot), "op", None) == "alloca" and all(
        i.op not in ("call", "invoke", "atomicrmw", "cmpxchg") and not (
            i.op == "store" and (i.ops[1].value == slot or
                                 getattr(defs.get(i.ops[1].value), "op", None) != "alloca"))
        for i in between)


def _at_entry(module, lines, name, new):
    """Insert lines at the top of a function's entry block."""
    start, _ = module._bodies[name]
    h = start
    while not lines[h].rstrip().endswith("{"):
        h += 1
    if _LABEL.match(lines[h + 1]):
        h += 1
    lines[h] += "\n" + "\n".join(new)


def _as_float(pre, o, fty, name, defs):
    """Lines into pre that view the integer o as the float fty it carries; the float's operand.
    A float travels zero-extended (`zext i32 %bits to i64`): its bits are the zext's operand."""
    bits = "i32" if fty == "float" else "i64"
    d = defs.get(o.value)
    if o.ty != bits and getattr(d, "op", None) == "zext" and d.ops[0].ty == bits:
        o = d.ops[0]
    elif o.ty != bits:
        pre.append(f"  {name}.bits = trunc {o.ty} {o.value} to {bits}")
        o = Operand(bits, f"{name}.bits")
    pre.append(f"  {name} = bitcast {bits} {o.value} to {fty}")
    return Operand(fty, name)


def _float_view(module, fn, p):
    """(float type, truncs) when the integer parameter p carries a float's bits: some use views
    them as one (a bitcast to double; a float travels in the low bits of an i64, truncated to
    i32) or stores them where TBAA says a float lies, and the others only move them (selects,
    phis, freeze, stores: `x < lo ? lo : x` done on integers). truncs: the `trunc i64 p to
    i32` instructions. None when some use computes with the bits."""
    width = {"double": "i64", "float": "i32"}
    carriers, todo, fty, truncs, direct = {p.name: p.ty}, [p.name], set(), [], 0
    while todo:
        c = todo.pop()
        for i in fn.insts():
            if c not in [o.value for o in i.ops] + [v for v, _ in i.incoming]:
                continue
            direct += c == p.name
            if i.op == "bitcast" and is_fp(i.ty):
                fty.add(i.ty)
            elif i.op == "trunc" and c == p.name and i.ty == "i32" and p.ty == "i64":
                truncs.append(i)
            elif i.op in ("select", "phi", "freeze") and i.ty == carriers[c] and not (
                    i.op == "select" and i.ops[0].value == c):
                pass
            elif i.op == "store" and i.ops[0].value == c and i.ops[1].value != c:
                kind = tbaa_kind(module, i.md.get("!tbaa"))
                if kind in FLOATS:
                    fty.add(kind)
                continue
            else:
                return None
            if i.name and i.name not in carriers and i.op != "bitcast":
                carriers[i.name] = i.ty
                todo.append(i.name)
    if len(fty) != 1:
        return None
    f = fty.pop()
    ok = all(width[f] == carriers[c] for c in carriers if c != p.name) and (
        width[f] == p.ty if not truncs else direct == len(truncs))
    return (f, truncs) if ok else None


def _box_params(module, lines, target, boxed) -> dict | None:
    """The outlined function takes boxed parameters by pointer; None when its header resists.
    An integer parameter that only carries a float's bits is loaded as that float, so the load
    from the box is typed float data whatever TBAA says (none): {index: float type} of those."""
    fn = module.function(target)
    views = {k: v for k in boxed if (v := _float_view(module, fn, fn.params[k + 2]))}
    start, end = module._bodies[target]
    h = start
    while not lines[h].rstrip().endswith("{"):
        h += 1
    header = "\n".join(lines[start:h + 1])
    loads = []
    for k in boxed:
        p = fn.params[k + 2]
        pat = re.compile(re.escape(p.ty) + r"((?:\s+\w+)*)\s+" + re.escape(p.name) + r"(?=\s*[,)])")
        header, n = pat.subn(f"ptr {p.name}", header, count=1)
        if n != 1:
            return None
        val = f"%ad.byval.{p.name[1:].strip(chr(34))}"
        use = re.compile(re.escape(p.name) + r"(?![-\w.$])")
        for j in range(h + 1, end):
            lines[j] = use.sub(val, lines[j])
        if k not in views:
            loads.append(f"  {val} = load {p.ty}, ptr {p.name}, align 8")
            continue
        fty, truncs = views[k]
        loads.append(f"  {val}.f = load {fty}, ptr {p.name}, align 8")
        for t in truncs:               # the float's bits, straight from the float
            lines[t.line] = f"  {t.name} = bitcast float {val}.f to i32"
        if not truncs:
            loads.append(f"  {val} = bitcast {fty} {val}.f to {p.ty}")
    lines[start:h + 1] = [header] + [""] * (h - start)
    _at_entry(module, lines, target, loads)
    return {k: v[0] for k, v in views.items()}


def hoist_reads(text: str) -> str:
    """A shared variable a region only reads keeps its value while the region runs: every load
    of it in the outlined function becomes one load on entry. Without this, a loop in the region
    reloading it (LLVM cannot hoist the load past the loop's stores into other captured arrays,
    which it cannot tell apart from the caller's local) made reverse mode tape the value and add
    its adjoint into the variable's shadow at every iteration: atomically, into one cache line
    all threads share, with 2+ threads (docs/performance.md, "OpenMP"). It holds when the
    argument is a local of every forking caller used there only by loads, stores into it, lifetime
    markers and fork arguments (no other code can reach it), and the outlined function (called
    only by these forks) uses the parameter only as the address of plain loads of one type."""
    if f"{FORK}(" not in text:
        return text
    module, lines, forks, refs = _forks(text)
    changed = False
    users: dict = {}            # function name -> local value -> the instructions using it

    def users_of(fn) -> dict:
        if fn.name not in users:        # (Function.users, and calls through a local)
            users[fn.name] = by_value = fn.users()
            for i in fn.insts():
                if (i.callee or "").startswith("%"):
                    by_value.setdefault(i.callee, []).append(i)
        return users[fn.name]
    for target, uses in forks.items():
        if refs[target] != len(uses) + 1 or not module.defines(target):
            continue
        fn = module.function(target)
        loads_of = _uses_by_load(fn)
        hoisted, renamed = [], {}
        for k, p in enumerate(fn.params[2:]):
            loads = loads_of.get(p.name)
            if p.ty != "ptr" or not loads or len({i.ty for i in loads}) != 1 or not all(
                    _read_only_arg(module.function(c), u, k, fn, loads_of, users_of) and
                    _kept_local(module, module.function(c), u.ops[3 + k].value, users_of)
                    for c, u in uses):
                continue
            align = min(int(i.toks[i.toks.index("align") + 1]) if "align" in i.toks else 1
                        for i in loads)
            val = f"%ad.inv.{p.name[1:].strip(chr(34))}"
            hoisted.append(f"  {val} = load {loads[0].ty}, ptr {p.name}, align {align}")
            for i in loads:
                for j in range(i.line, i.line_end + 1):
                    lines[j] = ""
                renamed[i.name] = val
        if hoisted:
            start, end = module._bodies[target]
            for j in range(start, end):         # one pass over the body for all the loads
                if "%" in lines[j]:
                    lines[j] = _LOCAL.sub(lambda m: renamed.get(m.group(0), m.group(0)),
                                          lines[j])
            _at_entry(module, lines, target, hoisted)
            changed = True
    return "\n".join(lines) + "\n" if changed else text


def _uses_by_load(fn) -> dict:
    """param -> its uses when every one is a plain (not volatile, not atomic) load from it."""
    out: dict = {p.name: [] for p in fn.params}
    bad = set()
    for i in fn.insts():
        used = [o.value for o in i.ops] + [v for v, _ in i.incoming] + [i.callee]
        for v in set(used) & out.keys():
            plain = i.op == "load" and used.count(v) == 1 and i.ops[0].value == v and \
                not {"volatile", "atomic"} & set(i.toks)
            (out[v].append(i) if plain else bad.add(v))
    return {k: v for k, v in out.items() if k not in bad}


def _read_only_arg(caller, fork, k, fn, loads_of, users_of) -> bool:
    """The fork's k-th captured argument is a private local of the caller, and every parameter
    it is passed as (it may be passed twice) is only loaded from. users_of(fn): {value: the
    instructions using it} (hoist_reads)."""
    args = [o.value for o in fork.ops[3:]]
    if len(args) != len(fn.params) - 2:
        return False
    return _private_local(caller, args[k], users_of(caller)) and all(
        fn.params[j + 2].name in loads_of for j, a in enumerate(args) if a == args[k])


def _kept_local(module, caller, v, users_of) -> bool:
    """No region the caller forks with v lets its address escape (into memory or a call), so no
    code but the caller's and those regions' accesses through the parameter reaches it."""
    for i in users_of(caller).get(v, ()):
        if i.op != "call" or i.callee != FORK or v not in [o.value for o in i.ops[3:]]:
            continue
        target = i.ops[2].value
        if not target.startswith("@") or not module.defines(target):
            return False
        fn = module.function(target)
        for j, o in enumerate(i.ops[3:]):
            if o.value == v and not _address_only(fn, fn.params[j + 2].name, users_of(fn)):
                return False
    return True


def _address_only(fn, p, users) -> bool:
    """p is used only as the address of loads, stores and atomic updates."""
    for i in users.get(p, ()):
        used = [o.value for o in i.ops] + [w for w, _ in i.incoming] + [i.callee]
        if p not in used:
            continue
        if i.op in ("load", "atomicrmw", "cmpxchg") and used.count(p) == 1 and i.ops[0].value == p:
            continue
        if i.op == "store" and used.count(p) == 1 and i.ops[1].value == p:
            continue
        return False
    return True


def _private_local(fn, v, users) -> bool:
    """v is an alloca of fn used only by loads, stores into it, lifetime markers and forks."""
    if getattr(fn.defs.get(v), "op", None) != "alloca":
        return False
    for i in users.get(v, ()):
        used = [o.value for o in i.ops] + [w for w, _ in i.incoming]
        if v not in used:
            continue
        if i.op == "load" and used.count(v) == 1:
            continue
        if i.op == "store" and used.count(v) == 1 and i.ops[1].value == v:
            continue
        if i.op == "call" and (i.callee or "").startswith(("@llvm.lifetime.", "@llvm.dbg.")):
            continue
        if i.op == "call" and i.callee == FORK and v not in [o.value for o in i.ops[:3]]:
            continue
        if i is fn.defs[v]:
            continue
        return False
    return True
