"""What ``Model.compile`` makes of its ``loss``, ``metrics`` and ``weighted_metrics``
arguments (Keras 3's ``CompileLoss`` and ``CompileMetrics``), for a model with one output.

As in Keras, ``"accuracy"``/``"acc"`` and ``"crossentropy"``/``"ce"`` are resolved from the
first batch's shapes (binary when the prediction's last dimension is 1, sparse categorical
when the targets have lower rank or a last dimension of 1, categorical otherwise); metrics
are built at their first update, and ``metrics`` are updated without the sample weights,
``weighted_metrics`` with them.
"""

from __future__ import annotations

import jax

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import convert
from . import loss_registry, losses, metrics, metrics_registry


def _single(structure, what: str):
    """The one array of a model's output (or targets); several are refused."""
    flat = jax.tree_util.tree_leaves(structure, is_leaf=lambda x: isinstance(x, Tensor))
    if len(flat) != 1:
        raise _errors.GradkitNotImplementedError(
            f"tf.keras.Model.compile/fit in gradkit.tf handles models with one output, but {what} holds "
            f"{len(flat)} arrays. For several outputs, override train_step/test_step (or write the loop with "
            "tf.GradientTape) and combine their losses yourself."
        )
    return flat[0]


def _by_kind(y_true, y_pred, binary, sparse, categorical):
    """Keras' choice for "accuracy" and "crossentropy": ``binary`` when the prediction's last
    dimension is 1, ``sparse`` when the targets have lower rank or a last dimension of 1,
    else ``categorical``."""
    t_shape, p_shape = tuple(y_true.shape), tuple(y_pred.shape)
    if p_shape[-1] == 1:
        return binary
    if len(t_shape) < len(p_shape) or (t_shape[-1] == 1 and p_shape[-1] > 1):
        return sparse
    return categorical


def _object_name(obj) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str):
        return name
    return getattr(obj, "__name__", type(obj).__name__)


class CompileLoss:
    """``loss(y, y_pred, sample_weight) * loss_weight`` for the compiled loss."""

    def __init__(self, loss, loss_weights=None):
        if isinstance(loss, (list, tuple, dict)):
            if len(loss) != 1:
                raise _errors.GradkitNotImplementedError(
                    f"tf.keras.Model.compile got {len(loss)} losses ({loss!r}); gradkit.tf's compiled loss handles "
                    "a model with one output (one loss). Override train_step for several outputs."
                )
            loss = next(iter(loss.values())) if isinstance(loss, dict) else loss[0]
        if isinstance(loss_weights, (list, tuple)):
            loss_weights = loss_weights[0] if len(loss_weights) == 1 else loss_weights
        if isinstance(loss_weights, dict):
            loss_weights = next(iter(loss_weights.values())) if len(loss_weights) == 1 else loss_weights
        if loss_weights is not None and not isinstance(loss_weights, (int, float)):
            raise _errors.GradkitValueError(
                f"tf.keras.Model.compile: loss_weights is {loss_weights!r}; for a model with one output it is one "
                "number (or a list or dict holding one)."
            )
        self._identifier = loss
        self._loss_weight = loss_weights
        self._loss = None

    def _build(self, y_true, y_pred):
        identifier = self._identifier
        if isinstance(identifier, str) and identifier.lower() in ("crossentropy", "ce"):
            fn = _by_kind(
                y_true,
                y_pred,
                losses.binary_crossentropy,
                losses.sparse_categorical_crossentropy,
                losses.categorical_crossentropy,
            )
        else:
            fn = loss_registry.get(identifier)
        if not isinstance(fn, losses.Loss):
            name = identifier if isinstance(identifier, str) else _object_name(fn)
            fn = losses.LossFunctionWrapper(fn, name=name)
        self._loss = fn

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _single(y_true, "y"), _single(y_pred, "the model's output")
        if self._loss is None:
            self._build(y_true, y_pred)
        value = convert(self._loss(y_true, y_pred, sample_weight), "float32")
        if self._loss_weight is not None:
            value = value * self._loss_weight
        return value


class CompileMetrics:
    """The compiled metrics of one output: built at the first update, results by name."""

    name = "compile_metrics"

    def __init__(self, user_metrics, weighted_metrics):
        for argument, value in (("metrics", user_metrics), ("weighted_metrics", weighted_metrics)):
            if value and not isinstance(value, (list, tuple, dict)):
                raise _errors.GradkitValueError(
                    f"Expected `{argument}` argument to be a list, tuple, or dict. Received instead: "
                    f"{argument}={value!r} of type {type(value)}"
                )
        self._user = user_metrics
        self._weighted = weighted_metrics
        self.built = False
        self._plain: list = []
        self._weighted_list: list = []

    @property
    def metrics(self) -> list:
        return self._plain + self._weighted_list

    def _resolve(self, spec, y_true, y_pred) -> list:
        if not spec:
            return []
        if isinstance(spec, dict):
            if len(spec) != 1:
                raise _errors.GradkitNotImplementedError(
                    f"tf.keras.Model.compile got metrics for {len(spec)} outputs ({spec!r}); gradkit.tf's compiled "
                    "metrics handle a model with one output."
                )
            spec = next(iter(spec.values()))
        flat = spec if isinstance(spec, (list, tuple)) else [spec]
        flat = [m for item in flat for m in (item if isinstance(item, (list, tuple)) else [item])]
        return [self._metric(m, y_true, y_pred) for m in flat]

    @staticmethod
    def _metric(identifier, y_true, y_pred):
        if identifier is None:
            raise _errors.GradkitValueError("Expected metric, received `None`")
        if str(identifier).lower() in ("accuracy", "acc"):
            kind = _by_kind(
                y_true, y_pred, metrics.BinaryAccuracy, metrics.SparseCategoricalAccuracy, metrics.CategoricalAccuracy
            )
            found = kind(name=str(identifier))
        else:
            found = metrics_registry.get(identifier)
        name = identifier if isinstance(identifier, str) else _object_name(found)
        if not isinstance(found, metrics.Metric):
            found = metrics.MeanMetricWrapper(found)
        found.name = name
        return found

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _single(y_true, "y"), _single(y_pred, "the model's output")
        if not self.built:
            self._plain = self._resolve(self._user, y_true, y_pred)
            self._weighted_list = self._resolve(self._weighted, y_true, y_pred)
            self.built = True
        for m in self._plain:
            m.update_state(y_true, y_pred)
        if sample_weight is not None:
            sample_weight = _single(sample_weight, "sample_weight")
        for m in self._weighted_list:
            m.update_state(y_true, y_pred, sample_weight)

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def result(self) -> dict:
        """Each metric's result by its name; a weighted metric whose name a plain one has
        is called ``weighted_<name>``, and further repeats get ``_1``, ``_2``, ... (Keras')."""
        results: dict = {}
        counters: dict = {}

        def unique(name: str) -> str:
            if name not in counters:
                counters[name] = 1
                return name
            counters[name] += 1
            return f"{name}_{counters[name] - 1}"

        for m in self._plain:
            results[unique(m.name)] = m.result()
        for m in self._weighted_list:
            results[unique(m.name if m.name not in counters else f"weighted_{m.name}")] = m.result()
        return results
