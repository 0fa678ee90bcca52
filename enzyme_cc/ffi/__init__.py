"""Calling differentiated C, C++ and Fortran from Python: declare a function's signature, build it
with enzyme-cc into a shared library holding its primal, reverse-mode (VJP) and forward-mode (JVP)
entry points, call them (numpy here; enzyme_cc.torch and enzyme_cc.jax wrap them as framework
operations).

    from enzyme_cc.ffi import In, Out, Int, Signature, build
    lib = build([Signature("norm2", [In("x", ("n",)), Int("n")], ret=Ret("r"))], source=SRC)
    lib.norm2(x)               # numpy in, numpy out
    lib.norm2.vjp([x], [1.0])  # gradient

Or let the compiled prototype say what the signature is (ffi/infer.py):

    f = function("norm2", source=SRC, shapes={"x": ("n",)})
"""
from .build import BuildError, CompilerNotFound, build_library
from .infer import signature_of as infer_signature
from .runtime import Function, Library, Plan
from .signature import In, Int, Out, Ret, Signature, SignatureError


def signature_of(name, sources=(), source=None, lang="c", flags=("-O2",), shapes=None,
                 outputs=(), nondiff=(), ret="result"):
    """The Signature of C function `name` read from its compiled prototype: const or read-only
    pointers are inputs, write-only ones outputs (`outputs=` names those both read and written),
    floats by value scalar inputs, integers Int; `shapes` gives each pointer's shape."""
    return infer_signature(name, sources, source, lang, flags, shapes, outputs, nondiff, ret)


def declared(signature, sources=(), source=None, lang="c", flags=("-O2",), **inferred):
    """`signature` itself, or the Signature of the function it names (a str) with the keywords
    of signature_of (shapes, outputs, nondiff, ret)."""
    if isinstance(signature, str):
        return signature_of(signature, sources, source, lang, flags, **inferred)
    if inferred:
        raise SignatureError(f"{', '.join(sorted(inferred))}: only with a function's name in "
                             "place of a Signature")
    return signature


def build(signatures, sources=(), source=None, lang="c", flags=("-O2",), link_flags=(),
          order=1):
    """Builds (or finds in the cache) the library for these signatures from source files and/or
    one source string in `lang` ("c", "c++", "fortran"); returns it loaded. order=2 also builds
    second-order entry points (derivatives of the VJP and JVP: Hessian products)."""
    sigs = [signatures] if isinstance(signatures, Signature) else list(signatures)
    if isinstance(sources, (str, bytes)) or hasattr(sources, "__fspath__"):
        sources = [sources]
    path = build_library(sigs, sources, source, lang, flags, link_flags, order)
    return Library(path, sigs, order)


def function(signature, sources=(), source=None, lang="c", flags=("-O2",), link_flags=(),
             order=1, **inferred):
    """build() for one signature (or a function's name with signature_of's keywords: shapes,
    outputs, nondiff, ret): returns its Function."""
    signature = declared(signature, sources, source, lang, flags, **inferred)
    return build([signature], sources, source, lang, flags, link_flags, order)[signature.name]


__all__ = ["BuildError", "CompilerNotFound", "Function", "In", "Int", "Library", "Out", "Plan",
           "Ret", "Signature", "SignatureError", "build", "declared", "function", "signature_of"]
