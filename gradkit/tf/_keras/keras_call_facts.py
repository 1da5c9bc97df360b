"""What Keras 3 records about a layer call in a functional model's config, for gradkit.tf's layers.

A Keras layer's config entry in a functional model holds ``build_config`` (the input shapes the
layer was built for) unless the Keras class is built when it is made, and each recorded call
holds the ``training`` default and the ``mask`` argument Keras' ``Layer.__call__`` adds to it.
Those depend on Keras' class, not gradkit's: the tables below are Keras 3.15's, by class name.
A layer class of your own answers for itself (its own ``build``, its own ``call`` signature).
"""

from __future__ import annotations

import inspect

# Keras 3.15 layers built when they are made (their __init__ sets `built`): the only ones whose
# config entry holds no build_config. Every other layer is built by its first call, Keras' default
# `build` included, and records the input shape it was built for.
_BUILT_AT_CONSTRUCTION = frozenset(
    """Activation ActivityRegularization AlphaDropout AveragePooling1D AveragePooling2D AveragePooling3D
    Dropout ELU GaussianDropout GaussianNoise GlobalAveragePooling1D GlobalAveragePooling2D
    GlobalAveragePooling3D GlobalMaxPooling1D GlobalMaxPooling2D GlobalMaxPooling3D Identity InputLayer
    LeakyReLU Masking MaxPooling1D MaxPooling2D MaxPooling3D ReLU Reshape Softmax SpatialDropout1D
    SpatialDropout2D SpatialDropout3D UnitNormalization""".split()
)

# Keras 3.15 layers whose call() has a `training` default other than None: Keras adds it to
# every recorded call that does not pass `training`.
_TRAINING_TRUE = frozenset(
    """AugMix AutoContrast CenterCrop ContrastLimitedAdaptiveHistogramEqualization CutMix Equalization
    MaxNumBoundingBoxes MixUp Pipeline RandAugment
    RandomBrightness RandomColorDegeneration RandomColorJitter RandomContrast RandomCrop RandomElasticTransform
    RandomErasing RandomFlip RandomGaussianBlur RandomGrayscale RandomHue RandomInvert RandomPerspective
    RandomPosterization RandomRotation RandomSaturation RandomSharpness RandomShear RandomTranslation RandomZoom
    Resizing Solarization""".split()
)
_TRAINING_FALSE = frozenset(
    """AdditiveAttention AlphaDropout Attention ConvLSTM1D ConvLSTM2D ConvLSTM3D Dropout GRU GRUCell
    GaussianDropout GaussianNoise LSTM LSTMCell RNN SimpleRNN SimpleRNNCell SpatialDropout1D SpatialDropout2D
    SpatialDropout3D SpectralNormalization StackedRNNCells""".split()
)

# Keras 3.15 layers whose call() takes `mask`: a call on one tensor (or one structure of them)
# records mask=None (per tensor) when the input carries no mask. Keras' models take it too.
_TAKES_MASK = frozenset(
    """AdditiveAttention Attention BatchNormalization Bidirectional ConvLSTM1D ConvLSTM2D ConvLSTM3D GRU
    GlobalAveragePooling1D LSTM Lambda Pipeline RNN SimpleRNN Softmax TimeDistributed Functional Sequential""".split()
)

_NO_DEFAULT = object()


def _keras_class(layer):
    """The Keras class name ``layer`` stands for: its first gradkit.tf class (None if it has none)."""
    from .model import Functional
    from .sequential import Sequential

    if isinstance(layer, Functional):
        return "Functional"
    if isinstance(layer, Sequential):
        return "Sequential"
    for klass in type(layer).__mro__:
        if klass.__module__.startswith("gradkit.tf._keras"):
            return klass.__name__
    return None


def _own_definer(layer, attribute: str):
    """The first class in ``layer``'s MRO that defines ``attribute``, and whether it is the user's."""
    for klass in type(layer).__mro__:
        if attribute in vars(klass):
            return klass, not klass.__module__.startswith(("gradkit.", "builtins"))
    return None, False


def writes_build_config(layer) -> bool:
    """Whether Keras writes a ``build_config`` for ``layer``: unless its Keras class is built when
    made (a class of your own with its own ``build`` always writes one)."""
    definer, own = _own_definer(layer, "build")
    if own:
        return True
    return _keras_class(layer) not in _BUILT_AT_CONSTRUCTION


def _call_parameters(layer):
    definer, own = _own_definer(layer, "call")
    if not own:
        return None
    try:
        return inspect.signature(definer.call).parameters
    except (TypeError, ValueError):
        return {}


def training_default(layer):
    """The ``training`` value Keras adds to a recorded call of ``layer``, or ``_NO_DEFAULT``."""
    parameters = _call_parameters(layer)
    if parameters is not None:
        parameter = parameters.get("training")
        if parameter is None or parameter.default in (None, inspect.Parameter.empty):
            return _NO_DEFAULT
        return parameter.default
    name = _keras_class(layer)
    if name in _TRAINING_TRUE:
        return True
    if name in _TRAINING_FALSE:
        return False
    return _NO_DEFAULT


def takes_mask(layer) -> bool:
    """Whether ``layer``'s Keras call takes ``mask`` (Keras then records it)."""
    parameters = _call_parameters(layer)
    if parameters is not None:
        return "mask" in parameters
    return _keras_class(layer) in _TAKES_MASK


def recorded_kwargs(layer, kwargs: dict, tensor_arguments: int, only_tensor_argument) -> dict:
    """The keyword arguments Keras records for a call of ``layer`` given ``kwargs``: its
    ``training`` default when the call leaves it out, and ``mask=None`` (one per tensor of the
    call's only tensor argument) when the call takes a mask; a layer's call on a list of
    tensors records ``kwargs`` alone, a model's the masks too."""
    import jax

    recorded = dict(kwargs)
    if isinstance(only_tensor_argument, (list, tuple)) and _keras_class(layer) not in ("Functional", "Sequential"):
        # Keras 3.15 records a layer's call on a list of tensors (Attention()([q, v])) as written:
        # neither its training default nor masks, which a Keras model rebuilt from the config
        # would pass explicitly, overriding the masks the inputs carry.
        return recorded
    default = training_default(layer)
    if "training" not in recorded and default is not _NO_DEFAULT:
        recorded["training"] = default
    if tensor_arguments == 1 and takes_mask(layer) and recorded.get("mask") is None:
        recorded["mask"] = jax.tree_util.tree_map(lambda _: None, only_tensor_argument)
    return recorded


def sequential_build_config(layer, batch_size) -> dict | None:
    """Keras' ``build_config`` of a layer in a Sequential: the shape it was built for, the batch
    size being the Sequential's (None when it was built from ``tf.keras.Input``)."""
    shape = layer.__dict__.get("_keras_build_shape")
    if shape is None or not writes_build_config(layer) or isinstance(shape, (list, dict)):
        return None
    shape = tuple(None if d is None else int(d) for d in shape)
    return {"input_shape": (batch_size, *shape[1:]) if shape else shape}
