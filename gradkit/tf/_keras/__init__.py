"""``tf.keras``: the parts autodiff code uses (layers, Model, Sequential, losses, metrics,
optimizers, initializers, activations, utils.set_random_seed).

``gradkit.tf.keras`` and each of its submodules are namespaces holding Keras' public names
only (those gradkit implements), so ``dir()`` lists what ``dir(tf.keras...)`` lists and a name
TensorFlow does not have is not reachable; the modules here implement them.
"""

import random as _py_random

import numpy as _np

from .. import _random
from .._namespace import Namespace
from . import activations as _activations
from . import conv3d_layers as _conv3d_layers
from . import depthwise_layers as _depthwise_layers
from . import dot_attention_layers as _dot_attention_layers
from . import einsum_dense as _einsum_dense
from . import initializers as _initializers
from . import layers as _layers
from . import loss_registry as _loss_registry
from . import losses as _losses
from . import losses_circle as _losses_circle
from . import losses_ctc as _losses_ctc
from . import losses_gce as _losses_gce
from . import losses_overlap as _losses_overlap
from . import metrics as _metrics
from . import optimizers as _optimizers
from . import rnn_cells as _rnn_cells
from . import rnn_layer as _rnn_layer
from . import rnn_wrappers as _rnn_wrappers
from . import schedules as _schedules
from .input_layer import Input as _Input
from .model import Model as _Model
from .sequential import Sequential as _Sequential


def _members(module, names: str) -> dict:
    return {name: getattr(module, name) for name in names.split()}


def _set_random_seed(seed):
    """TensorFlow's ``keras.utils.set_random_seed``: seeds gradkit.tf.random and layer initializers,
    and, as Keras does, Python's ``random`` and NumPy's global generator."""
    _py_random.seed(seed)
    _np.random.seed(seed)
    _random.set_seed(seed)


LAYERS = (
    "Activation AveragePooling2D AvgPool2D BatchNormalization Conv1D Conv1DTranspose Conv2D Conv2DTranspose Dense "
    "Dropout Embedding Flatten GRU GlobalAveragePooling2D Input InputLayer LSTM Layer LayerNormalization LeakyReLU "
    "MaxPool2D MaxPooling2D MultiHeadAttention ReLU Reshape SimpleRNN Softmax"
)
CONV3D_LAYERS = (
    "Conv3D Conv3DTranspose Convolution1D Convolution2D Convolution3D Convolution1DTranspose "
    "Convolution2DTranspose Convolution3DTranspose"
)
DEPTHWISE_LAYERS = (
    "DepthwiseConv1D DepthwiseConv2D SeparableConv1D SeparableConv2D SeparableConvolution1D SeparableConvolution2D"
)
LOSSES = (
    "Loss Reduction BinaryCrossentropy BinaryFocalCrossentropy CategoricalCrossentropy CategoricalFocalCrossentropy "
    "CategoricalHinge CosineSimilarity Hinge Huber KLDivergence LogCosh MeanAbsoluteError MeanAbsolutePercentageError "
    "MeanSquaredError MeanSquaredLogarithmicError Poisson SparseCategoricalCrossentropy SquaredHinge "
    "binary_crossentropy binary_focal_crossentropy categorical_crossentropy categorical_focal_crossentropy "
    "categorical_hinge cosine_similarity hinge huber kl_divergence log_cosh mean_absolute_error "
    "mean_absolute_percentage_error mean_squared_error mean_squared_logarithmic_error poisson "
    "sparse_categorical_crossentropy squared_hinge KLD MAE MAPE MSE MSLE kld kullback_leibler_divergence logcosh mae "
    "mape mse msle"
)
METRICS = (
    "Metric Mean Sum MeanMetricWrapper Accuracy BinaryAccuracy CategoricalAccuracy SparseCategoricalAccuracy "
    "BinaryCrossentropy CategoricalCrossentropy SparseCategoricalCrossentropy KLDivergence MeanAbsoluteError "
    "MeanSquaredError binary_accuracy categorical_accuracy sparse_categorical_accuracy binary_crossentropy "
    "categorical_crossentropy sparse_categorical_crossentropy kl_divergence mean_absolute_error mean_squared_error "
    "KLD MAE MSE kld mae mse"
)
OPTIMIZERS = "Optimizer SGD Adam AdamW RMSprop Adagrad Adamax Nadam"
SCHEDULES = "LearningRateSchedule CosineDecay ExponentialDecay InverseTimeDecay PiecewiseConstantDecay PolynomialDecay"

_activations.register_names()

# ``gradkit.tf.keras`` (the modules' own names, such as ``losses``, stay the modules).
api = Namespace(
    "gradkit.tf.keras",
    Input=_Input,
    Model=_Model,
    Sequential=_Sequential,
    layers=Namespace(
        "gradkit.tf.keras.layers",
        **_members(_layers, LAYERS),
        **_members(_conv3d_layers, CONV3D_LAYERS),
        **_members(_depthwise_layers, DEPTHWISE_LAYERS),
        **_members(_einsum_dense, "EinsumDense"),
        **_members(_dot_attention_layers, "Attention AdditiveAttention"),
        **_members(_rnn_cells, "SimpleRNNCell LSTMCell GRUCell StackedRNNCells"),
        **_members(_rnn_layer, "RNN"),
        **_members(_rnn_wrappers, "Bidirectional TimeDistributed"),
    ),
    losses=Namespace(
        "gradkit.tf.keras.losses",
        **_members(_losses, LOSSES),
        **_members(_losses_overlap, "Dice Tversky dice tversky"),
        **_members(_losses_gce, "CategoricalGeneralizedCrossEntropy categorical_generalized_cross_entropy"),
        **_members(_losses_circle, "Circle circle"),
        **_members(_losses_ctc, "CTC ctc"),
        **_members(_loss_registry, "get serialize deserialize"),
    ),
    metrics=Namespace("gradkit.tf.keras.metrics", **_members(_metrics, METRICS)),
    optimizers=Namespace(
        "gradkit.tf.keras.optimizers",
        **_members(_optimizers, OPTIMIZERS),
        schedules=Namespace("gradkit.tf.keras.optimizers.schedules", **_members(_schedules, SCHEDULES)),
    ),
    initializers=Namespace(
        "gradkit.tf.keras.initializers",
        Initializer=_initializers.Initializer,
        get=_initializers.get,
        **_initializers.CLASSES,
        **_initializers.NAMES,
    ),
    activations=Namespace(
        "gradkit.tf.keras.activations",
        get=_activations.get,
        serialize=_activations.serialize,
        **_activations.BY_NAME,
    ),
    utils=Namespace("gradkit.tf.keras.utils", set_random_seed=_set_random_seed),
    backend=Namespace("gradkit.tf.keras.backend", epsilon=lambda: 1e-7, floatx=lambda: "float32"),
)
