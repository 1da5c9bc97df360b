"""Keras 3's optimizer weights API: ``set_weights`` and the weights-file hooks
``save_own_variables``/``load_own_variables``, over ``optimizer.variables`` in Keras' order.

>>> import gradkit.tf as tf
>>> w = tf.Variable([1.0, 2.0])
>>> opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
>>> opt.build([w])
>>> opt.set_weights([3, 0.1, [0.5, -0.5]])  # iterations, learning rate, momentum
>>> int(opt.iterations), [float(x) for x in opt.variables[2].numpy()]
(3, [0.5, -0.5])
"""

from __future__ import annotations

import warnings

import numpy as np

from gradkit import _errors


class OptimizerWeights:
    """``set_weights``, ``save_own_variables`` and ``load_own_variables`` (mixed into ``Optimizer``)."""

    def set_weights(self, weights) -> None:
        """Keras': assign ``weights`` to ``optimizer.variables`` in order (a shorter list sets the
        first ones, as in Keras). Every shape is checked before any Variable is assigned."""
        if not self.built:
            raise _errors.GradkitValueError(
                f"optimizer.set_weights was called on '{self.name}', which has not been built yet, so it has no "
                "weights to set (Keras refuses it too). Call optimizer.build(trainable_variables) first."
            )
        _assign_all(list(zip(self.variables, weights)))

    def save_own_variables(self, store) -> None:
        """Keras' hook for a weights file: the optimizer's variables into ``store`` as "0", "1", ..."""
        for i, variable in enumerate(self.variables):
            store[str(i)] = np.asarray(variable.numpy())

    def load_own_variables(self, store) -> None:
        """Keras' hook for a weights file: the variables from ``store``; with a different number
        of them nothing is loaded and a warning says so, as in Keras."""
        variables = self.variables
        if len(store.keys()) != len(variables):
            message = (
                f"Skipping variable loading for optimizer '{self.name}', because it has {len(variables)} variables "
                f"whereas the saved optimizer has {len(store.keys())} variables. "
            )
            if not variables:
                message += "This is likely because the optimizer has not been called/built yet."
            warnings.warn(message, stacklevel=2)
            return
        _assign_all([(variable, store[str(i)]) for i, variable in enumerate(variables)])


def _assign_all(pairs) -> None:
    """Assign each value to its Variable, after checking every shape (a mismatch sets none)."""
    values = []
    for variable, weight in pairs:
        value = np.asarray(weight.numpy() if hasattr(weight, "numpy") else weight)
        if tuple(value.shape) != tuple(variable.shape):
            raise _errors.GradkitValueError(
                f"Optimizer variable {variable.name!r} has shape {tuple(variable.shape)}, not compatible with the "
                f"provided weight's shape {tuple(value.shape)} (Keras refuses it too); no variable was set."
            )
        values.append(value.astype(np.dtype(variable.dtype), copy=False))
    for (variable, _), value in zip(pairs, values):
        variable.assign(value)
