"""Indirect calls in differentiated code, and marker calls whose function is a select or phi of
known functions: dispatchers over the derivatives of every function the pointer may hold (the
address-taken functions of the call's signature), switching on the primal pointer at run time.
A mixin of Generator (ad/synthesis/generate.py), whose caches and derivative builders they use."""
from __future__ import annotations

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import adjoint_type_of, carries_float
from ..analysis.const_fields import act_key
from ..structure.diagnostics import located
from ..structure.call_targets import address_taken
from . import vtables
from .rule_wrappers import with_rules



class IndirectCalls:
    def forward_indirect(self, inst, acts, width: int = 1, error: bool = False, synth=None):
        """Dispatcher over the forward derivatives of an indirect call's possible targets (what
        the caller `synth` knows of the memory its pointer arguments point to: each target's
        hints, as for a direct call)."""
        tys = self.param_types(inst)
        targets = self.address_taken(inst.ty, tys, inst)
        key = ("fwd-indirect", inst.ty, tuple(tys), act_key(acts), width, error, tuple(targets))
        if key in self.done:
            return self.done[key]
        stops = []
        self.counter += 1
        name = f"@fwd.indirect.{self.counter}"
        if not targets and inst.ty != "ptr" and not carries_float(inst.ty):
            parts = [(None, inst.ty)]      # as split_indirect: aborts with a message if it runs
        else:
            targets = self.indirect_targets(inst, tys)
            early = (name, self.forward_return(targets[0], acts, width, error,
                                               self.call_hints(synth, inst, targets[0])))
            targets, parts, stops = self._derivable_named(
                key, early, targets,
                lambda t: self.forward(t, acts, callee=True, width=width, error=error,
                                       hints=self.call_hints(synth, inst, t)))
        rty = parts[0][1]
        self._as_named(key, (name, rty), targets)
        params, names = ["ptr %fp"], []
        for k, (ty, a) in enumerate(zip(tys, acts)):
            params.append(f"{ty} %a{k}")
            names.append(f"{ty} %a{k}")
            for lane in range(width) if a != "const" else ():
                params.append(f"{'ptr' if a in ('dup', 'dupnoneed') else ty} %s{k}.{lane}")
                names.append(f"{'ptr' if a in ('dup', 'dupnoneed') else ty} %s{k}.{lane}")
        self.out.append(self._dispatcher(name, rty, params, names, targets, [p[0] for p in parts],
                                         stops))
        self.helpers.add(("badcall",))
        self.done[key] = (name, rty)
        return self.done[key]

    def address_taken(self, ret_ty: str, param_tys: list[str], inst=None) -> list[str]:
        """Functions with bitcode and this signature whose address is used as a value: the
        possible targets of an indirect call in this (whole-program) module; of the indirect
        call `inst`, those its table slot can hold where that is sure (vtables.py)."""
        out = address_taken(self.module, ret_ty, param_tys)
        return vtables.narrowed(self.module, inst, out) if inst is not None else out

    def split_indirect(self, inst, acts, ret_active, synth=None):
        """Dispatchers (augmented, reverse) over the possible targets of an indirect call (the
        caller `synth`'s knowledge of its pointer arguments' memory: hints, as forward_indirect)."""
        tys = self.param_types(inst)
        targets = self.address_taken(inst.ty, tys, inst)
        key = ("indirect", inst.ty, tuple(tys), act_key(acts), ret_active, self.in_parallel,
               self.in_multi, tuple(targets))
        if key in self.done:
            return self.done[key]
        stops = []
        self.counter += 1
        aug, rev = f"@aug.indirect.{self.counter}", f"@rev.indirect.{self.counter}"
        if not targets and not ret_active and inst.ty != "ptr":
            # no function of this type can be reached: the call is on a path that never runs
            # (GSL's control object when there is none), or a derivative is impossible; either
            # way the dispatchers abort with a message if the call runs
            parts = [(None, inst.ty, None, self.adjoint_type(tys, acts)[0])]
        else:
            targets = self.indirect_targets(inst, tys)
            aug_ret, rev_ret = self.split_returns(targets[0], acts, ret_active,
                                                  self.call_hints(synth, inst, targets[0]))
            targets, parts, stops = self._derivable_named(
                key, (aug, aug_ret, rev, rev_ret), targets,
                lambda t: self.split(t, acts, ret_active, self.call_hints(synth, inst, t)))
        aug_rets = {p[1] for p in parts}
        if len(aug_rets) != 1:
            raise UserError(f"indirect call: the possible targets {', '.join(t[1:] for t in targets)} "
                            "differ in whether they return a shadow pointer")
        aug_ret, rev_ret = parts[0][1], parts[0][3]
        self._as_named(key, (aug, aug_ret, rev, rev_ret), targets)
        params = ["ptr %fp"]
        names = []
        for k, (ty, a) in enumerate(zip(tys, acts)):
            params.append(f"{ty} %a{k}")
            names.append(f"{ty} %a{k}")
            if a in ("dup", "dupnoneed"):
                params.append(f"ptr %s{k}")
                names.append(f"ptr %s{k}")
        # (a float's bits: whole, or in a field of a returned record)
        dty = adjoint_type_of(inst.ty)
        if targets:
            dty = self._record_returns.get((targets[0], tuple(acts)), dty)
        dret = [f"{dty} %dret"] if ret_active else []
        self.out.append(self._dispatcher(aug, aug_ret, params + ["ptr %tape"], names + ["ptr %tape"],
                                         targets, [p[0] for p in parts], stops))
        self.out.append(self._dispatcher(rev, rev_ret, params + dret + ["ptr %tape"],
                                         names + dret + ["ptr %tape"], targets, [p[2] for p in parts],
                                         stops))
        self.helpers.add(("badcall",))
        self.done[key] = (aug, aug_ret, rev, rev_ret)
        return self.done[key]

    def indirect_targets(self, inst, tys) -> list[str]:
        targets = self.address_taken(inst.ty, tys, inst)
        if not targets:
            raise UserError(f"indirect call with active arguments ({inst.ty} ({', '.join(tys)})) but "
                            "no function with bitcode and that signature has its address taken; "
                            "hint: build the callee's object with enzyme-cc")
        return targets

    def _derivable_named(self, key, early, targets, make):
        """_derivable, with the dispatchers' entry `early` (their names, and their return types
        from the first target) registered under key before the targets' derivatives are built:
        a target that calls through a pointer of the same type (FFTW's plans calling their
        children's apply) reuses these dispatchers instead of building one more per level (the
        module grew with the square of the targets, and the recursion with their number)."""
        self.done[key] = early
        try:
            return self._derivable(targets, make)
        except UserError:
            del self.done[key]
            raise

    def _as_named(self, key, final, targets):
        """The dispatchers as built agree with what _derivable_named registered."""
        if key in self.done and self.done[key] != final:
            raise UserError(f"indirect call: the possible targets {', '.join(t[1:] for t in targets)} "
                            "differ in what their derivatives return")

    def _derivable(self, targets, make):
        """The possible targets of an indirect call that can be differentiated, and their
        derivatives. The dispatcher stops the program with the build's reason if one of the
        others is called (a table may hold functions the differentiated path never calls)."""
        ok, parts, errors = [], [], []
        for t in targets:
            if self.reaches_marker(t):
                # (a function holding a marker call this round rewrites, e.g. a Rust test
                # harness's closure beside a trait object's drop: its derivative would hold the
                # marker call itself)
                errors.append((t, UserError(f"'{t[1:]}' calls a derivative marker, and a "
                                            "derivative is not taken through an indirect call "
                                            "to a function that takes one")))
                continue
            try:      # (a target with a registration: its wrapper, where the registration applies)
                parts.append(make(with_rules(self, t, f"the indirect call to '{t[1:]}'")))
                ok.append(t)
            except UserError as e:
                # (without its traceback: kept here, it would hold this frame and every caller's
                # in a cycle until the garbage collector runs)
                errors.append((t, e.with_traceback(None)))
        if not ok:
            raise errors[0][1]
        return ok, parts, [(t, self._stop_message(t, e)) for t, e in errors]

    def _stop_message(self, target, error) -> str:
        """A private string: why `target`'s derivative could not be made (the build's error)."""
        reason = str(error).split("\n")[0]
        return self.private_string(f"enzyme-cc: a differentiated indirect call reached "
                                   f"'{target[1:]}', which could not be differentiated: "
                                   f"{reason}\n", "@ad.stop.")

    def marker_dispatcher(self, req, name, rty, derivative) -> str:
        """A marker call whose function is a select/phi of known functions: a dispatcher over
        their derivatives, called with the function pointer first."""
        fns, fn_op = req.candidates
        impls = [name]
        for f in fns[1:]:
            n, r = derivative(with_rules(self, f, located(self.module, req.caller, req.inst)))
            if r != rty:
                raise UserError(f"{located(self.module, req.caller, req.inst)}: the derivatives of "
                                f"'{fns[0][1:]}' and '{f[1:]}' differ in type ({rty} vs {r}); hint: "
                                "call the marker once per function")
            impls.append(n)
        vector = getattr(req, "vector_args", None) is not None
        tys = [t for t, _, _ in req.vector_args] if vector else [t for t, _ in req.args]
        self.counter += 1
        disp = f"@marker.dispatch.{self.counter}"
        args = [f"{t} %a{k}" for k, t in enumerate(tys)]
        self.out.append(self._dispatcher(disp, rty, ["ptr %fp"] + args, args, fns, impls))
        self.helpers.add(("badcall",))
        if vector:
            req.vector_args = [("ptr", fn_op.value, [])] + req.vector_args
        else:
            req.args = [("ptr", fn_op)] + req.args
        return disp

    def _dispatcher(self, name, rty, params, args, targets, impls, stops=()):
        """Calls of impls[k] where the pointer %fp is targets[k]; the targets of `stops` (target,
        message) stop with their message, any other pointer with the no-derivative message."""
        lines = [f"define internal {rty} {name}({', '.join(params)}) {{", "entry:", "br label %c0"]
        cases = list(zip(targets, impls)) + [(t, None) for t, _ in stops]
        messages = dict(stops)
        for k, (t, impl) in enumerate(cases):
            lines += [f"c{k}:", f"%is{k} = icmp eq ptr %fp, {t}",
                      f"br i1 %is{k}, label %t{k}, label %c{k + 1}", f"t{k}:"]
            if impl is None:
                lines += [f"call void @__enzyme_cc_stop(ptr {messages[t]})", "unreachable"]
            elif rty == "void":
                lines += [f"call void {impl}({', '.join(args)})", "ret void"]
            else:
                lines += [f"%r{k} = call {rty} {impl}({', '.join(args)})", f"ret {rty} %r{k}"]
        lines += [f"c{len(cases)}:", "call void @__enzyme_cc_bad_indirect_call(ptr %fp)",
                  "unreachable", "}"]
        return "\n".join(lines) + "\n"
