"""The branches ``tf.cond``, ``tf.switch_case`` and ``tf.case`` do not take, inside ``tf.function``.

Inside ``tf.function`` TensorFlow builds every branch into one ``If``/``Case`` op, even where
the predicate or index is a constant: the op reads whatever any branch's results are computed
from, so a gradient with respect to a tensor (or Variable) that only a branch not taken reads
is zeros there, not None (eagerly one branch runs, and it is None). gradkit calls the chosen
branch alone when the choice is known while tracing, so that a tape records it; to read what
the others read, each of them is traced as well, its results joined to the chosen branch's
with a derivative that is zero but present (``_control._joined``). The results are never
computed at run time (XLA drops them); the trace leaves no trace of its own:

- Variables are read as the ``tf.cond`` found them, and assignments are discarded;
- ``tf.print`` prints nothing, and random draws use a key of their own, so the function's
  other draws are the ones they would be without it;
- a branch that raises is left out: TensorFlow would build it, gradkit only asks what it
  reads, and a branch that fails for the values at hand (``tf.reduce_max`` of a tensor that
  is empty exactly when the branch is not taken) must not fail the call.
"""

from __future__ import annotations

import threading

from gradkit._core import frames

from . import _random


class _Discarding(frames.Frame):
    """Variables read as the frames below hold them; assignments kept nowhere."""

    def read(self, var):
        return frames.read_below(self, var)

    def assign(self, var, value) -> None:
        pass

    def cuts_assignments(self) -> bool:
        return self.parent is not None and self.parent.cuts_assignments()


class _Quiet(threading.local):
    def __init__(self):
        self.depth = 0


_quiet = _Quiet()


def quiet() -> bool:
    """Whether a branch that is not taken is being traced now (``tf.print`` then prints nothing)."""
    return _quiet.depth > 0


def results(fns) -> list:
    """What each function of ``fns`` (branches not taken) returns, traced as described above;
    a branch that raises gives nothing."""
    out = []
    for fn in fns:
        _quiet.depth += 1
        try:
            with _Discarding(), _random.discarded():
                out.append(fn())
        except Exception:  # noqa: BLE001 - see the module docstring
            continue
        finally:
            _quiet.depth -= 1
    return out
