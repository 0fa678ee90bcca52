"""IR text of the small runtime the generated code calls: the tape, memcpy adjoints, aggregate adds.
Emitted once per module, internal, so LLVM inlines and specializes them."""
import hashlib

from enzyme_cc.ir.lexer import record_leaves, type_size
from .tape import STABLE_TAPE as _STABLE_TAPE, tape_ir, tape_stats


# The destination's adjoint is zeroed before the source's is read: a copy onto itself (a
# struct assigned to itself, `step(&s, &s)` starting with `*out = *in`) keeps its adjoint.
_MEMCPY = """
define internal void @__enzyme_cc_memcpy_adj_{kind}(ptr %dd, ptr %ds, i64 %bytes) nounwind {{
entry:
  %n = udiv i64 %bytes, {size}
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pd = getelementptr inbounds {kind}, ptr %dd, i64 %i
  %ps = getelementptr inbounds {kind}, ptr %ds, i64 %i
  %vd = load {kind}, ptr %pd
  store {kind} 0.0, ptr %pd
  %vs = load {kind}, ptr %ps
  %sum = fadd {kind} %vs, %vd
  store {kind} %sum, ptr %ps
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""

# One field of each of the records in `bytes` (a copy of a variable number of structs): {op}
# is the field's adjoint, zeroing or move. Records go in the direction a memmove from %ds to
# %dd needs, so overlapping runs of records move like the primal's. A last, partial record (a
# buffer that holds records on one path and doubles on another: copy_floats.py) has the part
# of the field that lies in it done too, first or last in that order.
_RECORDS = """
define internal void @__enzyme_cc_records_{op}(ptr %dd, ptr %ds, i64 %bytes, i64 %stride, i64 %off, i64 %fbytes) nounwind {{
entry:
  %n = udiv i64 %bytes, %stride
  %up = icmp ule ptr %dd, %ds
  %last = sub i64 %n, 1
  %empty = icmp eq i64 %n, 0
  %whole = mul i64 %n, %stride
  %rem = sub i64 %bytes, %whole
  %intail = icmp ult i64 %off, %rem
  %tavail = sub i64 %rem, %off
  %tshort = icmp ult i64 %tavail, %fbytes
  %tbytes = select i1 %tshort, i64 %tavail, i64 %fbytes
  %to = add i64 %whole, %off
  %tpd = getelementptr inbounds i8, ptr %dd, i64 %to
  %tps = getelementptr inbounds i8, ptr %ds, i64 %to
  %down = xor i1 %up, true
  %tfirst = and i1 %intail, %down
  br i1 %tfirst, label %tail0, label %start
tail0:
  {tail}
  br label %start
start:
  br i1 %empty, label %after, label %loop
loop:
  %i = phi i64 [ 0, %start ], [ %i1, %loop ]
  %rdown = sub i64 %last, %i
  %r = select i1 %up, i64 %i, i64 %rdown
  %rs = mul i64 %r, %stride
  %o = add i64 %rs, %off
  %pd = getelementptr inbounds i8, ptr %dd, i64 %o
  %ps = getelementptr inbounds i8, ptr %ds, i64 %o
  {body}
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %after
after:
  %tlast = and i1 %intail, %up
  br i1 %tlast, label %tail1, label %done
tail1:
  {tail}
  br label %done
done:
  ret void
}}
"""
_RECORD_OPS = {
    "adj_double": "call void @__enzyme_cc_memcpy_adj_double(ptr %pd, ptr %ps, i64 %fbytes)",
    "adj_float": "call void @__enzyme_cc_memcpy_adj_float(ptr %pd, ptr %ps, i64 %fbytes)",
    "zero": "call void @llvm.memset.p0.i64(ptr %pd, i8 0, i64 %fbytes, i1 false)",
    "move": "call void @llvm.memmove.p0.p0.i64(ptr %pd, ptr %ps, i64 %fbytes, i1 false)",
}


def agg_add_name(ty: str) -> str:
    return "__enzyme_cc_add_" + hashlib.sha1(ty.encode()).hexdigest()[:10]


def _agg_add(ty: str) -> str:
    """Element-wise fadd of two aggregates/vectors of floats (non-float leaves are kept)."""
    name = agg_add_name(ty)
    lines = [f"define internal {ty} @{name}({ty} %a, {ty} %b) alwaysinline nounwind {{", "entry:"]
    if ty.startswith("<") and not ty.startswith("<{"):
        lines.append(f"  %r = fadd {ty} %a, %b")
        lines.append(f"  ret {ty} %r")
    else:
        leaves = record_leaves(ty)
        acc = "%a"
        for k, (path, lty) in enumerate(leaves):
            idx = ", ".join(map(str, path))
            lines.append(f"  %x{k} = extractvalue {ty} %a, {idx}")
            lines.append(f"  %y{k} = extractvalue {ty} %b, {idx}")
            op = "fadd" if lty in ("double", "float", "half", "x86_fp80", "fp128") or \
                lty.startswith("<") else None
            if op:
                lines.append(f"  %s{k} = fadd {lty} %x{k}, %y{k}")
                lines.append(f"  %acc{k} = insertvalue {ty} {acc}, {lty} %s{k}, {idx}")
                acc = f"%acc{k}"
        lines.append(f"  ret {ty} {acc}")
    lines.append("}")
    return "\n".join(lines)


_BAD_MSG = "enzyme-cc: a differentiated indirect call reached a function without a derivative " \
           "(no bitcode, or its address is never taken in code built with enzyme-cc); build " \
           "its object with enzyme-cc"
_BAD_INDIRECT = f"""
@__enzyme_cc_bad_msg = private unnamed_addr constant [{len(_BAD_MSG) + 2} x i8] c"{_BAD_MSG}\\0A\\00"
define internal void @__enzyme_cc_bad_indirect_call(ptr %fp) noinline cold noreturn nounwind {{
entry:
  call void @__enzyme_cc_stop(ptr @__enzyme_cc_bad_msg)
  unreachable
}}
define internal void @__enzyme_cc_stop(ptr %msg) noinline cold noreturn nounwind {{
entry:
  %e = load ptr, ptr @stderr
  %n = call i32 @fputs(ptr %msg, ptr %e)
  call void @abort()
  unreachable
}}
"""


_SCALE_MATRIX = """
define internal void @__enzyme_cc_scale_matrix(i32 %layout, i32 %m, i32 %n, double %beta, ptr %c, i32 %ld) {
entry:
  %row = icmp eq i32 %layout, 101
  %outer = select i1 %row, i32 %m, i32 %n
  %inner = select i1 %row, i32 %n, i32 %m
  %ld64 = sext i32 %ld to i64
  %any = icmp sgt i32 %outer, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %i64 = sext i32 %i to i64
  %off = mul i64 %i64, %ld64
  %p = getelementptr double, ptr %c, i64 %off
  call void @cblas_dscal(i32 %inner, double %beta, ptr %p, i32 1)
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, %outer
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""


_DASUM = """
define internal void @__enzyme_cc_dasum_adj(i32 %n, double %d, ptr %x, i32 %incx, ptr %dx, i32 %incd) {
entry:
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %ix = mul i32 %i, %incx
  %id = mul i32 %i, %incd
  %px = getelementptr double, ptr %x, i32 %ix
  %pd = getelementptr double, ptr %dx, i32 %id
  %v = load double, ptr %px
  %sgn = call double @llvm.copysign.f64(double 1.0, double %v)
  %sg = fmul double %d, %sgn
  %z = fcmp oeq double %v, 0.0
  %g = select i1 %z, double 0.0, double %sg
  %o = load double, ptr %pd
  %s = fadd double %o, %g
  store double %s, ptr %pd
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
define internal double @__enzyme_cc_dasum_tan(i32 %n, ptr %x, i32 %incx, ptr %tx, i32 %inct) {
entry:
  %any = icmp sgt i32 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 0.0, %entry ], [ %acc1, %loop ]
  %ix = mul i32 %i, %incx
  %it = mul i32 %i, %inct
  %px = getelementptr double, ptr %x, i32 %ix
  %pt = getelementptr double, ptr %tx, i32 %it
  %v = load double, ptr %px
  %t = load double, ptr %pt
  %sgn = call double @llvm.copysign.f64(double 1.0, double %v)
  %sg = fmul double %t, %sgn
  %z = fcmp oeq double %v, 0.0
  %g = select i1 %z, double 0.0, double %sg
  %acc1 = fadd double %acc, %g
  %i1 = add i32 %i, 1
  %more = icmp slt i32 %i1, %n
  br i1 %more, label %loop, label %done
done:
  %r = phi double [ 0.0, %entry ], [ %acc1, %loop ]
  ret double %r
}
"""




def defined_name(helper) -> str:
    """The first function a helper defines (to skip helpers a previous round emitted)."""
    kind = helper[0]
    if kind == "tape":
        return "@__enzyme_cc_push"
    if kind == "stape":
        return "@__enzyme_cc_stape_push"
    if kind == "badcall":
        return "@__enzyme_cc_bad_indirect_call"
    if kind == "scalemat":
        return "@__enzyme_cc_scale_matrix"
    if kind == "dasum":
        return "@__enzyme_cc_dasum_adj"
    if kind == "memcpy":
        return f"@__enzyme_cc_memcpy_adj_{helper[1]}"
    if kind == "records":
        return f"@__enzyme_cc_records_{helper[1]}"
    if kind == "lanelocal":
        return "@__enzyme_cc_lane_local"
    return "@" + agg_add_name(helper[1])


def definition(helper) -> str:
    kind = helper[0]
    if kind == "tape":
        return tape_ir(tape_stats())
    if kind == "stape":
        return _STABLE_TAPE
    if kind == "badcall":
        return _BAD_INDIRECT
    if kind == "scalemat":
        return _SCALE_MATRIX
    if kind == "dasum":
        return _DASUM
    if kind == "memcpy":
        base = helper[1].removesuffix("_atomic")
        text = _MEMCPY.format(kind=base, size=type_size(base))
        if base != helper[1]:       # the source is shared by an OpenMP team (ad/parallel/openmp.py)
            text = text.replace(f"@__enzyme_cc_memcpy_adj_{base}(", f"@__enzyme_cc_memcpy_adj_{helper[1]}(")
            text = text.replace(f"  %vs = load {base}, ptr %ps\n  %sum = fadd {base} %vs, %vd\n"
                                f"  store {base} %sum, ptr %ps\n",
                                f"  %vs = atomicrmw fadd ptr %ps, {base} %vd monotonic\n")
        return text
    if kind == "records":
        body = _RECORD_OPS[helper[1]]
        tail = body.replace("%pd", "%tpd").replace("%ps", "%tps").replace("%fbytes", "%tbytes")
        return _RECORDS.format(op=helper[1], body=body, tail=tail)
    if kind == "lanelocal":      # lane 0's copy of a local's shadow: the pointer itself
        return ("define internal ptr @__enzyme_cc_lane_local(ptr %p, i64 %stride) alwaysinline "
                "nounwind readnone {\n  ret ptr %p\n}\n")
    if kind == "aggadd":
        return _agg_add(helper[1])
    raise KeyError(helper)


def declarations(helper) -> dict:
    if helper[0] == "tape":
        return {"@realloc": "declare ptr @realloc(ptr, i64)", "@abort": "declare void @abort()",
                "@write": "declare i64 @write(i32, ptr, i64)",
                "@llvm.umax.i64": "declare i64 @llvm.umax.i64(i64, i64)",
                "@free": "declare void @free(ptr)", "@malloc": "declare ptr @malloc(i64)",
                "@llvm.uadd.sat.i64": "declare i64 @llvm.uadd.sat.i64(i64, i64)",
                "@stderr": "@stderr = external global ptr", "@fputs": "declare i32 @fputs(ptr, ptr)",
                **({"@dprintf": "declare i32 @dprintf(i32, ptr, ...)"} if tape_stats() else {})}
    if helper[0] == "stape":
        return {"@calloc": "declare noalias ptr @calloc(i64, i64)", "@abort": "declare void @abort()",
                "@write": "declare i64 @write(i32, ptr, i64)",
                "@llvm.umax.i64": "declare i64 @llvm.umax.i64(i64, i64)",
                "@free": "declare void @free(ptr)"}
    if helper[0] == "records" and helper[1] == "zero":
        return {"@llvm.memset.p0.i64": "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)"}
    if helper[0] == "records" and helper[1] == "move":
        return {"@llvm.memmove.p0.p0.i64": "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)"}
    if helper[0] == "dasum":
        return {"@llvm.copysign.f64": "declare double @llvm.copysign.f64(double, double)"}
    if helper[0] == "scalemat":
        return {"@cblas_dscal": "declare void @cblas_dscal(i32, double, ptr, i32)"}
    if helper[0] == "badcall":
        return {"@stderr": "@stderr = external global ptr", "@fputs": "declare i32 @fputs(ptr, ptr)",
                "@abort": "declare void @abort()"}
    return {}
