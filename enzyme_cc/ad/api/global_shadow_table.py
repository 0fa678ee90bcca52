"""The table of persistent globals of the global-shadow API (ad/api/global_shadows.py): the layout of
a shadow set, and the helpers unrolled over the table's globals that make, swap, zero and re-derive
shadow sets at run time (`Table.definitions`)."""
from __future__ import annotations

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import c_string, type_size
from ..structure.type_layout import global_type, layout, struct_fields
from enzyme_cc.rules.shadow_blocks import USABLE_DECL

BASE_GLOBALS = "@ad.gs.globals"      # the table's globals, in order (read by later rounds)
MAX_SLOTS = 1024


class _Layout:
    """Word offsets of a shadow set of width w over n globals with m pointer fields."""

    def __init__(self, n, m, w):
        self.n, self.m, self.w = n, m, w
        self.words = 3 + n * w + 2 * m * w

    def lane(self, i, k):
        return 3 + i * self.w + k

    def heap_p(self, j, k):
        return 3 + self.n * self.w + j * self.w + k

    def heap_s(self, j, k):
        return 3 + self.n * self.w + self.m * self.w + j * self.w + k


class _Fn:
    def __init__(self, header):
        self.lines, self.n, self.header = [header, "entry:"], 0, header

    def t(self):
        self.n += 1
        return f"%t{self.n}"

    def emit(self, s):
        self.lines.append(s)

    def word(self, base, k):
        p = self.t()
        self.emit(f"{p} = getelementptr ptr, ptr {base}, i64 {k}")
        return p

    def within(self, x, base, size):
        """(x - base, whether that is below size): where an address lies in a block."""
        d, inside = self.t(), self.t()
        self.emit(f"{d} = sub i64 {x}, {base}")
        self.emit(f"{inside} = icmp ult i64 {d}, {size}")
        return d, inside

    def load_word(self, base, k):
        v = self.t()
        self.emit(f"{v} = load ptr, ptr {self.word(base, k)}")
        return v

    def text(self):
        return "\n".join(self.lines + ["}"])


class Table:
    prefix = "ad.gs"      # of the helpers that depend on the round (static storage): see static()

    def __init__(self, gen, globals_, ws):
        self.gen, self.globals, self.widths = gen, sorted(globals_), sorted(ws)
        named = gen.module.named_types
        self.sizes, self.zero, self.slots = [], [], []
        for i, g in enumerate(self.globals):
            ty = global_type(gen.module, g)
            size = type_size(ty, named)
            scalars = _scalars(ty, named)
            self.sizes.append(size)
            # float bytes and bytes of unknown type are zeroed, and so are i8s (clang's untyped
            # storage, which may hold floats); integers keep the primal's, pointers are re-derived
            keep = sorted((o, s) for o, k, s in scalars if k == "ptr" or k == "int" and s > 1)
            self.zero.append(_complement(keep, size))
            self.slots += [(i, o) for o, k, _ in scalars if k == "ptr"]
        if len(self.slots) > MAX_SLOTS:
            raise UserError(f"the globals with shadows hold {len(self.slots)} pointers; enzyme-cc "
                            f"handles up to {MAX_SLOTS}; hint: keep large pointer arrays on the heap")

    def static(self, i, w, k):
        return self.gen.shadow_global(self.globals[i], None if w == 1 else k, w)

    def around_call(self, req, new: list[str]) -> list[str]:
        """A derivative call with enzyme_context runs on the context's shadows (swapped into the
        static storage and back); one without runs on the default set of its width."""
        w, P = getattr(req, "width", 1), self.prefix
        ctx = getattr(req, "context", None)
        tail = [new.pop()] if new and new[-1].startswith("br label") else []
        if ctx is None:
            return [f"call void @{P}.prepare.{w}()"] + new + tail
        return [f"call void @{P}.enter.{w}(ptr {ctx.value})"] + new + \
            [f"call void @{P}.leave.{w}(ptr {ctx.value})"] + tail

    # ---- per-width helpers ------------------------------------------------------------------
    def _fix(self, w):
        L, n = _Layout(len(self.globals), len(self.slots), w), len(self.globals)
        f = _Fn(f"define internal void @ad.gs.fix.{w}(ptr %set, ptr %lanes) {{")
        for j, (i, off) in enumerate(self.slots):
            for k in range(w):
                p, pi = f.t(), f.t()
                f.emit(f"{p} = load ptr, ptr getelementptr (i8, ptr {self.globals[i]}, i64 {off})")
                f.emit(f"{pi} = ptrtoint ptr {p} to i64")
                cur, hit, lanes = "null", "false", []
                for t in range(n):
                    d, inside = f.within(pi, f"ptrtoint (ptr {self.globals[t]} to i64)",
                                         self.sizes[t])
                    c, s, h = f.t(), f.t(), f.t()
                    lanes.append(f.load_word("%lanes", t * w + k))
                    f.emit(f"{c} = getelementptr i8, ptr {lanes[t]}, i64 {d}")
                    f.emit(f"{s} = select i1 {inside}, ptr {c}, ptr {cur}")
                    f.emit(f"{h} = or i1 {hit}, {inside}")
                    cur, hit = s, h
                hp, hs = f.word("%set", L.heap_p(j, k)), f.word("%set", L.heap_s(j, k))
                dst = f.load_word("%lanes", i * w + k)
                at, now, ours, heap, r = f.t(), f.t(), f.t(), f.t(), f.t()
                f.emit(f"{at} = getelementptr i8, ptr {dst}, i64 {off}")
                f.emit(f"{now} = load ptr, ptr {at}")
                f.emit(f"{ours} = load ptr, ptr {hs}")
                f.emit(f"{heap} = call ptr @ad.gs.heap(ptr {hp}, ptr {hs}, ptr {p}, i1 {hit})")
                f.emit(f"{r} = select i1 {hit}, ptr {cur}, ptr {heap}")
                # a shadow the program stored there itself (`*__enzyme_shadow(&g, 1, 0) = its
                # own tree of shadow blocks`) for a heap block is kept: not null, not the set's
                # block, not the primal pointer, not a pointer into a shadow lane (ours from an
                # earlier entry); a primal pointing into a global always gets that global's shadow
                ni, replace = f.t(), hit
                f.emit(f"{ni} = ptrtoint ptr {now} to i64")
                for t in range(n):
                    li, o = f.t(), f.t()
                    f.emit(f"{li} = ptrtoint ptr {lanes[t]} to i64")
                    _, inside = f.within(ni, li, self.sizes[t])
                    f.emit(f"{o} = or i1 {replace}, {inside}")
                    replace = o
                kept = f.t()
                f.emit(f"{kept} = call ptr @ad.gs.kept(ptr {now}, ptr {ours}, ptr {p}, i1 "
                       f"{replace}, ptr {r})")
                f.emit(f"store ptr {kept}, ptr {at}")
        f.emit("ret void")
        return f.text()

    def _zero(self, w):
        L = _Layout(len(self.globals), len(self.slots), w)
        f = _Fn(f"define internal void @ad.gs.zero.{w}(ptr %set) {{")
        for i in range(len(self.globals)):
            for k in range(w):
                lane = f.load_word("%set", L.lane(i, k))
                for off, size in self.zero[i]:
                    at = f.t()
                    f.emit(f"{at} = getelementptr i8, ptr {lane}, i64 {off}")
                    f.emit(f"call void @llvm.memset.p0.i64(ptr {at}, i8 0, i64 {size}, i1 false)")
        for j in range(len(self.slots)):
            for k in range(w):
                s = f.load_word("%set", L.heap_s(j, k))
                f.emit(f"call void @ad.gs.zero_heap(ptr {s})")
        f.emit("ret void")
        return f.text()

    def _per_width(self, w):
        L = _Layout(len(self.globals), len(self.slots), w)
        init = _Fn(f"define internal void @ad.gs.init.{w}(ptr %set) {{")
        for i, g in enumerate(self.globals):
            for k in range(w):
                lane = init.load_word("%set", L.lane(i, k))
                init.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {lane}, ptr {g}, i64 "
                          f"{self.sizes[i]}, i1 false)")
        l3 = init.word("%set", 3)
        init.emit(f"call void @ad.gs.zero.{w}(ptr %set)")
        init.emit(f"call void @ad.gs.fix.{w}(ptr %set, ptr {l3})")
        init.emit(f"store i64 1, ptr {init.word('%set', 1)}")
        init.emit("ret void")
        new = _Fn(f"define internal ptr @ad.gs.new.{w}() {{")
        new.emit(f"%set = call ptr @calloc(i64 1, i64 {8 * L.words})")
        new.emit(f"store i64 {w}, ptr %set")
        for i in range(len(self.globals)):
            for k in range(w):
                b = new.t()
                new.emit(f"{b} = call ptr @calloc(i64 1, i64 {max(self.sizes[i], 1)})")
                new.emit(f"store ptr {b}, ptr {new.word('%set', L.lane(i, k))}")
        new.emit(f"call void @ad.gs.init.{w}(ptr %set)")
        new.emit("%head = load ptr, ptr @ad.gs.list")
        new.emit(f"store ptr %head, ptr {new.word('%set', 2)}")
        new.emit("store ptr %set, ptr @ad.gs.list")
        new.emit("ret ptr %set")
        return [self._fix(w), self._zero(w), init.text(), new.text()] + self.round_helpers(w)

    def round_helpers(self, w):
        """The helpers tied to the static storage of this round's derivatives: the default set
        of width w (its blocks are the statics), swapping a context in and out."""
        L, P = _Layout(len(self.globals), len(self.slots), w), self.prefix
        lanes = f"getelementptr (ptr, ptr @{P}.default.{w}, i64 3)"
        swap = _Fn(f"define internal void @{P}.swap.{w}(ptr %set) {{")
        for i in range(len(self.globals)):
            for k in range(w):
                lane = swap.load_word("%set", L.lane(i, k))
                swap.emit(f"call void @ad.gs.swapmem(ptr {lane}, ptr {self.static(i, w, k)}, "
                          f"i64 {self.sizes[i]})")
        swap.emit("ret void")
        enter = "\n".join([
            f"define internal void @{P}.enter.{w}(ptr %set) {{", "entry:",
            "%w = load i64, ptr %set", f"%ok = icmp eq i64 %w, {w}",
            "br i1 %ok, label %go, label %bad",
            "bad:", "call void @ad.gs.fail(ptr @ad.gs.msg.width)", "unreachable",
            "go:", f"call void @{P}.swap.{w}(ptr %set)",
            f"call void @ad.gs.fix.{w}(ptr %set, ptr {lanes})", "ret void", "}"])
        leave = "\n".join([
            f"define internal void @{P}.leave.{w}(ptr %set) {{", "entry:",
            f"call void @{P}.swap.{w}(ptr %set)", "%l = getelementptr ptr, ptr %set, i64 3",
            f"call void @ad.gs.fix.{w}(ptr %set, ptr %l)", "ret void", "}"])
        # the base round's default set persists (the program queries and seeds it); a later
        # round's cannot be queried: its derivatives start from zero shadows (ad.gs.init)
        init = f"call void @ad.gs.init.{w}(ptr @{P}.default.{w})"
        prepare = [f"define internal void @{P}.prepare.{w}() {{", "entry:", init, "ret void", "}"]
        if P == Table.prefix:
            prepare[2:3] = [
                f"%i = load i64, ptr getelementptr (ptr, ptr @{P}.default.{w}, i64 1)",
                "%new = icmp eq i64 %i, 0", "br i1 %new, label %init, label %fix",
                "init:", init, "ret void",
                "fix:", f"call void @ad.gs.fix.{w}(ptr @{P}.default.{w}, ptr {lanes})"]
        prepare = "\n".join(prepare)
        words = [f"ptr inttoptr (i64 {w} to ptr)", "ptr null", "ptr null"]
        words += [f"ptr {self.static(i, w, k)}" for i in range(len(self.globals)) for k in range(w)]
        words += ["ptr null"] * (2 * len(self.slots) * w)
        default = f"@{P}.default.{w} = internal global [{len(words)} x ptr] [{', '.join(words)}]"
        return [swap.text(), enter, leave, prepare, default]

    def _dispatch(self, name, params, call, ret="void", width="%w = load i64, ptr %set"):
        """A function switching on the run-time width (%w, computed by `width`) to the
        per-width helpers."""
        lines = [f"define internal {ret} @ad.gs.{name}({params}) {{", "entry:", width]
        cases = " ".join(f"i64 {w}, label %w{w}" for w in self.widths)
        lines.append(f"switch i64 %w, label %bad [ {cases} ]")
        for w in self.widths:
            lines.append(f"w{w}:")
            lines += call(w)
        lines += ["bad:", "call void @ad.gs.fail(ptr @ad.gs.msg.nowidth)", "unreachable", "}"]
        return "\n".join(lines)

    def _lookup(self):
        f = _Fn("define internal ptr @ad.gs.lookup(ptr %lanes, i64 %w, ptr %addr, i32 %lane) {")
        f.emit("%k = zext i32 %lane to i64")
        f.emit("%lok = icmp ult i64 %k, %w")
        f.emit("br i1 %lok, label %find, label %badlane")
        f.emit("badlane:")
        f.emit("call void @ad.gs.fail(ptr @ad.gs.msg.lane)")
        f.emit("unreachable")
        f.emit("find:")
        f.emit("%a = ptrtoint ptr %addr to i64")
        cur, hit = "null", "false"
        for t, g in enumerate(self.globals):
            d, inside, idx, idx2, c, s, h = (f.t() for _ in range(7))
            f.emit(f"{d} = sub i64 %a, ptrtoint (ptr {g} to i64)")
            f.emit(f"{inside} = icmp ult i64 {d}, {self.sizes[t]}")
            f.emit(f"{idx} = mul i64 %w, {t}")
            f.emit(f"{idx2} = add i64 {idx}, %k")
            lp, lane = f.t(), f.t()
            f.emit(f"{lp} = getelementptr ptr, ptr %lanes, i64 {idx2}")
            f.emit(f"{lane} = load ptr, ptr {lp}")
            f.emit(f"{c} = getelementptr i8, ptr {lane}, i64 {d}")
            f.emit(f"{s} = select i1 {inside}, ptr {c}, ptr {cur}")
            f.emit(f"{h} = or i1 {hit}, {inside}")
            cur, hit = s, h
        f.emit(f"br i1 {hit}, label %found, label %none")
        f.emit("none:")
        f.emit("call void @ad.gs.fail(ptr @ad.gs.msg.addr)")
        f.emit("unreachable")
        f.emit("found:")
        f.emit(f"ret ptr {cur}")
        return f.text()

    def definitions(self) -> list[str]:
        out = [f"{BASE_GLOBALS} = internal constant [{len(self.globals)} x ptr] "
               f"[{', '.join('ptr ' + g for g in self.globals)}]"]
        for w in self.widths:
            out += self._per_width(w)
        out.append(self._dispatch("context", "i32 %n", lambda w: [
            f"%s{w} = call ptr @ad.gs.new.{w}()", f"ret ptr %s{w}"], ret="ptr",
            width="%w = sext i32 %n to i64"))
        out.append(self._dispatch("shadow_ctx", "ptr %set, ptr %addr, i32 %lane", lambda w: [
            f"%l{w} = getelementptr ptr, ptr %set, i64 3",
            f"call void @ad.gs.fix.{w}(ptr %set, ptr %l{w})",
            f"%r{w} = call ptr @ad.gs.lookup(ptr %l{w}, i64 {w}, ptr %addr, i32 %lane)",
            f"ret ptr %r{w}"], ret="ptr"))
        out.append(self._dispatch("shadow_default", "ptr %addr, i32 %wi, i32 %lane", lambda w: [
            f"call void @ad.gs.prepare.{w}()",
            f"%r{w} = call ptr @ad.gs.lookup(ptr getelementptr (ptr, ptr @ad.gs.default.{w}, i64 3), "
            f"i64 {w}, ptr %addr, i32 %lane)", f"ret ptr %r{w}"], ret="ptr",
            width="%w = sext i32 %wi to i64"))
        out.append(self._dispatch("zero_ctx", "ptr %set", lambda w: [
            f"call void @ad.gs.zero.{w}(ptr %set)", "ret void"]))
        out += [self._lookup(), _FIXED]
        for name, msg in _MESSAGES.items():
            out.append(c_string(f"@ad.gs.msg.{name}", msg.encode() + b"\n\0"))
        for n, d in _DECLS.items():
            self.gen.declare_raw(n, d)
        return out


def _scalars(ty, named) -> list[tuple[int, str, int]]:
    """(offset, kind, bytes) of the scalars of a global's type (typeinfo.layout, which stops
    after 4096 array elements: the bytes after them count as float data)."""
    return [(o, k, type_size(scalar_type(ty, named, o) or "ptr", named) if k == "int" else
             8 if k == "ptr" else 0) for o, k in sorted(layout(ty, named).items())]


def scalar_type(ty, named, off):
    """The scalar type at a byte offset of a type (None when it is not a scalar's start)."""
    ty = named.get(ty.strip(), ty).strip()
    if ty.startswith(("{", "<{")):
        for f, pos in struct_fields(ty, named):
            if pos <= off < pos + type_size(f, named):
                return scalar_type(f, named, off - pos)
        return None
    if ty.startswith(("[", "<")) and " x " in ty:
        elem = ty[1:-1].split(" x ", 1)[1].strip()
        size = type_size(elem, named)
        return scalar_type(elem, named, off % size) if size else None
    return ty if off == 0 else None


def _complement(keep, size):
    """[(offset, size)] of the bytes of [0, size) not covered by the (offset, size) ranges."""
    out, pos = [], 0
    for o, s in keep:
        if o > pos:
            out.append((pos, o - pos))
        pos = max(pos, o + s)
    if pos < size:
        out.append((pos, size - pos))
    return out


_MESSAGES = {
    "width": "enzyme-cc: a derivative was called with enzyme_context and a context of another "
             "width (__enzyme_context(N) must match the derivative's enzyme_width)",
    "nowidth": "enzyme-cc: __enzyme_context / __enzyme_shadow: no derivative of this width in the "
               "program",
    "lane": "enzyme-cc: __enzyme_shadow: the lane is not below the width",
    "addr": "enzyme-cc: __enzyme_shadow: the address is not in a global that a derivative of this "
            "program reads or writes",
}
_DECLS = {
    "@calloc": "declare noalias ptr @calloc(i64, i64)",
    "@malloc": "declare noalias ptr @malloc(i64)",
    "@free": "declare void @free(ptr)",
    "@malloc_usable_size": USABLE_DECL,
    "@abort": "declare void @abort()",
    "@fputs": "declare i32 @fputs(ptr, ptr)",
    "@stderr": "@stderr = external global ptr",
    "@llvm.memset.p0.i64": "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
    "@llvm.memcpy.p0.p0.i64": "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
    "@__ehdr_start": "@__ehdr_start = extern_weak hidden global i8",
    "@_end": "@_end = extern_weak hidden global i8",
}
# Width-independent helpers. heap: the shadow of a pointer field that points to neither null, nor
# a table global (skip), nor the program image: the set's zeroed block for that primal block,
# made anew when the primal pointer changed.
_FIXED = r"""
@ad.gs.list = internal global ptr null

define internal void @ad.gs.fail(ptr %msg) noinline cold noreturn nounwind {
entry:
  %e = load ptr, ptr @stderr
  %n = call i32 @fputs(ptr %msg, ptr %e)
  call void @abort()
  unreachable
}

define internal ptr @ad.gs.heap(ptr %rp, ptr %rs, ptr %p, i1 %skip) {
entry:
  %isnull = icmp eq ptr %p, null
  %no = or i1 %skip, %isnull
  br i1 %no, label %none, label %image
image:
  %lo = icmp uge ptr %p, @__ehdr_start
  %hi = icmp ult ptr %p, @_end
  %known = icmp ne ptr @_end, null
  %in0 = and i1 %lo, %hi
  %in = and i1 %in0, %known
  br i1 %in, label %none, label %heap
none:
  ret ptr null
heap:
  %old = load ptr, ptr %rp
  %same = icmp eq ptr %old, %p
  %olds = load ptr, ptr %rs
  br i1 %same, label %keep, label %make
keep:
  ret ptr %olds
make:
  %n = call i64 @malloc_usable_size(ptr %p)
  %s = call ptr @calloc(i64 1, i64 %n)
  call void @free(ptr %olds)
  store ptr %p, ptr %rp
  store ptr %s, ptr %rs
  ret ptr %s
}

define internal ptr @ad.gs.kept(ptr %now, ptr %ours, ptr %p, i1 %ours_anyway, ptr %r) {
entry:
  %null = icmp eq ptr %now, null
  %mine = icmp eq ptr %now, %ours
  %prim = icmp eq ptr %now, %p
  %a = or i1 %null, %mine
  %b = or i1 %prim, %ours_anyway
  %replace = or i1 %a, %b
  %v = select i1 %replace, ptr %r, ptr %now
  ret ptr %v
}

define internal void @ad.gs.zero_heap(ptr %s) {
entry:
  %isnull = icmp eq ptr %s, null
  br i1 %isnull, label %done, label %zero
zero:
  %n = call i64 @malloc_usable_size(ptr %s)
  call void @llvm.memset.p0.i64(ptr %s, i8 0, i64 %n, i1 false)
  br label %done
done:
  ret void
}

define internal void @ad.gs.swapmem(ptr %a, ptr %b, i64 %n) {
entry:
  %t = call ptr @malloc(i64 %n)
  call void @llvm.memcpy.p0.p0.i64(ptr %t, ptr %a, i64 %n, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr %b, i64 %n, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %b, ptr %t, i64 %n, i1 false)
  call void @free(ptr %t)
  ret void
}
"""
