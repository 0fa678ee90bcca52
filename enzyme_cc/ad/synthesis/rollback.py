"""What a failed derivative takes with it (Generator._roll_back).

A derivative that fails may have been named already by the functions made while it was under
way: a recursive call, the dispatcher of its own indirect calls, their callers. Those must go,
or the module would call a function never defined. Everything else made meanwhile stays: the
derivatives of callees that do not lead back to it are complete and right, and dropping them
too made FFTW's link build the same codelet derivatives again and again (each apply function
whose variant failed took every dispatcher and codelet built beneath it along; 12,208 functions
were dropped and most rebuilt, half of the differentiate stage).
"""
from __future__ import annotations

import re

_NAME = r'@(?:"[^"]*"|[-\w$.]+)'
_REF = re.compile(_NAME)
# what an entry of Generator.out defines: functions, and globals it may carry beside them
_DEFINED = re.compile(rf'^(?:define [^@\n]*({_NAME})\(|({_NAME}) = )', re.M)


class Registry(dict):
    """Generator.done, remembering every value registered (the names a rolled-back derivative's
    nested requests were given, also those that failed or were removed since)."""

    def __init__(self):
        super().__init__()
        self.log: list = []

    def __setitem__(self, key, value):
        self.log.append(value)
        super().__setitem__(key, value)


def names(value) -> set[str]:
    """The global names in a registry value (a name, or a tuple of names and types)."""
    if isinstance(value, str):
        return {value} if value.startswith("@") else set()
    if isinstance(value, (tuple, list)):
        return set().union(*(names(v) for v in value)) if value else set()
    return set()


def roll_back(out: list[str], done: Registry, mark, key) -> None:
    """Since mark (len(out), set(done), len(done.log)): drop key, the names registered that no
    entry made since defines (requests that failed or are unfinished), and every entry made
    since that refers to a dropped name, transitively, with the registry keys naming them."""
    start, keys_before, logged = mark
    new = out[start:]
    defined = [{a or b for a, b in _DEFINED.findall(e)} for e in new]
    made = set().union(*defined) if defined else set()
    dead = names(done.get(key))
    for value in done.log[logged:]:
        dead |= names(value) - made
    users: dict[str, list[int]] = {}
    for k, e in enumerate(new):
        for n in set(_REF.findall(e)):
            users.setdefault(n, []).append(k)
    live = [True] * len(new)
    work = list(dead)
    while work:
        for k in users.get(work.pop(), ()):
            if live[k]:
                live[k] = False
                fresh = defined[k] - dead
                dead |= fresh
                work.extend(fresh)
    out[start:] = [e for e, keep in zip(new, live) if keep]
    for k in set(done) - keys_before:
        if k == key or names(done[k]) & dead:
            del done[k]
