"""The module's marker calls rewritten: each `__enzyme_autodiff`/`__enzyme_fwddiff`/split-mode
call becomes a call of the derivative the Generator synthesizes for it (`MarkerCalls.run`, one
round of generate.differentiate), refusals collected per marker as a compiler reports each
error. Also which functions reach a marker (the rounds go innermost first)."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from ..analysis.const_fields import act_key
from ..analysis.typeinfo import TypeInfo
from ..structure.cfg import always_passes
from ..structure.diagnostics import argument_label, located, quoted_name, source_of
from ..api import (exceptions, global_shadows, iter_marker, reverse_vector, rule_wrappers,
                   shared_globals)
from ..api.markers import drop_unwind_edge, find_requests
from ..api.marker_rewrite import (rewrite_call, rewrite_split_call, rewrite_tape_size,
                                  rewrite_primal_reverse, rewrite_vector_call, with_marker_location)
from ..tape import runtime


class MarkerCalls:
    """Mixin of the Generator: the module-level rewrite of marker calls."""

    def request_hints(self, req) -> dict:
        """Pointer-argument hints for a marker call, from the caller's own accesses."""
        fn = self.module.function(req.fn)
        cache = self.__dict__.setdefault("_caller_types", {})
        info = cache.get(req.caller.name) or cache.setdefault(req.caller.name,
                                                               TypeInfo(self.module, req.caller))
        values = [op.value for ty, op in req.args] if req.args else []
        out, k = {}, 0
        for p, a in zip(fn.params, req.acts):
            if k >= len(values):
                break
            if p.ty == "ptr" and values[k].startswith(("%", "@")):
                out[p.name] = info.pointee_summary(values[k])
            k += 2 if a in ("dup", "dupnoneed") or (a == "active" and req.mode == "forward") else 1
        return out

    # ---- whole module --------------------------------------------------------------------------
    def find_shared_globals(self, roots):
        self.roots = set(roots)
        shared_globals.find_shared_globals(self, roots)

    def always_runs(self, fn, label: str) -> bool:
        """Whether every run of the derivatives being made reaches block `label` of fn: every
        path through fn passes it, and fn is a marker's function or is called, in a block
        that every path through the caller passes, by a function of which the same holds. A
        function no code calls directly (an indirect call's candidate) counts as reached: its
        refusal is the indirect call's to handle (api/dispatch.py stops where it is called)."""
        return always_passes(fn, fn.blocks[0].label, {label}) and \
            self._always_called(fn.name, set())

    def _always_called(self, f: str, seen: set) -> bool:
        memo = self.__dict__.setdefault("_always_called_memo", {})
        if f in getattr(self, "roots", ()):
            return True
        if f in memo or f in seen:
            return memo.get(f, False)
        seen.add(f)
        found, called = False, False
        for g in sorted(self.global_reach):
            caller = self.module.function(g) if f in self._callees(g) else None
            if caller is None:
                continue
            called = True
            sites = {i.block.label for i in caller.insts() if i.op in ("call", "invoke") and
                     (i.callee == f or any(o.value == f for o in i.ops))}   # (or forks it)
            if sites and always_passes(caller, caller.blocks[0].label, sites) and \
                    self._always_called(g, seen):
                found = True
                break
        memo[f] = found or not called
        return memo[f]

    def zero_shared_shadows(self) -> list[str]:
        """A derivative starts from the shadows of the shared globals as of entry (zero floats,
        pointers re-derived from the primal ones): one call of a function defined at the end."""
        if not (self.shared_globals or self.scratch_globals or self.reset_globals):
            return []
        self.entry_fn = self.entry_fn or f"@ad.shadow.entry.{self.counter}"
        return [f"call void {self.entry_fn}()"]

    def _body(self, f: str) -> str:
        start, end = self.module._bodies[f]
        return "\n".join(self.module._lines[start + 1:end])

    def _fork_targets(self) -> set[str]:
        """The functions the module's OpenMP forks run."""
        if not hasattr(self, "_forked"):
            self._forked = set(FORK_TARGET.findall(self.module.text)) \
                if "@__kmpc_fork_call(" in self.module.text else set()
        return self._forked

    def _callees(self, f: str) -> set[str]:
        """Functions f calls (from its text, without parsing it): those it names in call
        position, and the outlined regions its OpenMP forks run."""
        if f not in self._callee_names:
            body = self._body(f)
            self._callee_names[f] = set(CALLEE.findall(body)) | set(FORK_TARGET.findall(body))
        return self._callee_names[f]

    def reaches_marker(self, fn_name: str) -> bool:
        """Does fn (or anything it calls with bitcode) contain a marker call? (Asked for every
        target of an indirect call too: kept per round.)"""
        known = self.__dict__.setdefault("_reaches_marker", {})
        if fn_name not in known:
            known[fn_name] = self._finds_marker(fn_name)
        return known[fn_name]

    def _finds_marker(self, fn_name: str) -> bool:
        return self._reaches(fn_name, lambda f: MARKER_CALL.search(self._body(f)))

    def _reaches(self, fn_name: str, test) -> bool:
        """Does test hold of fn or of anything it calls with bitcode?"""
        seen, todo = set(), [fn_name]
        while todo:
            f = todo.pop()
            if f in seen or f not in self.module._bodies:
                continue
            seen.add(f)
            if test(f):
                return True
            todo.extend(self._callees(f))
        return False

    def _thread_note(self, req, error):
        """A refusal of a function that starts threads (Rust's std::thread::scope fails first
        in the thread handle's bookkeeping, whose message says nothing of threads): the reason."""
        if "pthread_create" in error.message or \
                not self._reaches(req.fn, lambda f: "@pthread_create" in self._callees(f)):
            return error
        return UserError(error.message + f"\nnote: '{req.fn[1:]}' starts threads "
                         "(pthread_create: std::thread, a thread pool), which enzyme-cc does not "
                         "differentiate; hint: use OpenMP (`#pragma omp parallel for`, "
                         "`!$omp parallel do`) or start the threads outside the differentiated "
                         "function", error.exit_code, error.more)

    def _request_note(self, req, error):
        """A refusal located in the code a marker call's derivative runs, not at the call: which
        call asked for it (a program may have several), and, where the message blames an
        enzyme_const argument, the pointers that call passes so."""
        src = source_of(self.module, req.inst.md.get("!dbg"))
        if src and error.message.startswith(src + ":") or "\nnote: in the derivative" in \
                error.message:
            return error
        where = f"at {src}" if src else f"in {quoted_name(req.caller.name)}"
        note = f"\nnote: in the derivative of {quoted_name(req.fn)} asked for {where}"
        if "enzyme_const" in error.message and self.module.defines(req.fn):
            fn = self.module.function(req.fn)
            const = [argument_label(fn, k) for k, (p, a) in enumerate(zip(fn.params, req.acts))
                     if a == "const" and p.ty == "ptr"]
            if const:
                note += f", which passes {', '.join(const)} as enzyme_const"
        return UserError(error.message + note, error.exit_code, error.more)

    def _unreached_marker(self, lines, req):
        """A marker call on a function pointer that nothing in the program passes (markers.py):
        a call of the bad-pointer stop, and a placeholder for its result."""
        inst = req.inst
        new = [f"call void @__enzyme_cc_bad_indirect_call(ptr {inst.ops[0].value})"]
        self.helpers.add(("badcall",))
        if inst.name:
            new.append(f"{inst.name} = freeze {inst.ty} poison")
        if inst.op == "invoke":
            new.append(f"br label {inst.targets[0]}")
        _replace_marker(lines, req, new)

    def _rewrite(self, req, table) -> list[str]:
        """The lines that replace one marker call."""
        if req.mode == "tape_size":
            new = rewrite_tape_size(self, req)
        elif getattr(req, "reverse_vector", False):
            hints = self.request_hints(req)
            req.split_key = (req.fn, act_key(req.acts), req.ret_active,
                             self.with_variant(req.fn, hints, split_kind(False, req.width)))
            new = reverse_vector.rewrite(self, req, self.split(
                req.fn, req.acts, req.ret_active, hints, multi=req.width))
        elif req.mode == "reverse" and getattr(req, "opts", {}).get("primal"):
            if getattr(req, "candidates", None):
                raise UserError(f"{located(self.module, req.caller, req.inst)}: "
                                "enzyme_primal_return with a function chosen at run time is "
                                "not supported; hint: call the marker once per function")
            new = rewrite_primal_reverse(self, req, self.split(
                req.fn, req.acts, req.ret_active, self.request_hints(req)))
        elif req.mode in ("augment", "split_reverse"):
            # multi: enzyme_nofree lets the program reverse one tape more than once
            hints = self.request_hints(req)
            req.split_key = (req.fn, act_key(req.acts), req.ret_active,
                             self.with_variant(req.fn, hints, split_kind(False, True)))
            new = rewrite_split_call(self, req, self.split(req.fn, req.acts, req.ret_active,
                                                           hints, multi=True))
            if req.inst.op == "invoke":
                new.append(f"br label {req.inst.targets[0]}")
        else:
            hints = self.request_hints(req)
            primal, tangent = getattr(req, "returns", (False, True))

            def derivative(fn):
                if req.mode == "forward":   # the primal comes from the {primal, tangent} form
                    return self.forward(fn, req.acts, callee=primal, hints=hints,
                                        width=getattr(req, "width", 1),
                                        error=getattr(req, "error", False))
                return self.gradient(fn, req.acts, req.ret_active, hints)
            name, rty = derivative(req.fn)
            keep = None                     # forward: the primal alone, or nothing
            if primal and not tangent:
                keep = 0 if rty != self.module.function(req.fn).ret_ty else None
            elif not tangent:
                keep = -1
            if getattr(req, "candidates", None):
                name = self.marker_dispatcher(req, name, rty, derivative)
            if getattr(req, "vector_args", None) is not None:
                new = rewrite_vector_call(self, req, name, rty)
                if req.inst.op == "invoke":
                    new.append(f"br label {req.inst.targets[0]}")
            else:
                new = rewrite_call(self, req, name, rty, keep)
        if req.mode in ("reverse", "forward", "augment"):
            new = self.zero_shared_shadows() + new
        if table is not None and req.mode in ("reverse", "forward", "augment"):
            new = table.around_call(req, new)
        if req.mode in ("reverse", "forward", "augment", "split_reverse") and \
                exceptions.may_throw(self.module):
            new = exceptions.guard(self, req, list(new))
        return new

    def run(self, requests=None, later=()) -> str:
        """Rewrite the marker calls of `requests`; `later` are those of the rounds after this one
        (derivatives of functions calling these markers)."""
        if requests is None:
            requests = find_requests(self.module)
        gs_calls = global_shadows.api_calls(self.module)
        if not requests and not gs_calls:
            return self.module.text
        lines = list(self.module._lines)
        for req in [r for r in requests if r.mode == "unreached"]:
            self._unreached_marker(lines, req)
        requests = [r for r in requests if r.mode != "unreached"]
        for req in requests:         # a function with a registration: the registration applies
            req.fn = rule_wrappers.with_rules(
                self, req.fn, located(self.module, req.caller, req.inst))
        # the marker calls whose call trees read_only.py looks at (not with the global-shadow
        # API, whose helpers swap storage behind the program's back)
        self.ro_requests = None if gs_calls else requests
        table = global_shadows.setup(self, requests, gs_calls, later)
        # (every function a marker may be handed at run time: its call tree takes part too)
        self.find_shared_globals([f for r in requests for f in [r.fn, *(
            getattr(r, "candidates", None) or ((), None))[0]]])
        errors = []
        for req in requests:
            try:
                new = self._rewrite(req, table)
            except UserError as e:   # each marker's refusal, as a compiler reports each error
                e = self._request_note(req, self._thread_note(req, e))
                if all(e.message != x.message for x in errors):
                    errors.append(e)
                if len(errors) == MAX_ERRORS:
                    break
                continue
            except Exception:
                if errors:           # (a failure that an earlier refusal's leftovers caused)
                    continue
                raise
            _replace_marker(lines, req, new)
        if errors:
            raise UserError(errors[0].message, more=[e.message for e in errors[1:]])
        if table is not None:
            global_shadows.lower_calls(self, lines, gs_calls)
        text = "\n".join(lines)
        extra = [iter_marker.bump_iters(f) for f in self.out]   # derivatives: one order more
        if table is not None:
            extra += table.definitions()
        if self.entry_fn:          # after all requests: every lane is known
            extra.append(shared_globals.entry_function(self, self.entry_fn))
        extra += [runtime.definition(h) for h in sorted(self.helpers, key=str)
                  if not self.module.defines(runtime.defined_name(h))]
        for h in self.helpers:
            for n, d in runtime.declarations(h).items():
                self.declare_raw(n, d)
        extra += [self.decls[n] for n in sorted(self.decls)]   # the same text every run
        if self.debug is not None:
            extra += self.debug.new
        return text + "\n" + "\n".join(extra) + "\n"


# refusals reported from one link at most (each a marker call's), as clang's -ferror-limit
MAX_ERRORS = 10


def split_kind(parallel, multi, private=(), restored=()) -> str:
    """The kind part of a split pair's key: run by an OpenMP team or not (and which pointer
    parameters point at the thread's private memory), reversed more than once on one tape
    (multi: True) or by reverse vector mode of width N (multi: N > 1)."""
    kind = "split-parallel" if parallel else "split"
    if private:
        kind += "-private:" + ",".join(sorted(private))
    if restored:
        kind += "-restore:" + ",".join(f"{p}={n}" for p, n in sorted(restored))
    if multi:
        kind += "-multi" + (str(multi) if multi > 1 else "")     # (True is 1)
    return kind


MARKER_CALL = re.compile(r"@\"?[\w.$]*__enzyme_(autodiff|fwddiff|augmentfwd|reverse)")
CALLEE = re.compile(r"(@[-\w.$]+|@\"[^\"]+\")\(")
# __kmpc_fork_call(ident, n, @outlined, captured...): the runtime calls @outlined
FORK_TARGET = re.compile(r"@__kmpc_fork_call\([^,]*, i32 [^,]*, ptr (?:\w+ )*(@[-\w.$]+|@\"[^\"]+\")")


def _replace_marker(lines, req, new):
    """The marker call's lines replaced by `new` (its source location on the calls); an
    invoke's landing pad no longer has it as a predecessor."""
    lines[req.line] = with_marker_location("\n".join(new), req.inst.md.get("!dbg"))
    if req.inst.op == "invoke":
        drop_unwind_edge(lines, req)
    for k in range(req.line + 1, req.inst.line_end + 1):
        lines[k] = ""
