"""``model.save("m.keras")``, ``tf.keras.models.save_model`` and ``tf.keras.models.load_model``:
Keras 3's ``.keras`` archive.

The archive is a zip file (stored, uncompressed) holding ``metadata.json`` (the Keras version
and the date), ``config.json`` (the model as Keras' ``serialize_keras_object`` writes it,
``model_config.py``) and ``model.weights.h5`` (the weights in the layout of
``save_weights``, ``weights_h5.py``, and a compiled model's optimizer state,
``optimizer_state_h5.py``). Real Keras 3 loads an archive written here, and an archive Keras
wrote loads here, for models made of layers gradkit.tf has. ``load_model`` makes the model
from its config, builds it, compiles it as it was (``compile=True``) and loads its weights.

Keras 3's other formats are refused: legacy ``.h5`` whole-model files, unzipped model
directories and TensorFlow SavedModels.

h5py is imported only when an archive is written or read: gradkit does not depend on it.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
import warnings
import zipfile

from gradkit import _errors

from . import model_config, weights_h5
from .serialization_registry import function_entry

KERAS_VERSION = "3.15.1"  # the Keras whose format gradkit.tf writes
_METADATA = "metadata.json"
_CONFIG = "config.json"
_WEIGHTS = "model.weights.h5"


def _path(filepath, what: str) -> str:
    try:
        path = os.fspath(filepath)
    except TypeError:
        path = None
    if not isinstance(path, str):
        raise _errors.GradkitTypeError(
            f"{what} takes a file path (str or pathlib.Path) ending in .keras, but got {filepath!r}. gradkit does "
            "not write to or read from open file objects."
        )
    return path


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs) -> None:
    """Write ``model`` (built) to ``filepath``, which must end in ``.keras`` (see the module docstring).

    With ``overwrite=False`` and an existing file, Keras asks on the terminal whether to
    overwrite it; gradkit refuses instead (FileExistsError)."""
    path = _path(filepath, "tf.keras.models.save_model")
    kwargs.pop("include_optimizer", None)  # Keras 3 takes it and always saves the optimizer in .keras
    if kwargs.pop("save_format", None) and not path.endswith((".keras", ".h5", ".hdf5")):
        raise _errors.GradkitValueError(
            "The `save_format` argument is deprecated in Keras 3. Please remove this argument and pass a file path "
            f"with either `.keras` or `.h5` extension.Received: filepath={path}"
        )
    if kwargs:
        raise _errors.GradkitValueError(f"The following argument(s) are not supported: {list(kwargs)}")
    if zipped is False:
        raise _errors.GradkitNotImplementedError(
            f"save_model({path!r}, zipped=False) writes an unzipped model directory, which gradkit does not. Leave "
            "zipped out and save to a .keras file."
        )
    if path.endswith((".h5", ".hdf5")):
        raise _errors.GradkitNotImplementedError(
            f"save_model({path!r}): this is Keras' legacy HDF5 whole-model format, which gradkit does not write. "
            "Save to a .keras file (Keras' recommended format), or the weights alone to a .weights.h5 file."
        )
    if not path.endswith(".keras"):
        raise _errors.GradkitValueError(
            "Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras "
            "format (recommended) or a `.h5` extension. Use `model.export(filepath)` if you want to export a "
            f"SavedModel for use with TFLite/TFServing/etc. Received: filepath={path}."
        )
    if not overwrite and os.path.exists(path):
        raise _errors.GradkitFileExistsError(
            f"save_model({path!r}, overwrite=False): the file exists. Keras would ask on the terminal whether to "
            "overwrite it; gradkit does not stop to ask. Pass overwrite=True, or another file name."
        )
    if not model.built:  # Keras saves it, weights and all (an unbuilt model may have some)
        warnings.warn(
            "You are saving a model that has not yet been built. It might not contain any weights yet. Consider "
            "building the model first by calling it on some data.",
            UserWarning,
            stacklevel=2,
        )
    config = json.dumps(model_config.serialize_model(model), default=function_entry)  # functions by name, as Keras
    metadata = json.dumps(
        {"keras_version": KERAS_VERSION, "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    )
    weights_h5._h5py()  # h5py must be installed: refuse at once, with the clear error
    directory = os.path.dirname(path) or "."
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        weights = os.path.join(scratch, _WEIGHTS)
        # A compiled model's optimizer state too.
        weights_h5.save_weights(model, weights, optimizer_errors="raise", require_built=False)
        archive = os.path.join(scratch, "model.keras")
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr(_METADATA, metadata)
            zf.writestr(_CONFIG, config)
            zf.write(weights, _WEIGHTS)
        os.replace(archive, path)  # the archive appears whole or not at all


def _refuse(path: str) -> None:
    if path.endswith((".h5", ".hdf5")):
        raise _errors.GradkitNotImplementedError(
            f"load_model({path!r}): this is Keras' legacy HDF5 whole-model format, which gradkit does not read. Load "
            "it in Keras and save it again as a .keras file: model.save('model.keras')."
        )
    if os.path.isdir(path) and os.path.exists(os.path.join(path, _CONFIG)):
        raise _errors.GradkitNotImplementedError(
            f"load_model({path!r}): an unzipped Keras model directory, which gradkit does not read. Zip it as Keras "
            "does (model.save('model.keras') in Keras) and load the .keras file."
        )
    if path.endswith(".keras"):
        raise _errors.GradkitValueError(
            f"File not found: filepath={path}. Please ensure the file is an accessible `.keras` zip file."
        )
    raise _errors.GradkitValueError(
        f"File format not supported: filepath={path}. Keras 3 only supports V3 `.keras` files, legacy H5 format "
        "files (`.h5` extension). Note that the legacy SavedModel format is not supported by `load_model()` in "
        "Keras 3 (nor by gradkit): save the model as a .keras file, or its weights as a .weights.h5 file."
    )


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """The model saved in the ``.keras`` archive ``filepath`` (by gradkit or by Keras 3): made from
    its config (classes of your own from ``custom_objects`` or the registry), built, compiled as
    it was when ``compile``, its weights and optimizer state loaded. ``safe_mode`` changes nothing
    here: gradkit never runs the Python bytecode of a saved lambda."""
    path = _path(filepath, "tf.keras.models.load_model")
    if not (path.endswith(".keras") and os.path.isfile(path) and zipfile.is_zipfile(path)):
        _refuse(path)
    weights_h5._h5py()  # h5py must be installed: refuse at once, with the clear error
    with zipfile.ZipFile(path, "r") as zf:
        names = zf.namelist()
        if _CONFIG not in names or _WEIGHTS not in names:
            raise _errors.GradkitValueError(
                f"load_model({path!r}): the archive holds {names}, not Keras' {_CONFIG} and {_WEIGHTS} (gradkit "
                "reads archives whose weights are in h5, Keras' default)."
            )
        config = json.loads(zf.read(_CONFIG))
        model = model_config.deserialize_model(config, custom_objects, compile=compile)
        with tempfile.TemporaryDirectory() as scratch:
            weights = os.path.join(scratch, _WEIGHTS)
            with zf.open(_WEIGHTS) as source, open(weights, "wb") as target:
                shutil.copyfileobj(source, target)
            # And a compiled model's optimizer state; a model saved unbuilt is loaded unbuilt.
            weights_h5.load_weights(model, weights, require_built=False)
    return model
