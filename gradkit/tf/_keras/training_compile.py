"""What ``Model.compile`` makes of its ``loss``, ``loss_weights``, ``metrics`` and
``weighted_metrics`` arguments (Keras 3's ``CompileLoss`` and ``CompileMetrics``).

As in Keras, ``"accuracy"``/``"acc"`` and ``"crossentropy"``/``"ce"`` are resolved from the
first batch's shapes (binary when the prediction's last dimension is 1, sparse categorical
when the targets have lower rank or a last dimension of 1, categorical otherwise); metrics
are built at their first update, and ``metrics`` are updated without the sample weights,
``weighted_metrics`` with them. A model with several outputs (a list, or a dict by name) takes
one loss for all or one per output (a list in output order, or a dict by output name: a dict
output's key, a functional model's output layer name), and its logs name each output's loss
``<output>_loss`` and metric ``<output>_<metric>``.
"""

from __future__ import annotations

import jax

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import convert
from . import loss_registry, losses, metrics, metrics_registry


def _is_leaf(x) -> bool:
    return isinstance(x, Tensor) or not isinstance(x, (list, tuple, dict))


def flat_outputs(structure, output_names=None) -> list:
    """``[(name, value)]`` for each output of ``structure`` (a dict's by sorted key, a list's in
    order, named by ``output_names`` where the model knows them: a functional model's output
    layers)."""
    if isinstance(structure, dict) and not _is_nested(structure):
        return [(key, structure[key]) for key in sorted(structure)]
    # A list, or a dict holding lists or dicts ({"a": out_a, "b": [out_b, out_c]}): its
    # outputs in Keras' flat order (dicts by sorted key).
    values = jax.tree_util.tree_leaves(structure, is_leaf=_is_leaf)
    names = (
        list(output_names) if output_names is not None and len(output_names) == len(values) else [None] * len(values)
    )
    return list(zip(names, values))


def _is_nested(structure) -> bool:
    """Whether ``structure`` (a model's outputs) holds containers inside its list, tuple or dict
    (``[out_a, [out_b, out_c]]``, ``{"a": out_a, "b": [out_b, out_c]}``)."""
    if isinstance(structure, dict):
        return any(not _is_leaf(x) for x in structure.values())
    return isinstance(structure, (list, tuple)) and any(not _is_leaf(x) for x in structure)


def _shape_of(structure):
    """The outputs' structure with each output an ``'X'``, as Keras prints it."""
    return jax.tree_util.tree_map(lambda _: "X", structure, is_leaf=_is_leaf)


def _up_to(structure, spec, what: str) -> list:
    """``spec`` flattened up to the outputs' ``structure``: one entry per output, where an entry
    may itself be a list (several metrics for one output)."""
    if _is_leaf(structure):
        return [spec]
    if isinstance(structure, dict):
        keys = sorted(structure)
        if spec is None:
            spec = {}
        if not isinstance(spec, dict) or set(spec) - set(keys):
            raise _errors.GradkitValueError(
                f"tf.keras.Model.compile: {what}={spec!r} does not match the model's output structure "
                f"{_shape_of(structure)}; pass one entry per output, nested as the outputs are."
            )
        return [entry for key in keys for entry in _up_to(structure[key], spec.get(key), what)]
    if spec is None:
        return [None] * len(jax.tree_util.tree_leaves(structure, is_leaf=_is_leaf))
    if not isinstance(spec, (list, tuple)) or len(spec) != len(structure):
        raise _errors.GradkitValueError(
            f"tf.keras.Model.compile: {what}={spec!r} does not match the model's output structure "
            f"{_shape_of(structure)}; pass one entry per output, nested as the outputs are (None for an output "
            "without one)."
        )
    return [entry for part, sub in zip(structure, spec) for entry in _up_to(part, sub, what)]


def _per_output(spec, outputs: list, what: str, structure=None) -> list:
    """``spec`` (one thing for every output, a list by position, or a dict by output name) as a
    list with one entry per output. For nested outputs (``structure``, as the model returns
    them) a list follows their nesting; ``loss`` and ``loss_weights`` may also be flat, one per
    output in order (as Keras takes them)."""
    count = len(outputs)
    if isinstance(spec, dict) and isinstance(structure, dict) and _is_nested(structure):
        return _up_to(structure, spec, what)
    if isinstance(spec, dict):
        names = [name for name, _ in outputs]
        unknown = sorted(set(spec) - {n for n in names if n is not None})
        if unknown:
            raise _errors.GradkitValueError(
                f"tf.keras.Model.compile: {what} names the outputs {unknown}, but the model's outputs are "
                f"{names}. Key the dict by output names (a dict output's keys, a functional model's output layer "
                "names), or pass a list in output order."
            )
        return [spec.get(name) for name in names]
    if isinstance(spec, (list, tuple)):
        if _is_nested(structure):
            flat_allowed = what in ("loss", "loss_weights") and all(_is_leaf(entry) for entry in spec)
            if flat_allowed and len(spec) == count:
                return list(spec)
            return _up_to(structure, spec, what)
        if len(spec) != count:
            raise _errors.GradkitValueError(
                f"tf.keras.Model.compile: {what} has {len(spec)} entries, but the model has {count} outputs; pass one "
                "per output, in order (None for an output without one)."
            )
        return list(spec)
    return [spec] * count


def _loss_names(structure, outputs: list, resolved: list) -> list:
    """Keras' name for each output's loss: the output's name (its loss's where it has none),
    after the path to it when the outputs are nested (``1/out_b`` for ``[out_a, [out_b]]``)."""
    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(structure, is_leaf=_is_leaf)[0]]
    if len(paths) != len(outputs):
        paths = [()] * len(outputs)
    names = []
    for path, (name, _), entry in zip(paths, outputs, resolved):
        keys = [getattr(k, "idx", getattr(k, "key", k)) for k in path]
        own = name if name is not None else (entry[0].name if entry is not None else "")
        if keys and not isinstance(keys[-1], int):
            own = keys[-1]
        names.append("/".join([str(k) for k in keys[:-1]] + [str(own)]))
    return names


def _aligned(structure, outputs: list, like, what: str) -> list:
    """``structure`` (targets or sample weights) as one entry per output of ``like``."""
    if isinstance(structure, dict) and isinstance(like, dict) and _is_nested(like):
        return _up_to(like, structure, what)
    if isinstance(structure, dict):
        # An output left out has None (one without a loss needs no target; CompileLoss raises
        # where one with a loss has none).
        return [structure.get(name) for name, _ in outputs]
    values = jax.tree_util.tree_leaves(structure, is_leaf=lambda x: _is_leaf(x) or x is None)
    if len(outputs) == 1:
        return [structure if len(values) != 1 else values[0]]
    if len(values) != len(outputs):
        raise _errors.GradkitValueError(
            f"y_true and y_pred have different structures: {what} holds {len(values)} arrays for the model's "
            f"{len(outputs)} outputs. Pass one per output, as a list in output order or a dict by output name."
        )
    return values


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


def with_gaps(loss, structure, outputs: list):
    """Targets given only for the outputs that have a loss (``loss=['mse', None, 'mae']``
    with ``y=[y1, y3]``), as Keras takes them: None put in for the others."""
    if not isinstance(loss, (list, tuple)) or not isinstance(structure, (list, tuple)):
        return structure
    given = structure
    if any(isinstance(ident, (list, tuple)) for ident in loss):
        # Losses nested as the outputs are: the losses and the targets in flat order.
        loss = jax.tree_util.tree_leaves(loss, is_leaf=lambda x: x is None or not isinstance(x, (list, tuple)))
        given = jax.tree_util.tree_leaves(structure, is_leaf=lambda x: _is_leaf(x) or x is None)
    with_loss = [i for i, ident in enumerate(loss) if ident is not None]
    if len(loss) != len(outputs) or len(given) != len(with_loss) or len(with_loss) == len(outputs):
        return structure
    filled = [None] * len(outputs)
    for i, value in zip(with_loss, given):
        filled[i] = value
    return filled


class CompileLoss:
    """The compiled loss: ``sum(loss_i(y_i, y_pred_i, sample_weight_i) * loss_weight_i)`` over
    the model's outputs; with several losses each output's unweighted loss is also tracked (a
    ``Mean`` named ``<output>_loss``), as in Keras."""

    def __init__(self, loss, loss_weights=None, output_names=None):
        if loss_weights is not None and not isinstance(loss_weights, (int, float, list, tuple, dict)):
            raise _errors.GradkitValueError(
                "Expected `loss_weights` argument to be a float (single output case) or a list, tuple, or dict "
                f"(multiple output case). Received instead: loss_weights={loss_weights!r} of type {type(loss_weights)}"
            )
        self._identifier = loss
        self._loss_weights = loss_weights
        self._output_names = output_names
        self.batches_weighted_by_size = False  # compile(run_eagerly=True) sets it (see __call__)
        self._losses = None  # per output: (loss, weight), or None for an output without a loss
        self._trackers: dict = {}  # output index -> the Mean of its unweighted loss (several losses)
        self.metrics: list = []

    def _resolve(self, identifier, y_true, y_pred):
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
        return fn

    def _build(self, y_true: list, outputs: list, y_pred):
        identifiers = _per_output(self._identifier, outputs, "loss", y_pred)
        weights = self._loss_weights

        def count(spec) -> int:
            return len(jax.tree_util.tree_leaves(spec, is_leaf=lambda x: x is None))

        if (
            isinstance(weights, (list, tuple, dict))
            and isinstance(self._identifier, (list, tuple, dict))
            and count(weights) != count(self._identifier)
        ):
            # Keras' check: a weight left out would silently count 1.
            named = isinstance(self._identifier, dict)
            example = {name: 1.0 for name in self._identifier} if named else [1.0] * len(self._identifier)
            raise _errors.GradkitValueError(
                f"`loss_weights` must match the number of losses, got {len(self._identifier)} losses and "
                f"{len(weights)} weights (Keras' error). Give a weight for each loss: loss_weights={example}."
            )
        if len(outputs) == 1 and isinstance(weights, (list, tuple, dict)) and len(weights) == 1:
            weights = next(iter(weights.values())) if isinstance(weights, dict) else weights[0]
        weights = _per_output(weights, outputs, "loss_weights", y_pred)
        self._losses = [
            None if ident is None else (self._resolve(ident, y_t, y_p), w)
            for ident, w, y_t, (_, y_p) in zip(identifiers, weights, y_true, outputs)
        ]
        present = [i for i, entry in enumerate(self._losses) if entry is not None]
        # Keras tracks the outputs' losses in the order of a dict of losses given for dict
        # outputs, else of the model's output dict as it was written, else of its outputs' list.
        if isinstance(y_pred, dict):
            keys = list(self._identifier) if isinstance(self._identifier, dict) else list(y_pred)
            order = {name: k for k, name in enumerate(keys)}
            present.sort(key=lambda i: order.get(outputs[i][0], len(order)))
        if len(present) > 1:
            names = _loss_names(y_pred, outputs, self._losses)
            self._trackers = {i: metrics.Mean(name=f"{names[i]}_loss") for i in present}
            self.metrics = list(self._trackers.values())

    def __call__(self, y_true, y_pred, sample_weight=None):
        outputs = flat_outputs(y_pred, self._output_names)
        targets = _aligned(with_gaps(self._identifier, y_true, outputs), outputs, y_pred, "y")
        if self._losses is None:
            self._build(targets, outputs, y_pred)
        nested = isinstance(sample_weight, (list, tuple, dict))
        weights = (
            _aligned(sample_weight, outputs, y_pred, "sample_weight") if nested else [sample_weight] * len(outputs)
        )
        total = None
        for i, (entry, y_t, (name, y_p), sw) in enumerate(zip(self._losses, targets, outputs, weights)):
            if entry is None:
                continue
            if y_t is None:
                raise _errors.GradkitValueError(
                    f"the model's output {name!r} has a loss ({entry[0].name}), but the targets hold none for it. "
                    "Give y a target for every output with a loss (a dict by output name), or compile without a "
                    "loss for that output."
                )
            loss, weight = entry
            value = convert(loss(y_t, y_p, sw), "float32")
            tracker = self._trackers.get(i)
            if tracker is not None:
                # Keras weighs each output's loss by the batch size, which is unknown (None, so
                # weight 1: each batch counts alike) in the graph its compiled step runs in, and
                # known with run_eagerly=True; the History shows that.
                tracker.update_state(value, sample_weight=y_p.shape[0] if self.batches_weighted_by_size else 1)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


class CompileMetrics:
    """The compiled metrics: built at the first update (``accuracy`` resolved from each output's
    shapes), results by name (``<output>_<metric>`` where outputs have names)."""

    name = "compile_metrics"

    def __init__(self, user_metrics, weighted_metrics, output_names=None, loss=None):
        for argument, value in (("metrics", user_metrics), ("weighted_metrics", weighted_metrics)):
            if value and not isinstance(value, (list, tuple, dict)):
                raise _errors.GradkitValueError(
                    f"Expected `{argument}` argument to be a list, tuple, or dict. Received instead: "
                    f"{argument}={value!r} of type {type(value)}"
                )
        self._user = user_metrics
        self._weighted = weighted_metrics
        self._output_names = output_names
        self._loss = loss  # the compiled loss: targets may leave out the outputs without one
        self.built = False
        self._plain: list = []  # (output index, output name or None, metric)
        self._weighted_list: list = []

    @property
    def metrics(self) -> list:
        return [m for _, _, m in self._plain + self._weighted_list]

    @property
    def variables(self) -> list:
        """The compiled metrics' state Variables (none before the first update builds them)."""
        return [v for m in self.metrics for v in m.variables]

    def _resolve(self, spec, targets: list, outputs: list, argument: str, structure) -> list:
        if not spec:
            return []
        if len(outputs) == 1:
            # One output: every metric given is its (a dict's values, nested lists flattened), unprefixed.
            flat = list(spec.values()) if isinstance(spec, dict) else spec
            per_output = [flat]
            names = [None]
        else:
            per_output = _per_output(spec, outputs, argument, structure)
            names = [name for name, _ in outputs]
        found = []
        for i, (entry, name) in enumerate(zip(per_output, names)):
            items = entry if isinstance(entry, (list, tuple)) else [entry]
            items = [m for item in items for m in (item if isinstance(item, (list, tuple)) else [item])]
            found += [(i, name, self._metric(m, targets[i], outputs[i][1])) for m in items if m is not None]
        return found

    @staticmethod
    def _metric(identifier, y_true, y_pred):
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
        outputs = flat_outputs(y_pred, self._output_names)
        targets = _aligned(with_gaps(self._loss, y_true, outputs), outputs, y_pred, "y")
        if not self.built:
            self._plain = self._resolve(self._user, targets, outputs, "metrics", y_pred)
            self._weighted_list = self._resolve(self._weighted, targets, outputs, "weighted_metrics", y_pred)
            self.built = True
        if isinstance(sample_weight, (list, tuple, dict)):
            weights = _aligned(sample_weight, outputs, y_pred, "sample_weight")
        else:
            weights = [sample_weight] * len(outputs)  # one weight for every output, as Keras repeats it
        for i, _, m in self._plain + self._weighted_list:
            if targets[i] is None:
                raise _errors.GradkitValueError(
                    f"compile(metrics=...) gave output {outputs[i][0]!r} the metric {m.name!r}, but its target is "
                    "None (Keras: 'None values not supported.'). Pass that output's targets, or leave its metrics "
                    "out (None in the metrics list)."
                )
        for i, _, m in self._plain:
            m.update_state(targets[i], outputs[i][1])
        for i, _, m in self._weighted_list:
            m.update_state(targets[i], outputs[i][1], weights[i])

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def result(self) -> dict:
        """Each metric's result by its name, prefixed by its output's; a weighted metric whose
        name a plain one has is called ``weighted_<name>``, and further repeats get ``_1``,
        ``_2``, ... (Keras')."""
        results: dict = {}
        counters: dict = {}

        def unique(name: str) -> str:
            if name not in counters:
                counters[name] = 1
                return name
            counters[name] += 1
            return f"{name}_{counters[name] - 1}"

        def prefixed(output: str | None, name: str) -> str:
            return name if output is None else f"{output}_{name}"

        for _, output, m in self._plain:
            results[unique(prefixed(output, m.name))] = m.result()
        for _, output, m in self._weighted_list:
            name = prefixed(output, m.name)
            results[unique(name if name not in counters else prefixed(output, f"weighted_{m.name}"))] = m.result()
        return results
