"""``model.save_weights`` / ``model.load_weights``: Keras 3's ``.weights.h5`` files, in Keras' layout.

Keras 3 walks a model as its ``saving_lib`` does and writes, for each layer, a group
``<path>/vars`` (with the layer's name as an attribute) holding its own weights as datasets
``0``, ``1``, ... (trainable first, then non-trainable, each in creation order). The path of a
layer is the attribute that holds it (``block/dense_a``), its place in a list or dict named by
its class (``layers/dense``, ``layers/dense_1``), and a Sequential's or functional model's
layers are under ``layers``; attributes are visited sorted by name, private ones last, and a
layer reached twice is written once, where it was first reached. gradkit walks its own layers
the same way, so files written by Keras load here and files written here load in Keras, for
models built the same way. A few of gradkit's layers keep their weights differently from
Keras' (an LSTM keeps its cell's weights itself); they are written where Keras writes them.

As in Keras, a compiled model's file also holds its optimizer's state (the ``optimizer/vars``
group, in Keras' order: ``optimizer_state_h5.py``), and ``load_weights`` into a compiled model
reads it back, so training resumed from a checkpoint continues with the saved step count,
learning rate and slots (an optimizer of another layout, or not yet built, is skipped with
Keras' warning).

h5py is imported only here, when a weights file is written or read: gradkit does not depend on it.
"""

from __future__ import annotations

import os
import re
import tempfile
import warnings

import numpy as np

from gradkit import _errors

from .._checkpoint import deferred
from .attention_layers import MultiHeadAttention
from .base_layer import Layer
from .grouped_query_attention import GroupQueryAttention
from .recurrent_layers import GRU, LSTM, SimpleRNN

SUFFIX = ".weights.h5"

# gradkit's layers that keep, as their own weights, what Keras keeps in a sublayer: the group
# under which Keras writes them and that sublayer's name.
_CELL_OF = {LSTM: "lstm_cell", GRU: "gru_cell", SimpleRNN: "simple_rnn_cell"}
# Attributes of gradkit's layers under the names Keras walks them by (its public properties).
_ALIASES = {
    GroupQueryAttention: {},  # Keras walks its sublayers by their attributes' own names ('_query_dense')
    MultiHeadAttention: {
        "_query_dense": "query_dense",
        "_key_dense": "key_dense",
        "_value_dense": "value_dense",
        "_output_dense": "output_dense",
    },
}


def _h5py():
    try:
        import h5py
    except ImportError as e:
        raise _errors.GradkitImportError(
            "model.save_weights / model.load_weights read and write Keras' .weights.h5 files with h5py, which is "
            "not installed (gradkit does not depend on it). Install it: pip install h5py. Or save with "
            "tf.train.Checkpoint(model=model).save(prefix), which needs no other package."
        ) from e
    return h5py


def to_snake_case(name: str) -> str:
    """Keras' ``naming.to_snake_case``: ``BatchNormalization`` is ``batch_normalization``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def _name_key(name: str) -> str:
    return f"~{name}" if name.startswith("_") else name  # Keras visits private attributes last


_BASE_ATTRIBUTES: set = set()


def _base_attributes() -> set:
    """The attributes every gradkit Keras layer has (Keras skips those of its base Layer)."""
    if not _BASE_ATTRIBUTES:
        _BASE_ATTRIBUTES.update(vars(Layer()))
    return _BASE_ATTRIBUTES


def own_variables(layer) -> list:
    """The variables Keras writes as ``layer``'s own, in its order."""
    own = layer.__dict__.get("_keras_own", ())
    # Keras' order: the weights made trainable, then the others (a frozen layer's are not moved).
    return [v for v in own if v._trainable] + [v for v in own if not v._trainable]


def _custom(layer, hook: str) -> bool:
    """Whether ``layer``'s class overrides Keras' ``save_own_variables`` / ``load_own_variables``."""
    return getattr(type(layer), hook, None) is not getattr(Layer, hook)


def _groups(layer) -> list:
    """``(subpath, name, variables)``: the groups Keras writes ``layer``'s own weights into."""
    own = own_variables(layer)
    cell = next((name for cls, name in _CELL_OF.items() if isinstance(layer, cls)), None)
    if cell is not None:
        return [("", layer.name, []), ("cell", cell, own)]
    return [("", layer.name, own)]


def _children(layer):
    """``(name, child)`` in the order Keras' ``_walk_saveable`` visits them."""
    from .model import Functional as FunctionalModel
    from .model import Model
    from .sequential import Sequential

    listed = isinstance(layer, (Sequential, FunctionalModel))
    if listed:
        yield "layers", layer.layers
    aliases = next((a for cls, a in _ALIASES.items() if isinstance(layer, cls)), {})
    skip = _base_attributes()
    attributes = {
        aliases.get(k, k): v
        for k, v in vars(layer).items()
        if k not in skip and not k.startswith(("__", "_keras_", "_module_"))
    }
    if isinstance(layer, Model) and not listed:
        attributes["layers"] = layer.layers
    for name in sorted(attributes, key=_name_key):
        yield name, attributes[name]


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def plan(model) -> list:
    """``(group path, layer, group name, variables)`` for every group Keras would write, in its order."""
    out, visited = [], set()

    def layer_state(layer, path):
        if id(layer) in visited:
            return
        for sub, name, variables in _groups(layer):
            out.append((_join(path, sub), layer, name, variables))
        visited.add(id(layer))
        for name, child in _children(layer):
            if isinstance(child, Layer):
                layer_state(child, _join(path, name))
            elif isinstance(child, (list, tuple, dict)):
                container_state(child, _join(path, name), set())

    def container_state(container, path, seen):
        if id(container) in seen:
            return
        seen.add(id(container))
        used: dict = {}
        for item in container.values() if isinstance(container, dict) else container:
            if isinstance(item, Layer):
                # Keras names the group by the Python class's name (GroupQueryAttention's is GroupedQueryAttention).
                cls = type(item)
                group = to_snake_case(cls.__dict__.get("_keras_python_class_name", cls.__name__))
                layer_state(item, _join(path, _unique(group, used)))
            elif isinstance(item, (list, tuple, dict)):
                container_state(item, _join(path, _unique("container", used)), seen)

    layer_state(model, "")
    return out


def _unique(name: str, used: dict) -> str:
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _check_path(filepath, what: str) -> str:
    path = os.fspath(filepath)
    if not isinstance(path, str):
        raise _errors.GradkitTypeError(f"{what} takes a file path (str or pathlib.Path), but got {filepath!r}.")
    return path


def _check_built(model, verb: str) -> None:
    if not model.built:
        raise _errors.GradkitValueError(
            f"You are {verb} a model that has not yet been built. Try building the model first by calling it on "
            "some data or by using `build()` (as Keras requires: the weights exist only once it is built)."
        )


def save_weights(
    model, filepath, overwrite=True, max_shard_size=None, optimizer_errors="warn", *, require_built=True
) -> None:
    """Write ``model``'s weights to ``filepath`` (which must end in ``.weights.h5``) in Keras 3's layout.

    With ``overwrite=False`` and an existing file, Keras asks on the terminal whether to
    overwrite it; gradkit refuses instead (FileExistsError), so a script never stops to wait."""
    path = _check_path(filepath, "save_weights")
    if max_shard_size is not None:
        raise _errors.GradkitNotImplementedError(
            f"save_weights(max_shard_size={max_shard_size!r}): gradkit writes one .weights.h5 file, not Keras' "
            "sharded .weights.json files. Leave max_shard_size out."
        )
    if not path.endswith(SUFFIX):
        raise _errors.GradkitValueError(
            f"The filename must end in `.weights.h5`. Received: filepath={path}. Keras 3 writes weights files only "
            "under that suffix; use e.g. 'model.weights.h5'."
        )
    if not overwrite and os.path.exists(path):
        raise _errors.GradkitFileExistsError(
            f"save_weights({path!r}, overwrite=False): the file exists. Keras would ask on the terminal whether to "
            "overwrite it; gradkit does not stop to ask. Pass overwrite=True, or another file name."
        )
    if require_built:  # a whole model (save_model) may be saved unbuilt, with the weights it has
        _check_built(model, "saving")
    h5py = _h5py()
    groups = plan(model)
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            for group_path, layer, name, variables in groups:
                group = (f.require_group(group_path) if group_path else f).create_group("vars")
                group.attrs["name"] = name
                if name == layer.name and _custom(layer, "save_own_variables"):
                    store: dict = {}
                    layer.save_own_variables(store)  # the layer's own state, as Keras asks it
                    for key, value in store.items():
                        group[key] = np.asarray(value)
                    continue
                for i, v in enumerate(variables):
                    group[str(i)] = np.asarray(v.numpy())
            optimizer = _compiled_optimizer(model)
            if optimizer is not None:
                _save_optimizer(optimizer, model, f, optimizer_errors)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _refuse_format(path: str) -> None:
    if path.endswith(".keras"):
        raise _errors.GradkitNotImplementedError(
            f"load_weights({path!r}): gradkit's load_weights reads .weights.h5 files, not the weights inside a "
            ".keras archive. Load the archive with tf.keras.models.load_model(path) and copy its weights "
            "(model.set_weights(loaded.get_weights())), or save the weights with model.save_weights('model.weights.h5')."
        )
    if path.endswith(".weights.json"):
        raise _errors.GradkitNotImplementedError(
            f"load_weights({path!r}): gradkit does not read Keras' sharded weights. Save them as one file in Keras "
            "(model.save_weights('model.weights.h5', max_shard_size=None)) and load that."
        )
    if path.endswith((".h5", ".hdf5")):
        raise _errors.GradkitNotImplementedError(
            f"load_weights({path!r}): this is the legacy Keras 2 HDF5 format, which gradkit does not read. Load "
            "the model in Keras and save its weights as Keras 3 does: model.save_weights('model.weights.h5')."
        )
    raise _errors.GradkitValueError(
        f"File format not supported: filepath={path}. gradkit reads Keras 3's `.weights.h5` files (and "
        "tf.train.Checkpoint's checkpoints with tf.train.Checkpoint(model=model).restore(path))."
    )


def _layer_values(group, name: str, variables: list, built: bool):
    """The values ``group`` holds for one layer's ``variables``, or the reason they do not fit."""
    if len(group) != len(variables):
        if not variables and not built:
            return None, (
                f"Layer '{name}' was never built and thus it doesn't have any variables. However the weights file "
                f"lists {len(group)} variables for this layer. Build it (call the model once) before loading."
            )
        return None, (
            f"Layer '{name}' expected {len(variables)} variables, but received {len(group)} variables during "
            f"loading. Expected: {[v.name for v in variables]}"
        )
    values = []
    for i, v in enumerate(variables):
        dataset = group[str(i)]
        value = np.asarray(dataset[()])
        if dataset.attrs.get("dtype") == "bfloat16":
            value = value.view(np.dtype("bfloat16"))
        if tuple(value.shape) != tuple(v.shape):
            return None, (
                f"The weights file holds an array of shape {tuple(value.shape)} for {v.name!r}, whose shape is "
                f"{tuple(v.shape)}: the layer '{name}' is built differently from the one saved."
            )
        values.append(value.astype(v.dtype, copy=False))
    return values, None


def _compiled_optimizer(model):
    """The optimizer Keras walks with the model's state: a compiled model's."""
    if not getattr(model, "compiled", False):
        return None
    return getattr(model, "optimizer", None)


def _save_optimizer(optimizer, model, h5file, errors: str) -> None:
    from . import optimizer_state_h5

    try:
        optimizer_state_h5.save(optimizer, model.trainable_variables, h5file)
    except _errors.GradkitNotImplementedError as error:
        if errors == "raise":  # model.save: an archive without the optimizer's state would not resume training
            raise
        warnings.warn(
            f"save_weights wrote the model's weights but not the state of its optimizer: {error}", stacklevel=4
        )


def load_weights(model, filepath, skip_mismatch=False, *, require_built=True, **kwargs) -> None:
    """Load a Keras 3 ``.weights.h5`` file into ``model`` (built as the saved one was). Every
    layer's weights are checked before any is written; with ``skip_mismatch=True`` the layers
    that do not fit are left as they are, with a warning naming them, as in Keras."""
    if kwargs:
        raise _errors.GradkitValueError(
            f"Invalid keyword arguments: {kwargs}. gradkit's load_weights takes filepath and skip_mismatch."
        )
    path = _check_path(filepath, "load_weights")
    if not path.endswith(SUFFIX):
        _refuse_format(path)
    if require_built:
        _check_built(model, "loading weights into")
    if not os.path.exists(path):
        raise _errors.GradkitNotFoundError(
            f"Unable to open the weights file {path!r}: no such file. Pass the path save_weights wrote."
        )
    h5py = _h5py()
    writes, failures, loaded, custom = [], [], [], []
    optimizer = _compiled_optimizer(model)
    with h5py.File(path, "r") as f:
        has_optimizer_state = "optimizer" in f and "vars" in f["optimizer"]
        for group_path, layer, name, variables in plan(model):
            parent = f[group_path] if group_path and group_path in f else (f if not group_path else None)
            group = parent["vars"] if parent is not None and "vars" in parent else {}
            if name == layer.name and _custom(layer, "load_own_variables"):
                custom.append((layer, {key: np.asarray(group[key][()]) for key in group}))
                continue
            values, problem = _layer_values(group, name, variables, layer.built)
            if problem is not None:
                failures.append((name, problem))
            else:
                writes += list(zip(variables, values))
                loaded.append(layer)
    if failures:
        message = (
            f"A total of {len(failures)} objects could not be loaded. Example error message for object "
            f"{failures[0][0]}:\n\n{failures[0][1]}\n\nList of objects that could not be loaded:\n"
            f"{[name for name, _ in failures]}"
        )
        if not skip_mismatch:
            raise _errors.GradkitValueError(
                message + "\nNo weight was changed. Build the model as the saved one was, or pass skip_mismatch=True "
                "to load the layers that fit."
            )
        warnings.warn(message, stacklevel=3)
    for layer, store in custom:  # a layer that loads its own state, as Keras asks it
        layer.load_own_variables(store)
        loaded.append(layer)
    for v, value in writes:
        deferred.write(v, value)
    if optimizer is not None and has_optimizer_state:
        from . import optimizer_state_h5

        with h5py.File(path, "r") as f:
            optimizer_state_h5.load(optimizer, model.trainable_variables, f)
    for layer in loaded:
        # As Keras' load_own_variables: a layer whose computation reads its loaded state through
        # values made from it (Normalization's mean and variance) makes them again.
        finalize = getattr(layer, "finalize_state", None)
        if callable(finalize):
            finalize()


def saving_save_weights(model, filepath, overwrite=True, max_shard_size=None, **kwargs) -> None:
    """``tf.keras.saving.save_weights(model, filepath)``: ``model.save_weights(filepath)``."""
    model.save_weights(filepath, overwrite=overwrite, max_shard_size=max_shard_size, **kwargs)


def saving_load_weights(model, filepath, skip_mismatch=False, **kwargs) -> None:
    """``tf.keras.saving.load_weights(model, filepath)``: ``model.load_weights(filepath)``."""
    model.load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)
