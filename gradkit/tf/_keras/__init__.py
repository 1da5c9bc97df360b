"""``tf.keras``: the parts autodiff code uses (layers, Model, Sequential, initializers, optimizers,
utils.set_random_seed)."""

import random as _py_random

import numpy as _np

from .. import _random
from .._namespace import Namespace, missing
from . import initializers as _initializers
from . import layers as layers
from . import losses as losses
from . import metrics as metrics
from . import optimizers as optimizers
from .model import Model as Model
from .sequential import Sequential as Sequential


def _set_random_seed(seed):
    """TensorFlow's ``keras.utils.set_random_seed``: seeds gradkit.tf.random and layer initializers,
    and, as Keras does, Python's ``random`` and NumPy's global generator."""
    _py_random.seed(seed)
    _np.random.seed(seed)
    _random.set_seed(seed)


utils = Namespace("gradkit.tf.keras.utils", set_random_seed=_set_random_seed)
initializers = Namespace(
    "gradkit.tf.keras.initializers",
    Initializer=_initializers.Initializer,
    get=_initializers.get,
    **_initializers.CLASSES,
    **_initializers.NAMES,
)
from . import activations as _activations  # noqa: E402

_activations.register_names()
activations = Namespace(
    "gradkit.tf.keras.activations", get=_activations.get, serialize=_activations.serialize, **_activations.BY_NAME
)
backend = Namespace("gradkit.tf.keras.backend", epsilon=lambda: 1e-7, floatx=lambda: "float32")

from .input_layer import Input as Input  # noqa: E402


def __getattr__(name):
    raise AttributeError(missing("gradkit.tf.keras", name))
