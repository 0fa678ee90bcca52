"""enzyme-cc: automatic differentiation on optimized LLVM IR, as drop-in compiler wrappers."""
__version__ = "0.1.0"
