"""Process-wide caches with a bound: when one is full, its oldest entries go first.

Compiled programs, interned ops and structure ids live for the process. A program that
records an unbounded number of distinct structures (say, graphs whose length grows with
the step) would otherwise hold every one of them forever.
"""

from __future__ import annotations

import itertools


class BoundedDict(dict):
    """A dict that forgets its oldest entries beyond ``maxsize``.

    Reads are plain dict reads (the recording hot path looks caches up on every op); only
    inserts pay for the bound. A forgotten entry is rebuilt at its next use: its program
    compiles again, or its key gets a fresh interned id. Ids come from counters and are never
    reused, so two different structures never share one.
    """

    __slots__ = ("maxsize",)

    def __init__(self, maxsize: int):
        super().__init__()
        self.maxsize = maxsize

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        if len(self) > self.maxsize:
            self._forget_oldest()

    def setdefault(self, key, default=None):
        value = dict.setdefault(self, key, default)
        if len(self) > self.maxsize:
            self._forget_oldest()
        return value

    def _forget_oldest(self) -> None:
        # A tenth at a time, so that a full cache does not pay for the bound on every insert.
        # list(islice(...)) runs without releasing the GIL: no other thread changes the
        # dict while it is read.
        excess = len(self) - self.maxsize + self.maxsize // 10
        for key in list(itertools.islice(iter(self), max(1, excess))):
            self.pop(key, None)


# Bounds: generous for any fixed program (a training step has tens of structures), small
# enough that a process cannot grow without limit.
PROGRAMS = 1024  # compiled programs (each holds an XLA executable)
RESIDENT_SCALARS = 4096  # Python floats kept on the device as program arguments
INTERNED = 1 << 18  # interned ops, structure ids and shape lookups (small entries)
