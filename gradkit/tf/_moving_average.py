"""``tf.train.ExponentialMovingAverage``: shadow Variables that follow others by exponential decay.

Each ``apply`` assigns ``shadow -= (1 - decay) * (shadow - variable)``, TensorFlow's own update.
The update is a Variable assignment, so a gradient through it is exact: a loss of the averages
has a gradient with respect to the averaged Variables and to ``decay`` (TensorFlow's tape gives
None for both).

>>> import gradkit.tf as tf
>>> w = tf.Variable([1.0, 2.0], name="weights")
>>> ema = tf.train.ExponentialMovingAverage(decay=0.9)
>>> ema.apply([w])
>>> _ = w.assign([3.0, 4.0])
>>> ema.apply([w])
>>> ema.average(w).name, [round(float(x), 4) for x in ema.average(w).numpy()]
('weights/ExponentialMovingAverage:0', [1.2, 2.2])
"""

from __future__ import annotations

import collections
import weakref

from gradkit import _errors
from gradkit._core import frames

from . import _array, _dtypes, _math
from ._control import executing_eagerly
from ._graph_helpers import init_scope
from ._variables import Variable

_AVERAGED_DTYPES = ("bfloat16", "float16", "float32", "float64")

# TensorFlow names shadow Variables through a variable scope, which makes each name unique in the
# process: 'w/ExponentialMovingAverage', then 'w/ExponentialMovingAverage_1' for the next average of w.
_names_used: collections.Counter = collections.Counter()
# TensorFlow adds each averaged Variable to a process-wide collection, which variables_to_restore()
# reads when given no list.
_averaged: list[weakref.ref] = []


def _unique_name(base: str) -> str:
    count = _names_used[base]
    _names_used[base] += 1
    return base if count == 0 else f"{base}_{count}"


def _base_name(var) -> str:
    return var.name[: -len(":0")] if var.name.endswith(":0") else var.name


def _checked(var_list) -> list:
    if var_list is None:
        # TensorFlow 2 keeps no global collection of trainable Variables, so it averages nothing.
        return []
    var_list = list(var_list)
    for var in var_list:
        if not isinstance(var, Variable):
            raise _errors.GradkitTypeError(
                f"tf.train.ExponentialMovingAverage.apply got {type(var).__name__} {var!r:.80} in var_list, "
                "but it averages tf.Variables only, as TensorFlow does when executing eagerly. Keep the value "
                "in a tf.Variable and pass a list of Variables: ema.apply([v1, v2])."
            )
    for var in var_list:
        if _dtypes.as_dtype(var.dtype).name not in _AVERAGED_DTYPES:
            raise _errors.GradkitTypeError(
                f"tf.train.ExponentialMovingAverage.apply got {var.name} of dtype {_dtypes.as_dtype(var.dtype).name}, "
                "but the variables must be half, float, or double (bfloat16, float16, float32 or float64), as in "
                "TensorFlow. Average a floating copy instead: tf.Variable(tf.cast(v, tf.float32))."
            )
    return var_list


class ExponentialMovingAverage:
    """``tf.train.ExponentialMovingAverage(decay, num_updates=None, zero_debias=False,
    name='ExponentialMovingAverage')``.

    ``apply(var_list)`` makes a non-trainable shadow Variable for each new Variable, holding its
    value, then moves every shadow towards its Variable. With ``num_updates`` (a step count) the
    decay used is ``min(decay, (1 + num_updates) / (10 + num_updates))``. ``average(var)`` is
    the shadow Variable (None if ``var`` is not averaged). ``zero_debias`` affects only plain
    tensors, which TensorFlow 2 refuses, so it changes nothing here either.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        """The name of this ExponentialMovingAverage object, the last part of its shadows' names."""
        return self._name

    def _decay_now(self):
        decay = _array.convert_to_tensor(self._decay, dtype="float32")
        if self._num_updates is None:
            return decay
        num_updates = _array.cast(self._num_updates, "float32")
        return _math.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))

    def apply(self, var_list=None):
        """Makes shadows for Variables not averaged yet, then updates every shadow once."""
        var_list = _checked(var_list)
        # Checked before any shadow is made or moved: a bad decay leaves every Variable unchanged.
        decay = self._decay_now()
        for var in var_list:
            if var.ref() not in self._averages:
                # As TensorFlow's init_scope: the shadow starts from a copy no tape records and, inside a
                # tf.function, from the value the Variable holds outside the call.
                initial = var.read_value() if executing_eagerly() else frames.live(var)
                with init_scope():
                    shadow = Variable(initial, trainable=False, name=_unique_name(f"{_base_name(var)}/{self._name}"))
                self._averages[var.ref()] = shadow
                _averaged.append(weakref.ref(var))
        for var in var_list:
            shadow = self._averages[var.ref()]
            rate = _array.cast(1.0 - decay, shadow.dtype)
            shadow.assign_sub((shadow - var) * rate)
        return None

    def average(self, var):
        """The shadow Variable holding the average of ``var``, or None if ``var`` is not averaged."""
        ref = getattr(var, "ref", None)
        if ref is None:
            raise _errors.GradkitAttributeError(
                f"tf.train.ExponentialMovingAverage.average got {type(var).__name__} {var!r:.80}, which has no "
                "'ref': it looks up the average of a tf.Variable. Pass the Variable given to apply()."
            )
        return self._averages.get(ref(), None)

    def average_name(self, var) -> str:
        """The name (without ``:0``) of the shadow Variable that holds, or would hold, ``var``'s average."""
        shadow = self.average(var)
        if shadow is not None:
            return _base_name(shadow)
        return f"{_base_name(var)}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """TensorFlow 1's map from the names to restore from to Variables: each of
        ``moving_avg_variables`` under its average's name. Without a list, as in TensorFlow 2,
        every Variable any ExponentialMovingAverage has averaged (eagerly there is no collection of
        trainable or global Variables to add)."""
        if moving_avg_variables is None:
            moving_avg_variables = [var for var in (ref() for ref in _averaged) if var is not None]
        unique = {var.ref(): var for var in moving_avg_variables}
        return {self.average_name(var): var for var in unique.values()}
