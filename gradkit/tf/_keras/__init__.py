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
from . import adaptive_pooling_layers as _adaptive_pooling_layers
from . import augmentation_affine_layers as _augmentation_affine_layers
from . import augmentation_color_layers as _augmentation_color_layers
from . import augmentation_erasing as _augmentation_erasing
from . import augmentation_filter_layers as _augmentation_filter_layers
from . import augmentation_layers as _augmentation_layers
from . import augmentation_local as _augmentation_local
from . import augmentation_mixing as _augmentation_mixing
from . import augmentation_policies as _augmentation_policies
from . import augmentation_shear_perspective as _augmentation_shear_perspective
from . import augmentation_value_layers as _augmentation_value_layers
from . import backend_config as _backend_config
from . import callbacks as _callbacks
from . import callbacks_checkpoint as _callbacks_checkpoint
from . import callbacks_monitor as _callbacks_monitor
from . import callbacks_more as _callbacks_more
from . import callbacks_progbar as _callbacks_progbar
from . import callbacks_tensorboard as _callbacks_tensorboard
from . import category_encoding as _category_encoding
from . import cloning as _cloning
from . import constraints as _constraints
from . import conv3d_layers as _conv3d_layers
from . import depthwise_layers as _depthwise_layers
from . import discretization as _discretization
from . import dot_attention_layers as _dot_attention_layers
from . import dtype_policies as _dtype_policies
from . import einsum_dense as _einsum_dense
from . import elu_prelu_layers as _elu_prelu_layers
from . import functional as _functional
from . import group_normalization as _group_normalization
from . import grouped_query_attention as _grouped_query_attention
from . import image_preprocessing_layers as _image_preprocessing_layers
from . import initializers as _initializers
from . import input_spec as _input_spec
from . import keras_object_serialization as _keras_object_serialization
from . import keras_random as _keras_random
from . import keras_variable as _keras_variable
from . import lambda_layer as _lambda_layer
from . import layer_wrapper as _layer_wrapper
from . import layers as _layers
from . import legacy_backend as _legacy_backend
from . import loss_registry as _loss_registry
from . import loss_scale_optimizer as _loss_scale_optimizer
from . import losses as _losses
from . import losses_circle as _losses_circle
from . import losses_ctc as _losses_ctc
from . import losses_gce as _losses_gce
from . import losses_overlap as _losses_overlap
from . import masking_layer as _masking_layer
from . import merging_layers as _merging_layers
from . import metrics as _metrics
from . import metrics_confusion as _metrics_confusion
from . import metrics_fscore as _metrics_fscore
from . import metrics_iou as _metrics_iou
from . import metrics_more as _metrics_more
from . import metrics_registry as _metrics_registry
from . import metrics_regression as _metrics_regression
from . import noise_layers as _noise_layers
from . import optimizer_multi as _optimizer_multi
from . import optimizer_muon as _optimizer_muon
from . import optimizer_registry as _optimizer_registry
from . import optimizer_schedule_free as _optimizer_schedule_free
from . import optimizers as _optimizers
from . import optimizers_more as _optimizers_more
from . import pipeline_layer as _pipeline_layer
from . import pooling_layers_nd as _pooling_layers_nd
from . import preprocessing_layers as _preprocessing_layers
from . import progbar as _progbar
from . import regularizers as _regularizers
from . import reshaping_layers as _reshaping_layers
from . import reversible_embedding as _reversible_embedding
from . import rnn_cells as _rnn_cells
from . import rnn_layer as _rnn_layer
from . import rnn_wrappers as _rnn_wrappers
from . import schedules as _schedules
from . import serialization_registry as _serialization_registry
from . import skipgrams as _skipgrams
from . import spectral_normalization as _spectral_normalization
from . import timeseries as _timeseries
from . import training_data as _training_data
from . import training_epochs as _training_epochs
from . import unit_rms_normalization as _unit_rms_normalization
from . import upsampling_layers as _upsampling_layers
from . import utils_data as _utils_data
from . import weights_h5 as _weights_h5
from .input_layer import Input as _Input
from .model import Model as _Model
from .model import load_model as _load_model
from .model import model_from_json as _model_from_json
from .model import save_model as _save_model
from .ops import core_more as _ops_core_more
from .ops import core_ops as _ops_core
from .ops import image_ops as _ops_image
from .ops import linalg_more as _ops_linalg_more
from .ops import linalg_ops as _ops_linalg
from .ops import math_fft as _ops_math_fft
from .ops import math_ops as _ops_math
from .ops import nn_activations as _ops_nn_activations
from .ops import nn_ctc as _ops_nn_ctc
from .ops import nn_more as _ops_nn_more
from .ops import nn_ops as _ops_nn
from .ops import nn_pool_fold as _ops_nn_pool_fold
from .ops import numpy_creation as _ops_creation
from .ops import numpy_diagonals as _ops_diagonals
from .ops import numpy_elementwise as _ops_elementwise
from .ops import numpy_more as _ops_numpy_more
from .ops import numpy_nan as _ops_nan
from .ops import numpy_products as _ops_products
from .ops import numpy_reductions as _ops_reductions
from .ops import numpy_shapes as _ops_shapes
from .ops import numpy_special as _ops_numpy_special
from .sequential import Sequential as _Sequential
from .split_dataset import split_dataset as _split_dataset


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
OPTIMIZERS_MORE = "Adadelta Ftrl Lion Lamb Adafactor"
REGULARIZERS = (
    "Regularizer L1 L2 L1L2 OrthogonalRegularizer l1 l2 l1_l2 orthogonal_regularizer get serialize deserialize"
)
CONSTRAINTS = (
    "Constraint MaxNorm MinMaxNorm NonNeg UnitNorm max_norm min_max_norm non_neg unit_norm get serialize deserialize"
)
MERGING_LAYERS = (
    "Add Subtract Multiply Average Maximum Minimum Concatenate Dot "
    "add subtract multiply average maximum minimum concatenate dot"
)
RESHAPING_LAYERS = "Permute RepeatVector Cropping1D Cropping2D Cropping3D ZeroPadding1D ZeroPadding2D ZeroPadding3D"
POOLING_LAYERS_ND = (
    "MaxPooling1D MaxPooling3D AveragePooling1D AveragePooling3D GlobalMaxPooling1D GlobalMaxPooling2D "
    "GlobalMaxPooling3D GlobalAveragePooling1D GlobalAveragePooling3D MaxPool1D MaxPool3D AvgPool1D AvgPool3D "
    "GlobalMaxPool1D GlobalMaxPool2D GlobalMaxPool3D GlobalAvgPool1D GlobalAvgPool2D GlobalAvgPool3D"
)
ELU_PRELU_LAYERS = "ELU PReLU ThresholdedReLU"
NOISE_LAYERS = (
    "GaussianNoise GaussianDropout AlphaDropout SpatialDropout1D SpatialDropout2D SpatialDropout3D "
    "ActivityRegularization"
)
UPSAMPLING_LAYERS = "UpSampling1D UpSampling2D UpSampling3D"
CALLBACKS = "Callback CallbackList History"
SCHEDULES = (
    "LearningRateSchedule CosineDecay CosineDecayRestarts ExponentialDecay InverseTimeDecay PiecewiseConstantDecay "
    "PolynomialDecay serialize deserialize"
)
RANDOM = "SeedGenerator normal uniform randint truncated_normal dropout shuffle categorical gamma binomial beta"
SAVING = (
    "register_keras_serializable get_registered_name get_registered_object custom_object_scope CustomObjectScope "
    "get_custom_objects"
)
# tf.keras.ops and its numpy / nn / linalg submodules, each from the modules implementing it.
OPS_NUMPY = {
    name: getattr(m, name)
    for m in (
        _ops_elementwise,
        _ops_reductions,
        _ops_nan,
        _ops_creation,
        _ops_shapes,
        _ops_diagonals,
        _ops_products,
        _ops_numpy_more,
        _ops_numpy_special,
    )
    for name in m.NAMES.split()
}
OPS_NN = {
    **_members(_ops_nn_activations, _ops_nn_activations.NAMES),
    **_members(_ops_nn, _ops_nn.NAMES),
    **_members(_ops_nn_more, _ops_nn_more.NAMES),
    **_members(_ops_nn_ctc, _ops_nn_ctc.NAMES),
    **_members(_ops_nn_pool_fold, _ops_nn_pool_fold.NAMES),
}
OPS_LINALG = {**_members(_ops_linalg, _ops_linalg.NAMES), **_members(_ops_linalg_more, _ops_linalg_more.NAMES)}

_activations.register_names()

# Keras' layers that pass a mask on (they set supports_masking): the rest drop it, with a warning.
for _cls in (
    _layers.Dense,
    _layers.Dropout,
    _layers.Activation,
    _layers.BatchNormalization,
    _layers.LayerNormalization,
    _layers.LeakyReLU,
    _layers.ReLU,
    _layers.Softmax,
    _elu_prelu_layers.ELU,
    _elu_prelu_layers.PReLU,
    _noise_layers.GaussianNoise,
    _noise_layers.GaussianDropout,
    _noise_layers.AlphaDropout,
    _noise_layers.ActivityRegularization,
    _preprocessing_layers.Identity,
    _preprocessing_layers.Rescaling,
    _preprocessing_layers.Normalization,
    _group_normalization.GroupNormalization,
    _unit_rms_normalization.UnitNormalization,
    _rnn_wrappers.TimeDistributed,
):
    _cls._keras_masking = True

# ``gradkit.tf.keras`` (the modules' own names, such as ``losses``, stay the modules).
api = Namespace(
    "gradkit.tf.keras",
    Input=_Input,
    Model=_Model,
    Sequential=_Sequential,
    # tf.keras' top-level aliases of its base classes, and tf.keras.models.
    Layer=_layers.Layer,
    InputSpec=_input_spec.InputSpec,
    Loss=_losses.Loss,
    Metric=_metrics.Metric,
    Optimizer=_optimizers.Optimizer,
    Initializer=_initializers.Initializer,
    Variable=_keras_variable.KerasVariable,
    KerasTensor=_functional.KerasTensor,
    models=Namespace(
        "gradkit.tf.keras.models",
        Model=_Model,
        Sequential=_Sequential,
        clone_model=_cloning.clone_model,
        load_model=_load_model,
        save_model=_save_model,
        model_from_json=_model_from_json,
    ),
    layers=Namespace(
        "gradkit.tf.keras.layers",
        **_members(_layers, LAYERS),
        **_members(_conv3d_layers, CONV3D_LAYERS),
        **_members(_depthwise_layers, DEPTHWISE_LAYERS),
        **_members(_einsum_dense, "EinsumDense"),
        **_members(_dot_attention_layers, "Attention AdditiveAttention"),
        **_members(_rnn_cells, "SimpleRNNCell LSTMCell GRUCell StackedRNNCells"),
        **_members(_rnn_layer, "RNN"),
        InputSpec=_input_spec.InputSpec,
        **_members(_rnn_wrappers, "Bidirectional TimeDistributed"),
        Wrapper=_layer_wrapper.Wrapper,
        SpectralNormalization=_spectral_normalization.SpectralNormalization,
        **_members(_merging_layers, MERGING_LAYERS),
        **_members(_reshaping_layers, RESHAPING_LAYERS),
        **_members(_preprocessing_layers, "Identity Rescaling Normalization"),
        **_members(_category_encoding, "CategoryEncoding"),
        **_members(_discretization, "Discretization"),
        **_members(_pipeline_layer, "Pipeline"),
        **_members(_image_preprocessing_layers, "Resizing CenterCrop"),
        **_members(_augmentation_layers, "RandomFlip RandomContrast RandomBrightness RandomCrop"),
        **_members(_augmentation_affine_layers, "RandomRotation RandomZoom RandomTranslation"),
        **_members(
            _augmentation_value_layers, "RandomInvert Solarization RandomPosterization AutoContrast Equalization"
        ),
        **_members(_augmentation_erasing, "RandomErasing"),
        **_members(
            _augmentation_color_layers,
            "RandomGrayscale RandomColorDegeneration RandomHue RandomSaturation RandomColorJitter",
        ),
        **_members(_augmentation_filter_layers, "RandomSharpness RandomGaussianBlur"),
        **_members(_augmentation_shear_perspective, "RandomShear RandomPerspective"),
        **_members(_augmentation_mixing, "MixUp CutMix"),
        **_members(_augmentation_policies, "RandAugment AugMix"),
        **_members(_augmentation_local, "RandomElasticTransform ContrastLimitedAdaptiveHistogramEqualization"),
        **_members(_upsampling_layers, UPSAMPLING_LAYERS),
        **_members(_adaptive_pooling_layers, _adaptive_pooling_layers.NAMES),
        **_members(_pooling_layers_nd, POOLING_LAYERS_ND),
        **_members(_elu_prelu_layers, ELU_PRELU_LAYERS),
        **_members(_lambda_layer, "Lambda"),
        **_members(_noise_layers, NOISE_LAYERS),
        **_members(_group_normalization, "GroupNormalization"),
        **_members(_grouped_query_attention, "GroupQueryAttention"),
        **_members(_unit_rms_normalization, "UnitNormalization RMSNormalization"),
        **_members(_masking_layer, "Masking"),
        **_members(_reversible_embedding, "ReversibleEmbedding"),
        serialize=_keras_object_serialization.serialize_keras_object,
        deserialize=_keras_object_serialization.deserialize_keras_object,
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
    metrics=Namespace(
        "gradkit.tf.keras.metrics",
        **_members(_metrics, METRICS),
        **_members(_metrics_more, _metrics_more.NAMES),
        **_members(_metrics_confusion, _metrics_confusion.NAMES),
        **_members(_metrics_fscore, _metrics_fscore.NAMES),
        **_members(_metrics_iou, _metrics_iou.NAMES),
        **_members(_metrics_regression, _metrics_regression.NAMES),
        **_members(_metrics_registry, _metrics_registry.NAMES),
        # Keras exports these loss functions as metric functions too (metrics.get does not know them).
        **_members(_losses, "log_cosh mean_absolute_percentage_error mean_squared_logarithmic_error"),
    ),
    optimizers=Namespace(
        "gradkit.tf.keras.optimizers",
        **_members(_optimizers, OPTIMIZERS),
        **_members(_optimizers_more, OPTIMIZERS_MORE),
        **_members(_loss_scale_optimizer, "LossScaleOptimizer"),
        **_members(_optimizer_muon, "Muon"),
        **_members(_optimizer_schedule_free, "ScheduleFreeAdamW"),
        **_members(_optimizer_multi, "MultiOptimizer OptimizerMap"),
        **_members(_optimizer_registry, "get serialize deserialize"),
        schedules=Namespace("gradkit.tf.keras.optimizers.schedules", **_members(_schedules, SCHEDULES)),
    ),
    initializers=Namespace(
        "gradkit.tf.keras.initializers",
        Initializer=_initializers.Initializer,
        IdentityInitializer=_initializers.IdentityInitializer,
        OrthogonalInitializer=_initializers.OrthogonalInitializer,
        get=_initializers.get,
        serialize=_initializers.serialize,
        deserialize=_initializers.deserialize,
        **_initializers.CLASSES,
        **_initializers.NAMES,
    ),
    activations=Namespace(
        "gradkit.tf.keras.activations",
        get=_activations.get,
        serialize=_activations.serialize,
        deserialize=_activations.deserialize,
        **_activations.BY_NAME,
    ),
    regularizers=Namespace("gradkit.tf.keras.regularizers", **_members(_regularizers, REGULARIZERS)),
    constraints=Namespace("gradkit.tf.keras.constraints", **_members(_constraints, CONSTRAINTS)),
    utils=Namespace(
        "gradkit.tf.keras.utils",
        set_random_seed=_set_random_seed,
        PyDataset=_training_epochs.PyDataset,
        Sequence=_training_epochs.PyDataset,
        pack_x_y_sample_weight=_training_data.pack_x_y_sample_weight,
        unpack_x_y_sample_weight=_training_data.unpack_x_y_sample_weight,
        **_members(_utils_data, _utils_data.NAMES),
        **_members(_timeseries, _timeseries.NAMES),
        **_members(_serialization_registry, SAVING),
        **_members(_keras_object_serialization, "serialize_keras_object deserialize_keras_object"),
        Progbar=_progbar.Progbar,
        clear_session=_backend_config.clear_session,
        is_keras_tensor=_legacy_backend.is_keras_tensor,
        standardize_dtype=_backend_config.standardize_dtype,
        split_dataset=_split_dataset,
    ),
    callbacks=Namespace(
        "gradkit.tf.keras.callbacks",
        **_members(_callbacks, CALLBACKS),
        **_members(_callbacks_progbar, "ProgbarLogger"),
        **_members(_callbacks_more, "TerminateOnNaN LambdaCallback CSVLogger SwapEMAWeights"),
        **_members(_callbacks_monitor, "EarlyStopping ReduceLROnPlateau LearningRateScheduler"),
        ModelCheckpoint=_callbacks_checkpoint.ModelCheckpoint,
        TensorBoard=_callbacks_tensorboard.TensorBoard,
    ),
    backend=Namespace(
        "gradkit.tf.keras.backend",
        **_members(_backend_config, _backend_config.NAMES),
        **_members(_legacy_backend, _legacy_backend.NAMES),
        backend=_backend_config.backend,
    ),
    config=Namespace(
        "gradkit.tf.keras.config",
        **_members(_backend_config, _backend_config.CONFIG_NAMES),
        **_members(_dtype_policies, _dtype_policies.CONFIG_NAMES),
    ),
    mixed_precision=Namespace(
        "gradkit.tf.keras.mixed_precision",
        **_members(_dtype_policies, _dtype_policies.NAMES),
        **_members(_dtype_policies, _dtype_policies.CONFIG_NAMES),
        LossScaleOptimizer=_loss_scale_optimizer.LossScaleOptimizer,
    ),
    DTypePolicy=_dtype_policies.DTypePolicy,
    dtype_policies=Namespace(
        "gradkit.tf.keras.dtype_policies", **_members(_dtype_policies, _dtype_policies.MODULE_NAMES)
    ),
    ops=Namespace(
        "gradkit.tf.keras.ops",
        **OPS_NUMPY,
        **OPS_NN,
        **OPS_LINALG,
        **_members(_ops_math, _ops_math.NAMES),
        **_members(_ops_math_fft, _ops_math_fft.NAMES),
        **_members(_ops_core, _ops_core.NAMES),
        **_members(_ops_core_more, _ops_core_more.NAMES),
        numpy=Namespace("gradkit.tf.keras.ops.numpy", **OPS_NUMPY),
        nn=Namespace("gradkit.tf.keras.ops.nn", **OPS_NN),
        linalg=Namespace("gradkit.tf.keras.ops.linalg", **OPS_LINALG),
        image=Namespace("gradkit.tf.keras.ops.image", **_members(_ops_image, _ops_image.NAMES)),
    ),
    random=Namespace("gradkit.tf.keras.random", **_members(_keras_random, RANDOM)),
    saving=Namespace(
        "gradkit.tf.keras.saving",
        **_members(_serialization_registry, SAVING),
        **_members(_keras_object_serialization, "serialize_keras_object deserialize_keras_object"),
        save_weights=_weights_h5.saving_save_weights,
        load_weights=_weights_h5.saving_load_weights,
        save_model=_save_model,
        load_model=_load_model,
    ),
    preprocessing=Namespace(
        "gradkit.tf.keras.preprocessing",
        sequence=Namespace(
            "gradkit.tf.keras.preprocessing.sequence",
            pad_sequences=_utils_data.pad_sequences,
            skipgrams=_skipgrams.skipgrams,
            make_sampling_table=_skipgrams.make_sampling_table,
        ),
    ),
)
