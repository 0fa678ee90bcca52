"""flang's runtime entries that enzyme-cc implements in C (differentiated as code), and the
refusals of the others that have neither an implementation nor a rule."""

import re
from .c_runtime import link_needed, runtime_bitcode
from .fortran_catalog import refusal
from enzyme_cc.lto.optimize import parse_bitcode
from enzyme_cc.ad.structure.fortran_descriptors import fortran_descriptor
from enzyme_cc.ad.structure.type_layout import underlying


# ---- flang runtime entries differentiated through our own implementation --------------------
# flang's runtime entries (no bitcode) that we implement in C, which AD differentiates as code:
# intrinsic assignment (allocation on assignment, any rank) and the reductions an unoptimized
# build keeps as calls, REAL and COMPLEX (fortran_runtime.c); TRANSPOSE, RESHAPE, CSHIFT, EOSHIFT, SPREAD, PACK
# and UNPACK (fortran_transform.c); ALLOCATE (also of POINTERs, also with SOURCE=), DEALLOCATE,
# default initialization, intrinsic assignment and destruction of derived types with allocatable
# components, and MOVE_ALLOC (fortran_derived.c; flang's entries for the rest behind wrappers in
# fortran_fallback.c); SUM, PRODUCT, MAXVAL, MINVAL and NORM2 with DIM= (fortran_dim.c); the
# copy-in/copy-out of non-contiguous arguments, NORM2 and RANDOM_NUMBER (fortran_runtime.c)
SUBSTITUTED = ("Assign", "AssignTemporary", "SumReal8", "SumReal4", "ProductReal8",
               "ProductReal4", "MaxvalReal8", "MaxvalReal4", "MinvalReal8", "MinvalReal4",
               "DotProductReal8", "DotProductReal4",
               "MatmulReal8Real8", "MatmulReal4Real4",
               "Transpose", "Reshape", "Cshift", "CshiftVector", "Eoshift", "EoshiftVector",
               "Spread", "Pack", "Unpack",
               "AllocatableAllocate", "AllocatableDeallocate", "AllocatableDeallocatePolymorphic",
               "Destroy", "DestroyWithoutFinalization", "Initialize", "MoveAlloc",
               "PointerAllocate", "PointerDeallocate", "AllocatableAllocateSource",
               "PointerAllocateSource", "CopyInAssign", "CopyOutAssign", "RandomNumber",
               "SumDim", "ProductDim", "MaxvalDim", "MinvalDim", "Norm2Dim", "Norm2_8", "Norm2_4",
               "CppSumComplex8",
               "CppSumComplex4", "CppProductComplex8", "CppProductComplex4",
               "CppDotProductComplex8", "CppDotProductComplex4")
SOURCES = ("fortran_runtime.c", "fortran_transform.c", "fortran_derived.c", "fortran_fallback.c",
           "fortran_dim.c")
_ENTRY = re.compile(r"@_FortranA(" + "|".join(SUBSTITUTED) + r")(?![\w.$])")


def substitute_runtime(text: str) -> tuple[str, bool]:
    """The module text with references to those entries renamed to ours, and whether there were
    any (then link_runtime links ours in)."""
    if "@_FortranA" not in text:
        return text, False
    new = _ENTRY.sub(r"@__enzyme_cc_fortran_\1", text)
    return new, new != text


# flang's descriptor: the type code's byte offset, and the code of a derived type (CFI_type_struct)
_TYPE_AT, _DERIVED = 21, 42
_ASSIGN = "@__enzyme_cc_fortran_Assign("
_ARGS = re.compile(r"call void @__enzyme_cc_fortran_Assign\(ptr[^%,]*(%[-\w.]+), ptr[^%,]*(%[-\w.]+)")
_USE = re.compile(r"%[-\w.]+(?![-\w.])")


def intrinsic_assignments(text: str) -> str:
    """Calls of our intrinsic assignment whose target or source is a local descriptor of an
    intrinsic type (the stores of its type code are constants other than a derived type's: an
    unoptimized build's array section or whole-array copy, `d = x(:, i)`) call the entry
    without the derived-type path. Its deep copy passes pointer components from the source's
    memory into the target's, so AD took the source as written where the target is, and gave
    the descriptor of an enzyme_const array a shadow it cannot have (refused)."""
    if _ASSIGN not in text:
        return text
    out, body = [], []
    for line in text.split("\n"):
        if body or line.startswith("define "):
            body.append(line)
            if line == "}":
                out += _specialize(body) if any(_ASSIGN in b for b in body) else body
                body = []
        else:
            out.append(line)
    return "\n".join(out + body)


def _specialize(body: list[str]) -> list[str]:
    allocas = {ln.split(" = ", 1)[0].strip() for ln in body if " = alloca " in ln}
    type_field = {}               # the GEP of a local's type code -> that local
    for ln in body:
        m = re.match(r"\s*(%[-\w.]+) = getelementptr inbounds (?:nuw )?i8, ptr (%[-\w.]+), "
                     rf"i64 {_TYPE_AT}$", ln)
        if m and m.group(2) in allocas:
            type_field[m.group(1)] = m.group(2)
    codes: dict[str, set] = {}    # local -> the type codes stored (None: not a constant)
    opaque = set()                # locals used otherwise than by field stores and assignments
    for ln in body:
        m = re.match(r"\s*store i8 (\S+), ptr (%[-\w.]+),", ln)
        if m and m.group(2) in type_field:
            v = m.group(1)
            codes.setdefault(type_field[m.group(2)], set()).add(int(v) if v.isdigit() else None)
            continue
        if _ASSIGN in ln or " = alloca " in ln:
            continue
        # (a field's address, or a store into the local: fine; the local's address stored
        # away or passed on: anything may change its type code)
        m = re.match(r"\s*store .*, ptr (%[-\w.]+)(?:, align \d+)?$", ln)
        used = ln[:m.start(1)] if m else ln.split(" = ", 1)[1] if " = " in ln else ln
        for name in _USE.findall(used):
            if name in allocas and not re.match(r"\s*%[-\w.]+ = getelementptr inbounds "
                                                r"(?:nuw )?i8, ptr %", ln):
                opaque.add(name)
            elif name in type_field and not re.match(r"\s*%[-\w.]+ = load i8, ", ln):
                opaque.add(type_field[name])
    known = {d for d, cs in codes.items() if d not in opaque and None not in cs and
             _DERIVED not in cs}
    out = []
    for ln in body:
        m = _ARGS.search(ln)
        if m and (m.group(1) in known or m.group(2) in known):
            ln = ln.replace(_ASSIGN, "@__enzyme_cc_fortran_AssignIntrinsic(")
        out.append(ln)
    return out


def link_runtime(module, ctx, text: str):
    """Our implementations of the entries the program's module `text` calls, with what they
    use (c_runtime.link_needed: the rest of the runtime is dropped before AD)."""
    # (intrinsic_assignments makes calls of AssignIntrinsic after the pre-AD pipeline)
    roots = {"__enzyme_cc_fortran_AssignIntrinsic"} if _ASSIGN in text else set()
    link_needed(module, ctx, SOURCES, _HEADERS, "Fortran runtime", text, roots)


def link_shadow_runtime(module, text: str, ctx):
    """After AD: the shadow trees of module variables (fortran_shadow.c), where the derivative
    module's entry functions make them."""
    if "@__enzyme_cc_fortran_shadow_tree" not in text:
        return
    for data in runtime_bitcode(("fortran_shadow.c",), _HEADERS, "Fortran shadow runtime"):
        module.link_in(parse_bitcode(data, "enzyme-cc Fortran shadow runtime", ctx))


_HEADERS = ("fortran_desc.h", "fortran_typeinfo.h")


def refuse_associated_pointer(gen, synth, inst, ptr: str) -> None:
    """Refuses where ptr is a Fortran module POINTER's descriptor, or the data address read from
    one, that the program may associate with other data (fortran_descriptors.fortran_descriptor): its
    shadow base would be null, and a derivative writing there would fault."""
    v = underlying(synth.fn, ptr)
    d = synth.fn.defs.get(v)
    if getattr(d, "op", None) == "load":
        v = underlying(synth.fn, d.ops[0].value)
    if fortran_descriptor(gen.module, v) == "pointer":
        gen.fail(synth, inst, "the derivative writes or reads active data through a Fortran "
                 "module POINTER array (or a module variable's POINTER component) that the "
                 "program associates with other data (`p => x` or NULLIFY): enzyme-cc cannot "
                 "know its shadow",
                 "make it ALLOCATABLE (or a POINTER that only ALLOCATE associates), or pass "
                 "the array it points to as an argument")


def refuse_runtime_call(gen, synth, inst):
    """A flang runtime routine that has neither a rule nor an implementation of ours."""
    name = inst.callee[1:]
    why = refusal(name)
    if re.match(r"_FortranA(?:\w+Stack|Push\w+|Pop\w+|DescriptorAt|ValueAt|"
                  r"\w*ArrayConstructor\w*)", name):
        hint = ("write the FORALL or the array constructor as a DO loop over the elements "
                "(DO CONCURRENT works too)")
    elif re.match(r"_FortranA(?:Allocatable|Pointer)\w+", name):
        hint = ("keep pointer remapping (`p(1:n) => x`) and allocations with a user "
                "allocator or a coarray out of the differentiated code; a CLASS object's "
                "ALLOCATE (with a type, SOURCE= or MOLD=) and DEALLOCATE are differentiated")
    else:
        hint = ("enzyme-cc differentiates flang's intrinsic assignment, ALLOCATE, DEALLOCATE "
                "and the finalization of derived types (without final procedures), REAL SUM, "
                "PRODUCT, MAXVAL, MINVAL (also with DIM=), NORM2, DOT_PRODUCT, MATMUL, "
                "TRANSPOSE, RESHAPE, CSHIFT, EOSHIFT, SPREAD, PACK, UNPACK, MOVE_ALLOC, MOD, "
                "MODULO, SCALE, FRACTION, ERFC_SCALED and copy-in/copy-out of array sections; "
                "write this one as a loop over the elements (a build at -O0 may also try -O2, "
                "where flang inlines more of them)")
    gen.fail(synth, inst, f"flang's runtime routine '{name}' has no derivative in enzyme-cc"
             + (f": {why}" if why else ""), hint)
