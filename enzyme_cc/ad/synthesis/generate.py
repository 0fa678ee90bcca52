"""Module-level driver of the AD core: marker calls in, derivative functions out.

`differentiate(text)` reads the module text, turns each `__enzyme_autodiff` call into a request,
synthesizes the derivative functions (recursively for callees), rewrites the calls and returns
the new module text.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import adjoint_type_of, c_string
from enzyme_cc.ir.model import parse_module
import enzyme_cc.rules.instructions  # noqa: F401  (registers instruction rules)
import enzyme_cc.rules.shadow_rules  # noqa: F401  (registers the forward sweep's shadow rules)
import enzyme_cc.rules.calls  # noqa: F401        (registers call rules)
import enzyme_cc.rules.tangent  # noqa: F401      (registers forward-mode rules)
from ..analysis.activity_basics import FREES
from ..analysis.const_fields import act_key
from enzyme_cc.ir import debug_locs
from .reverse import Synth, local_name
from .rollback import Registry, roll_back
from ..structure.diagnostics import located, untyped_copy_hint
from ..structure import packed_bits
from ..plan import restored_args
from ..api import (batch, fixed_point, iter_marker, truncate, global_shadows, registrations,
                   reverse_vector, shared_globals, virtual_shadow, fp_logger, rust_text)
from ..parallel import openmp_capture
from ..tape import complex_libm, runtime, tape_local, tape_sites
from ..api.markers import define_marker_tags, drop_debug_uses, find_requests, refuse_marker_values
from ..api.marker_targets import refuse_unknown_function
from ..analysis.copy_types import copy_ranges, layout_conflict
from ..analysis.moved_blocks import moves_freed_block
from ..api.dispatch import IndirectCalls
from .call_emit import CallEmitter
from .callee_summary import CalleeSummaries
from .shadow_storage import ShadowStorage
from ..api.checkpoint import lower
from .forward import ForwardSynth
from .marker_calls import MarkerCalls, split_kind
from ..api.registrations import read_registrations
from ..api import static_locals, rule_wrappers
from enzyme_cc.rules.registry import is_inactive_call, set_module_registrations
from enzyme_cc.rules.call_kinds import MEMSET

KEEP_FN_ATTRS = ("target-cpu", "target-features", "tune-cpu", "frame-pointer")
NOINLINE_SIZE = 200       # instructions of a primal whose derivatives stay calls (callee_attrs)


# a pointer the body reads back from enzyme-cc's own memory (the tape, a cache: not a stack
# slot, not a shadow): `%ad.x = load ptr, ptr %ad.y`
_RELOADED_PTR = re.compile(r"^\s*%[-\w.]+ = load ptr, ptr (%ad\.[-\w.]+)", re.M)
_ALLOCA = re.compile(r"^\s*(%[-\w.]+) = alloca ", re.M)


def without_noalias(params: list[str], body: list[str]) -> list[str]:
    """The parameters, without `noalias` where the body reads a pointer back from the tape: a
    shadow or primal pointer computed from a parameter and taped by the forward sweep is not
    `based on` that parameter once loaded from the tape, so LLVM would take the memory it
    addresses for memory the parameter cannot reach and fold its loads across a call that
    writes it (a Fortran dummy's shadow handed to MPI_Allreduce's adjoint: a zero gradient)."""
    text = "\n".join(body)
    if "load ptr, ptr %ad." not in text:
        return params
    stack = set(_ALLOCA.findall(text))
    if all(a in stack or a.startswith("%ad.s.") for a in _RELOADED_PTR.findall(text)):
        return params
    return [p.replace(" noalias ", " ") for p in params]


class Generator(MarkerCalls, IndirectCalls, CallEmitter, CalleeSummaries, ShadowStorage):
    FREES = FREES

    def __init__(self, text: str, counter: int = 0):
        self.module = parse_module(complex_libm.with_complex_helpers(text))
        tables = shared_globals.writable_tables(self.module)
        if tables is not None:
            self.module = parse_module(tables)
        self.out: list[str] = []             # generated function texts
        self.decls: dict[str, str] = {}      # declarations the generated code needs
        self.done = Registry()               # (fn, act, ret, mode) -> names
        self.failed: dict = {}               # ... -> the UserError its derivative raised
        self.helpers: set[str] = set()
        self.counter = counter
        self._callee_act_cache: dict = {}
        self._float_bits_returned: set = set()  # (callee, acts) returning a float as integers
        self._packed_returns: dict = {}  # (callee, acts) -> float halves of a returned i64
        self._record_returns: dict = {}  # (callee, acts) -> adjoint type of a returned record
        self._summary_stack: list = []       # callee summaries being computed (recursion)
        self._summary_guessed: set = set()   # ... whose guess a recursive call has read
        self._summary_deps: dict = {}        # summary -> the open summaries' guesses it read
        self.reg = read_registrations(self.module)
        self.reg.inactive_globals |= static_locals.constant_statics(self.module)
        self.reg.inactive.update(fp_logger.symbols(self.module))   # logging carries no derivative
        self.reg.inactive.update(rust_text.symbols(self.module))   # nor Rust's formatting
        # an earlier round's global-shadow helpers are bookkeeping to the derivatives of this one
        # (global_shadows_nested.outer_call: their effect on the shadows of its static storage)
        self.reg.inactive |= {f for f in self.module._bodies if f.startswith("@ad.gs.")}
        self.level = 1                               # the round of differentiate() (higher order)
        self.shared_globals: set[str] = set()    # see find_shared_globals
        self.global_users: set[str] = set()
        self.global_reach: set[str] = set()         # the functions the derivatives may run
        self.reset_globals: set[str] = set()       # see shared_globals.find_shared_globals
        self.address_targets: dict[str, set] = {}   # pointer global -> arrays it may point into
        self.entry_fn: str | None = None             # sets up the shared globals' shadows
        self.shadow_lanes: dict[str, set] = {}       # global -> None / (width, lane) shadows made
        self.scratch_globals: set[str] = set()       # see scratch_shadow
        self.persistent: set[str] = set()            # shadows the program owns (global_shadows)
        self._callee_names: dict[str, set[str]] = {}
        self._split_stack: list = []
        self.in_parallel = False         # synthesizing code an OpenMP team runs (see split)
        self.in_multi = False            # split functions reversed once per lane (see split)
        self._split_edges: dict = {}
        self._hint_variants: dict = {}        # fn -> the pointer hints of its derivatives (with_variant)
        self.debug = None                     # the derivatives' debug metadata (with_locations)
        self.split_info: dict = {}       # split key -> (lane hazard, split keys it calls)
        self.split_frees: dict = {}      # split key -> its reverse frees what its forward allocated
        set_module_registrations(self.reg.inactive, self.reg.like, self.reg.alloc_like)

    # ---- helpers used by rules -----------------------------------------------------------------
    def fail(self, synth, inst, why, hint):
        raise UserError(f"{located(self.module, synth.fn, inst)}: {why}; hint: {hint}")

    def fail_where_run(self, synth, inst, why, hint, emit=None):
        """A refusal of inst that matters only where it runs: a link error where every run of
        the derivatives reaches it (always_runs); else returns, and where `emit` is given (the
        sweep that runs inst) the derivative stops there with the same message (a reduction
        without a derivative in a branch the gradient never takes: Nek5000's gop)."""
        if self.always_runs(synth.fn, inst.block.label):
            self.fail(synth, inst, why, hint)
        if emit is not None:
            msg = self.private_string(f"enzyme-cc: error: {located(self.module, synth.fn, inst)}"
                                      f": {why}; hint: {hint}\n")
            self.helpers.add(("badcall",))          # (defines __enzyme_cc_stop)
            emit(f"call void @__enzyme_cc_stop(ptr {msg})")

    def reverse_adds_nothing(self, callee: str) -> bool:
        """A call of an external function whose reverse adds into no memory: memset (its
        reverse zeroes the shadow), a call without a derivative (I/O, timers, functions the
        program marks inactive). The OpenMP range tracking asks, below this layer."""
        return callee.startswith(MEMSET) or is_inactive_call(callee)

    def declare(self, callee: str, ty: str, nargs: int):
        name = "@" + callee
        args = ", ".join([ty] * nargs)
        self.declare_raw(name, f"declare {ty} {name}({args})")

    def declare_raw(self, name: str, line: str):
        if name not in self.module.declarations and not self.module.defines(name) and \
                name not in self.module.globals:
            self.decls.setdefault(name, line)

    def private_string(self, s: str, prefix: str = "@ad.str.") -> str:
        """A private constant holding s (NUL-terminated), named by its bytes: one per text,
        shared by all the generated code that names it."""
        data = s.encode() + b"\0"
        name = prefix + hashlib.sha1(data).hexdigest()[:12]
        if name not in self.module.globals:
            self.decls.setdefault(name, c_string(name, data))
        return name

    def zero_memory(self, emit, ptr: str, nbytes: str, ity: str = "i64"):
        """Emit `memset(ptr, 0, nbytes)` (declaring the intrinsic when the module lacks it)."""
        emit(f"call void @llvm.memset.p0.{ity}(ptr {ptr}, i8 0, {ity} {nbytes}, i1 false)")
        self.declare_raw(f"@llvm.memset.p0.{ity}",
                         f"declare void @llvm.memset.p0.{ity}(ptr, i8, {ity}, i1)")

    def need_aggregate_add(self, ty: str):
        self.helpers.add(("aggadd", ty))

    def agg_add_name(self, ty: str) -> str:
        return runtime.agg_add_name(ty)

    def memcpy_adjoint(self, kind: str) -> str:
        self.helpers.add(("memcpy", kind))
        return f"__enzyme_cc_memcpy_adj_{kind}"

    def copy_ranges(self, synth, inst):
        """[(offset, size or None, kind)] of a memcpy in synth's function; error when unknown."""
        ranges = copy_ranges(self.module, synth.fn, inst, synth.types)
        if (not ranges or any(k is None for _, _, k in ranges)) and not self.in_multi and (
                moves_freed_block(self.module, synth.fn, inst) or
                synth.mem.zeroed_until(inst.ops[1].value, inst)):
            # the whole block's shadow bytes move (copy_adjoint): the source is not read again,
            # or holds the zeros of its allocation (constant data, whose adjoint goes nowhere)
            return [(0, None, "bytes")]
        if not ranges or any(k is None for _, _, k in ranges):
            conflict = layout_conflict(self.module, synth.fn, inst, synth.types)
            if conflict:
                self.fail(synth, inst, f"cannot type the copy: {conflict}",
                          "pack each layout into a buffer of its own (or a union whose "
                          "members keep floats and pointers apart), or copy through typed "
                          "pointers")
            self.fail(synth, inst, "cannot deduce the type of the memory being copied (double, "
                      "float, pointer or integer data)",
                      untyped_copy_hint(synth.fn.name, self.module))
        if len(ranges) > 1 and any(size is None for _, size, _ in ranges):
            self.fail(synth, inst, "copy of a variable number of mixed-type records",
                      "copy the fields one by one")
        return ranges

    # ---- synthesis -----------------------------------------------------------------------------
    def fn_attrs(self, fn) -> str:
        group = self.module.attr_groups.get(fn.attr_group or "", "")
        keep = [m.group(0) for m in re.finditer(r'"([-\w]+)"="[^"]*"', group)
                if m.group(1) in KEEP_FN_ATTRS]
        # (-fsanitize=address checks the derivative's memory accesses as the primal's)
        keep += re.findall(r"(?<![\w\"])sanitize_address(?![\w\"])", group)[:1]
        return " ".join(keep)

    def callee_attrs(self, fn) -> str:
        """Attributes of the derivative of a callee: as fn_attrs, and `noinline` where the
        primal's call was kept by choice (the user's noinline, or a body of NOINLINE_SIZE
        instructions or more: above any inline threshold but a lone caller's). Inlined, the
        derivatives of a program's every function make one giant function that the post-AD
        optimizer takes superlinear time over, for no run-time gain (docs/performance.md).
        An OpenMP region's function (clang marks it alwaysinline) is run by the runtime, never
        inlined: its derivatives too stay calls of their wrapper (ad/parallel/openmp.py), so that
        post-AD work on a program's regions can be split over the cores."""
        attrs = self.fn_attrs(fn)
        if fn.name in self._fork_targets():
            return f"noinline {attrs}"
        group = self.module.attr_groups.get(fn.attr_group or "", "")
        if "alwaysinline" in group:
            return attrs
        if re.search(r"\bnoinline\b", group) or \
                sum(len(b.insts) for b in fn.blocks) >= NOINLINE_SIZE:
            return f"noinline {attrs}"
        return attrs

    def params_text(self, fn, acts, synth) -> list[str]:
        out = []
        for p, a in zip(fn.params, acts):
            na = "noalias " if p.ty == "ptr" and "noalias" in p.attrs else ""
            out.append(f"{p.ty} {na}{local_name(p.name)}")
            if a in ("dup", "dupnoneed"):
                # a restrict pointer's shadow is as unaliased as the pointer, which lets LLVM
                # vectorize the reverse sweep's scatter into the shadows; but not when the
                # function only reads through it: two such pointers may point to the same
                # memory (C's restrict and LLVM's noalias only forbid that for memory written,
                # and Fortran passes every argument noalias: DDOT(N, X, 1, X, 1)), and the
                # reverse sweep writes both shadows
                sna = na if not {"readonly", "readnone"} & set(p.attrs) else ""
                out.append(f"{p.ty} {sna}{synth.sname(p.name)}")
        return out

    def adjoint_return(self, fn, acts):
        return self.adjoint_type([packed_bits.param_adjoint_type(fn, p) if a == "active" else p.ty
                                  for p, a in zip(fn.params, acts)], acts)

    def adjoint_type(self, param_tys, acts):
        """(return type of a reverse function, the types of the adjoints it returns): those of
        the active parameters, one value or a struct."""
        tys = [adjoint_type_of(t) for t, a in zip(param_tys, acts) if a == "active"]
        if not tys:
            return "void", tys
        if len(tys) == 1:
            return tys[0], tys
        return "{ " + ", ".join(tys) + " }", tys

    def finish_reverse(self, synth, ctx):
        """Code closing rev(entry): free the tape (combined), return the argument adjoints."""
        lines = []
        if synth.mode == "combined":
            lines.append("call void @__enzyme_cc_tape_end(ptr %ad.tape)")
        fn = synth.fn
        rty, tys = self.adjoint_return(fn, synth.arg_act)
        vals = []
        for p, a in zip(fn.params, synth.arg_act):
            if a == "active":
                v, ty = synth.tmp("res"), packed_bits.param_adjoint_type(
                    self.module.function(fn.name) or fn, p)
                lines.append(f"{v} = load {ty}, ptr {synth.slots[p.name]}")
                if ty in ("double", "float"):
                    # an adjoint nothing reached is the accumulator's -0.0 (sweep_ctx.adjoint_zero):
                    # the user gets +0.0 (x + 0.0 == x except that -0.0 becomes +0.0)
                    lines.append(f"{v}.z = fadd {ty} {v}, 0.0")
                    v += ".z"
                vals.append((ty, v))
        if not vals:
            lines.append("ret void")
        elif len(vals) == 1:
            lines.append(f"ret {vals[0][0]} {vals[0][1]}")
        else:
            acc = "poison"
            for k, (ty, v) in enumerate(vals):
                nxt = synth.tmp("agg")
                lines.append(f"{nxt} = insertvalue {rty} {acc}, {ty} {v}, {k}")
                acc = nxt
            lines.append(f"ret {rty} {acc}")
        return lines

    def gradient(self, fn_name: str, acts: list[str], ret_active: bool, hints=None) -> tuple[str, str]:
        """Combined-mode gradient of fn for one activity signature: (name, return type)."""
        key = (fn_name, act_key(acts), ret_active, self.with_variant(fn_name, hints, "combined"))
        if key in self.done:
            return self.done[key]
        fn = self.module.function(fn_name)
        truncate.refuse_derivative(fn)
        self.counter += 1
        name = f"@diffe.{fn_name[1:].strip(chr(34))}.{self.counter}"
        synth = Synth(self, fn, acts, ret_active, "combined", hints or {})
        # reversed once per call, and its split callees belong to it, not to an enclosing split
        # function (reverse_vector.hazard_of follows those edges)
        outer_multi, self.in_multi = self.in_multi, False
        stack, self._split_stack = self._split_stack, []
        try:
            fwd, rev = synth.build()
        finally:
            self.in_multi, self._split_stack = outer_multi, stack
        rty, _ = self.adjoint_return(fn, acts)
        params = ", ".join(without_noalias(self.params_text(fn, acts, synth), fwd + rev))
        body, dbg = self.with_locations(fn, name, fwd + rev)
        self.out.append(f"define internal {rty} {name}({params}) {self.fn_attrs(fn)}{dbg} {{\n"
                        + "\n".join(body) + "\n}\n")
        self.helpers.add(("tape",))
        self.done[key] = (name, rty)
        return name, rty

    def split_returns(self, fn_name: str, acts: list[str], ret_active: bool, hints=None):
        """(aug_ret, rev_ret) of split's functions for fn_name, without building them."""
        synth = Synth(self, self.module.function(fn_name), acts, ret_active, "split", hints or {})
        synth.parallel = self.in_parallel
        return synth.aug_ret_type(), self.adjoint_return(synth.fn, acts)[0]

    def split(self, fn_name: str, acts: list[str], ret_active: bool, hints=None, parallel=None,
              multi=None, private=(), restored=()):
        """Augmented forward and reverse functions of a callee: (aug, aug_ret, rev, rev_ret).
        parallel: run by the threads of an OpenMP team (ad/parallel/openmp.py: atomic shared adjoints);
        multi: the reverse runs more than once on one tape (reverse vector mode: checkpointed
        loops keep their run, ad/api/checkpoint.py); an integer N > 1: reverse vector mode of width
        N, whose locals' shadows have room for N lanes (lane_fusion.py); by default, as the
        function being synthesized; private: in a function a team runs, the pointer parameters
        the call passes memory private to the thread (openmp.private_args); restored: the
        (parameter, bytes) local arrays the pair saves and restores (restored_args.py)."""
        parallel = self.in_parallel if parallel is None else parallel
        multi = self.in_multi if multi is None else multi
        private = frozenset(private) if parallel else frozenset()
        restored = frozenset(restored)
        key = (fn_name, act_key(acts), ret_active,
               self.with_variant(fn_name, hints, split_kind(parallel, multi, private, restored)))
        if self._split_stack:             # which split functions each one calls (reverse_vector)
            self._split_edges.setdefault(self._split_stack[-1], set()).add(key)
        if key in self.done:
            return self.done[key]
        if key in self.failed:
            raise self.failed[key]
        fn = self.module.function(fn_name)
        truncate.refuse_derivative(fn)
        self.counter += 1
        base = fn_name[1:].strip('"')
        aug, rev = f"@aug.{base}.{self.counter}", f"@rev.{base}.{self.counter}"
        synth = Synth(self, fn, acts, ret_active, "split", hints or {})
        synth.parallel, synth.private, synth.restored = parallel, private, dict(restored)
        aug_ret = synth.aug_ret_type()
        rev_ret, _ = self.adjoint_return(fn, acts)
        mark = self._mark()
        self.done[key] = (aug, aug_ret, rev, rev_ret)   # before build: recursion calls itself
        self._split_stack.append(key)
        outer, self.in_parallel = self.in_parallel, parallel
        outer_multi, self.in_multi = self.in_multi, multi
        try:
            fwd, rv = synth.build()
        except UserError as e:
            self._roll_back(mark, key, e)
            raise
        finally:
            self._split_stack.pop()
            self.in_parallel, self.in_multi = outer, outer_multi
        self.split_info[key] = (reverse_vector.lane_hazard(synth),
                                self._split_edges.setdefault(key, set()))
        self.split_frees[key] = bool(synth.freed)   # its reverse frees blocks (enzyme_nofree)
        params = self.params_text(fn, acts, synth)
        attrs = self.callee_attrs(fn)
        fwd, dbg = self.with_locations(fn, aug, fwd)
        self.out.append(f"define internal {aug_ret} {aug}({', '.join(params + ['ptr %ad.tape'])}) "
                        f"{attrs}{dbg} {{\n" + "\n".join(fwd) + "\n}\n")
        dret = [f"{synth.ret_adjoint_type()} %ad.dret"] if ret_active else []
        rparams = restored_args.params(synth, without_noalias(params, rv))
        rv, dbg = self.with_locations(fn, rev, rv)
        self.out.append(f"define internal {rev_ret} {rev}({', '.join(rparams + dret + ['ptr %ad.tape'])})"
                        f" {attrs}{dbg} {{\n" + "\n".join(rv) + "\n}\n")
        self.helpers.add(("tape",))
        return self.done[key]

    def with_locations(self, fn, name: str, lines: list) -> tuple[list, str]:
        """A derivative body's source locations in a subprogram of its own (debug_locs.py),
        and the header's attachment of it ("" without debug info)."""
        if fn.dbg is None:          # (no instruction of it has a location to tag with)
            return lines, ""
        if self.debug is None:
            self.debug = debug_locs.DebugScopes(self.module.metadata)
        scope = self.debug.for_function(fn, name)
        if scope is None:
            return debug_locs.strip(lines), ""
        return scope.resolve(lines), f" !dbg {scope.sp}"

    def with_variant(self, fn_name: str, hints, kind: str) -> str:
        """kind, marked with which derivative of fn_name a call with these pointer hints
        shares: the first earlier call's whose hints agree (_agree). Callers that keep
        different kinds in the same bytes get their own (one std::function push_back moving a
        lambda's captured double, another a captured pointer, in the same bytes)."""
        seen = self._hint_variants.setdefault(fn_name, [])
        hints = hints or {}
        k = next((k for k, h in enumerate(seen) if all(
            _agree(h.get(p, {}), hints[p]) and _agree(hints[p], h.get(p, {})) for p in hints)),
            None)
        if k is None:
            seen.append(hints)
            k = len(seen) - 1
        return kind if k == 0 else f"{kind}-hints{k}"

    def _mark(self):
        """Where the generated code stands before a derivative is built (see _roll_back)."""
        return len(self.out), set(self.done), len(self.done.log)

    def _roll_back(self, mark, key, error):
        """A derivative that failed (the caller may go on without it: an indirect call's
        dispatcher leaves that target out) takes with it what was made while it was built and
        leads back to it (rollback.py). The failure is remembered, so that other callers do not
        build it again."""
        roll_back(self.out, self.done, mark, key)
        self.failed[key] = error

    # ---- forward mode --------------------------------------------------------------------------
    def forward_return(self, fn_name: str, acts: list[str], width: int, error: bool,
                       hints=None) -> str:
        """The return type of forward's function for a callee fn_name, without building it."""
        return ForwardSynth(self, self.module.function(fn_name), acts, True, hints or {}, width,
                            error).ret_type()

    def forward(self, fn_name: str, acts: list[str], callee: bool, hints=None,
                width: int = 1, error: bool = False) -> tuple[str, str]:
        """Forward-mode derivative: (name, return type). acts: 'active' (value + tangent),
        'dup' (pointer + shadow), 'const'. Width N > 1: N shadows/tangents per argument, N
        tangents returned as an array. error: the tangents are error estimates
        (__enzyme_error_estimate, rules/error.py)."""
        key = (fn_name, act_key(acts), callee,
               self.with_variant(fn_name, hints, "error" if error else "forward"), width)
        if key in self.done:
            return self.done[key]
        if key in self.failed:
            raise self.failed[key]
        fn = self.module.function(fn_name)
        truncate.refuse_derivative(fn)
        self.counter += 1
        vec = f"{width}." if width > 1 else ""
        name = f"@{'fwderr' if error else 'fwddiffe'}.{vec}{fn_name[1:].strip(chr(34))}.{self.counter}"
        synth = ForwardSynth(self, fn, acts, callee, hints or {}, width, error)
        rty = synth.ret_type()
        mark = self._mark()
        self.done[key] = (name, rty)
        try:
            body = synth.build()
        except UserError as e:
            self._roll_back(mark, key, e)
            raise
        params = []
        for p, a in zip(fn.params, acts):
            params.append(f"{p.ty} {local_name(p.name)}")
            for _ in synth.lanes():
                if a in ("dup", "dupnoneed"):
                    params.append(f"{p.ty} {synth.sname(p.name)}")
                elif a == "active":
                    params.append(f"{p.ty} {synth.tname(p.name)}")
        attrs = self.callee_attrs(fn) if callee else self.fn_attrs(fn)
        body, dbg = self.with_locations(fn, name, body)
        self.out.append(f"define internal {rty} {name}({', '.join(params)}) {attrs}{dbg} {{\n"
                        + "\n".join(body) + "\n}\n")
        return name, rty


def _agree(a: dict, b: dict) -> bool:
    """Pointer hints a and b agree: the same kind wherever both know one, and no pointer in b
    where a knows nothing (a derivative built without knowing of a pointer there gives it no
    shadow: a lambda's captured reference in bytes another caller leaves untyped)."""
    return all(a.get(o, k if k != "ptr" or o == "*" else None) == k for o, k in b.items())


# Enzyme's type annotations (`__enzyme_double(p)`, ...) only inform type analysis (typeinfo.py):
# no code, so their calls go once the derivatives are made
_TYPE_HINT_CALL = re.compile(r'^[ \t]*(?:\w+ )*call void (?:\([^)]*\) )?'
                             r'@"?__enzyme_(?:double|float|integer|pointer)"? ?\(.*\n', re.M)


# the collector's thresholds while derivatives are made (see _fewer_collections)
GC_THRESHOLDS = (20_000, 20, 20)


@contextlib.contextmanager
def _fewer_collections():
    """The analyses allocate many small containers that live as long as the run (the parsed
    functions, activity sets, plans): with Python's default thresholds the collector walked
    them all again and again, about 6 % of a whole program's differentiate stage (400
    functions: 353 collections, 0.27 s; 9 collections, 0.03 s with these), for the same peak
    memory (the garbage is found, only later)."""
    old = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def differentiate(text: str, origins: dict | None = None, shared: bool = False) -> str:
    """Rewrite every marker call. Marker calls inside functions that are themselves
    differentiated (higher order) are handled first, in rounds, innermost first. In a shared
    library, a marker on a parameter of a function nothing in it calls is refused: its callers
    are outside (in an executable it is an inlined helper's leftover copy)."""
    with _fewer_collections():
        return _differentiate(text, origins, shared)


def _differentiate(text: str, origins: dict | None, shared: bool) -> str:
    text = truncate.lower(text)   # __enzyme_truncate_*: truncated copies, differentiable code
    text = lower(text)      # checkpointed loops: plain loops until reverse mode meets them
    counter = 0
    text = fixed_point.lower(text)
    text = batch.lower(text)   # __enzyme_batch: a call of f per lane, differentiable like any code
    text = virtual_shadow.lower(text)   # __enzyme_virtualreverse(p) is p (dispatch on the primal)
    text = openmp_capture.lower(text)   # values a region captures by value: through memory
    text = openmp_capture.hoist_reads(text)   # shared variables a region only reads
    text = rule_wrappers.add_wrappers(text)   # registrations wherever the function is reached
    for level in range(1, 9):
        gen = Generator(text, counter)
        gen.level = level
        gen.origins = origins or {}
        requests = find_requests(gen.module)
        for r in requests:
            if shared and r.mode == "unreached":
                refuse_unknown_function(gen.module, r.caller, r.inst)
        if not requests:
            done = gen.run([]) if global_shadows.uses_api(text) else text
            done = _TYPE_HINT_CALL.sub("", iter_marker.drop_iters(done))
            done = registrations.drop_references(done)
            done = define_marker_tags(drop_debug_uses(done))
            refuse_marker_values(done)
            done = tape_local.lower(done)     # after the last round (rules/tape.py reads calls)
            return tape_sites.instrument(done) if tape_sites.tape_sites() else done
        ready = [r for r in requests if not gen.reaches_marker(r.fn)]
        if not ready:
            raise UserError(f"function '{requests[0].fn[1:]}' differentiates itself (a marker call "
                            "reaches back to the function being differentiated)")
        text = gen.run(ready, [r for r in requests if r not in ready])
        counter = gen.counter
    raise UserError("marker calls nested more than 8 deep")
