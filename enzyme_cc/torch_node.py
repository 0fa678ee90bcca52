"""The C++ autograd node of the torch op's split-mode calls (enzyme_cc/ffi/torch_node.cc): the
extension built once per torch version against the headers torch ships, loaded, and the node's
plan made from a prepared split call. A recorded call then costs what a hand-written C++
`torch::autograd::Function` costs (docs/python.md); where the extension cannot be built (no
Python headers, no C++ compiler) the op keeps its Python autograd.Function, with a warning.
`ENZYME_CC_TORCH_NODE=0` keeps the Python path."""
import ctypes
import importlib.util
import os
import sys
import sysconfig
import threading
import warnings

import torch

from . import ffi
from .ffi.build import helper_library
from .ffi.runtime import SPLIT

NAME = "enzyme_cc_torch_node"
_lock = threading.Lock()
_module = None          # the loaded extension; False: not available
split_call = None       # its split_call(plan, inputs): the recorded call (set when loaded)


def _flags():
    root = os.path.dirname(torch.__file__)
    inc, lib = os.path.join(root, "include"), os.path.join(root, "lib")
    return ["-std=c++20", "-O2", "-shared", "-fPIC",
            f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
            "-isystem", inc, "-isystem", os.path.join(inc, "torch", "csrc", "api", "include"),
            "-isystem", sysconfig.get_paths()["include"],
            "-L", lib, f"-Wl,-rpath,{lib}", "-lc10", "-ltorch_cpu", "-ltorch", "-ltorch_python"]


def _library():
    return helper_library(os.path.join(os.path.dirname(ffi.__file__), "torch_node.cc"),
                          "torch-node", _flags(), f"{torch.__version__} {sys.version}")


def module():
    """The extension module, or None (built and loaded on first use)."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                _module = _load()
    return _module or None


def _load():
    global split_call
    if os.environ.get("ENZYME_CC_TORCH_NODE", "1") == "0":
        return False
    try:
        spec = importlib.util.spec_from_file_location(NAME, _library())
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        split_call = mod.split_call
        return mod
    except Exception as e:      # (BuildError, CompilerNotFound, a failed load)
        warnings.warn(f"enzyme_cc.torch: the C++ autograd node is not available ({e}); "
                      "recorded calls use a Python autograd.Function (slower per call)",
                      RuntimeWarning, stacklevel=3)
        return False


def plan(op, p, dtypes):
    """The node's plan of prepared split call `p` of TorchOp `op` (None without the
    extension): entry points, sizes, the results' shapes and dtypes, the op's split-mode flag
    and the Python fallback for what the node does not run itself."""
    mod = module()
    if mod is None:
        return None
    fn, s = op.fn, op.sig
    nout = len(s.outputs)
    entry = {k: ctypes.cast(fn.raw_entry[k], ctypes.c_void_p).value for k in SPLIT}
    like = p.results[:nout]

    def fallback(xs, cts, needs):
        ctx = _Ctx(xs, p.ints, [torch.empty(sh, dtype=dtypes[dt]) for sh, dt in like], needs)
        return list(op._primal_vjp(ctx, *cts)[1:])
    return mod.make_plan(entry["augfwd"], entry["reverse"], p.batch, p.tape_bytes,
                         list(p.ints), list(p.strides), [list(sh) for sh, _ in p.results],
                         [dtypes[dt] for _, dt in p.results], nout, [a.diff for a in s.inputs],
                         ctypes.addressof(op._split_flag), fallback)


class _Ctx:
    """What TorchOp._primal_vjp reads of an autograd ctx."""

    def __init__(self, xs, ints, outputs_like, needs):
        self.saved_tensors, self.n, self.ints = tuple(xs), len(xs), ints
        self.outputs_like, self.needs_input_grad = outputs_like, (False, *needs)
