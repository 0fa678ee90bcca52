"""A C++ exception thrown while a derivative runs: a message instead of a bare terminate.

Derivatives do not unwind (exception paths are not differentiated: landing pads are dropped),
so an exception thrown on a taken path inside the differentiated code reaches std::terminate,
even where the program catches it around the primal call: "terminate called after throwing an
instance of 'int'", with nothing saying that the derivative is why. In a module that throws,
each marker call runs under a terminate handler of ours that says so, the program's own handler
put back after the call.
"""
from __future__ import annotations

import hashlib

from ..structure.diagnostics import demangle_hint

SET_TERMINATE = "@_ZSt13set_terminatePFvvE"      # std::set_terminate(void (*)())


def may_throw(module) -> bool:
    """The module throws C++ exceptions somewhere."""
    return "@__cxa_throw" in module.declarations or module.defines("@__cxa_throw")


def guard(gen, req, lines: list[str]) -> list[str]:
    """The marker call's replacement `lines` run under our terminate handler."""
    name = demangle_hint(req.fn).replace("\\", "/").replace('"', "'")
    text = (f"enzyme-cc: a C++ exception was thrown while the derivative of '{name}' ran; "
            "derivatives do not unwind (exception paths are not differentiated), so the "
            "program stops; hint: keep the differentiated code on paths that do not throw "
            "(check the condition before the marker call, and call the function itself where "
            "it may throw)\n").encode()
    # (the message and its handler named by their text: one per differentiated function; the
    # saved handler by the marker call's line, several guarded calls may share a caller)
    k = hashlib.sha1(text).hexdigest()[:12]
    msg, handler = f"@__enzyme_cc_throw_msg.{k}", f"@__enzyme_cc_throw_stop.{k}"
    escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                      for b in text)
    gen.declare_raw(msg, f"{msg} = private unnamed_addr constant [{len(text)} x i8] "
                         f'c"{escaped}"')
    gen.declare_raw(handler, f"define internal void {handler}() noreturn nounwind {{\n"
                             f"  call i64 @write(i32 2, ptr {msg}, i64 {len(text)})\n"
                             "  call void @abort()\n  unreachable\n}")
    gen.declare_raw("@write", "declare i64 @write(i32, ptr, i64)")
    gen.declare_raw("@abort", "declare void @abort() noreturn nounwind")
    gen.declare_raw(SET_TERMINATE, f"declare ptr {SET_TERMINATE}(ptr)")
    old = f"%ad.terminate.{req.line}"
    tail = [lines.pop()] if lines and lines[-1].startswith("br label ") else []
    return [f"{old} = call ptr {SET_TERMINATE}(ptr {handler})", *lines,
            f"{old}.back = call ptr {SET_TERMINATE}(ptr {old})", *tail]   # (named: a numbered
    # function would count an unnamed result)
