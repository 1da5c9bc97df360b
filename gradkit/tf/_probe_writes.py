"""Variable writes made while Keras layers run on zeros only to find shapes or make weights (a
functional model's layer calls, a model's ``build``): each Variable written is put back to the
value it had before the first write when the outermost such run ends, so building a model
leaves a counter, a running statistic or any state a ``call`` assigns as it was (Keras builds
symbolically and assigns nothing). A Variable made during the run goes back to its initial
value."""

from __future__ import annotations

import threading

from gradkit._core import frames

_local = threading.local()  # .depth: runs open; .saved: id -> (Variable, value before its first write)


def open_run() -> None:
    _local.depth = getattr(_local, "depth", 0) + 1
    if _local.depth == 1:
        _local.saved = {}


def close_run() -> None:
    _local.depth -= 1
    if _local.depth == 0:
        saved, _local.saved = _local.saved, {}
        for var, value in saved.values():
            frames.set_live(var, value)


def note_write(var) -> None:
    """Called before ``var`` is assigned: keeps its value the first time within a run."""
    if getattr(_local, "depth", 0) and id(var) not in _local.saved and frames.idle():
        _local.saved[id(var)] = (var, frames.live(var))
