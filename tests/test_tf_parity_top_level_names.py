"""gradkit.tf's top level has only names TensorFlow's has: tf.log, tf.reduce_std and
tf.reduce_variance (TensorFlow has them under tf.math only) answer as a missing name does,
and dir() lists no internal helpers."""

from __future__ import annotations

import types

import numpy as np
import pytest

import gradkit.tf as gtf

MATH_ONLY = ("log", "reduce_std", "reduce_variance")


@pytest.mark.parametrize("name", MATH_ONLY)
def test_math_only_names_are_missing_at_the_top_level(name):
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit\.tf has no '" + name + "'"):
        getattr(gtf, name)
    assert name not in dir(gtf) and name not in gtf.__all__
    assert callable(getattr(gtf.math, name))


def test_the_math_names_compute():
    x = np.array([1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(gtf.math.log(x).numpy(), np.log(x), rtol=1e-6)
    np.testing.assert_allclose(gtf.math.reduce_std(x).numpy(), np.std(x), rtol=1e-6)
    np.testing.assert_allclose(gtf.math.reduce_variance(x).numpy(), np.var(x), rtol=1e-6)


def test_dir_lists_no_internal_names():
    public = [n for n in dir(gtf) if not n.startswith("_")]
    assert "Namespace" not in public and "missing" not in public
    modules = {n for n in public if isinstance(getattr(gtf, n), types.ModuleType)}
    assert modules <= {"keras", "dtypes"}  # TensorFlow has both as modules too


def test_every_public_name_is_one_tensorflow_has():
    tf = pytest.importorskip("tensorflow")
    for name in MATH_ONLY:
        assert not hasattr(tf, name) and hasattr(tf.math, name)
    extra = {n for n in dir(gtf) if not n.startswith("_")} - set(dir(tf))
    assert not extra, sorted(extra)


# Names TensorFlow 2.21 has at the top level that gradkit.tf leaves out: graph and op
# registration (no graphs to build), sparse, ragged, string and quantized data, file and
# library loading, protos, and modules outside autodiff. A name TensorFlow adds shows up here.
NOT_PROVIDED = set(
    (
        "CriticalSection DeviceSpec Graph IndexedSlicesSpec NoneTensorSpec Operation OptionalSpec RaggedTensor "
        "RaggedTensorSpec RegisterGradient SparseTensor SparseTensorSpec TensorArraySpec TypeSpec "
        "as_string check_pinned conv conv2d_backprop_filter_v2 conv2d_backprop_input_v2 edit_distance "
        "fftnd fingerprint gradients hessians ifftnd import_graph_def irfftnd "
        "load_library load_op_library make_ndarray make_tensor_proto no_gradient nondifferentiable_batch_function "
        "qint16 qint32 qint8 quint16 quint8 ragged_fill_empty_rows ragged_fill_empty_rows_grad random_index_shuffle "
        "register_tensor_conversion_function resource rfftnd string timestamp type_spec_from_value "
        "variable_creator_scope variant"
    ).split()
)
# TensorFlow's top-level dtypes, graph helpers, variable options, initializers and aliases.
PROVIDED = (
    "DType as_dtype double half uint16 uint32 uint64 device control_dependencies group tuple no_op init_scope "
    "inside_function get_current_name_scope executing_eagerly is_symbolic_tensor parallel_stack saturate_cast "
    "identity_n guarantee_const VariableAggregation VariableSynchronization AggregationMethod zeros_initializer "
    "ones_initializer constant_initializer random_normal_initializer random_uniform_initializer initializers eig "
    "eigvals matrix_square_root assert_equal assert_greater assert_less assert_rank Assert get_logger"
).split()


def test_every_name_tensorflow_has_is_provided_or_known_to_be_left_out():
    tf = pytest.importorskip("tensorflow")
    missing = {
        n
        for n in dir(tf)
        if not n.startswith("_") and not isinstance(getattr(tf, n), types.ModuleType) and not hasattr(gtf, n)
    }
    assert missing <= NOT_PROVIDED, sorted(missing - NOT_PROVIDED)


@pytest.mark.parametrize("name", PROVIDED)
def test_tensorflows_names_are_provided(name):
    tf = pytest.importorskip("tensorflow")
    assert hasattr(tf, name) and name in dir(gtf)
