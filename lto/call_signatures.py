"""Calls whose argument types differ from the definition they reach by a one-element aggregate:
flang gives a `bind(c)` dummy `character(kind=c_char), value` the IR type `[1 x i8]` where the
C caller, declaring `char`, passes an `i8`. The merged module links them as they are (LLVM
accepts a call whose function type is not the callee's, and the ABI agrees), but derivatives
call the callee's derivative with the callee's parameter types: such arguments are wrapped
(insertvalue) or unwrapped (extractvalue) at the call, so that call and definition agree."""
from __future__ import annotations

import re

from enzyme_cc.ir.inst import argument_groups, with_arguments
from enzyme_cc.ir.lexer import join, one_element, parse_type, tokenize

_DEFINE_NAME = re.compile(r'(@[-\w.$]+|@"[^"]+")\(')


def _param_types(toks, name) -> list[str] | None:
    call = argument_groups(toks, name)
    return None if call is None else [parse_type(g, 0)[0] if g else "" for g in call[2]]


def match_calls(text: str) -> str:
    """Every direct call or invoke of a defined function whose argument differs from its
    parameter only by a one-element aggregate gets the parameter's type (see the module doc)."""
    if "[1 x " not in text and "{ " not in text:
        return text
    lines = text.split("\n")
    params = {}
    for line in lines:
        if line.startswith("define "):
            m = _DEFINE_NAME.search(line)
            if m:
                types = _param_types(tokenize(line), m.group(1))
                if types and any(one_element(t) for t in types):
                    params[m.group(1)] = types
    if not params:
        return text
    out, count = [], 0
    for line in lines:
        if not line.startswith("  ") or ("call " not in line and "invoke " not in line) or \
                not any(f"{name}(" in line for name in params):
            out.append(line)
            continue
        toks = tokenize(line)
        name = next((t for t in toks if t in params), None)
        call = argument_groups(toks, name) if name else None
        if call is None or toks[call[0] - 2] == ")":    # (a call naming its function type)
            out.append(line)
            continue
        groups = call[2]
        want = params[name]
        changed = False
        for k, g in enumerate(groups):
            if k >= len(want) or not g:
                continue
            have, _ = parse_type(g, 0)
            value = g[-1]
            if have == want[k]:
                continue
            if one_element(want[k]) == have:
                op = f"insertvalue {want[k]} poison, {have} {value}, 0"
            elif one_element(have) == want[k]:
                op = f"extractvalue {have} {value}, 0"
            else:
                continue
            count += 1
            tmp = f"%ecc.callarg.{count}"
            out.append(f"  {tmp} = {op}")
            groups[k] = tokenize(f"{want[k]} {tmp}")
            changed = True
        if not changed:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        out.append(indent + join(with_arguments(toks, call[0], call[1], groups)))
    return "\n".join(out)
