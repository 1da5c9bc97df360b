"""``Dataset.interleave(num_parallel_calls=...)`` with ``cycle_length`` left to AUTOTUNE takes
TensorFlow's cycle length, which decides the order of the elements: ``min(num_parallel_calls,
cores)``, or a third of the cores rounded up for ``num_parallel_calls=AUTOTUNE``. Oracles: a
round-robin written out here (TensorFlow's documented order), and TensorFlow on this machine."""

import pytest

import gradkit.tf as gtf
from gradkit import GradkitError
from gradkit.tf._data import mapping


def _round_robin(starts, cycle, length=3):
    """TensorFlow's interleave order, block_length 1: ``cycle`` datasets open at a time, one
    element from each in turn, the next input's dataset taking a finished one's place."""
    pending = [list(range(10 * s, 10 * s + length)) for s in starts]
    slots, out, index = [None] * cycle, [], 0
    while pending or any(slots):
        if not slots[index] and pending:
            slots[index] = pending.pop(0)
            continue
        if slots[index]:
            out.append(slots[index].pop(0))
        index = (index + 1) % cycle
    return out


def _interleaved(lib, **kwargs):
    ds = lib.data.Dataset.range(1, 8).interleave(lambda n: lib.data.Dataset.range(10 * n, 10 * n + 3), **kwargs)
    return [int(v) for v in ds]


@pytest.mark.parametrize(
    "kwargs, cycle",
    [
        ({}, 16),
        ({"num_parallel_calls": gtf.data.AUTOTUNE}, 6),
        ({"num_parallel_calls": 4}, 4),
        ({"num_parallel_calls": 16}, 16),
        ({"cycle_length": 3, "num_parallel_calls": 2}, 3),
    ],
)
def test_the_cycle_length_follows_num_parallel_calls(monkeypatch, kwargs, cycle):
    monkeypatch.setattr(mapping, "_cores", lambda: 16)
    assert _interleaved(gtf, **kwargs) == _round_robin(range(1, 8), cycle)


def test_more_parallel_calls_than_the_cycle_are_refused(monkeypatch):
    monkeypatch.setattr(mapping, "_cores", lambda: 2)
    with pytest.raises(GradkitError, match="less than or equal to `cycle_length`"):
        _interleaved(gtf, cycle_length=1, num_parallel_calls=2)
    # With cycle_length=AUTOTUNE, TensorFlow refuses when the iterator is made.
    ds = gtf.data.Dataset.range(3).interleave(lambda n: gtf.data.Dataset.range(n), num_parallel_calls=8)
    with pytest.raises(GradkitError, match="is 8 and `cycle_length` is 2"):
        list(ds)
    with pytest.raises(GradkitError, match="greater than zero"):
        _interleaved(gtf, num_parallel_calls=0)


@pytest.mark.parametrize("calls", [None, -1, 1, 2])
def test_matches_tensorflow_on_this_machine(calls):
    tf = pytest.importorskip("tensorflow")
    kwargs = {} if calls is None else {"num_parallel_calls": calls}
    assert _interleaved(gtf, **kwargs) == _interleaved(tf, **kwargs)
