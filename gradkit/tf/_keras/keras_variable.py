"""``tf.keras.Variable``: Keras 3's variable, on gradkit.tf's ``tf.Variable``.

As in Keras: the first argument is a value or an initializer (an instance, a callable
``init(shape, dtype)`` or a name such as ``"glorot_uniform"``, which needs ``shape``); names are
``'variable'``, ``'variable_1'``, ... unless given, without TensorFlow's ``':0'``, and ``path``
is the name; ``aggregation`` and ``synchronization`` are Keras' strings. Unlike Keras on
TensorFlow, it is also a ``tf.Variable`` (every gradkit.tf op and tape takes it as one), its
``dtype`` is the NumPy dtype (it compares equal to Keras' string), and ``autocast`` is
accepted and has no effect (gradkit.tf has no mixed-precision scope).
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .._variable_options import VariableAggregationV2, VariableSynchronization
from .._variables import Variable
from . import initializers as _initializers
from .layer_weight import SettableTrainable

_AGGREGATIONS = {
    "none": VariableAggregationV2.NONE,
    "mean": VariableAggregationV2.MEAN,
    "sum": VariableAggregationV2.SUM,
    "only_first_replica": VariableAggregationV2.ONLY_FIRST_REPLICA,
}
_SYNCHRONIZATIONS = {
    "auto": VariableSynchronization.AUTO,
    "none": VariableSynchronization.NONE,
    "on_read": VariableSynchronization.ON_READ,
    "on_write": VariableSynchronization.ON_WRITE,
}


def _option(value, table: dict, what: str):
    if value not in table:
        raise _errors.GradkitValueError(
            f"tf.keras.Variable got {what}={value!r}; Keras takes one of {sorted(table)} (its own strings, "
            "not TensorFlow's enums)."
        )
    return table[value]


class KerasVariable(SettableTrainable, Variable):
    """``tf.keras.Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True,
    aggregation='none', synchronization='auto', name=None)``; ``trainable`` may be set, as in Keras
    (a tape watches the Variable by the flag it was made with)."""

    _augmented_assignment_rebinds = True  # ``v += x`` makes a new tensor, as in Keras

    def __init__(
        self,
        initializer,
        shape=None,
        dtype=None,
        trainable=True,
        autocast=True,
        aggregation="none",
        synchronization="auto",
        name=None,
        layout=None,
    ):
        if layout is not None:
            raise _errors.GradkitNotImplementedError(
                "tf.keras.Variable(layout=...) places a variable on a device mesh (Keras' distribution API), "
                "which gradkit.tf does not have. Leave layout out."
            )
        aggregation = _option(aggregation, _AGGREGATIONS, "aggregation")
        synchronization = _option(synchronization, _SYNCHRONIZATIONS, "synchronization")
        if isinstance(initializer, (str, dict)) or callable(initializer):
            if shape is None:
                raise _errors.GradkitValueError(
                    "When creating a Variable from an initializer, the `shape` argument should be specified "
                    f"(as Keras requires). Received: initializer={initializer!r} and shape=None."
                )
            init = _initializers.get(initializer)
            value = init(tuple(shape), dtype=dtype or "float32")
        else:
            # A value is taken as tf.Variable takes it (a Python float is float32, an int int32).
            value = initializer
            given = tuple(getattr(value, "shape", None) or np.shape(value))
            if shape is not None and given != tuple(shape):
                raise _errors.GradkitValueError(
                    f"Initial value has shape {given}, but the variable's `shape` argument is {tuple(shape)} "
                    "(Keras refuses too). Pass a value of that shape, or leave shape out."
                )
        self._keras_name = str(name) if name is not None else unique_name("variable")
        self._autocast = bool(autocast)
        super().__init__(
            value,
            trainable=trainable,
            name=self._keras_name,
            dtype=dtype,
            aggregation=aggregation,
            synchronization=synchronization,
        )

    @property
    def name(self) -> str:
        return self._keras_name

    @property
    def path(self) -> str:
        """Keras' path of the variable: its name (a layer's weights are made by ``add_weight``)."""
        return self._keras_name

    @property
    def aggregation(self) -> str:
        return next(k for k, v in _AGGREGATIONS.items() if v is self._aggregation)

    @property
    def synchronization(self) -> str:
        return next(k for k, v in _SYNCHRONIZATIONS.items() if v is self._synchronization)

    @property
    def autocast(self) -> bool:
        return self._autocast

    def __repr__(self) -> str:
        return f"<Variable path={self.path}, shape={tuple(self.shape)}, dtype={np.dtype(self.dtype).name}, value={self.numpy()}>"
