"""Calls that may recurse deeply, run on a thread of their own with a deep stack.

The analyses recurse along call chains (a callee's summary asks for its callees' summaries,
each through an Activity of its own: about six Python frames per function), so a chain of a
few hundred distinct functions (FFTW's plans calling their children's, templates instantiated
deep) passed Python's default limit of 1000 frames: an internal error. The thread's stack is
reserved, not committed: only the pages a deep chain touches cost memory."""
from __future__ import annotations

import sys
import threading

STACK_BYTES = 1 << 30
FRAMES = 400_000


def call(fn, *args, **kwargs):
    """fn(*args, **kwargs) on a thread with STACK_BYTES of stack and room for FRAMES Python
    frames; its result, or the exception it raised."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as e:          # (re-raised in the caller's thread)
            out["error"] = e
    old_stack, old_limit = threading.stack_size(), sys.getrecursionlimit()
    threading.stack_size(STACK_BYTES)
    sys.setrecursionlimit(max(old_limit, FRAMES))
    try:
        worker = threading.Thread(target=run, name="enzyme-cc-ad", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old_stack)
    try:
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in out:
        raise out["error"]
    return out["value"]
