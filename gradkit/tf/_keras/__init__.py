"""``tf.keras``: the parts autodiff code uses (layers, Model, Sequential, initializers, optimizers,
utils.set_random_seed)."""

import random as _py_random

import numpy as _np

from .. import _nn, _random
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
activations = Namespace(
    "gradkit.tf.keras.activations",
    relu=_nn.relu,
    elu=_nn.elu,
    sigmoid=_nn.sigmoid,
    tanh=_nn.tanh,
    softmax=_nn.softmax,
    softplus=_nn.softplus,
)

from .input_layer import Input as Input  # noqa: E402


def __getattr__(name):
    raise AttributeError(missing("gradkit.tf.keras", name))
