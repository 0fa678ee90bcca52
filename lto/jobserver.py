"""How many tools the link runs at once: one per core, within GNU make's jobserver.

As gcc's `-flto=auto`: the link's parallel parts (post-AD optimization and codegen) run one per
core of this process's CPU set; inside `make -jN` whose jobserver this process can reach (make
4.4's named fifo, or the pipe of a recipe make runs as recursive: `+` or `$(MAKE)` in it), every
part beyond the first takes one of make's tokens while it runs and gives it back when it ends,
so the build never runs more than N tools at once. `ENZYME_CC_JOBS=N` sets the number of cores
outright (the jobserver still applies).
"""
from __future__ import annotations

import functools
import os
import queue
import re
import select
import stat
import threading
from concurrent.futures import ThreadPoolExecutor

from enzyme_cc.errors import UserError


def limit() -> int:
    """The most parts run at once: ENZYME_CC_JOBS, else the cores this process may use."""
    v = os.environ.get("ENZYME_CC_JOBS", "").strip()
    if v:
        if not v.isdigit() or int(v) < 1:
            raise UserError(f"ENZYME_CC_JOBS={v!r}: expected a positive number of jobs")
        return int(v)
    return max(1, len(os.sched_getaffinity(0)))


class Jobserver:
    """The client end of make's jobserver: a token is one byte read, given back by writing it."""

    def __init__(self, rfd: int, wfd: int):
        self.rfd, self.wfd = rfd, wfd

    def take(self, stop: threading.Event) -> bytes | None:
        """One token, waiting for it (None once `stop` is set). Another client may win the byte
        between select and read: the read then waits for the next one, as make's own does."""
        while not stop.is_set():
            ready, _, _ = select.select([self.rfd], [], [], 0.05)
            if ready:
                try:
                    b = os.read(self.rfd, 1)
                except BlockingIOError:
                    continue
                if b:
                    return b
                return None         # make has gone away
        return None

    def give(self, token: bytes) -> None:
        os.write(self.wfd, token)


_AUTH = re.compile(r"--jobserver-(?:auth|fds)=(\S+)")


@functools.cache
def jobserver() -> Jobserver | None:
    """make's jobserver as MAKEFLAGS names it, when this process can use it: make 4.3 names its
    pipe's descriptors to every recipe but keeps them open only in recursive ones, and a
    descriptor of that number here may then be another file."""
    m = _AUTH.search(os.environ.get("MAKEFLAGS", ""))
    if m is None:
        return None
    auth = m.group(1)
    if auth.startswith("fifo:"):
        try:
            fd = os.open(auth[5:], os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            return None
        return Jobserver(fd, fd)
    try:
        rfd, wfd = (int(x) for x in auth.split(","))
    except ValueError:
        return None
    if rfd < 0 or wfd < 0:
        return None
    try:
        if not (stat.S_ISFIFO(os.fstat(rfd).st_mode) and stat.S_ISFIFO(os.fstat(wfd).st_mode)):
            return None
        import fcntl
        if fcntl.fcntl(rfd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY or \
                fcntl.fcntl(wfd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
            return None
    except OSError:
        return None
    return Jobserver(rfd, wfd)


def run_all(fn, items) -> list:
    """fn over items, the results in order: in threads (fn runs tools), at most limit() at once,
    each beyond the first holding a jobserver token where there is one. An exception of fn is
    raised here, after the running ones end and every token is given back."""
    items = list(items)
    n = min(limit(), len(items))
    if n <= 1:
        return [fn(x) for x in items]
    server = jobserver()
    with ThreadPoolExecutor(n) as pool:
        if server is None:
            return list(pool.map(fn, items))
        return _with_tokens(pool, server, fn, items, n)


def _with_tokens(pool, server, fn, items, n) -> list:
    """The scheduler under a jobserver: one part runs on the token make gave this process; a
    reader thread asks make for one more token while parts wait and fewer than n run."""
    events, stop, want = queue.Queue(), threading.Event(), threading.Event()

    def reader():
        while not stop.is_set():
            if not want.wait(0.05):
                continue
            want.clear()
            t = server.take(stop)
            if t is not None:
                if stop.is_set():
                    server.give(t)
                else:
                    events.put(("token", t))

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    results, tokens, failure = [None] * len(items), [], None
    nxt, running, asked = 0, 0, False
    free = 1                                    # the implicit token of this process
    try:
        while nxt < len(items) or running:
            while free and nxt < len(items) and failure is None:
                k, nxt, free, running = nxt, nxt + 1, free - 1, running + 1
                fut = pool.submit(fn, items[k])
                fut.add_done_callback(lambda f, k=k: events.put(("done", (k, f))))
            if failure is not None and not running:
                break
            if nxt < len(items) and failure is None and running < n and not asked:
                asked = True
                want.set()
            kind, value = events.get()
            if kind == "token":
                asked = False
                if nxt < len(items) and failure is None:
                    tokens.append(value)
                    free += 1
                else:
                    server.give(value)
                continue
            k, fut = value
            running -= 1
            if fut.exception() is None:
                results[k] = fut.result()
            elif failure is None:
                failure = fut.exception()
            if nxt < len(items) and failure is None:
                free += 1
            elif tokens:
                server.give(tokens.pop())
            else:
                free += 1
    finally:
        stop.set()
        thread.join(1.0)
        while tokens:
            server.give(tokens.pop())
        while not events.empty():
            kind, value = events.get()
            if kind == "token":
                server.give(value)
    if failure is not None:
        raise failure
    return results
