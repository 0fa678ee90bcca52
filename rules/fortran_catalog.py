"""What enzyme-cc does with each entry of flang's runtime (libflang_rt, no bitcode), by name family.

Every exported `_Fortran*` symbol falls in one of four classes (tests/test_libraries.py
checks this against the installed runtime, so a new flang's new entries are looked at):
- inactive: results and effects without a derivative (integer, logical and character data,
  inquiries, I/O, time, process control): the families below, and the names listed in
  stdlib_rules/inactive.toml;
- ours: entries renamed to enzyme-cc's C implementations, differentiated as code
  (rules/fortran.py SUBSTITUTED);
- a rule: scalar formulas (stdlib_rules/fortran.toml);
- refused: REFUSED below, each family with the reason the error message gives.
"""

import re

# integer, logical and character results, inquiries and the environment
_INACTIVE = re.compile(r"_FortranA(?:" + "|".join((
    r"(?:Ceiling|Floor|Nint)\d+_\d+", r"Exponent\d+_\d+", r"(?:IsNaN|IsFinite)\d+",
    r"(?:Mod|Modulo)(?:Integer|Unsigned)\d+", r"UPow\d+",
    r"(?:Sum|Product|Maxval|Minval|Maxloc|Minloc|DotProduct)(?:Integer|Unsigned|Logical)\d+",
    r"(?:Maxval|Minval)Character", r"(?:Maxloc|Minloc)(?:Real\d+|Character|Dim)?",
    r"(?:IAll|IAny|IParity)(?:\d+|Dim)", r"Parity(?:Dim)?",
    r"Matmul(?:Transpose)?(?:Direct)?(?:Integer|Unsigned|Logical)\d+(?:Integer|Unsigned|Logical)\d+",
    r"Reduce(?:Integer|Unsigned|Logical)\d+\w*", r"Reduce(?:Char|Character)\d+\w*",
    r"Selected\w+", r"(?:Lbound|Ubound|Size|Shape)(?:Dim)?", r"IsContiguous(?:UpTo)?",
    r"IsAssumedSize", r"Spacing\d+By\d+", r"ClassIs", r"SameTypeAs", r"ExtendsTypeOf",
    r"PointerIsAssociated(?:With)?", r"MapException", r"fe\w+", r"(?:Get|Set)UnderflowMode",
    r"SupportHalting", r"Get(?:Modes|Status)TypeSize", r"Get(?:PID|UID|GID|Cwd)", r"PutEnv",
    r"Rename", r"Unlink", r"Signal", r"ExecuteCommandLine", r"time", r"D?[Ss]ecnds", r"Flush",
    r"Fseek", r"Ftell", r"ByteswapOption", r"RegisterConfigureEnv", r"ShowDescriptor",
    r"TransferSize", r"Irand", r"Rand", r"RandomInit", r"RandomSeed\w*", r"PauseStatement\w*",
    r"Repeat", r"AssignExplicitLengthCharacter", r"AllocatableInitCharacter\w*",
    r"PointerNullifyCharacter", r"ioInput(?:Integer|Logical|Character|Ascii)\w*",
)) + r")")

# entries that only read their argument descriptors and write a fresh result into the first
# (MATMUL) or none (DOT_PRODUCT): the callee summary of our wrappers that fall back to them
_RESULT_ONLY = re.compile(r"@_FortranA(?:Matmul(?:Transpose)?\w+|(?P<dot>DotProduct\w+))")


def written_args(callee: str):
    """callee_writes' summary (written, kept, read-and-kept, read and kept in memory holding
    active data: argument positions) of a flang runtime entry known to write only its
    result, else None (unknown: every argument)."""
    if callee == "@_FortranAAssign":
        # `to = from`: writes the target (its descriptor and data) only; the pointer components
        # of a derived type are copied from the source's memory (our wrapper's fallback)
        return {0}, set(), {1}, set()
    m = _RESULT_ONLY.fullmatch(callee or "")
    if m is None:
        return None
    return (set() if m.group("dot") else {0}), set(), set(), set()


# the families enzyme-cc refuses when the derivative reaches them, and why (the error's text)
REFUSED = (
    (r"_FortranA\w*(?:Real|Complex)(?:10|16)\w*|_FortranA\w+(?:10|16)(?:_\d+|[ik])?",
     "REAL(10), REAL(16) and their COMPLEX kinds are not differentiated"),
    (r"_FortranA(?:Sum|Product|DotProduct)Complex\d+|_FortranA[cz]q?pow[ik]",
     "COMPLEX powers by an integer and this form of a COMPLEX reduction are not differentiated"),
    (r"_FortranAMatmul\w+",
     "MATMUL of this operand kind or form (mixed kinds, COMPLEX, a transposed or preallocated "
     "result) is not differentiated"),
    (r"_FortranA(?:Cpp)?Reduce\w+", "REDUCE with a user operation is not differentiated"),
    (r"_FortranA(?:Bessel[JY]n\w*)", "the sequence forms of BESSEL_JN and BESSEL_YN are not "
     "differentiated"),
    (r"_FortranATransfer", "TRANSFER reinterprets bits: it has no derivative"),
    (r"_FortranAio(?:Input|Output)\w+|_FortranAio\w+",
     "READ into a variable the derivative reaches is not differentiated"),
    (r"_FortranA(?:Allocatable|Pointer)\w+|_FortranA(?:Assign\w+|ShallowCopy\w*|"
     r"CopyAndUpdateDescriptor|Finalize|DestroyWithoutFinalization|InitializeClone|"
     r"RaggedArray\w+|Malloc|Free)",
     "this allocation, pointer association or copy of descriptors (polymorphic data, "
     "character lengths, pointer remapping) is not differentiated"),
    (r"_FortranA(?:\w+Stack|Push\w+|Pop\w+|DescriptorAt|ValueAt|\w*ArrayConstructor\w*)",
     "array constructors and FORALL temporaries built by the runtime are not differentiated"),
)
_REFUSED = [(re.compile(p), why) for p, why in REFUSED]


def inactive(name: str) -> bool:
    """Whether flang's runtime entry `name` (no '@') never carries a derivative."""
    return name.startswith("_FortranA") and _INACTIVE.fullmatch(name) is not None


def refusal(name: str) -> str | None:
    """Why enzyme-cc refuses flang's runtime entry `name`, or None when it is not refused."""
    for pattern, why in _REFUSED:
        if pattern.fullmatch(name):
            return why
    return None
