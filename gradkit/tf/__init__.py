# ruff: noqa: F401  (re-exports; __all__ is computed below)
"""``gradkit.tf``: port TensorFlow 2 autodiff code by changing one import.

``import gradkit.tf as tf`` gives TensorFlow's names, argument names and defaults
(``name=`` is accepted and ignored), on gradkit's tape: the same programs, but
gradients flow through Variable assignment (``GradientTape(track_assignments=False)``
reproduces TensorFlow exactly). Every op is recorded by the tape and returns a
``gk.Tensor`` (``.numpy()`` works as in eager TensorFlow). Complex gradients follow
TensorFlow's convention (the conjugate of JAX's). Anything not covered raises an
AttributeError that points at ``gk.numpy`` / ``gk.lift``.

>>> import gradkit.tf as tf
>>> a, b, c = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b"), tf.Variable(3.0, name="c")
>>> with tf.GradientTape() as tape:
...     _ = c.assign(a + b)
...     loss = tf.reduce_mean(c ** 2)
>>> float(tape.gradient(loss, b))            # TensorFlow gives None
6.0
"""

from gradkit._tape.tensor import Tensor as Tensor

from . import (
    _approx_top_k,
    _arithmetic,
    _array,
    _autodiff,
    _bitwise,
    _control,
    _convert,
    _cumulative_logsumexp,
    _custom,
    _distribute,
    _dropout,
    _integer_data,
    _keras,
    _linalg,
    _math,
    _nest,
    _nn,
    _nn_ctc,
    _nn_fused_batch_norm,
    _nn_sampled_losses,
    _ordering,
    _random,
    _random_candidates,
    _random_gamma,
    _random_generator,
    _random_sampling,
    _random_seeds,
    _random_stateless,
    _saved_model,
    _segment,
    _space_batch,
    _special,
    _special_bessel,
)
from . import _dtypes as dtypes
from ._arithmetic import acosh, asinh, atanh, scalar_mul, truncatediv, truncatemod
from ._array import (
    cast,
    concat,
    constant,
    convert_to_tensor,
    expand_dims,
    eye,
    fill,
    gather,
    identity,
    linspace,
    one_hot,
    ones,
    ones_like,
    pad,
    range,  # noqa: A004
    rank,
    repeat,
    reshape,
    roll,
    shape,
    size,
    split,
    squeeze,
    stack,
    tile,
    transpose,
    unstack,
    where,
    zeros,
    zeros_like,
)
from ._branching import case, switch_case
from ._control import cond, executing_eagerly, foldl, foldr, is_tensor, map_fn, print, scan, while_loop  # noqa: A004
from ._convert import TensorShape
from ._custom import custom_gradient, grad_pass_through, stop_gradient, vectorized_map
from ._dtypes import (  # noqa: A004
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._function import TensorSpec, function
from ._indexing import boolean_mask, broadcast_to, gather_nd, newaxis, searchsorted, slice  # noqa: A004
from ._math import (  # noqa: A004  # noqa: A004  # noqa: A004
    abs,
    acos,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    atan,
    atan2,
    clip_by_global_norm,
    clip_by_norm,
    clip_by_value,
    complex,
    cos,
    cosh,
    divide,
    einsum,
    equal,
    exp,
    floor,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    norm,
    not_equal,
    pow,
    realdiv,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    tensordot,
    truediv,
)
from ._module import Module
from ._name_scope import name_scope
from ._namespace import Namespace as _Namespace
from ._namespace import missing as _missing
from ._ordering import argsort, cumsum, reverse, sort
from ._py_function import numpy_function, py_function
from ._recompute import recompute_grad
from ._scatter import (
    IndexedSlices,
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from ._strided import strided_slice
from ._tape import GradientTape, UnconnectedGradients
from ._tensor_array import TensorArray
from ._variables import Variable

keras = _keras.api
_MATH_NAMES = (
    "sin cos tan tanh sinh cosh exp log log1p square sqrt rsqrt abs negative sign floor ceil round softplus sigmoid "
    "reciprocal real imag conj angle erf lgamma digamma is_nan is_finite add subtract multiply divide pow maximum minimum "
    "squared_difference equal not_equal greater less atan2 reduce_sum reduce_mean reduce_max reduce_min reduce_prod "
    "reduce_std reduce_variance reduce_any reduce_all reduce_logsumexp reduce_euclidean_norm argmax add_n "
    "asin acos atan rint floordiv floormod mod xlogy divide_no_nan log_sigmoid greater_equal less_equal "
    "logical_and logical_or logical_not logical_xor argmin expm1 truediv count_nonzero"
).split()
_ORDERING_NAMES = "cumsum cumprod top_k".split()
_SEGMENT_NAMES = (
    "segment_sum segment_mean segment_max unsorted_segment_sum unsorted_segment_mean unsorted_segment_max "
    "segment_min segment_prod unsorted_segment_min unsorted_segment_prod unsorted_segment_sqrt_n"
).split()
_ARITHMETIC_NAMES = (
    "asinh acosh atanh is_inf xlog1py xdivy multiply_no_nan reciprocal_no_nan nextafter scalar_mul polyval accumulate_n"
).split()
_SPECIAL_MATH_NAMES = (
    "erfc erfinv erfcinv ndtri lbeta polygamma zeta igamma igammac betainc bessel_i0 bessel_i0e bessel_i1 bessel_i1e"
).split()
_SPECIAL_NAMES = "bessel_i0 bessel_i0e bessel_i1 bessel_i1e dawsn expint fresnel_cos fresnel_sin spence".split()
_BESSEL_NAMES = "bessel_j0 bessel_j1 bessel_y0 bessel_y1 bessel_k0 bessel_k0e bessel_k1 bessel_k1e".split()
_COUNTING_NAMES = (
    "bincount confusion_matrix in_top_k invert_permutation is_non_decreasing is_strictly_increasing zero_fraction"
).split()
math = _Namespace(
    "gradkit.tf.math",
    **{n: getattr(_math, n) for n in _MATH_NAMES},
    **{n: getattr(_ordering, n) for n in _ORDERING_NAMES},
    softmax=_nn.softmax,
    log_softmax=_nn.log_softmax,
    softsign=_nn.softsign,
    **{n: getattr(_segment, n) for n in _SEGMENT_NAMES},
    **{n: getattr(_arithmetic, n) for n in _ARITHMETIC_NAMES},
    **{n: getattr(_special, n) for n in _SPECIAL_MATH_NAMES},
    **{n: getattr(_integer_data, n) for n in _COUNTING_NAMES},
    cumulative_logsumexp=_cumulative_logsumexp.cumulative_logsumexp,
    approx_max_k=_approx_top_k.approx_max_k,
    approx_min_k=_approx_top_k.approx_min_k,
    special=_Namespace(
        "gradkit.tf.math.special",
        **{n: getattr(_special, n) for n in _SPECIAL_NAMES},
        **{n: getattr(_special_bessel, n) for n in _BESSEL_NAMES},
    ),
)


def _public(module) -> dict:
    """Every public callable of one of gradkit.tf's modules (not the helpers it imports from _convert)."""
    return {
        n: getattr(module, n)
        for n in dir(module)
        if not n.startswith("_")
        and callable(getattr(module, n))
        and getattr(getattr(module, n), "__module__", None) != _convert.__name__
        and getattr(module, n) not in (Tensor, Variable)  # the types a module uses, not ops of its namespace
    }


nn = _Namespace(
    "gradkit.tf.nn",
    **_public(_nn),
    approx_max_k=_approx_top_k.approx_max_k,
    approx_min_k=_approx_top_k.approx_min_k,
    ctc_loss=_nn_ctc.ctc_loss,
    ctc_unique_labels=_nn_ctc.ctc_unique_labels,
    collapse_repeated=_nn_ctc.collapse_repeated,
    space_to_batch=_space_batch.space_to_batch,
    nce_loss=_nn_sampled_losses.nce_loss,
    sampled_softmax_loss=_nn_sampled_losses.sampled_softmax_loss,
    compute_accidental_hits=_nn_sampled_losses.compute_accidental_hits,
    experimental=_Namespace(
        "gradkit.tf.nn.experimental",
        stateless_dropout=_dropout.stateless_dropout,
        general_dropout=_dropout.general_dropout,
    ),
)
from . import _compat_v1_state_ops, _moving_average  # noqa: E402

_COMPAT_V1_STATE_OPS = (
    "assign assign_add assign_sub scatter_update scatter_add scatter_sub scatter_mul scatter_div scatter_max "
    "scatter_min batch_scatter_update scatter_nd_update scatter_nd_add scatter_nd_sub".split()
)
# TensorFlow 2.21 has fused_batch_norm under tf.compat.v1.nn only.
compat = _Namespace(
    "gradkit.tf.compat",
    dimension_value=_convert.dimension_value,
    v1=_Namespace(
        "gradkit.tf.compat.v1",
        nn=_Namespace("gradkit.tf.compat.v1.nn", fused_batch_norm=_nn_fused_batch_norm.fused_batch_norm),
        train=_Namespace(
            "gradkit.tf.compat.v1.train", ExponentialMovingAverage=_moving_average.ExponentialMovingAverage
        ),
        **{name: getattr(_compat_v1_state_ops, name) for name in _COMPAT_V1_STATE_OPS},
    ),
)
approx_top_k = _approx_top_k.approx_top_k
# tf.linalg: one module per group of ops.
from . import (  # noqa: E402
    _linalg_diagonals,
    _linalg_eig,
    _linalg_eigh_tridiagonal,
    _linalg_functions,
    _linalg_lstsq,
    _linalg_lu,
    _linalg_norms,
    _linalg_structured,
    _linalg_svd,
    _linalg_tridiagonal,
)

linalg = _Namespace(
    "gradkit.tf.linalg",
    **_public(_linalg),
    **_public(_linalg_svd),
    **_public(_linalg_lstsq),
    **_public(_linalg_lu),
    **_public(_linalg_eig),
    **_public(_linalg_functions),
    **_public(_linalg_structured),
    **_public(_linalg_diagonals),
    **_public(_linalg_tridiagonal),
    **_public(_linalg_eigh_tridiagonal),
    **_public(_linalg_norms),
)
random = _Namespace(
    "gradkit.tf.random",
    normal=_random.normal,
    uniform=_random.uniform,
    truncated_normal=_random.truncated_normal,
    set_seed=_random.set_seed,
    categorical=_random_sampling.categorical,
    shuffle=_random_sampling.shuffle,
    stateless_normal=_random_stateless.stateless_normal,
    stateless_uniform=_random_stateless.stateless_uniform,
    stateless_truncated_normal=_random_stateless.stateless_truncated_normal,
    gamma=_random_gamma.gamma,
    poisson=_random_gamma.poisson,
    stateless_gamma=_random_gamma.stateless_gamma,
    stateless_poisson=_random_gamma.stateless_poisson,
    stateless_categorical=_random_sampling.stateless_categorical,
    stateless_binomial=_random_seeds.stateless_binomial,
    split=_random_seeds.split,
    fold_in=_random_seeds.fold_in,
    log_uniform_candidate_sampler=_random_candidates.log_uniform_candidate_sampler,
    uniform_candidate_sampler=_random_candidates.uniform_candidate_sampler,
    fixed_unigram_candidate_sampler=_random_candidates.fixed_unigram_candidate_sampler,
    all_candidate_sampler=_random_candidates.all_candidate_sampler,
    Generator=_random_generator.Generator,
    Algorithm=_random_generator.Algorithm,
    create_rng_state=_random_generator.create_rng_state,
    get_global_generator=_random_generator.get_global_generator,
    set_global_generator=_random_generator.set_global_generator,
    experimental=_Namespace(
        "gradkit.tf.random.experimental",
        stateless_shuffle=_random_sampling.stateless_shuffle,
        stateless_split=_random_seeds.split,
        stateless_fold_in=_random_seeds.fold_in,
        Generator=_random_generator.Generator,
        Algorithm=_random_generator.Algorithm,
        create_rng_state=_random_generator.create_rng_state,
        get_global_generator=_random_generator.get_global_generator,
        set_global_generator=_random_generator.set_global_generator,
    ),
)
nest = _Namespace(
    "gradkit.tf.nest",
    map_structure=_nest.map_structure,
    flatten=_nest.flatten,
    pack_sequence_as=_nest.pack_sequence_as,
    assert_same_structure=_nest.assert_same_structure,
    is_nested=_nest.is_nested,
)
autodiff = _Namespace("gradkit.tf.autodiff", ForwardAccumulator=_autodiff.ForwardAccumulator)
gradients = _autodiff.gradients
hessians = _autodiff.hessians
distribute = _Namespace(
    "gradkit.tf.distribute",
    **{n: getattr(_distribute, n) for n in _distribute.NAMES.split()},
    experimental=_Namespace(
        "gradkit.tf.distribute.experimental",
        ValueContext=_distribute.ValueContext,
        ParameterServerStrategy=_distribute.ParameterServerStrategy,
        TPUStrategy=_distribute.TPUStrategy,
        MultiWorkerMirroredStrategy=_distribute.MultiWorkerMirroredStrategy,
    ),
)
# The TensorFlow release whose API and behaviour gradkit.tf reproduces (its tests compare with
# that release), for code that checks tf.__version__; gradkit's own is gradkit.__version__.
__version__ = "2.21.0"
version = _Namespace("gradkit.tf.version", VERSION=__version__)
saved_model = _Namespace(
    "gradkit.tf.saved_model", save=_saved_model.save, load=_saved_model.load, SaveOptions=_saved_model.SaveOptions
)
from ._data.optional import Optional as _Optional  # noqa: E402
from ._data.optional import OptionalSpec  # noqa: E402

experimental = _Namespace("gradkit.tf.experimental", Optional=_Optional)
from . import _autograph  # noqa: E402

autograph = _autograph.namespace()
bitwise = _Namespace("gradkit.tf.bitwise", **{n: getattr(_bitwise, n) for n in _bitwise.__all__})
# tf.signal: one module per group of ops.
from . import (  # noqa: E402
    _signal_dct,
    _signal_fft,
    _signal_frames,
    _signal_mdct,
    _signal_mel,
    _signal_stft,
    _signal_windows,
)


def _defined_in(module) -> dict:
    """A module's public callables defined in it (not those it imports from its neighbours)."""
    return {n: f for n, f in _public(module).items() if getattr(f, "__module__", None) == module.__name__}


signal = _Namespace(
    "gradkit.tf.signal",
    **{
        name: op
        for module in (
            _signal_fft,
            _signal_windows,
            _signal_frames,
            _signal_stft,
            _signal_dct,
            _signal_mdct,
            _signal_mel,
        )
        for name, op in _defined_in(module).items()
    },
)
from gradkit import _op_errors  # noqa: E402

# TensorFlow's error classes and codes, defined below the core so gradkit's own errors derive from them.
errors = _Namespace(
    "gradkit.tf.errors",
    **{n: v for n, v in vars(_op_errors).items() if not n.startswith("_") and isinstance(v, (type, int))},
)
del _op_errors
from . import _assert_static, _assert_values, _config, _config_devices, _debugging  # noqa: E402

_VALUE_ASSERTIONS = (
    "Assert assert_equal assert_none_equal assert_less assert_less_equal assert_greater assert_greater_equal "
    "assert_positive assert_negative assert_non_positive assert_non_negative assert_near"
).split()
_STATIC_ASSERTIONS = (
    "assert_rank assert_rank_at_least assert_rank_in assert_integer assert_type assert_scalar assert_shapes "
    "assert_proper_iterable assert_same_float_dtype is_numeric_tensor"
).split()
debugging = _Namespace(
    "gradkit.tf.debugging",
    **{n: getattr(_assert_values, n) for n in _VALUE_ASSERTIONS},
    **{n: getattr(_assert_static, n) for n in _STATIC_ASSERTIONS},
    check_numerics=_debugging.check_numerics,
    assert_all_finite=_debugging.assert_all_finite,
)
# The assertions TensorFlow 2 also has at the top level.
Assert = _assert_values.Assert
assert_equal = _assert_values.assert_equal
assert_greater = _assert_values.assert_greater
assert_less = _assert_values.assert_less
assert_rank = _assert_static.assert_rank
del _assert_static, _assert_values
_DEVICE_NAMES = "list_physical_devices list_logical_devices get_visible_devices set_visible_devices".split()
config = _Namespace(
    "gradkit.tf.config",
    run_functions_eagerly=_config.run_functions_eagerly,
    functions_run_eagerly=_config.functions_run_eagerly,
    PhysicalDevice=_config_devices.PhysicalDevice,
    LogicalDevice=_config_devices.LogicalDevice,
    get_soft_device_placement=_config_devices.get_soft_device_placement,
    set_soft_device_placement=_config_devices.set_soft_device_placement,
    **{n: getattr(_config_devices, n) for n in _DEVICE_NAMES},
    experimental=_Namespace(
        "gradkit.tf.config.experimental",
        set_memory_growth=_config_devices.set_memory_growth,
        get_memory_growth=_config_devices.get_memory_growth,
        **{n: getattr(_config_devices, n) for n in _DEVICE_NAMES},
    ),
)
math.l2_normalize = _nn.l2_normalize
# tf.train: checkpoints (gradkit's own files under TensorFlow's names).
from ._checkpoint import checkpoint as _checkpoint  # noqa: E402
from ._checkpoint import manager as _checkpoint_manager  # noqa: E402
from ._checkpoint import reader as _checkpoint_reader  # noqa: E402
from ._checkpoint import state_file as _checkpoint_state  # noqa: E402

train = _Namespace(
    "gradkit.tf.train",
    Checkpoint=_checkpoint.Checkpoint,
    CheckpointManager=_checkpoint_manager.CheckpointManager,
    latest_checkpoint=_checkpoint_state.latest_checkpoint,
    get_checkpoint_state=_checkpoint_state.get_checkpoint_state,
    load_checkpoint=_checkpoint_reader.load_checkpoint,
    list_variables=_checkpoint_reader.list_variables,
    load_variable=_checkpoint_reader.load_variable,
    ExponentialMovingAverage=_moving_average.ExponentialMovingAverage,
)
del _checkpoint, _checkpoint_manager, _checkpoint_reader, _checkpoint_state

del (
    _arithmetic,
    _array,
    _control,
    _integer_data,
    _cumulative_logsumexp,
    _custom,
    _linalg,
    _math,
    _nest,
    _nn,
    _ordering,
    _random,
    _random_generator,
    _random_sampling,
    _random_stateless,
    _saved_model,
    _segment,
    _special,
    _special_bessel,
)


# TensorFlow's top-level array and shape ops beyond the basics; tf.image (one module per group of ops).
from . import (  # noqa: E402
    _image_adjust,
    _image_color,
    _image_crop_and_resize,
    _image_distorted_box,
    _image_draw_boxes,
    _image_dtype,
    _image_geometry,
    _image_nms,
    _image_nms_padded,
    _image_quality,
    _image_random,
    _image_resize,
)
from ._bitcast import bitcast  # noqa: E402
from ._counting import histogram_fixed_width, histogram_fixed_width_bins, unique, unique_with_counts  # noqa: E402
from ._graph_helpers import (  # noqa: E402
    control_dependencies,
    device,
    get_current_name_scope,
    group,
    init_scope,
    inside_function,
    is_symbolic_tensor,
    no_op,
    tuple,  # noqa: A004
)
from ._grids import meshgrid, unravel_index  # noqa: E402
from ._initializers_v2 import Constant as constant_initializer  # noqa: E402
from ._initializers_v2 import Ones as ones_initializer  # noqa: E402
from ._initializers_v2 import RandomNormal as random_normal_initializer  # noqa: E402
from ._initializers_v2 import RandomUniform as random_uniform_initializer  # noqa: E402
from ._initializers_v2 import Zeros as zeros_initializer  # noqa: E402
from ._logger import get_logger  # noqa: E402
from ._parallel_stack import parallel_stack  # noqa: E402
from ._partition import dynamic_partition, dynamic_stitch  # noqa: E402
from ._saturate_cast import saturate_cast  # noqa: E402
from ._sequence import reverse_sequence, sequence_mask  # noqa: E402
from ._shape_utils import (  # noqa: E402
    broadcast_dynamic_shape,
    broadcast_static_shape,
    ensure_shape,
    get_static_value,
    guarantee_const,
    identity_n,
    shape_n,
)
from ._space_batch import (  # noqa: E402
    batch_to_space,
    required_space_to_batch_paddings,
    space_to_batch,
    space_to_batch_nd,
)
from ._variable_options import AggregationMethod, VariableSynchronization  # noqa: E402
from ._variable_options import VariableAggregationV2 as VariableAggregation  # noqa: E402
from ._volume_patches import extract_volume_patches  # noqa: E402

dtypes.cast, dtypes.complex, dtypes.saturate_cast = cast, complex, saturate_cast
dtypes.__all__ += ["cast", "complex", "saturate_cast"]
# TensorFlow 2.21's tf.initializers, tf.losses, tf.metrics and tf.optimizers are tf.keras' modules.
initializers, losses, metrics, optimizers = keras.initializers, keras.losses, keras.metrics, keras.optimizers
# TensorFlow's top-level aliases of tf.linalg ops.
eig, eigvals, matrix_square_root = linalg.eig, linalg.eigvals, linalg.sqrtm

image = _Namespace(
    "gradkit.tf.image",
    **{
        n: getattr(module, n)
        for module in (
            _image_resize,
            _image_geometry,
            _image_crop_and_resize,
            _image_nms,
            _image_nms_padded,
            _image_dtype,
            _image_color,
            _image_adjust,
            _image_quality,
            _image_random,
            _image_distorted_box,
            _image_draw_boxes,
        )
        for n in module.__all__
    },
)

from . import _sparse_segment  # noqa: E402

sparse = _Namespace("gradkit.tf.sparse", **{n: getattr(_sparse_segment, n) for n in _sparse_segment.__all__})

from . import _quantization  # noqa: E402

quantization = _Namespace("gradkit.tf.quantization", **{n: getattr(_quantization, n) for n in _quantization.__all__})

from . import _data  # noqa: E402

data = _data.namespace()  # tf.data: input pipelines

from . import _summary  # noqa: E402

summary = _summary.namespace()  # tf.summary: TensorBoard event files


def __getattr__(name):
    raise AttributeError(_missing("gradkit.tf", name))


# Not print or tuple: ``from gradkit.tf import *`` must not hide Python's own.
__all__ = [n for n in dir() if not n.startswith("_") and n not in ("print", "tuple")]

# Transposed convolutions (tf.nn's names).
from . import _conv_transpose  # noqa: E402

nn.conv2d_transpose = _conv_transpose.conv2d_transpose
nn.conv1d_transpose = _conv_transpose.conv1d_transpose
nn.conv3d_transpose = _conv_transpose.conv3d_transpose
nn.conv_transpose = _conv_transpose.conv_transpose
nn.atrous_conv2d_transpose = _conv_transpose.atrous_conv2d_transpose
