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

from ..structure.local_slots import local_slot_stores
from ..structure.type_layout import decompose, underlying
from .record_paths import MAX_DEPTH, alias as _alias, back_pointers as _back_pointers, \
    base as _base, chain, closed, covered, cut, into_param, is_back_pointer as _back_pointer, \
    param_holder, shifted, single_store_slots as _single_store_slots, stored_params, \
    unknown_record
from .typeinfo import call_targets

_MARKERS = ("@llvm.lifetime", "@llvm.dbg", "@llvm.assume")
_FREES = ("@free", "@_ZdlPv", "@_ZdlPvm")
_ALLOCATORS = ("@malloc", "@calloc", "@_Znwm")


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
              for obj, off in [decompose(module, fn, i.ops[1].value)] if off is not None]
    stores += _sret_stores(module, fn)
    found: dict = {}
    grown = True
    while grown:
        grown = False
        for val, obj, at in stores:
            if not _fresh(module, fn, obj):
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
    pointer (_held_prefixes), or storing it into another of its parameters' records
    (stored_params: GSL's `gsl_multimin_fminimizer_set(s, &F, ...)`)."""
    out = []
    for inst in fn.insts():
        callee = _callee(module, inst) if inst.op in ("call", "invoke") else None
        for k, o in enumerate(inst.ops if callee is not None else ()):
            for j, path in stored_params(module, callee.name, k) if o.ty == "ptr" else ():
                obj, at = decompose(module, fn, inst.ops[j].value)   # (`set(s, &F)`)
                if at is not None and o.value.startswith("%"):
                    out.append((o.value, obj, (at + path[0],) + path[1:]))
        sret = _sret_param(callee) if callee is not None else None
        if sret is None or len(callee.params) != len(inst.ops):
            continue
        j = [p.name for p in callee.params].index(sret)
        obj, at = decompose(module, fn, inst.ops[j].value)
        for k, o in enumerate(inst.ops):
            if k != j and o.ty == "ptr" and o.value.startswith("%") and at is not None:
                out += [(o.value, obj, (at + q[0],) + q[1:])
                        for q in _held_prefixes(module, callee, k, "sret")]
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
                    held |= _held_in_result(module, inst, k, paths)
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
        for u in _uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast", "phi", "select") and \
                    u.ty == "ptr" and u.name:
                work.append(u.name)
            elif u.op == "store" and u.ops[0].value == v:
                dst = decompose(module, fn, u.ops[1].value)[0] or ""
                if _single_store_slots(fn).get(u.ops[1].value) == v:
                    work.extend(i.name for i in _uses(fn).get(u.ops[1].value, ())
                                if i.op == "load" and i.name)
                elif dst.startswith("@") or _fresh(module, fn, dst) and \
                        stored_away(module, fn, dst, depth):
                    found = fn.name
                    break
            elif u.op in ("call", "invoke") and depth > 0 and u.callee != v and \
                    not (u.callee or "").startswith(_MARKERS):
                for t in call_targets(module, u):
                    callee = module.function(t)
                    for k, o in enumerate(u.ops):
                        if o.value == v and callee is not None and k < len(callee.params):
                            found = found or stored_away(module, callee, callee.params[k].name,
                                                         depth - 1)
    memo[key] = found
    return found


def _returned_block(module, fn) -> str | None:
    """The block every return of fn returns, where fn allocated it (_fresh; memoized)."""
    if "_returned_block" not in fn.__dict__:
        rets = _returned_values(fn)
        b = rets.pop() if rets and len(rets) == 1 else None
        fn._returned_block = b if b and b.startswith("%") and _fresh(module, fn, b) else None
    return fn._returned_block


def _returned_values(fn) -> set | None:
    """What fn's returns return, through phis and selects, null aside (an allocator that
    returns null on its failure paths); None past 16."""
    out, todo, done = set(), [i.ops[0].value for i in fn.insts() if i.op == "ret" and i.ops], set()
    while todo:
        v = underlying(fn, todo.pop())
        if v in done:
            continue
        done.add(v)
        d = fn.defs.get(v)
        if getattr(d, "op", None) in ("phi", "select"):
            todo += [o.value for o in (d.ops[1:] if d.op == "select" else d.ops)]
        elif getattr(d, "op", None) == "load" and d.ops[0].value in local_slot_stores(fn):
            todo += local_slot_stores(fn)[d.ops[0].value]   # (unoptimized code's `retval`)
        elif v != "null":
            out.add(v)
        if len(out) > 16:
            return None
    return out


def _held_in_result(module, call, k: int, paths) -> set:
    """The paths of the block `call` returns where the callee stores its parameter k (a record
    with `paths`) into the block it returns, at a constant offset."""
    callee = _callee(module, call)
    if callee is None or k >= len(callee.params) or callee.ret_ty != "ptr":
        return set()
    held = {cut(q + p) for q in _held_prefixes(module, callee, k) for p in paths}
    block = _returned_block(module, callee)
    return set(closed(held, _back_pointers(module, callee, block)))


def _held_prefixes(module, fn, k: int, into: str = "ret") -> frozenset:
    """The byte-offset paths in the block fn returns (`into` "ret"), or in the record its sret
    pointer points to ("sret"), at which fn stores its parameter k: (off,) where it stores the
    parameter there, (off, off2) where it stores there a block it allocates holding the
    parameter at off2 (`unique_ptr<Solver>(new Solver{&p, w})`), ... (memoized)."""
    memo = fn.__dict__.setdefault("_held_prefixes", {})
    if (k, into) not in memo:
        block = _returned_block(module, fn) if into == "ret" else _sret_param(fn)
        param = fn.params[k].name
        memo[(k, into)] = frozenset(_prefixes(module, fn, param, block, 3)) \
            if block and block != param else frozenset()
    return memo[(k, into)]


def _prefixes(module, fn, value: str, block: str, depth: int) -> set:
    """The offset paths in `block` at which fn stores `value`, directly or inside heap blocks
    it allocates (depth: how many such blocks deep)."""
    out = set()
    d = fn.defs.get(block)
    callee = _callee(module, d) if getattr(d, "op", None) in ("call", "invoke") else None
    for k, o in enumerate(d.ops if callee is not None and depth > 0 else ()):
        if _base(module, fn, o.value) == (value, 0) and k < len(callee.params):
            out |= _held_prefixes(module, callee, k)    # (a block that a callee filled)
    for inst in fn.insts():
        if inst.op != "store" or inst.ops[0].ty != "ptr":
            continue
        obj, off = _base(module, fn, inst.ops[1].value)     # (through a local slot)
        if off is None:
            continue
        if _base(module, fn, inst.ops[0].value) == (value, 0) and obj == block:
            out.add((off,))
        elif _base(module, fn, inst.ops[0].value) == (value, 0) and depth > 0 and \
                getattr(fn.defs.get(obj), "op", None) in ("call", "invoke") and \
                _fresh(module, fn, obj):
            out |= {q + (off,) for q in _prefixes(module, fn, obj, block, depth - 1)}
    return out


def _sret_param(fn) -> str | None:
    """The name of fn's hidden result pointer (a record returned through `sret(T)`), or None."""
    return next((p.name for p in fn.params if "sret" in p.attrs), None)


def _held_in_sret(module, call, k: int, paths) -> dict:
    """{the position of the callee's sret argument: the paths of the record the caller passes
    there} where the callee
    stores its parameter k (a record with `paths`) into that record (a factory returning a
    record that keeps the address: `Solver make_solver(const Problem &)`)."""
    callee = _callee(module, call)
    j = next((j for j, p in enumerate(callee.params) if "sret" in p.attrs), None) \
        if callee else None
    if j is None or j >= len(call.ops) or k >= len(callee.params):
        return {}
    held = closed({cut(q + p) for q in _held_prefixes(module, callee, k, "sret") for p in paths},
                  _back_pointers(module, callee, _sret_param(callee)))
    return {j: held} if held else {}


def _inserted_at(module, callee, k: int) -> frozenset:
    """The indices of the record value callee returns (`{ ptr, double }` in registers) into
    which it inserts its parameter k itself, where every return returns such a record built
    by insertvalue (memoized)."""
    memo = callee.__dict__.setdefault("_inserted_at", {})
    if k not in memo:
        param, idx = callee.params[k].name, set()
        for r in (i for i in callee.insts() if i.op == "ret" and i.ops):
            v = r.ops[0].value
            for _ in range(16):
                d = callee.defs.get(v)
                if getattr(d, "op", None) != "insertvalue":
                    break
                if d.ops[1].value == param and len(d.indices) == 1:
                    idx.add(d.indices[0])
                v = d.ops[0].value
        memo[k] = frozenset(idx)
    return memo[k]


def _callee(module, call):
    name = call.callee or ""
    return module.function(name) if name.startswith("@") and module.defines(name) else None


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
        callee = _callee(module, call) if getattr(call, "op", None) in ("call", "invoke") \
            else None
        return {p for k, o in enumerate(call.ops) if callee is not None and
                k < len(callee.params) and d.indices[0] in _inserted_at(module, callee, k)
                for p in fields_passed(module, fn, fields, o.value) or ()} if callee else set()
    return set(fields_passed(module, fn, fields, v) or ())


def _fresh(module, fn, obj: str) -> bool:
    """obj is a local, or a block this function allocates (malloc, new, or a function with
    bitcode that returns a block it allocated and kept no pointer to: GSL's
    gsl_root_fsolver_alloc)."""
    d = fn.defs.get(obj)
    op = getattr(d, "op", None)
    return op == "alloca" or op in ("call", "invoke") and (
        d.callee in _ALLOCATORS or _returns_fresh(module, d.callee or "", 3))


def _returns_fresh(module, name: str, depth: int) -> bool:
    """The function returns a block it allocates, whose address it only stores into, loads
    from, compares and frees (memoized per module)."""
    memo = module.__dict__.setdefault("_returns_fresh", {})
    if name not in memo:
        memo[name] = False
        fn = module.function(name) if name.startswith("@") and module.defines(name) else None
        if fn is not None and fn.ret_ty == "ptr" and depth > 0:
            blocks = _returned_values(fn)
            memo[name] = bool(blocks) and all(
                getattr(fn.defs.get(b), "op", None) == "call" and
                (fn.defs[b].callee in _ALLOCATORS or
                 _returns_fresh(module, fn.defs[b].callee or "", depth - 1)) and
                _kept_private(module, fn, b) for b in blocks)
    return memo[name]


def _kept_private(module, fn, block: str, depth: int = 2) -> bool:
    """No pointer to block leaves fn but by its return (handed to a function with bitcode
    that keeps it private too, `depth` calls deep: GSL's driver_free on a failure path)."""
    work, done = [block], set()
    while work:
        v = work.pop()
        if v in done:
            continue
        done.add(v)
        for u in _uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast") and u.ops[0].value == v:
                work.append(u.name)
            elif u.op in ("phi", "select") and u.ty == "ptr":
                work.append(u.name)
            elif u.op == "store" and u.ops[0].value == v and \
                    u.ops[1].value in local_slot_stores(fn):
                work += _slot_loads(fn, u.ops[1].value)     # (a local variable, unoptimized)
            elif not (u.op in ("load", "icmp", "ret") or
                      u.op == "store" and u.ops[1].value == v and u.ops[0].value != v or
                      u.op == "call" and (u.callee in _FREES or
                                          (u.callee or "").startswith(_MARKERS)) or
                      _private_call(module, u, v, depth)):
                return False
    return True


def _slot_loads(fn, slot: str) -> list:
    """The values read from a local slot that only stores fill and loads read."""
    return [i.name for i in _uses(fn).get(slot, ()) if i.op == "load" and i.name]


def _return_slot(fn, slot: str) -> bool:
    """slot is a local slot that only stores fill, whose every load fn only returns."""
    return slot in local_slot_stores(fn) and all(
        u.op == "ret" for v in _slot_loads(fn, slot) for u in _uses(fn).get(v, ()))


def _private_call(module, call, v: str, depth: int) -> bool:
    """call hands v to a function with bitcode, whose parameters there keep it private and
    which returns nothing (a destructor or a `free` of its own)."""
    callee = _callee(module, call) if call.op == "call" and depth > 0 else None
    if callee is None or callee.ret_ty != "void" or call.callee == v:
        return False
    ks = [k for k, o in enumerate(call.ops) if o.value == v]
    return all(k < len(callee.params) and
               _kept_private(module, callee, callee.params[k].name, depth - 1) for k in ks)


def _uses(fn) -> dict:
    """fn.users(), computed once per function here (the analysis does not rewrite fn)."""
    memo = fn.__dict__.get("_users")
    if memo is None:
        memo = fn._users = fn.users()
    return memo


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
        for u in _uses(fn).get(v, ()):
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
                if any(at <= h < at + size for h in heads) and not (
                        at in heads and u.ops[0].ty == "ptr" and covered(
                            {(at,) + p for p in _paths_of(module, fn, u.ops[0].value, consts,
                                                          {**known, root: paths})},
                            _field_paths(module, fn, root, paths, at, u.ops[0].value))):
                    return False
            elif u.op == "store" and u.ops[0].value == v and at is not None and \
                    _single_store_slots(fn).get(u.ops[1].value) == v:
                loads = _slot_loads(fn, u.ops[1].value)      # v reloaded from a local slot
                work.extend(loads)
                if v in joined:
                    joined.update(loads)
            elif u.op == "store" and u.ops[0].value == v and at == 0 and returned and \
                    _return_slot(fn, u.ops[1].value):
                continue                        # (unoptimized code's `retval` slot)
            elif u.op == "store" and u.ops[0].value == v and at is not None and \
                    _back_pointer(module, fn, u, root):
                if not _closed_over(module, fn, root, paths):
                    return False                # (a record that points back to root)
            elif u.op == "store" and u.ops[0].value == v and at == 0 and \
                    into_param(module, fn, u, root):
                continue                        # (a `set_driver(state, d)`: callers check)
            elif u.op == "store" and u.ops[0].value == v and at == 0:
                obj, off = _base(module, fn, u.ops[1].value)   # kept in another record
                held = frozenset((off,) + p for p in paths) \
                    if off is not None and all(len(p) < MAX_DEPTH for p in paths) else None
                if held is not None and obj in (_returned_block(module, fn), _sret_param(fn)) \
                        and obj not in known:   # (a holder it returns: the caller checks it)
                    if not _confined(module, fn, obj, held, consts, {**known, root: paths},
                                     seen, returned=obj != _sret_param(fn)):
                        return False
                elif held is not None and obj not in known and obj.startswith("%") and \
                        _fresh(module, fn, obj):
                    # a record of fn's own (a wrapper of the record handed down: GSL's qagiu
                    # behind its own function record), which fn's derivative finds too
                    if not _confined(module, fn, obj, held, consts,
                                     {**known, root: paths, obj: held}, seen):
                        return False
                elif held is None or not held <= set(known.get(obj, ())) or \
                        not _confined(module, fn, obj, frozenset(known[obj]), consts,
                                      {**known, root: paths}, seen):
                    return False
            elif u.op in ("call", "invoke") and (u.callee or "").startswith(_MARKERS) or \
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
            elif u.op in ("call", "invoke") and u.callee in _FREES and \
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
                    held |= _held_in_result(module, u, k, seen_from)
                if held and not _confined(module, fn, u.name,
                                          closed(held, _back_pointers(module, fn, u.name)),
                                          consts, known, seen,
                                          returned=u.name == _returned_block(module, fn)):
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
        is_fp(u.ops[0].ty) for u in _uses(fn).get(gep.name, ()))


def _field_paths(module, fn, root: str, paths, at: int, value: str) -> set:
    """The paths of root's field at `at` that a pointer stored there must hold; those through
    a back pointer fn makes are left out where the value is a block just allocated (a part the
    record gets before the part's back pointer to it is set: GSL's control object)."""
    need = {p for p in paths if p[0] == at}
    if value.startswith("%") and _fresh(module, fn, _alias(module, fn, underlying(fn, value))):
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
            head = (off + path[0],) + path[1:]
            held_at.setdefault(dst, set()).update(cut(head + p) for p in seen_from)
    for dst, held in held_at.items():
        holder = next(((r, c) for r in known for c in [chain(module, fn, dst, r)] if c), None)
        if dst in known:
            if not covered(known[dst], held) or not _confined(
                    module, fn, dst, frozenset(known[dst]), consts, known, seen):
                return False
        elif holder is not None:                # (`s->state` while s is checked)
            r, c = holder
            if not covered(known[r], {cut(c + h) for h in held}) or not _confined(
                    module, fn, r, frozenset(known[r]), consts, known, seen):
                return False
        elif not dst.startswith("%") or not _fresh(module, fn, dst):
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
    callee = _callee(module, call)
    if callee is None:
        return True
    for k in ks:
        for j, held in _held_in_sret(module, call, k, paths).items():
            obj, at = decompose(module, fn, call.ops[j].value)
            if at is None:
                return False
            held = frozenset((at + p[0],) + p[1:] for p in held)
            if obj in known:
                if not held <= set(known[obj]) or \
                        not _confined(module, fn, obj, frozenset(known[obj]), consts, known, seen):
                    return False
            elif not (obj.startswith("%") and _fresh(module, fn, obj) and
                      _confined(module, fn, obj, held, consts, {**known, obj: held}, seen)):
                return False
        idx = _inserted_at(module, callee, k) if k < len(callee.params) else ()
        for u in _uses(fn).get(call.name, ()) if idx and call.name else ():
            if u.op != "extractvalue":
                return False                    # (the record value kept whole)
            if u.indices[:1] and u.indices[0] in idx and \
                    not _confined(module, fn, u.name, paths, consts, known, seen):
                return False
    return True


def _only_returned(fn, inst) -> bool:
    """The record value inst builds only goes on being built and is returned."""
    for u in _uses(fn).get(inst.name, ()):
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
    a block from malloc/new (_fresh) that nothing else writes (its own uses keep to _confined):
    the copy holds the same paths. Or it is that copy, seen from the destination's side."""
    dst, src, size = (o.value for o in copy.ops[:3])
    if not size.isdigit() or int(size) < max(p[0] for p in paths) + 8:
        return False
    if v == dst:
        return copies.get(v) == paths
    d, at = decompose(module, fn, dst)
    if src != v or at != 0 or decompose(module, fn, v)[1] != 0 or not _fresh(module, fn, d):
        return False
    if d in copies:
        return copies[d] == paths
    copies[d] = paths
    return _confined(module, fn, d, paths, set(), {}, seen, copies)
