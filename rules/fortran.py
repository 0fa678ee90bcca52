"""flang's runtime entries that enzyme-cc implements in C (differentiated as code), and the
refusals of the others that have neither an implementation nor a rule."""

import re
from .c_runtime import runtime_bitcode
from .fortran_catalog import refusal
from enzyme_cc.lto.optimize import parse_bitcode
from enzyme_cc.ad.structure.type_layout import fortran_descriptor, underlying


# ---- flang runtime entries differentiated through our own implementation --------------------
# flang's runtime entries (no bitcode) that we implement in C, which AD differentiates as code:
# intrinsic assignment (allocation on assignment, any rank) and the reductions an unoptimized
# build keeps as calls, REAL and COMPLEX (fortran_runtime.c); TRANSPOSE, RESHAPE, CSHIFT, EOSHIFT, SPREAD, PACK
# and UNPACK (fortran_transform.c); ALLOCATE (also of POINTERs, also with SOURCE=), DEALLOCATE,
# default initialization, intrinsic assignment and destruction of derived types with allocatable
# components, and MOVE_ALLOC (fortran_derived.c; flang's entries for the rest behind wrappers in
# fortran_fallback.c); SUM, PRODUCT, MAXVAL, MINVAL and NORM2 with DIM= (fortran_dim.c); the
# copy-in/copy-out of non-contiguous arguments, NORM2 and RANDOM_NUMBER (fortran_runtime.c)
SUBSTITUTED = ("Assign", "SumReal8", "SumReal4", "ProductReal8", "ProductReal4", "MaxvalReal8",
               "MaxvalReal4", "MinvalReal8", "MinvalReal4", "DotProductReal8", "DotProductReal4",
               "MatmulReal8Real8", "MatmulReal4Real4",
               "Transpose", "Reshape", "Cshift", "CshiftVector", "Eoshift", "EoshiftVector",
               "Spread", "Pack", "Unpack",
               "AllocatableAllocate", "AllocatableDeallocate", "AllocatableDeallocatePolymorphic",
               "Destroy", "Initialize", "MoveAlloc",
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


def link_runtime(module, ctx):
    for data in runtime_bitcode(SOURCES, ("fortran_desc.h",), "Fortran runtime"):
        module.link_in(parse_bitcode(data, "enzyme-cc Fortran runtime", ctx))


def refuse_associated_pointer(gen, synth, inst, ptr: str) -> None:
    """Refuses where ptr is a Fortran module POINTER's descriptor, or the data address read from
    one, that the program may associate with other data (type_layout.fortran_descriptor): its
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
