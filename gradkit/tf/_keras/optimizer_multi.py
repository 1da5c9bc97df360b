"""``tf.keras.optimizers.MultiOptimizer`` and ``OptimizerMap``, as Keras 3 has them: each weight
stepped by the optimizer its path selects (a backbone's at one rate, a head's at another).

``OptimizerMap(default_optimizer, optimizer_map)`` maps a weight's path to an optimizer: the
key equal to the path, else the one pattern that ``re.fullmatch``-es it (two is an error), else
the default. A ``tf.Variable``'s path is its name without ``':0'``. ``MultiOptimizer`` takes
such a map (or any callable ``weight -> optimizer``), fixes each weight's optimizer at its
first step, and hands each optimizer its weights' gradients; each keeps its own state, rate and
step counter, and the MultiOptimizer counts its own steps.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import MutableMapping

from gradkit import _errors

from .loss_scale_optimizer import LossScaleOptimizer
from .optimizers import Optimizer, _checked_pairs


def _path(variable) -> str:
    path = getattr(variable, "path", None)
    return str(path) if path is not None else variable.name.split(":")[0]


class OptimizerMap(MutableMapping):
    """``tf.keras.optimizers.OptimizerMap(default_optimizer, optimizer_map=None)``."""

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise _errors.GradkitTypeError(
                f"default_optimizer must be a Keras Optimizer instance (as Keras requires). Received: {default_optimizer!r}"
            )
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise _errors.GradkitTypeError(
                f"optimizer_map must be a dictionary of path patterns to optimizers (as Keras requires). Received: "
                f"{optimizer_map!r}"
            )
        self._default_optimizer = default_optimizer
        self._optimizer_map = {}
        for key, optimizer in (optimizer_map or {}).items():
            self[key] = optimizer

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matching) > 1:
            raise _errors.GradkitValueError(
                f"Multiple optimizers assigned to variable {key} (patterns {matching}), as Keras refuses too. Make "
                "the patterns exclusive."
            )
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise _errors.GradkitValueError(
                f"'{key}' already exists in the OptimizerMap with value {self._optimizer_map[key]!r}, as Keras refuses "
                "too. Use each key once."
            )
        if not isinstance(key, str):
            raise _errors.GradkitValueError(f"key must be a string (a path pattern). Received: {key!r}")
        if not isinstance(optimizer, Optimizer) or isinstance(optimizer, (LossScaleOptimizer, MultiOptimizer)):
            raise _errors.GradkitValueError(
                f"optimizer must be a Keras Optimizer instance, not a LossScaleOptimizer or MultiOptimizer (as Keras "
                f"requires). Received: {optimizer!r}"
            )
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[_path(variable)]

    def get_config(self):
        from .optimizer_registry import serialize

        return {
            "default_optimizer": serialize(self._default_optimizer),
            "optimizer_map": {key: serialize(opt) for key, opt in self._optimizer_map.items()},
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from .optimizer_registry import deserialize

        optimizer_map = {
            key: deserialize(opt, custom_objects) for key, opt in (config.get("optimizer_map") or {}).items()
        }
        return cls(deserialize(config["default_optimizer"], custom_objects), optimizer_map)


class MultiOptimizer(Optimizer):
    """``tf.keras.optimizers.MultiOptimizer(optimizer_map, loss_scale_factor=None, name=None)``."""

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        super().__init__(0.0, None, (), None, name)
        self._optimizer_map = optimizer_map
        self._inner_optimizers: list = []
        self._assigned: dict = {}  # id(weight) -> the index of its optimizer, fixed at its first step
        inner = list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []
        default = getattr(optimizer_map, "default_optimizer", None)
        for opt in [*inner, *([default] if default is not None else [])]:
            if all(opt is not other for other in self._inner_optimizers):
                self._inner_optimizers.append(opt)
        self.loss_scale_factor = loss_scale_factor

    @property
    def loss_scale_factor(self):
        return self.__dict__.get("_loss_scale_factor")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self.__dict__["_loss_scale_factor"] = value
        for opt in self.__dict__.get("_inner_optimizers", ()):
            opt.loss_scale_factor = value

    @property
    def optimizers(self) -> list:
        return list(self._inner_optimizers)

    @property
    def learning_rate(self):
        raise _errors.GradkitAttributeError(
            "Learning rate cannot be accessed on a MultiOptimizer (as in Keras). Access the learning rate on the "
            "individual sub-optimizers instead: multi.optimizers[i].learning_rate."
        )

    @learning_rate.setter
    def learning_rate(self, value):
        raise _errors.GradkitAttributeError(
            "Learning rate cannot be set on a MultiOptimizer (as in Keras). Set the learning rate on the "
            "individual sub-optimizers instead."
        )

    @property
    def variables(self) -> list:
        """Its step counter and (unused) rate, as Keras keeps them, then each optimizer's Variables."""
        out = [self._iterations, self._learning_rate]
        for opt in self._inner_optimizers:
            out.extend(opt.variables)
        return out

    def _optimizer_index(self, variable) -> int:
        index = self._assigned.get(id(variable))
        if index is None:
            opt = self._optimizer_map(variable)
            if not isinstance(opt, Optimizer) or isinstance(opt, (LossScaleOptimizer, MultiOptimizer)):
                raise _errors.GradkitValueError(
                    f"The optimizer map gave {opt!r} for Variable {variable.name!r}; a MultiOptimizer needs a Keras "
                    "Optimizer instance there, not a LossScaleOptimizer or MultiOptimizer (as Keras requires)."
                )
            if all(opt is not other for other in self._inner_optimizers):
                opt.loss_scale_factor = self.loss_scale_factor
                self._inner_optimizers.append(opt)
            index = self._assigned[id(variable)] = next(
                i for i, other in enumerate(self._inner_optimizers) if other is opt
            )
        return index

    def build(self, var_list):
        """Each weight's optimizer chosen, and each optimizer built on its weights."""
        var_list = list(var_list)
        indices = [self._optimizer_index(v) for v in var_list]
        for index, opt in enumerate(self._inner_optimizers):
            variables = [v for v, i in zip(var_list, indices) if i == index]
            if variables:
                opt.build(variables)
        self._built = [weakref.ref(v) for v in var_list]

    def apply_gradients(self, grads_and_vars, name=None):
        """Each pair handed to its weight's optimizer; returns this optimizer's step counter."""
        pairs, every_variable = _checked_pairs(grads_and_vars)
        groups: dict = {}
        for grad, variable in pairs:
            groups.setdefault(self._optimizer_index(variable), []).append((grad, variable))
        for variable in every_variable:
            self._optimizer_index(variable)
        for index, group in sorted(groups.items()):
            self._inner_optimizers[index].apply_gradients(group)
        self._iterations.assign_add(1)
        return self._iterations

    def finalize_variable_values(self, var_list):
        groups: dict = {}
        for variable in var_list:
            groups.setdefault(self._optimizer_index(variable), []).append(variable)
        for index, variables in groups.items():
            self._inner_optimizers[index].finalize_variable_values(variables)

    def get_config(self):
        from .optimizer_registry import serialize

        optimizer_map = self._optimizer_map
        if isinstance(optimizer_map, OptimizerMap):
            optimizer_map = {
                "module": "keras.optimizers",
                "class_name": "OptimizerMap",
                "config": optimizer_map.get_config(),
                "registered_name": None,
            }
        else:
            optimizer_map = serialize(optimizer_map)
        return {"optimizer_map": optimizer_map, "loss_scale_factor": self.loss_scale_factor, "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        optimizer_map = config["optimizer_map"]
        if isinstance(optimizer_map, dict) and optimizer_map.get("class_name") == "OptimizerMap":
            config["optimizer_map"] = OptimizerMap.from_config(optimizer_map["config"], custom_objects)
        return cls(**config)
