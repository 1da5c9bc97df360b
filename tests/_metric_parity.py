"""Shared steps of the Keras metric parity tests: two updates, a reset, and the config."""

import re

import numpy as np


def two_updates(lib, make, y_true, y_pred, weights):
    """The metric's result after the first half, after the second half (weighted, unless
    ``weights`` is None), after ``reset_state``, and its config."""
    metric = make(lib.keras.metrics)
    half = len(y_true) // 2
    metric.update_state(y_true[:half], y_pred[:half])
    first = np.asarray(metric.result())
    metric.update_state(y_true[half:], y_pred[half:], sample_weight=None if weights is None else weights[half:])
    second = np.asarray(metric.result())
    metric.reset_state()
    return first, second, np.asarray(metric.result()), metric.get_config()


def assert_same_config(got, want, drop=()):
    """Equal configs, but for dtype, the keys in ``drop``, and the numbering of default names (auc_3),
    which counts the metrics each library made before in the process."""
    assert re.sub(r"_\d+$", "", want["name"]) == re.sub(r"_\d+$", "", got["name"])
    drop = ("dtype", "name", *drop)
    assert {k: v for k, v in got.items() if k not in drop} == {k: v for k, v in want.items() if k not in drop}
