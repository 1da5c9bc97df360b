"""Interleaved timing of contenders that compute the same thing.

For each case, every contender is called once for its first-call time (compile
included), warmed up, and calibrated to ``inner`` calls per sample (so that a sample of a
10 µs program is not dominated by the timer). Then, round after round, each contender
takes one sample in a freshly shuffled order, so that slow drift of the machine (thermal,
other processes) falls on every contender alike instead of on whichever ran last. Every
call's output is blocked on (``block_until_ready``): the numbers are latencies of a call
whose result is ready, for every contender alike.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import time
from collections.abc import Callable

import jax
import numpy as np

FLOOR = "jax.jit (floor)"


@dataclasses.dataclass
class Timing:
    """One contender's numbers for one case of a workload (seconds per call)."""

    workload: str
    case: str
    name: str
    median_s: float | None = None
    min_s: float | None = None
    first_s: float | None = None
    rounds: int = 0
    inner: int = 0
    ratio: float | None = None
    target: float | None = None
    met: bool | None = None
    note: str = ""


@dataclasses.dataclass
class Case:
    """Contenders of one workload configuration: ``{name: callable or None}`` (None: a note row)."""

    workload: str
    name: str
    contenders: dict[str, Callable | None]
    targets: dict[str, float] = dataclasses.field(default_factory=dict)
    notes: dict[str, str] = dataclasses.field(default_factory=dict)


def to_numpy(out):
    """Any contender's output (JAX arrays, gradkit Tensors, TF or PyTorch tensors) as NumPy."""

    def conv(x):
        if x is None:
            return None
        if hasattr(x, "detach"):  # torch
            return x.detach().cpu().numpy()
        if hasattr(x, "numpy") and not isinstance(x, np.ndarray):  # gradkit Tensor, TF tensor
            return np.asarray(x.numpy())
        return np.asarray(x)

    return jax.tree_util.tree_map(conv, out, is_leaf=lambda x: not isinstance(x, (list, tuple, dict)))


def block(out):
    """Wait until every array in ``out`` is computed (JAX, and TF/PyTorch on a GPU, dispatch asynchronously)."""
    cuda = tf_gpu = False
    for x in jax.tree_util.tree_leaves(out, is_leaf=lambda x: not isinstance(x, (list, tuple, dict))):
        if isinstance(x, jax.Array):
            x.block_until_ready()
        elif hasattr(x, "_node"):  # a gradkit Tensor: its value, computed if still lazy
            jax.block_until_ready(x.__gradkit_value__())
        elif getattr(x, "is_cuda", False):  # a PyTorch tensor on a GPU
            cuda = True
        elif "GPU" in str(getattr(x, "device", "")) and type(x).__module__.startswith("tensorflow"):
            tf_gpu = True
    if cuda:
        import torch

        torch.cuda.synchronize()
    if tf_gpu:
        import tensorflow as tf

        tf.test.experimental.sync_devices()
    return out


def _sample(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        block(fn())
    return (time.perf_counter() - t0) / n


def time_case(case: Case, *, budget_s: float, min_rounds: int, max_rounds: int, sample_s: float, progress=None):
    """Time every contender of ``case``; returns one ``Timing`` per contender (note rows too)."""
    # Note rows too: a contender with no callable, or a peer that only has a note ("not installed").
    names = [*case.contenders, *(n for n in case.notes if n not in case.contenders)]
    rows = {
        name: Timing(case.workload, case.name, name, target=case.targets.get(name), note=case.notes.get(name, ""))
        for name in names
    }
    live = {name: fn for name, fn in case.contenders.items() if fn is not None}
    inner = {}
    for name, fn in live.items():
        t0 = time.perf_counter()
        block(fn())
        rows[name].first_s = time.perf_counter() - t0
        block(fn())  # second call: any lazily built cache entry is in place now
        per_call = _sample(fn, 1)
        inner[name] = max(1, min(2000, int(sample_s / max(per_call, 1e-7))))
    samples: dict[str, list[float]] = {name: [] for name in live}
    rng = random.Random(0)
    order = list(live)
    t_start = time.perf_counter()
    rounds = 0
    while rounds < max_rounds and (rounds < min_rounds or time.perf_counter() - t_start < budget_s):
        rng.shuffle(order)
        for name in order:
            samples[name].append(_sample(live[name], inner[name]))
        rounds += 1
    floor = statistics.median(samples[FLOOR]) if FLOOR in samples else None
    for name, xs in samples.items():
        r = rows[name]
        r.median_s, r.min_s, r.rounds, r.inner = statistics.median(xs), min(xs), rounds, inner[name]
        if floor:
            r.ratio = r.median_s / floor
            if r.target is not None:
                r.met = r.ratio <= r.target
    for name, r in rows.items():
        if name not in live and not r.note:
            r.note = "not installed"
    return list(rows.values())
