"""The functions the pre-AD optimization runs on.

The pre-AD pipeline (LLVM's O2 without vectorization) exists for automatic differentiation: it
gives AD compact, scalar code. The rest of the program gets its O2 once, after AD, like any
other LTO link. So before the pre-AD pipeline, every function that AD cannot reach is marked
`optnone noinline` with a private tag, and the tag and the pair are removed again right after
it. A large program with one differentiated kernel then pays one optimization pipeline for most
of its code, not two (the link-time target of issue 12).

What AD can reach, from the module text alone: every function passed to a marker
(`__enzyme_*` calls; where the marker gets a value, a select or phi of functions, every function
its holder names) or named by a global whose name says enzyme (gradient registrations),
every function a reached function or global refers to, and, when a reached function calls
through a pointer, every function of the call's signature whose address is taken (AD dispatches
an indirect call over those), or, where the pointer is read from a constant table (a Rust trait
object's vtable), those at that slot of a table. Functions that hold markers are optimized too,
so marker arguments look as at -O2, and so are their callers where the marker's operands come
from them (_holders), with what those call.
A function left unoptimized is still differentiated if this guess ever misses it (AD handles
unoptimized IR: the Ref pipeline), but slower, and code it calls may have been left to its native
code (lto/ad_pipeline.py `_native_modules`): Rust's allocator shim then stays a call into
`__rdl_alloc` without bitcode, whose result gets no shadow."""
from __future__ import annotations

import re

from enzyme_cc.ad.api import vtables
from enzyme_cc.ad.api.markers import MARKER_VALUE
from enzyme_cc.ir.model import parse_module

_TAG = '"enzyme-cc-later"'
UNREACHED = '"enzyme-cc-unreached"'      # (kept after the pre-AD pipeline, unlike _TAG)
_NAME = r'(?:[-\w.$]+|"[^"]+")'
_DEFINE = re.compile(rf"^define [^\n]*?@({_NAME})\(", re.M)
_GLOBAL = re.compile(rf"^@({_NAME}) = [^\n]*", re.M)
_REF = re.compile(rf"@({_NAME})(\(?)")
_GROUP = re.compile(r"^attributes #(\d+) = \{(.*)\}", re.M)
_GROUP_REF = re.compile(r"#(\d+)")
# a call's callee is the first name followed by "(" after the keyword (a function type such as
# "(ptr, ...)" before it is preceded by a space)
_CALLEE = re.compile(rf"\b(?:call|invoke)\b[^\n]*?([@%]){_NAME}\(")
# (not enzyme-cc's own runtime helpers, __enzyme_cc_*)
_MARKER = re.compile(r"\b(?:call|invoke)\b[^\n]*?@[\w.$]*__enzyme_(?!cc_)")
_FIRST_ARG = re.compile(r"@[\w.$]*__enzyme_(?!cc_)\w*\(([^,)]*)")


def _indirect(body: str) -> list[tuple[tuple[str, int] | None, int | None]]:
    """(signature (_signature), table slot (_slot)) of each indirect call in a function body;
    the signature is None for a call whose callee type is spelt out (a variadic call: any
    function may be its target)."""
    out = []
    for m in _CALLEE.finditer(body):
        if m.group(1) == "%":
            head = body[max(body.rfind("\n", 0, m.start()), 0):m.start(1)].split()
            end = body.find("\n", m.end())
            args = _enclosed(body[m.end():len(body) if end < 0 else end])
            sig = None if not head or head[-1].endswith(")") else \
                (head[-1], len(_split_args(args)))
            callee = re.match(_NAME, body[m.start(1) + 1:])
            out.append((sig, _slot(body, "%" + callee.group(0)) if sig and callee else None))
    return out


def _slot(body: str, callee: str) -> int | None:
    """The byte offset from a table's address at which an indirect call's callee is read, where
    that read is marked `!invariant.load` (rustc's reads of trait-object vtables): memory that
    never changes is a constant global's, so the callee is a function at that slot of a
    constant table. None for any other callee."""
    m = re.search(rf"^\s*{re.escape(callee)} = load ptr, ptr (%{_NAME})[^\n]*!invariant\.load\b",
                  body, re.M)
    if m is None:
        return None
    d = re.search(rf"^\s*{re.escape(m.group(1))} = (\w+)([^\n]*)", body, re.M)
    if d is None or d.group(1) != "getelementptr":
        return 0                                        # the table's address itself
    k = re.match(rf" (?:inbounds |nuw |nusw )*i8, ptr %{_NAME}, i64 (-?\d+)$", d.group(2))
    return int(k.group(1)) if k else None


def _signature(define: str, name: str) -> tuple[str, int] | None:
    """(the last word of the return type, the number of parameters) of a define line: every
    function with the signature of an indirect call has these of the call (None: variadic)."""
    params = _split_args(_params(define, name))
    head = define.split(f"@{name}(", 1)[0].split()
    return None if "..." in params or not head else (head[-1], len(params))


def _functions(text: str) -> dict[str, tuple[str, str]]:
    """name -> (define line, body) of every function defined in the module."""
    out = {}
    for m in _DEFINE.finditer(text):
        end = text.find("\n}\n", m.end())
        end = len(text) if end < 0 else end
        line_end = text.find("\n", m.start())
        out[m.group(1)] = (text[m.start():line_end], text[line_end:end])
    return out


_LABEL_LINE = re.compile(r"^(" + _NAME + r"):", re.M)
_SUCCESSOR = re.compile(r"\blabel %(" + _NAME + r")")
_RET = re.compile(r"^\s+ret\b", re.M)


def _live(body: str) -> str:
    """The text of the blocks of a function body from which a `ret` is reachable. The others
    (a panic, an abort, a throw and the code building its message, cleanups ending in
    `resume`) run as primal code without derivative (structure/cfg.doomed_blocks), so what
    only they name is not reached: Rust's panic machinery would bring in most of its standard
    library, formatting and all. The whole body where no block returns."""
    if "unreachable" not in body and "resume " not in body:
        return body     # (no block ends the function without a return: only a loop that never
        #                  exits could reach none, and keeping it reaches more, never less)
    starts = [(0, "")] + [(m.start(), m.group(1)) for m in _LABEL_LINE.finditer(body)]
    if len(starts) == 1 or not _RET.search(body):
        return body
    blocks = {label: body[a:(starts[k + 1][0] if k + 1 < len(starts) else len(body))]
              for k, (a, label) in enumerate(starts)}
    preds: dict[str, list[str]] = {}
    for label, text in blocks.items():
        for m in _SUCCESSOR.finditer(text):
            preds.setdefault(m.group(1), []).append(label)
    live = {label for label, text in blocks.items() if _RET.search(text)}
    todo = list(live)
    while todo:
        for p in preds.get(todo.pop(), ()):
            if p not in live:
                live.add(p)
                todo.append(p)
    return "".join(text for label, text in blocks.items() if label in live)


def _walk(funcs, globals_, todo, address_taken=None, tables=None) -> set[str]:
    """The functions and globals `todo` refers to, transitively (what blocks that never return
    name aside). With `address_taken`, an indirect call in a function reached adds the
    address-taken functions of its signature (AD dispatches an indirect call over those, of
    the exact types): of the same last word of the return type and number of parameters;
    every one for a call whose callee type is spelt out, and variadic ones for every call (the
    text alone cannot compare types exactly). Where the callee is read from a constant table
    (_slot), only those of them at that slot of a table (`tables()`: ad/api/vtables.py's, of
    the whole module; None where it cannot be built): a Rust trait object's drop or method
    call cannot land on the rest of std's address-taken functions."""
    seen: set[str] = set()
    by_signature: dict = {}         # the address-taken functions of each signature
    if address_taken:
        for n in address_taken:
            if n in funcs:
                by_signature.setdefault(_signature(funcs[n][0], n), []).append(n)
    dispatched = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in funcs:
            body = _live(funcs[name][1])
            todo += [m.group(1) for m in _REF.finditer(body)]
            for sig, slot in _indirect(body) if by_signature else ():
                if (sig, slot) in dispatched:
                    continue
                dispatched.add((sig, slot))
                fns = [n for key, ns in by_signature.items()
                       if sig is None or key in (sig, None) for n in ns]
                tabs = tables() if slot is not None and tables is not None else None
                if tabs is not None:
                    at = tabs.at_slot(slot)
                    fns = [n for n in fns if f"@{n}" in at]
                todo += fns
        elif name in globals_:
            todo += [m.group(1) for m in _REF.finditer(globals_[name].split("=", 1)[1])]
    return seen


def references(text: str) -> tuple[set[str], set[str]]:
    """(the names `text` refers to, those of them it refers to other than as a call's callee:
    an address taken), as the text writes them."""
    named, taken = set(), set()
    for m in _REF.finditer(text):
        named.add(m.group(1))
        if not m.group(2):
            taken.add(m.group(1))
    return named, taken


def index(text: str) -> tuple[dict, dict]:
    """(name -> (define line, body) of every function the module `text` defines, name -> line of
    every global variable), names as the text writes them."""
    return _functions(text), {m.group(1): m.group(0) for m in _GLOBAL.finditer(text)}


def variables_named(funcs: dict, globals_: dict, names: list[str]) -> set[str]:
    """The variables that the functions `names` name, and those that their initializers name,
    transitively (`index`'s dicts)."""
    seen: set[str] = set()
    todo = [m.group(1) for n in names for m in _REF.finditer(funcs[n][1])
            if m.group(1) in globals_]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += [m.group(1) for m in _REF.finditer(globals_[name].split("=", 1)[1])
                     if m.group(1) in globals_]
    return seen


def _reached(funcs, globals_, address_taken, chain, tables) -> set[str]:
    """Functions and globals AD may reach: from marker operands, enzyme globals and what the
    callers of marker holders pass them (`chain`, from _holders); `tables` as _walk's."""
    refs, whole = chain
    todo = [n for n, g in globals_.items() if "enzyme" in n.lower()] + list(refs) + list(whole)
    for name, (define, body) in funcs.items():
        through_value = False
        for line in body.split("\n") if "__enzyme_" in body else ():   # (_MARKER's literal)
            if _MARKER.search(line):
                todo += [m.group(1) for m in _REF.finditer(line) if not m.group(2)]
                first = _FIRST_ARG.search(line)
                # (a parameter comes from the callers, whose arguments _holders follows)
                through_value = through_value or bool(
                    first and "%" in first.group(1) and
                    _value(first.group(1)) not in _param_names(define, name))
        if through_value:
            # a marker's function comes through a value (a select or phi of functions in
            # bitcode optimized at its compile step, rustc's): any function the holder names
            todo += [m.group(1) for m in _REF.finditer(body) if not m.group(2)]
    return _walk(funcs, globals_, todo, address_taken, tables)


def _params(define: str, name: str) -> str:
    """The parameter list of a define line (up to the matching parenthesis)."""
    return _enclosed(define.split(f"@{name}(", 1)[1])


def _enclosed(rest: str) -> str:
    """The text after an opening parenthesis up to the one that closes it."""
    depth = 1
    for k, c in enumerate(rest):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            return rest[:k]
    return rest


def _split_args(text: str) -> list[str]:
    """An argument or parameter list split at its top-level commas."""
    out, depth, start, quoted = [], 0, 0, False
    for k, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:k])
            start = k + 1
    out.append(text[start:])
    return [a.strip() for a in out if a.strip()]


def _value(arg: str) -> str:
    """The value of one argument (`ptr noundef nonnull %f` -> `%f`)."""
    return arg.split()[-1] if arg.split() else ""


def _param_names(define: str, name: str) -> list[str]:
    """The names of a function's parameters, in order (unnamed ones numbered as LLVM does)."""
    out, number = [], 0
    for p in _split_args(_params(define, name)):
        if p == "...":
            continue
        last = _value(p)
        if last.startswith("%"):
            out.append(last)
        else:
            out.append(f"%{number}")
            number += 1
    return out


def _call_args(body: str, callee: str) -> list[list[str]]:
    """The argument lists of every direct call of `callee` in `body`."""
    out = []
    for m in re.finditer(rf"@{re.escape(callee)}\(", body):
        line = body[body.rfind("\n", 0, m.start()) + 1:m.start()]
        if re.search(r"\b(?:call|invoke)\b", line):
            out.append(_split_args(_enclosed(body[m.end():])))
    return out


def _holders(funcs: dict[str, tuple[str, str]], address_taken: set[str]):
    """(holders, roots, chain): the functions whose optimization the markers need, those among
    them whose callers give the markers' operands, and what those callers give. Holders are
    the functions holding a marker call and, when one of them takes pointers (the function to
    differentiate, or its arguments, may come from its callers, as in Enzyme's C++ header),
    every function calling it, directly or not, up to one that takes no pointers: inlining
    into them makes the marker's operands constants. Where a marker's function is a parameter,
    what the callers pass at that position is followed up the chain: `chain` is (the globals
    and functions given to the holders on those calls, the callers that compute the function
    themselves, every function they name then counting as reached). None when such a holder
    is called through a pointer, or a marker is kept in a function pointer (then everything
    is optimized)."""
    callers: dict[str, set[str]] = {}
    for name, (_, body) in funcs.items():
        for m in _REF.finditer(body):
            if m.group(2):                                  # a direct call
                callers.setdefault(m.group(1), set()).add(name)
    holders = {n for n, (_, body) in funcs.items() if "__enzyme_" in body and _MARKER.search(body)}
    # a marker kept in a function pointer: what it will call, and with what, is known after O2
    if any("__enzyme_" in body and MARKER_VALUE.search(body) for _, body in funcs.values()):
        return None
    # the parameter positions of each function that carry a marker's function
    positions: dict[str, set[int]] = {}
    for h in holders:
        names = _param_names(funcs[h][0], h)
        for m in _FIRST_ARG.finditer(funcs[h][1]):
            if _value(m.group(1)) in names:
                positions.setdefault(h, set()).add(names.index(_value(m.group(1))))
    roots = {n for n in holders if "ptr" in _params(funcs[n][0], n)    # (main has no callers)
             and (n in callers or n in address_taken)}
    refs: set[str] = set()
    whole: set[str] = set()
    todo = list(roots)
    while todo:
        n = todo.pop()
        if "ptr" not in _params(funcs[n][0], n):
            continue    # its callers hand it no function nor data (Rust's main, run by pointer)
        if n in address_taken:
            return None
        for c in callers.get(n, ()):
            names = _param_names(funcs[c][0], c)
            grown = False
            for args in _call_args(funcs[c][1], n):
                refs.update(m.group(1) for a in args for m in _REF.finditer(a))
                for k in positions.get(n, ()):
                    v = _value(args[k]) if k < len(args) else ""
                    if v in names:
                        grown |= names.index(v) not in positions.setdefault(c, set())
                        positions[c].add(names.index(v))
                    elif not v.startswith("@"):
                        whole.add(c)        # computed in c: what it names may be the function
            if c not in roots or grown:
                roots.add(c)
                todo.append(c)
    return holders | roots, roots, (refs, whole)


def _scope(text: str):
    """(functions, globals, holders, reached, roots) of the module text, or None when every
    function counts as reached (a holder called through a pointer). `reached`: what AD may
    reach and the holders' callers that give its operands (`roots`: their modules go to AD; what
    they call besides is optimized with them, mark_unreached)."""
    funcs = _functions(text)
    globals_ = {m.group(1): m.group(0) for m in _GLOBAL.finditer(text)}
    address_taken = {m.group(1) for _, body in funcs.values() for m in _REF.finditer(body)
                     if not m.group(2)} | {m.group(1) for g in globals_.values()
                                           for m in _REF.finditer(g) if not m.group(2)}
    scope = _holders(funcs, address_taken)
    if scope is None:
        return None
    holders, roots, chain = scope
    memo = []

    def tables():               # (parsed only where a reached call reads a table slot)
        if not memo:
            try:
                memo.append(vtables.tables(parse_module(text)))
            except (ValueError, IndexError, KeyError):
                # IR the model cannot index (it may hold modules AD never reads): no narrowing
                memo.append(None)
        return memo[0]
    reached = _reached(funcs, globals_, address_taken, chain, tables) | roots
    return funcs, globals_, holders, reached, roots


def reached_definitions(text: str) -> tuple[set[str], set[str]] | None:
    """(unquoted names of the functions, global variables and aliases defined in `text` that AD
    may reach or that hold markers, those of the functions among them that call an Enzyme entry
    point) (None: all of them). An object defining none of them, naming none of the globals or
    of the functions that call entry points, can be linked as compiled (ad_pipeline.py)."""
    scope = _scope(text)
    if scope is None:
        return None
    funcs, globals_, holders, reached, _ = scope
    defined = set(funcs) | {g for g, line in globals_.items()
                            if not re.match(r"@\S+ = (?:external|extern_weak) ", line)}
    return {n.strip('"') for n in (reached | holders) & defined}, \
        {n.strip('"') for n in holders}


def mark_unreached(text: str) -> str:
    """`text` with every function AD cannot reach tagged optnone + noinline (see the module
    docstring); functions that are noinline, optnone or alwaysinline already are left alone.
    Each of them, those too, also gets the attribute UNREACHED, which unmark keeps: the post-AD
    split spreads such code over its parts (lto/untouched.py)."""
    scope = _scope(text)
    if scope is None:
        return text
    funcs, globals_, holders, reached, roots = scope
    # the callers' other callees (no indirect call's targets): they may inline into the
    # markers' operands
    reached = reached | _walk(funcs, globals_, list(roots))
    groups = {g: attrs for g, attrs in _GROUP.findall(text)}
    kinds = {}          # function -> the attributes its group's copy adds
    for name, (define, _) in funcs.items():
        if name in reached or name in holders:
            continue
        attrs = " ".join(groups.get(g, "") for g in _groups_of(define))
        kept = re.search(r"\b(noinline|optnone|alwaysinline|optsize|minsize|optdebug)\b",
                         attrs + define)
        kinds[name] = UNREACHED if kept else f"noinline optnone {_TAG} {UNREACHED}"
    if not kinds:
        return text
    return _regrouped(text, groups, lambda name, attrs: f"{attrs.strip()} {kinds[name]}"
                      if name in kinds else None)


def marked_unreached(text: str, funcs: dict) -> set[str]:
    """The functions of `funcs` (`index`'s) that mark_unreached gave UNREACHED, which the
    pre-AD pipeline and AD keep."""
    marked = {g for g, attrs in _GROUP.findall(text) if UNREACHED in attrs}
    return {n for n, (define, _) in funcs.items() if marked.intersection(_groups_of(define))}


def _groups_of(define: str) -> list[str]:
    """The attribute groups a define line names (`#5`), after its parameter list."""
    return _GROUP_REF.findall(define.split(")")[-1])


def untag(text: str, names: set[str]) -> str:
    """`text` with the functions `names` (as the text writes them) given copies of their
    attribute groups without mark_unreached's tag and the pair it brought (lto/carve.py: code
    compiled apart, never by the pre-AD pipeline); UNREACHED stays."""
    groups = {g: attrs for g, attrs in _GROUP.findall(text)}
    return _regrouped(text, groups, lambda name, attrs: _untagged(attrs).strip()
                      if name in names and _TAG in attrs else None)


def _regrouped(text: str, groups: dict, change) -> str:
    """`text` with each function whose one attribute group (clang gives each function one)
    `change(name, the group's attributes)` gives new attributes for pointed at a copy of the
    group holding them, one copy per group and new attributes."""
    next_id, copies = max((int(g) for g in groups), default=0) + 1, {}

    def fix(m):
        nonlocal next_id
        line = m.group(0)
        d = _DEFINE.match(line)
        refs = _groups_of(line) if d else []
        new = change(d.group(1), groups.get(refs[0], "")) if len(refs) == 1 else None
        if new is None:
            return line
        if (refs[0], new) not in copies:
            copies[refs[0], new], next_id = next_id, next_id + 1
        return re.sub(rf"#{refs[0]}\b(?=[^#]*$)", f"#{copies[refs[0], new]}", line)

    text = re.sub(r"^define [^\n]*", fix, text, flags=re.M)
    return text + "".join(f"\nattributes #{n} = {{ {attrs} }}" for (_, attrs), n in copies.items())


def _untagged(attrs: str) -> str:
    return re.sub(r" (noinline|optnone)\b", "", attrs.replace(" " + _TAG, ""))


def unmark(text: str) -> str:
    """Undo mark_unreached on the optimized module text: drop the tag and the pair it brought."""
    out = []
    for line in text.split("\n"):
        if line.startswith("attributes #") and _TAG in line:
            line = _untagged(line)
        out.append(line)
    return "\n".join(out)
