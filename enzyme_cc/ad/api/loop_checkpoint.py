"""Loops annotated for checkpointing: `[[enzyme::checkpoint("revolve", 4)]]`,
`[[enzyme_checkpointing_enable(...)]]`, `#pragma enzyme checkpoint(...)` (Enzyme's syntax).

The clang plugin puts a call `__enzyme_set_checkpointing(schedule, budget)` at the top of the loop
body. `outline` runs on the optimized module, before any derivative, and does what Enzyme's pass
does with it: the loop becomes `__enzyme_checkpoint_for(step, 0, n, enzyme_scheme, scheme,
config, regions..., live-ins...)`, which `checkpoint.py` then lowers like a written one. The step
is one iteration, from the header to the back edge or the exit:

- integer and pointer induction variables are recomputed from the step index;
- other values carried from one iteration to the next, and values used after the loop, go
  through stack slots (snapshot regions); a carried or escaping pointer is refused (its shadow
  would not follow the snapshots);
- values defined before the loop are the step's arguments (floats: active arguments whose
  adjoints the driver accumulates);
- what the loop writes must be restorable: globals (the driver snapshots them), stack objects and
  heap blocks allocated before the loop with a known size, or memory given an extent with
  `__enzyme_ptr_size_hint(ptr, bytes)` before the loop; anything else is an error;
- the number of steps must be known when the loop starts: an induction variable compared with
  a loop-invariant bound.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import type_size
from enzyme_cc.ir.model import parse_module
from ..structure.cfg import cyclic_blocks, dominators
from ..structure.diagnostics import located
from ..structure.type_layout import underlying
from ..structure.loops import affine_phi, find_loops
from . import loop_fixed_point
from ..analysis import loop_regions
from ..parallel.openmp import FORK_PREFIX

_MARK = re.compile(r"__enzyme_set_(checkpointing|fixed_point)")
_HINT = re.compile(r"__enzyme_ptr_size_hint")
_HINT_CALL = re.compile(r"(?m)^\s*(?:tail |musttail |notail )?call void "
                        r"@\"?[\w.$]*__enzyme_ptr_size_hint\w*\"?\(.*$")
_PREDS = {"slt": "lt", "ult": "lt", "sle": "le", "ule": "le", "sgt": "gt", "ugt": "gt",
          "sge": "ge", "uge": "ge", "ne": "ne", "eq": "eq"}
_INVERSE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "ne": "eq", "eq": "ne"}
_SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne", "eq": "eq"}
_WHAT = {False: "checkpointing", True: "a fixed point"}
FP_HINT = ("hint: write one iteration as int step(int64_t i, args...) and call "
           "__enzyme_fixed_point (<enzyme/fixed_point.h>)")
HINT_TEXT = ("hint: write the loop as __enzyme_checkpoint_for (<enzyme/checkpoint.h>) with its "
             "state as enzyme_checkpoint_region, or remove the annotation to tape the loop")


def has_annotations(text: str) -> bool:
    return bool(_MARK.search(text) or _HINT.search(text))


def outline(text: str, normalize) -> str:
    """Every annotated loop outlined (see the module doc); `normalize(text)` runs mem2reg and
    loop-simplify (a preheader, one latch, dedicated exits)."""
    if _MARK.search(text):
        text = normalize(text)
        count = 0
        while True:
            module = parse_module(text)
            site = _find_marker(module)
            if site is None:
                break
            count += 1
            text = _outline_one(module, site[0], site[1], count)
    # the extent hints only matter to the loops above
    return _HINT_CALL.sub("", text)


def keep_loops(text: str) -> str:
    """Before the pre-AD optimization: the loops holding a marker get llvm.loop.unroll.disable,
    so that they are still loops to outline afterwards (Enzyme keeps marked loops from being
    unrolled; a loop of a constant count would otherwise be unrolled in full)."""
    if not _MARK.search(text):
        return text
    module = parse_module(text)
    lines = list(module._lines)
    ids = [int(k[1:]) for k in module.metadata if k[1:].isdigit()]
    flag = f"!{max(ids, default=0) + 1}"
    fresh = max(ids, default=0) + 2
    extra = []
    for name, (a, b) in module._bodies.items():
        if not any(_MARK.search(line) for line in lines[a + 1:b]):
            continue
        fn = module.function(name)
        loops = find_loops(fn, dominators(fn))
        for inst in fn.insts():
            inside = [lp for lp in loops.values() if _is_marker(inst) and
                      inst.block.label in lp.blocks]
            if not inside:
                continue
            latch = fn.block(min(inside, key=lambda lp: len(lp.blocks)).latch).term
            old = re.search(r"!llvm\.loop (!\d+)", lines[latch.line])
            if old:                            # add the flag to the loop's own node
                k = next(i for i, line in enumerate(lines) if line.startswith(old.group(1) + " "))
                if flag not in lines[k]:
                    lines[k] = re.sub(r"\}\s*$", f", {flag}}}", lines[k])
            else:
                lines[latch.line] += f", !llvm.loop !{fresh}"
                extra.append(f"!{fresh} = distinct !{{!{fresh}, {flag}}}")
                fresh += 1
    extra.append(f'{flag} = !{{!"llvm.loop.unroll.disable"}}')
    return "\n".join(lines) + "\n" + "\n".join(extra) + "\n"


def _is_marker(inst) -> bool:
    return inst.op == "call" and bool(_MARK.search(inst.callee or ""))


def _find_marker(module):
    for name, (a, b) in module._bodies.items():
        if not any(_MARK.search(line) for line in module._lines[a + 1:b]):
            continue
        fn = module.function(name)
        for inst in fn.insts():
            if _is_marker(inst):
                return fn, inst
    return None


def _const(module, fn, inst, k):
    try:
        return int(inst.ops[k].value)
    except (IndexError, ValueError):
        raise UserError(f"{located(module, fn, inst)}: __enzyme_set_checkpointing takes two "
                        "integer constants (the schedule and the budget)")


def _outline_one(module, fn, marker, count) -> str:
    lines = list(module._lines)
    where = located(module, fn, marker)
    fp = "fixed_point" in marker.callee
    mode, budget = (1, 0) if fp else (_const(module, fn, marker, 0), _const(module, fn, marker, 1))
    dom = dominators(fn)
    loops = find_loops(fn, dom)

    def innermost(label):
        inside = [lp for lp in loops.values() if label in lp.blocks]
        return min(inside, key=lambda lp: len(lp.blocks)) if inside else None

    loop = innermost(marker.block.label)
    if loop is None:
        if marker.block.label in cyclic_blocks(fn):
            raise UserError(f"{where}: the loop marked for {_WHAT[fp]} has no single entry "
                            f"and back edge after optimization; {HINT_TEXT}")
        if fp:
            raise UserError(f"{where}: __enzyme_set_fixed_point is not inside a loop (after "
                            "optimization); hint: call it at the top of the loop's body")
        # no loop left (it runs at most once): nothing to checkpoint
        for k in range(marker.line, marker.line_end + 1):
            lines[k] = ""
        return "\n".join(lines)
    markers = [i for b in loop.blocks for i in fn.block(b).insts
               if _is_marker(i) and innermost(b) is loop and ("fixed_point" in i.callee) == fp]
    if mode == 0 or mode > 4:
        if mode > 4:
            raise UserError(f"{where}: unknown checkpointing schedule {mode}")
        for m in markers:
            for k in range(m.line, m.line_end + 1):
                lines[k] = ""
        return "\n".join(lines)
    if not fp and not module.defines("@__enzyme_checkpoint_builtin"):
        raise UserError(f"{where}: a loop marked for checkpointing needs the schemes of "
                        "<enzyme/checkpoint.h>; hint: include it in one of the program's files "
                        "built with enzyme-cc")
    o = _Outliner(module, fn, loop, markers, mode, budget, count, where, lines)
    o.fp = marker if fp else None
    return o.run()


class _Outliner:
    def __init__(self, module, fn, loop, markers, mode, budget, count, where, lines):
        self.m, self.fn, self.L, self.where, self.lines = module, fn, loop, where, lines
        self.markers = {id(i) for i in markers}
        self.mode, self.budget, self.c = mode, budget, count
        self.p = f"%ck{count}."
        self.fp = None                      # the __enzyme_set_fixed_point call, for such a loop
        self.states: list[tuple[str, str]] = []
        self.pre: list[str] = []            # IR in the preheader, before the call
        self.entry: list[str] = []          # allocas

    def fail(self, what: str):
        raise UserError(f"{self.where}: {what}; {FP_HINT if self.fp else HINT_TEXT}")

    def inside(self, v: str) -> bool:
        d = self.fn.defs.get(v)
        return d is not None and hasattr(d, "block") and d.block.label in self.L.blocks

    def local_out(self, v: str) -> bool:
        return v.startswith("%") and v in self.fn.defs and not self.inside(v)

    # ---- structure ----------------------------------------------------------------------------

    def run(self) -> str:
        fn, L = self.fn, self.L
        self.H, self.P, self.latch = fn.block(L.header), fn.block(L.preheader), L.latch
        exiting = [b for b in L.blocks if any(t in L.exits for t in fn.block(b).term.targets)]
        throwing = [fn.block(b).term for b in exiting if fn.block(b).term.op == "invoke"]
        if throwing:
            self.where = located(self.m, fn, throwing[0])
            self.fail(f"a call in a loop marked for {_WHAT[bool(self.fp)]} may throw (its "
                      "exception leaves the loop, which a step cannot); make the callee "
                      "noexcept, or build with "
                      "optimization, which turns calls that cannot throw into plain calls")
        if len(L.exits) != 1 or len(exiting) != 1 or exiting[0] not in (L.header, L.latch):
            self.fail(f"a loop marked for {_WHAT[bool(self.fp)]} must leave from its header or "
                      "its latch, to one block (no break, return or goto out of it)")
        self.E, self.X = fn.block(next(iter(L.exits))), fn.block(exiting[0])
        if self.P.term.op != "br" or self.P.term.targets != [L.header]:
            self.fail("the loop has no preheader")
        for b in L.blocks:
            if fn.block(b).term.op not in ("br", "switch", "unreachable"):
                self.fail(f"the loop's block '{b}' ends with '{fn.block(b).term.op}'")
            fork = next((i for i in fn.block(b).insts if i.op in ("call", "invoke") and
                         (i.callee or "").startswith(FORK_PREFIX)), None)
            if fork is not None:
                # (its outlined function writes through the pointers it is handed: the loop's
                # snapshots would miss that memory, and the recomputed steps go wrong)
                self.where = located(self.m, fn, fork)
                self.fail(f"a loop marked for {_WHAT[bool(self.fp)]} holds an OpenMP parallel "
                          "region, whose writes the outlined loop's snapshots cannot see")
        if self.fp:
            nsteps = None
            loop_fixed_point.options(self)
        else:
            nsteps = self.trip_count()
        self.classify_phis()
        self.pointers_carried_in_memory()
        self.find_outs()
        if self.fp:
            loop_fixed_point.check_accumulators(self)
        self.find_liveins()
        regions = loop_regions.regions(self)
        return self.emit(nsteps, regions)

    def trip_count(self) -> str:
        """IR in the preheader for the number of steps (header runs): K + 1, K the first step
        whose exit test fails."""
        fn, t, p = self.fn, self.X.term, self.p
        cmp = fn.defs.get(t.ops[0].value) if t.op == "br" and t.ops else None
        if cmp is None or getattr(cmp, "op", None) != "icmp":
            self.fail("the number of iterations of a checkpointed loop must be known when it "
                      "starts (an induction variable compared with a bound)")
        pred = _PREDS[cmp.pred]
        if t.targets[0] not in self.L.blocks:
            pred = _INVERSE[pred]             # the condition to go on
        a, b = cmp.ops[0].value, cmp.ops[1].value
        found = None
        for phi in self.H.phis:
            af = _affine(fn, self.L, phi)
            if not af or not phi.ty.startswith("i"):
                continue
            nxt = next(v for v, blk in phi.incoming if blk == self.L.latch)
            for side, other, pr in ((a, b, pred), (b, a, _SWAP[pred])):
                if side in (phi.name, nxt) and not self.inside(other):
                    found = (phi, af, int(side == nxt), other, pr)
        if found is None:
            self.fail("the number of iterations of a checkpointed loop must be known when it "
                      "starts: its exit test must compare an induction variable with a value "
                      "that does not change in the loop")
        phi, (init, s), off, bound, pr = found
        ext = "sext" if cmp.pred.startswith("s") or cmp.pred in ("eq", "ne") else "zext"
        ty = phi.ty
        v0, bn = init, bound
        if ty != "i64":
            self.pre += [f"{p}v0 = {ext} {ty} {init} to i64", f"{p}bn = {ext} {ty} {bound} to i64"]
            v0, bn = f"{p}v0", f"{p}bn"
        self.pre.append(f"{p}first = add i64 {v0}, {off * s}")
        up = s > 0
        if (pr in ("gt", "ge") and up) or (pr in ("lt", "le") and not up) or s == 0 or \
                pr == "eq" or (pr == "ne" and abs(s) != 1):
            self.fail("the loop's exit test is not one enzyme-cc can count the iterations of "
                      "(an induction variable going towards a bound: <, <=, >, >=, or != with "
                      "step 1)")
        d = f"sub i64 {bn}, {p}first" if up else f"sub i64 {p}first, {bn}"
        self.pre.append(f"{p}d = {d}")
        st = abs(s)
        if pr == "ne":
            self.pre.append(f"{p}k = add i64 {p}d, 0")
        elif pr in ("lt", "gt"):
            self.pre += [f"{p}num = add i64 {p}d, {st - 1}", f"{p}q = sdiv i64 {p}num, {st}",
                         f"{p}pos = icmp sgt i64 {p}d, 0",
                         f"{p}k = select i1 {p}pos, i64 {p}q, i64 0"]
        else:
            self.pre += [f"{p}q0 = sdiv i64 {p}d, {st}", f"{p}q = add i64 {p}q0, 1",
                         f"{p}pos = icmp sge i64 {p}d, 0",
                         f"{p}k = select i1 {p}pos, i64 {p}q, i64 0"]
        self.pre.append(f"{p}n = add i64 {p}k, 1")
        return f"{p}n"

    def classify_phis(self):
        self.ivs, self.carried = [], []
        for phi in self.H.phis:
            af = _affine(self.fn, self.L, phi)
            if af and (phi.ty.startswith("i") or phi.ty == "ptr"):
                self.ivs.append((phi, af))
            elif _scalar(phi.ty):
                self.carried.append(phi)
            else:
                what = "'__enzyme_set_fixed_point'" if self.fp else "checkpointing"
                self.fail(f"the loop marked with {what} carries '{phi.name}' ({phi.ty}) from "
                          "one iteration to the next, which is not an induction variable (a "
                          "pointer's shadow would not follow the snapshots)")

    def pointers_carried_in_memory(self):
        """A local slot holding a pointer, set before the loop and again inside it (buffers
        swapped through variables that live in memory: an OpenMP region's shared ones): the
        pointer goes from one iteration to the next as a carried phi would, and its shadow would
        not follow the snapshots either (the gradient came out zero). Refused as the phi is."""
        fn, L = self.fn, self.L
        inside = {underlying(fn, i.ops[1].value) for b in L.blocks for i in fn.block(b).insts
                  if i.op == "store" and i.ops[0].ty == "ptr"}
        for b in fn.blocks:
            if b.label in L.blocks:
                continue
            for i in b.insts:
                slot = underlying(fn, i.ops[1].value) if i.op == "store" and \
                    i.ops[0].ty == "ptr" else None
                if slot in inside and getattr(fn.defs.get(slot), "op", None) == "alloca":
                    what = "'__enzyme_set_fixed_point'" if self.fp else "checkpointing"
                    self.fail(f"the loop marked with {what} carries the pointer held in "
                              f"'{slot}' from one iteration to the "
                              "next, through memory (a pointer's shadow would not follow the "
                              "snapshots: index one buffer by the step's parity instead of "
                              "swapping pointers, u = buf + (s % 2) * n)")

    def find_outs(self):
        used = set()
        for b in self.fn.blocks:
            if b.label in self.L.blocks:
                continue
            for inst in b.insts:
                used.update(inst.locals_used())
        self.outs = []
        for b in self.L.blocks:
            for inst in self.fn.block(b).insts:
                if inst.name and inst.name in used:
                    if not _scalar(inst.ty):
                        self.fail(f"'{inst.name}' ({inst.ty}), computed in the loop, is used "
                                  "after it (only numbers can leave a checkpointed loop)")
                    self.outs.append(inst)

    def find_liveins(self):
        seen: dict[str, str] = {}

        def note(v):
            if self.local_out(v) and v not in seen:
                d = self.fn.defs[v]
                seen[v] = d.ty
        for phi, (init, _) in self.ivs:
            note(init)
        for phi in self.carried:
            note(next(v for v, b in phi.incoming if b == self.L.latch))
        for b in self._blocks():
            for inst in b.insts:
                if (b is self.H and inst.op == "phi") or id(inst) in self.markers:
                    continue
                for v in inst.locals_used() + [inst.callee or ""]:
                    note(v)
        self.liveins = list(seen.items())

    def _blocks(self):
        return [b for b in self.fn.blocks if b.label in self.L.blocks]

    # ---- the new IR ---------------------------------------------------------------------------

    def emit(self, nsteps, regions) -> str:
        fn, L, p, lines = self.fn, self.L, self.p, self.lines
        marker = self.fp or next(i for b in self._blocks() for i in b.insts
                                 if id(i) in self.markers)
        # errors about the call name the annotation's source line
        self.dbg = f", !dbg {marker.md['!dbg']}" if "!dbg" in marker.md else ""
        slots = {}
        for j, phi in enumerate(self.carried):
            slots[phi.name] = f"{p}s{j}"
            self.entry.append(f"{p}s{j} = alloca {phi.ty}")
            init = next(v for v, b in phi.incoming if b == self.P.label)
            self.pre.append(f"store {phi.ty} {init}, ptr {p}s{j}")
        outs = {}
        for j, inst in enumerate(self.outs):
            outs[inst.name] = f"{p}o{j}"
            self.entry.append(f"{p}o{j} = alloca {inst.ty}")
        if not self.fp:
            self.entry.append(f"{p}cfg = alloca [8 x i64], align 8")
        step = _step_name(fn.name, self.c)
        args = [f"ptr {step}", "i64 0", f"i64 {nsteps}", "ptr @enzyme_scheme", f"ptr {p}sch",
                f"ptr {p}cfg"]
        for ptr, size in regions + [(s, str(_size(self, t))) for s, t in
                                    [(slots[ph.name], ph.ty) for ph in self.carried] +
                                    [(outs[i.name], i.ty) for i in self.outs]]:
            args += ["ptr @enzyme_checkpoint_region", f"ptr {ptr}", f"i64 {size}"]
        args += [f"{t} {v}" for v, t in self.liveins]
        args += [f"ptr {s}" for s in list(slots.values()) + list(outs.values())]
        if self.fp:
            args = [f"ptr {step}"]
            # values carried in registers go through their slots: those holding the state's
            # value (load PRE of a state) are state too; the others' adjoints flow out, but the
            # updates of those that change count in the convergence test (a state kept only in
            # a register would otherwise stop the adjoint iteration after one pass)
            held = loop_fixed_point.state_phis(self)
            for z, b in self.states + [(slots[ph.name], str(_size(self, ph.ty)))
                                       for ph in self.carried if ph.name in held]:
                args += ["ptr @enzyme_fp_state", f"ptr {z}", f"i64 {b}"]
            for ptr, size in regions + [(outs[i.name], str(_size(self, i.ty))) for i in self.outs]:
                args += ["ptr @enzyme_checkpoint_region", f"ptr {ptr}", f"i64 {size}"]
            for ph in self.carried:
                if ph.name not in held:     # carried from one iteration to the next (not as is)
                    latch = next(v for v, b in ph.incoming if b == L.latch)
                    tag = "@enzyme_checkpoint_region" if latch == ph.name else \
                        "@enzyme_cc_fp_measured"
                    args += [f"ptr {tag}", f"ptr {slots[ph.name]}", f"i64 {_size(self, ph.ty)}"]
            args += self.fp_args + [f"{t} {v}" for v, t in self.liveins]
            args += [f"ptr {s}" for s in list(slots.values()) + list(outs.values())]
            call = [*self.pre, f"call void (ptr, ...) @__enzyme_fixed_point({', '.join(args)})"
                    + self.dbg]
        else:
            call = [*self.pre, f"{p}sch = call ptr @__enzyme_checkpoint_builtin(i64 {self.mode})",
                    f"call void @__enzyme_cc_ckpt_loop_config(ptr {p}cfg, i64 {self.mode}, "
                    f"i64 {self.budget}, i64 {nsteps})",
                    f"call void (ptr, i64, i64, ...) @__enzyme_checkpoint_for({', '.join(args)})"
                    + self.dbg]
        rename = {}
        for j, inst in enumerate(self.outs):
            rename[inst.name] = f"{p}ov{j}"
            call.append(f"{p}ov{j} = load {inst.ty}, ptr {p}o{j}")
        call.append(f"br label {self.E.label}")
        t = self.P.term
        lines[t.line] = "\n".join("  " + x for x in call)
        for k in range(t.line + 1, t.line_end + 1):
            lines[k] = ""
        first = fn.blocks[0].insts[0]
        lines[first.line] = "\n".join("  " + x for x in self.entry) + "\n" + lines[first.line]
        # what is known of the memory the step is given, for loops annotated inside it
        live = {v for v, _ in self.liveins}
        self.known = [(b, z) for b, z in regions + [(z, n) for z, n in self.states]
                      if b in live and z.isdigit()]
        step_text = self.step_function(step, slots, outs)
        for b in self._blocks():                      # the loop's lines go
            lo = _label_line(lines, b.insts[0].line, b.label)
            for k in range(lo, b.insts[-1].line_end + 1):
                lines[k] = ""
        a, z = self.m._bodies[fn.name]
        for k in range(a + 1, z):                     # uses after the loop read the slots
            if k != t.line:
                lines[k] = _rename(lines[k], rename)
        for inst in self.E.phis:
            for k in range(inst.line, inst.line_end + 1):
                lines[k] = re.sub(r",\s*" + re.escape(self.X.label) + r"(\s*\])",
                                  f", {self.P.label}\\1", lines[k])
        extra = [step_text]
        for g in ("@enzyme_scheme", "@enzyme_checkpoint_region", "@enzyme_cc_fp_measured",
                  "@enzyme_fp_state",
                  "@enzyme_fp_reduction", "@enzyme_fp_max_iters", "@enzyme_fp_control"):
            if g not in self.m.globals and g in "\n".join(lines):
                extra.append(f"{g} = external global i32")
        if self.known and "@__enzyme_ptr_size_hint" not in self.m.declarations:
            extra.append("declare void @__enzyme_ptr_size_hint(ptr, i64)")
        target = "@__enzyme_fixed_point" if self.fp else "@__enzyme_checkpoint_for"
        if target not in self.m.declarations and not self.m.defines(target):
            extra.append(f"declare void {target}(ptr, {'' if self.fp else 'i64, i64, '}...)")
        return "\n".join(lines) + "\n" + "\n".join(extra) + "\n"

    def step_function(self, name, slots, outs) -> str:
        L = self.L
        params = ["i64 %ck.k"] + [f"{t} {v}" for v, t in self.liveins]
        params += [f"ptr {s}" for s in list(slots.values()) + list(outs.values())]
        body = ["ck.entry:"]
        body += [f"  call void @__enzyme_ptr_size_hint(ptr {b}, i64 {z})" for b, z in self.known]
        for j, (phi, (init, s)) in enumerate(self.ivs):
            if phi.ty == "ptr":
                body += [f"  %ck.m{j} = mul i64 %ck.k, {s}",
                         f"  {phi.name} = getelementptr i8, ptr {init}, i64 %ck.m{j}"]
            else:
                k = "%ck.k"
                if phi.ty != "i64":
                    body.append(f"  %ck.t{j} = trunc i64 %ck.k to {phi.ty}")
                    k = f"%ck.t{j}"
                body += [f"  %ck.m{j} = mul {phi.ty} {k}, {s}",
                         f"  {phi.name} = add {phi.ty} {init}, %ck.m{j}"]
        for phi in self.carried:
            body.append(f"  {phi.name} = load {phi.ty}, ptr {slots[phi.name]}")
        for phi in self.H.phis:
            if phi.name in outs:
                body.append(f"  store {phi.ty} {phi.name}, ptr {outs[phi.name]}")
        body.append(f"  br label {L.header}")
        back = re.compile(r"label " + re.escape(L.header) + r"(?![\w.$\"])")
        leave = re.compile(r"label " + re.escape(self.E.label) + r"(?![\w.$\"])")
        for b in self._blocks():
            body.append(b.label[1:] + ":")
            last_phi = max((k for k, i in enumerate(b.insts) if i.op == "phi"), default=-1)
            for k, inst in enumerate(b.insts):
                if (b is self.H and inst.op == "phi") or id(inst) in self.markers:
                    continue
                if (inst.callee or "").startswith("@llvm.lifetime."):
                    continue           # of the function's allocas: not the step's to mark
                text = "\n".join(self.lines[inst.line:inst.line_end + 1])
                if inst.is_terminator:
                    if b.label == L.latch:
                        for phi in self.carried:
                            v = next(v for v, bb in phi.incoming if bb == L.latch)
                            body.append(f"  store {phi.ty} {v}, ptr {slots[phi.name]}")
                    text = leave.sub("label %ck.stop", back.sub("label %ck.more", text))
                body.append(text)
                # a value used after the loop: the last step's is what the slot keeps
                done = [inst] if inst.op != "phi" else b.phis if k == last_phi else []
                for i in done:
                    if i.name in outs:
                        body.append(f"  store {i.ty} {i.name}, ptr {outs[i.name]}")
        rt = "i32" if self.fp else "void"         # a fixed point's step says whether to go on
        body += ["ck.more:", f"  ret {rt} {'1' if self.fp else ''}".rstrip(),
                 "ck.stop:", f"  ret {rt} {'0' if self.fp else ''}".rstrip()]
        text = f"define internal {rt} {name}({', '.join(params)}) {{\n" + "\n".join(body) + "\n}"
        # numbered values must be numbered in order: give the copied ones names
        named = self.m.named_types
        text = re.sub(r"(?<![\w.$\"])%(\d+)(?![\w.$])",
                      lambda mt: mt.group(0) if mt.group(0) in named else f"%c.{mt.group(1)}", text)
        text = re.sub(r"(?m)^(\d+):", r"c.\1:", text)
        return text

def _affine(fn, loop, phi):
    """loops.affine_phi, and `phi - C` (unoptimized code counting down)."""
    af = affine_phi(fn, loop, phi)
    if af or phi.op != "phi" or len(phi.incoming) != 2 or not phi.ty.startswith("i"):
        return af
    init = next((v for v, b in phi.incoming if b == loop.preheader), None)
    d = fn.defs.get(next((v for v, b in phi.incoming if b == loop.latch), ""))
    if init is not None and getattr(d, "op", None) == "sub" and d.ops[0].value == phi.name:
        try:
            return init, -int(d.ops[1].value)
        except ValueError:
            return None
    return None


def _scalar(ty: str) -> bool:
    return ty in ("double", "float", "half", "x86_fp80", "fp128") or re.fullmatch(r"i\d+", ty)


def _size(o, ty):
    return type_size(ty, o.m.named_types)


def _step_name(fname: str, count: int) -> str:
    base = fname[1:].strip('"')
    name = f"{base}.ckpt.step.{count}"
    return f"@{name}" if re.fullmatch(r"[-\w.$]+", name) else f'@"{name}"'


def _label_line(lines, first_inst_line, label) -> int:
    """The line holding block `label`'s label (at or before its first instruction)."""
    lab = label[1:]
    k = first_inst_line
    while k > 0 and not lines[k].startswith(lab + ":") and k > first_inst_line - 64:
        k -= 1
    return k if lines[k].startswith(lab + ":") else first_inst_line


def _rename(line: str, mapping: dict) -> str:
    if not mapping:
        return line
    pat = re.compile(r"(?<![\w.$\"%])(" + "|".join(re.escape(v) for v in mapping) +
                     r")(?![\w.$])")
    return pat.sub(lambda mt: mapping[mt.group(1)], line)
