"""Records that hold pointers without a shadow beside pointers with one: a C++ closure capturing
a constant object by reference (`[&]`, `this` of an enzyme_const object) next to an active array,
handed to a callee that is not inlined (a recursive quadrature taking the lambda); a C context
record (GSL's `void *params`) holding constant data beside active parameters, reached through
another record (`gsl_function`) and a function pointer.

The record needs a shadow for the active pointer; the constant one has none to store there. The
callee reads it back from the record, and would read its shadow from the record's shadow: a null
pointer, through which the adjoints of the floats it reads through the constant pointer would be
added. Instead the callee's activity signature says where in the record pointers without a
shadow lie (`DupFields`): paths of byte offsets, `(0,)` for the field at offset 0, `(8, 0)` for
the field at offset 0 of the record the pointer at offset 8 points to. A pointer loaded from
such a field has no shadow in the callee either (as the enzyme_const argument it came from), so
what is read through it is constant.

That holds only where every reader of those fields knows it: the record and the parameters it is
passed as may be loaded from, stored into elsewhere, spilled to a local slot (unoptimized code),
copied whole, kept in another such record, and handed on whole to functions with bitcode
(directly or through a function pointer with few possible targets) that keep to the same rules
(`_confined`); otherwise nothing changes (the store rule refuses where floats are reached).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import is_fp, type_size

from ..structure.type_layout import decompose, underlying
from .record_holders import FREES, MARKERS, callee_of, fresh, held_in_result, held_in_sret, \
    held_prefixes, inserted_at, return_slot, returned_block, slot_loads, sret_param, uses
from .record_paths import MAX_DEPTH, alias as _alias, back_pointers as _back_pointers, \
    base as _base, chain, closed, covered, cut, into_param, is_back_pointer as _back_pointer, \
    from_offset, param_holder, shifted, single_store_slots as _single_store_slots, \
    stored_params, unknown_record
from .typeinfo import call_targets


class DupFields(str):
    """The activity 'dup' (it compares equal to "dup" wherever code asks for a shadow) of a
    pointer to a record with pointers without a shadow at the byte-offset paths `fields`. Keys
    that tell derivatives apart use act_key."""
    fields: frozenset

    def __new__(cls, fields):
        s = super().__new__(cls, "dup")
        s.fields = frozenset(fields)
        return s

    def __repr__(self):
        return f"dup-except{sorted(self.fields)}"


def act_key(acts) -> tuple:
    """An activity signature as a key: DupFields apart from a plain 'dup'."""
    return tuple((a, a.fields) if isinstance(a, DupFields) else a for a in acts)


def record_fields(module, fn, arg_act) -> dict:
    """{value: paths of the pointers without a shadow in the record it points to}: the
    signature's parameters; the local records (allocas, blocks this function allocates) into
    which this function stores a pointer derived from an enzyme_const argument (or read from
    such a field), or the address of such a record, at a constant offset, where every reader
    keeps to the rules (_confined); and the pointers to such records read from their fields."""
    fields = {p.name: a.fields for p, a in zip(fn.params, arg_act) if isinstance(a, DupFields)}
    consts = {p.name for p, a in zip(fn.params, arg_act) if a == "const" and p.ty == "ptr"}
    if not consts and not fields:
        return fields
    _read_records(module, fn, fields)
    found = _found_records(module, fn, consts, fields)
    known = {**fields, **found}
    for obj, paths in found.items():
        copies = {}
        if _confined(module, fn, obj, frozenset(paths), consts, known, set(), copies):
            fields[obj] = frozenset(paths)
            fields.update(copies)
    _held_records(module, fn, fields)
    _read_records(module, fn, fields)
    return fields


def _found_records(module, fn, consts, fields) -> dict:
    """{local or fresh block: paths} of the records fn fills with pointers without a shadow
    (consts) or with the addresses of the records in `fields`, itself or through its callees'
    stores into its sret records (not yet checked against their uses)."""
    stores = [(i.ops[0].value, obj, (off,)) for i in fn.insts()
              if i.op == "store" and i.ops[0].ty == "ptr"
              for obj, off in [_base(module, fn, i.ops[1].value)] if off is not None]
    stores += _sret_stores(module, fn)
    found: dict = {}
    grown = True
    while grown:
        grown = False
        for val, obj, at in stores:
            if not fresh(module, fn, obj):
                continue
            paths = _paths_of(module, fn, val, consts, {**fields, **found})
            new = {cut(at + p) for p in paths} - found.get(obj, set())
            if new:
                found.setdefault(obj, set()).update(new)
                grown = True
    return {obj: closed(paths, _back_pointers(module, fn, obj)) for obj, paths in found.items()}


def _sret_stores(module, fn) -> list:
    """(value, object, byte-offset path) of what calls store for fn: a callee storing its
    pointer parameter, or a fresh block holding it, into the record fn passes as its sret
    pointer (held_prefixes), or storing it into another of its parameters' records
    (stored_params: GSL's `gsl_multimin_fminimizer_set(s, &F, ...)`)."""
    out = []
    for inst in fn.insts():
        callee = callee_of(module, inst) if inst.op in ("call", "invoke") else None
        for k, o in enumerate(inst.ops if callee is not None else ()):
            for j, path in stored_params(module, callee.name, k) if o.ty == "ptr" else ():
                obj, at = _base(module, fn, inst.ops[j].value)   # (`set(s, &F)`)
                if at is not None and o.value.startswith("%"):
                    out.append((o.value, obj, from_offset(at, path)))
        sret = sret_param(callee) if callee is not None else None
        if sret is None or len(callee.params) != len(inst.ops):
            continue
        j = [p.name for p in callee.params].index(sret)
        obj, at = _base(module, fn, inst.ops[j].value)
        for k, o in enumerate(inst.ops):
            if k != j and o.ty == "ptr" and o.value.startswith("%") and at is not None:
                out += [(o.value, obj, (at + q[0],) + q[1:])
                        for q in held_prefixes(module, callee, k, "sret")]
    return out


def _held_records(module, fn, fields: dict):
    """Calls handed a record with paths that return a fresh block holding its address (a
    constructor of a holder, `h = hold(&e)`): the block is a record one level deeper
    (_confined checked its uses where the record was found, or in the caller that passed it)."""
    for _ in range(MAX_DEPTH):
        grown = False
        for inst in fn.insts():
            if inst.op == "extractvalue" and inst.name not in fields:
                paths = _paths_of(module, fn, inst.name, set(), fields)
                if paths and () not in paths:   # (the record itself, handed back in a record)
                    fields[inst.name] = frozenset(paths)
                    grown = True
                continue
            if inst.op not in ("call", "invoke") or inst.ty != "ptr" or not inst.name or \
                    inst.name in fields:
                continue
            held = set()
            for k, o in enumerate(inst.ops):
                paths = fields_passed(module, fn, fields, o.value) if o.ty == "ptr" else None
                if paths:
                    held |= held_in_result(module, inst, k, paths)
            if held:
                fields[inst.name] = closed(held, _back_pointers(module, fn, inst.name))
                grown = True
        if not grown:
            return


def stored_away(module, fn, obj: str, depth: int = 4) -> str | None:
    """The function that stores the address of the record obj of fn (or of a part of it) into a
    global, or into a local or fresh block whose own address goes there: in fn or in the
    functions with bitcode it is handed to, `depth` calls deep. Its readers are then out of
    this analysis' sight; None where nothing shows that (memory of a parameter, a caller's
    record, is not followed: the store rule's reach looks there)."""
    memo = module.__dict__.setdefault("_stored_away", {})
    key = (fn.name, obj, depth)
    if key in memo:
        return memo[key]
    memo[key] = None                            # (recursion: nothing found yet)
    work, done, found = [obj], set(), None
    while work and found is None:
        v = work.pop()
        if v in done:
            continue
        done.add(v)
        for u in uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast", "phi", "select") and \
                    u.ty == "ptr" and u.name:
                work.append(u.name)
            elif u.op == "store" and u.ops[0].value == v:
                dst = _base(module, fn, u.ops[1].value)[0] or ""
                if _single_store_slots(fn).get(u.ops[1].value) == v:
                    work.extend(slot_loads(fn, u.ops[1].value))
                elif dst.startswith("@") or fresh(module, fn, dst) and \
                        stored_away(module, fn, dst, depth):
                    found = fn.name
                    break
            elif u.op in ("call", "invoke") and depth > 0 and u.callee != v and \
                    not (u.callee or "").startswith(MARKERS):
                for t in call_targets(module, u):
                    callee = module.function(t)
                    for k, o in enumerate(u.ops):
                        if o.value == v and callee is not None and k < len(callee.params):
                            found = found or stored_away(module, callee, callee.params[k].name,
                                                         depth - 1)
    memo[key] = found
    return found


def field_load(module, fn, fields: dict, ptr: str) -> bool:
    """ptr is a field listed in fields: a pointer loaded from it has no shadow, and one stored
    into it needs none (its readers know)."""
    obj, off = _base(module, fn, ptr)
    return off is not None and (off,) in fields.get(obj, ())


def fields_passed(module, fn, fields: dict, v: str):
    """The paths of the record v points into, from where it points, or None."""
    obj, off = _base(module, fn, v)
    paths = _loaded_paths(module, fn, fields, obj) if off is not None else None
    return shifted(paths, off) or None if paths else None


def _loaded_paths(module, fn, fields: dict, obj: str, depth: int = 3):
    """The paths of the record obj: listed in fields, or read from such a record's field
    (`s->fdf` passed on while s is checked)."""
    if obj in fields or depth == 0:
        return fields.get(obj)
    d = fn.defs.get(obj)
    if getattr(d, "op", None) != "load" or d.ty != "ptr":
        return None
    src, at = _base(module, fn, d.ops[0].value)
    held = _loaded_paths(module, fn, fields, src, depth - 1) if at is not None else None
    return frozenset(_sub_paths(held, at)) or None if held else None


def _sub_paths(paths, off) -> set:
    """The paths of the record whose address lies at offset off of a record with `paths`."""
    return {p[1:] for p in paths if len(p) > 1 and p[0] == off}


def _read_records(module, fn, fields: dict):
    """Pointers read from a field that holds the address of a record with fields of its own:
    that record's paths (in order of definition: a load of a load follows its source)."""
    for inst in fn.insts():
        if inst.op == "load" and inst.ty == "ptr" and inst.name:
            obj, off = _base(module, fn, inst.ops[0].value)
            sub = _sub_paths(fields.get(obj, ()), off) if off is not None else set()
            if sub:
                fields[inst.name] = frozenset(sub)


def _paths_of(module, fn, v: str, consts, fields) -> set:
    """What storing pointer v into a field makes that field: {()} where v has no shadow
    (derived from an enzyme_const argument, or read from such a field); the paths of the record
    v points into, from where it points; else nothing."""
    if not v.startswith("%"):
        return set()
    root = _alias(module, fn, underlying(fn, v))
    if root in consts:
        return {()}
    d = fn.defs.get(root)
    if getattr(d, "op", None) == "load" and field_load(module, fn, fields, d.ops[0].value):
        return {()}
    if getattr(d, "op", None) == "extractvalue" and len(d.indices) == 1:
        call = fn.defs.get(d.ops[0].value)     # a record handed back in a record value
        callee = callee_of(module, call) if getattr(call, "op", None) in ("call", "invoke") \
            else None
        return {p for k, o in enumerate(call.ops) if callee is not None and
                k < len(callee.params) and d.indices[0] in inserted_at(module, callee, k)
                for p in fields_passed(module, fn, fields, o.value) or ()} if callee else set()
    return set(fields_passed(module, fn, fields, v) or ())


def _confined(module, fn, root: str, paths: frozenset, consts, known, seen: set,
              copies: dict | None = None, returned: bool = False) -> bool:
    """Every use of the record at `root` (a local, a parameter, a pointer read from a field) and
    of pointers into it at constant offsets keeps the paths known: loads (a pointer without a
    shadow, or the address of a record whose own uses keep to the rules), stores elsewhere (or,
    where it was made, of what made the path: `known` are the paths found so far), a local
    slot one store fills with its address, its address kept in another such record, calls
    passing it to functions with bitcode (through a function pointer: every possible target)
    whose parameter keeps to the rules from where it points (where such a function stores it
    into the block it returns, that block's uses here keep to them too), and whole copies into
    a local or a fresh heap block that keep to them too (a lambda passed by value: its byval
    copy; the copies go into `copies`). `returned`: root is the block fn returns."""
    key = (fn.name, root, paths, frozenset((k, frozenset(v)) for k, v in known.items()))
    if key in seen:           # (under the same knowledge: a check with less may still fail)
        return True
    seen.add(key)
    named = module.named_types
    heads = {p[0] for p in paths}
    work, done, joined = [root], set(), {root}
    while work:
        v = work.pop()
        if v in done:
            continue
        done.add(v)
        at = _base(module, fn, v)[1]        # (through a local slot: unoptimized code)
        for u in uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast") and u.ops[0].value == v:
                if decompose(module, fn, u.name)[1] is not None:
                    work.append(u.name)
                elif not _float_element(fn, u):
                    return False                # a run-time offset: which field is unknown
            elif u.op == "load":
                size = type_size(u.ty, named) or 8
                if any(at <= h < at + size for h in heads) and not (u.ty == "ptr" and at in heads) \
                        and not is_fp(u.ty):
                    return False                # the field's bits copied as an integer
                # (a float read there: a function pointer's possible target that takes records
                # of another type, GSL's il_transform beside the user's integrand)
                sub = _sub_paths(paths, at)
                if sub and not is_fp(u.ty) and (unknown_record(sub) or not _confined(
                        module, fn, u.name, frozenset(sub), set(), {**known, root: paths},
                        seen)):
                    return False                # (a float read where the record keeps a
                    # pointer: as above, a possible target that takes records of another type)
            elif u.op == "store" and u.ops[1].value == v and u.ops[0].value != v:
                size = type_size(u.ops[0].ty, named) or 8
                # (a float written there: as a float read, a possible target that takes
                # records of another type, GSL's lm_preduction beside the user's fvv)
                if any(at <= h < at + size for h in heads) and not is_fp(u.ops[0].ty) and not (
                        at in heads and u.ops[0].ty == "ptr" and covered(
                            {(at,) + p for p in _paths_of(module, fn, u.ops[0].value, consts,
                                                          {**known, root: paths})},
                            _field_paths(module, fn, root, paths, at, u.ops[0].value))):
                    return False
            elif u.op == "store" and u.ops[0].value == v and at is not None and \
                    _single_store_slots(fn).get(u.ops[1].value) == v:
                loads = slot_loads(fn, u.ops[1].value)      # v reloaded from a local slot
                work.extend(loads)
                if v in joined:
                    joined.update(loads)
            elif u.op == "store" and u.ops[0].value == v and at == 0 and returned and \
                    return_slot(fn, u.ops[1].value):
                continue                        # (unoptimized code's `retval` slot)
            elif u.op == "store" and u.ops[0].value == v and at is not None and \
                    _back_pointer(module, fn, u, root):
                if not _closed_over(module, fn, root, paths):
                    return False                # (a record that points back to root)
            elif u.op == "store" and u.ops[0].value == v and at == 0 and \
                    into_param(module, fn, u, root):
                continue                        # (a `set_driver(state, d)`: callers check)
            elif u.op == "store" and u.ops[0].value == v and at is not None and \
                    not shifted(paths, at):
                continue                        # (a part with no such field: `&w->x`)
            elif u.op == "store" and u.ops[0].value == v and at is not None:
                obj, off = _base(module, fn, u.ops[1].value)   # kept in another record
                part = shifted(paths, at)       # (the part of root it points to)
                held = frozenset((off,) + p for p in part) \
                    if off is not None and all(len(p) < MAX_DEPTH for p in part) else None
                if held is not None and obj in (returned_block(module, fn), sret_param(fn)) \
                        and obj not in known:   # (a holder it returns: the caller checks it)
                    if not _confined(module, fn, obj, held, consts, {**known, root: paths},
                                     seen, returned=obj != sret_param(fn)):
                        return False
                elif held is not None and obj not in known and obj.startswith("%") and \
                        fresh(module, fn, obj):
                    # a record of fn's own (a wrapper of the record handed down: GSL's qagiu
                    # behind its own function record), which fn's derivative finds too
                    if not _confined(module, fn, obj, held, consts,
                                     {**known, root: paths, obj: held}, seen):
                        return False
                elif held is None or not held <= set(known.get(obj, ())) or \
                        not _confined(module, fn, obj, frozenset(known[obj]), consts,
                                      {**known, root: paths}, seen):
                    return False
            elif u.op in ("call", "invoke") and (u.callee or "").startswith(MARKERS) or \
                    u.op == "icmp":
                continue                        # (`if (sys == NULL)`: the address compared)
            elif u.op in ("phi", "select") and u.ty == "ptr" and (all(
                    o.value in (v, "null") for o in (u.ops[1:] if u.op == "select" else u.ops))
                    or decompose(module, fn, u.name) == decompose(module, fn, v) != (v, 0)):
                work.append(u.name)             # (null on a failure path: `return NULL`)
                joined.add(u.name)
            elif u.op == "ret" and returned and v in joined:
                continue
            elif u.op == "insertvalue" and u.ops[1].value == v and at == 0 and \
                    _only_returned(fn, u):
                continue                        # (handed back in a record: the caller checks)
            elif u.op in ("call", "invoke") and u.callee in FREES and \
                    _alias(module, fn, v) == root:
                continue
            elif u.op == "call" and (u.callee or "").startswith("@llvm.memset") and \
                    u.ops[0].value == v and u.ops[2].value.isdigit() and \
                    not any(at <= h + 7 and h < at + int(u.ops[2].value) for h in heads):
                continue                        # (padding cleared beside the fields)
            elif u.op == "call" and (u.callee or "").startswith("@llvm.memcpy") and \
                    copies is not None and _whole_copy(module, fn, u, v, paths, copies, seen):
                continue
            elif u.op in ("call", "invoke") and u.callee and u.callee != v:
                ks = [k for k, o in enumerate(u.ops) if o.value == v]
                seen_from = shifted(paths, at)
                if not seen_from:
                    continue                    # (a field after the ones listed: a double)
                targets = call_targets(module, u)
                others = {k: p for k, o in enumerate(u.ops) if k not in ks and o.ty == "ptr"
                          for p in [fields_passed(module, fn, {**known, root: paths}, o.value)]
                          if p}
                if not targets or not all(_param_confined(module, t, ks, seen_from, seen, others)
                                          for t in targets):
                    return False
                if not _stored_through(module, fn, u, ks, targets, root, paths, at, seen_from,
                                       consts, {**known, root: paths}, seen):
                    return False
                held = set()
                for k in ks:
                    held |= held_in_result(module, u, k, seen_from)
                if held and not _confined(module, fn, u.name,
                                          closed(held, _back_pointers(module, fn, u.name)),
                                          consts, known, seen,
                                          returned=u.name == returned_block(module, fn)):
                    return False                # (the holder the call returns)
                if not _handed_back(module, fn, u, ks, seen_from, consts, {**known, root: paths},
                                    seen):
                    return False
            else:
                return False
    return True


def _float_element(fn, gep) -> bool:
    """gep indexes an array of floats at a run-time index (`s->x[i]`, x an array inside the
    record), and only floats are read and written there: no pointer field is touched."""
    ty = getattr(gep, "src_ty", "")
    while ty.startswith("[") and " x " in ty:
        ty = ty[1:-1].split(" x ", 1)[1].strip()
    return is_fp(ty) and all(
        u.op == "load" and is_fp(u.ty) or
        u.op == "store" and u.ops[1].value == gep.name and u.ops[0].value != gep.name and
        is_fp(u.ops[0].ty) for u in uses(fn).get(gep.name, ()))


def _field_paths(module, fn, root: str, paths, at: int, value: str) -> set:
    """The paths of root's field at `at` that a pointer stored there must hold; those through
    a back pointer fn makes are left out where the value is a block just allocated (a part the
    record gets before the part's back pointer to it is set: GSL's control object)."""
    need = {p for p in paths if p[0] == at}
    if value.startswith("%") and fresh(module, fn, _alias(module, fn, underlying(fn, value))):
        loops = _back_pointers(module, fn, root)
        need = {p for p in need if not any(p[:len(dst)] == dst for dst, _, _ in loops)}
    return need


def _closed_over(module, fn, root: str, paths) -> bool:
    """paths already hold those through the back pointers fn makes to root."""
    return covered(paths, closed(paths, _back_pointers(module, fn, root)), past_cuts=True)


def _stored_through(module, fn, call, ks, targets, root, paths, at, seen_from, consts, known,
                    seen) -> bool:
    """Where a possible target stores the record passed at positions ks (with paths seen_from
    there) into another of its parameters' records (or one read from its fields), what the
    call passes there holds it: a record read from the record's own fields (a stepper's
    `set_driver(d->s->state, d)`: the paths include those through that back pointer), a record
    fn knows or allocates, or one read from such a record's fields, that keeps to the rules
    with those paths (GSL's `gsl_multimin_fminimizer_set(s, &F, ...)`, and its type's
    `set(s->state, s->fdf)` there)."""
    held_at: dict = {}
    for t in targets:
        for j, path in {jp for k in ks for jp in stored_params(module, t, k)}:
            ptr = call.ops[j].value if j < len(call.ops) else None
            dst, off = _base(module, fn, ptr) if ptr else (None, None)
            if off is None:
                return False
            if dst == root or chain(module, fn, dst, root) is not None:
                if not _closed_over(module, fn, root, paths):
                    return False
                continue
            if at == 0 and param_holder(module, fn, root, ptr, path):
                continue                        # (fn does it to its own parameters: callers)
            head = from_offset(off, path)
            held_at.setdefault(dst, set()).update(cut(head + p) for p in seen_from)
    for dst, held in held_at.items():
        holder = None if dst in known else \
            next(((r, c) for r in known for c in [chain(module, fn, dst, r)] if c), None)
        if dst in known:
            if not covered(known[dst], held) or not _confined(
                    module, fn, dst, frozenset(known[dst]), consts, known, seen):
                return False
        elif holder is not None:                # (`s->state` while s is checked)
            r, c = holder
            if not covered(known[r], {cut(c + h) for h in held}) or not _confined(
                    module, fn, r, frozenset(known[r]), consts, known, seen):
                return False
        elif not dst.startswith("%") or not fresh(module, fn, dst):
            return False
        else:
            held = closed(held, _back_pointers(module, fn, dst))
            if not _confined(module, fn, dst, held, consts, {**known, dst: held}, seen):
                return False
    return True


def _handed_back(module, fn, call, ks, paths, consts, known, seen) -> bool:
    """Where the callee hands the record passed at positions ks (with `paths` from there)
    back to fn, fn keeps to the rules: the record the caller passes as the callee's sret
    pointer, when the callee stores it there, and the fields of the record value it returns
    into which it inserts it (`{ ptr, double }` in registers)."""
    callee = callee_of(module, call)
    if callee is None:
        return True
    for k in ks:
        for j, held in held_in_sret(module, call, k, paths).items():
            obj, at = _base(module, fn, call.ops[j].value)
            if at is None:
                return False
            held = frozenset((at + p[0],) + p[1:] for p in held)
            if obj in known:
                if not held <= set(known[obj]) or \
                        not _confined(module, fn, obj, frozenset(known[obj]), consts, known, seen):
                    return False
            elif not (obj.startswith("%") and fresh(module, fn, obj) and
                      _confined(module, fn, obj, held, consts, {**known, obj: held}, seen)):
                return False
        idx = inserted_at(module, callee, k) if k < len(callee.params) else ()
        for u in uses(fn).get(call.name, ()) if idx and call.name else ():
            if u.op != "extractvalue":
                return False                    # (the record value kept whole)
            if u.indices[:1] and u.indices[0] in idx and \
                    not _confined(module, fn, u.name, paths, consts, known, seen):
                return False
    return True


def _only_returned(fn, inst) -> bool:
    """The record value inst builds only goes on being built and is returned."""
    for u in uses(fn).get(inst.name, ()):
        if not (u.op == "ret" or u.op == "insertvalue" and u.ops[0].value == inst.name and
                _only_returned(fn, u)):
            return False
    return True


def _param_confined(module, name: str, ks, paths, seen, others=None) -> bool:
    """The callee's parameters ks keep to the rules; `others`: {position: paths} of the records
    the caller passes beside them (what the callee may store into them)."""
    callee = module.function(name)
    if callee is None or any(k >= len(callee.params) for k in ks):
        return False
    known = {callee.params[k].name: p for k, p in (others or {}).items()
             if k < len(callee.params)}
    if known:                   # (and the blocks it fills with them: a holder it allocates)
        known.update({b: frozenset(p) for b, p in
                      _found_records(module, callee, set(), known).items()})
    return all(_confined(module, callee, callee.params[k].name, paths, set(), known, seen)
               for k in ks)


def _whole_copy(module, fn, copy, v: str, paths, copies: dict, seen: set) -> bool:
    """`copy` (a memcpy) copies the record at v, fields included, to the start of a local or
    a block from malloc/new (fresh) that nothing else writes (its own uses keep to _confined):
    the copy holds the same paths. Or it is that copy, seen from the destination's side."""
    dst, src, size = (o.value for o in copy.ops[:3])
    if not size.isdigit() or int(size) < max(p[0] for p in paths) + 8:
        return False
    if v == dst:
        return copies.get(v) == paths
    d, at = decompose(module, fn, dst)
    if src != v or at != 0 or decompose(module, fn, v)[1] != 0 or not fresh(module, fn, d):
        return False
    if d in copies:
        return copies[d] == paths
    copies[d] = paths
    return _confined(module, fn, d, paths, set(), {}, seen, copies)
