"""``tf.keras``: the parts autodiff code uses (layers, optimizers, utils.set_random_seed)."""

from types import SimpleNamespace

from gradkit.nn import initializers as _initializers

from .. import _nn
from . import layers as layers
from . import optimizers as optimizers


def _set_random_seed(seed):
    """Seed gradkit.tf.random and layer initializers (TensorFlow's ``keras.utils.set_random_seed``)."""
    _initializers.set_seed(seed)


utils = SimpleNamespace(set_random_seed=_set_random_seed)
activations = SimpleNamespace(
    relu=_nn.relu, elu=_nn.elu, sigmoid=_nn.sigmoid, tanh=_nn.tanh, softmax=_nn.softmax, softplus=_nn.softplus
)
