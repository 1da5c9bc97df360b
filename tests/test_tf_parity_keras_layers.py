"""gradkit.tf's Keras convolution, pooling, Embedding and LayerNormalization layers against real
TensorFlow 2.21 / Keras 3: the same weights in both, outputs and gradients compared."""

import re

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)


def _dense(tf, g):
    # TensorFlow's gradient of a gather is IndexedSlices; gradkit's is the dense tensor.
    return None if g is None else np.asarray(tf.convert_to_tensor(g))


def _run(tf, make, x, weights, watch=True):
    """Build ``make(tf)`` on ``x``, assign ``weights`` (a list, or a function making one from the
    weights' shapes), and return the output, the gradients of a weighted sum of it w.r.t. the
    input and the trainable weights, and the weights' shapes and names."""
    layer = make(tf)
    layer(tf.constant(x))
    if callable(weights):
        weights = weights([tuple(v.shape) for v in layer.weights])
    for v, w in zip(layer.weights, weights):
        v.assign(w)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        if watch:
            tape.watch(xt)
        y = layer(xt)
        cotangent = np.random.RandomState(1).randn(*y.shape).astype(np.float32)
        loss = tf.reduce_sum(y * cotangent)
    grads = tape.gradient(loss, [xt, *layer.trainable_variables])
    return {
        "y": np.asarray(y),
        "grads": [_dense(tf, g) for g in grads],
        "shapes": [tuple(v.shape) for v in layer.weights],
        "names": [v.name if tf is gtf else v.path + ":0" for v in layer.weights],
        "layer": layer,
    }


def check_layer(make, x, watch=True, rtol=1e-5, atol=1e-5):
    """TF's layer with random weights of its shapes; gradkit's with the same weights; both agree.
    TensorFlow's layer is built once: its weights' shapes pick the random values."""
    weights = []

    def random_weights(shapes):
        weights.extend(np.random.RandomState(2 + i).randn(*s).astype(np.float32) for i, s in enumerate(shapes))
        return weights

    want = _run(tf_real, make, x, random_weights, watch=watch)
    got = _run(gtf, make, x, weights, watch=watch)
    assert got["shapes"] == want["shapes"]
    assert got["names"] == want["names"]
    np.testing.assert_allclose(got["y"], want["y"], rtol=rtol, atol=atol)
    assert len(got["grads"]) == len(want["grads"])
    for g, w in zip(got["grads"], want["grads"]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got["layer"]


_IMAGES = _rs.randn(2, 6, 7, 4).astype(np.float32)
_SEQUENCES = _rs.randn(2, 7, 4).astype(np.float32)


@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 3},
        {"kernel_size": (2, 3), "strides": (2, 1), "padding": "SAME"},
        {"kernel_size": 3, "dilation_rate": 2, "padding": "same"},
        {"kernel_size": 2, "use_bias": False, "activation": "relu"},
        {"kernel_size": 3, "groups": 2, "padding": "same", "activation": "tanh"},
    ],
    ids=str,
)
def test_conv2d_matches_keras(options):
    check_layer(lambda tf: tf.keras.layers.Conv2D(6, name="conv2d", **options), _IMAGES)


@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 3, "padding": "same", "strides": 2},
        {"kernel_size": 3, "padding": "causal", "dilation_rate": 2},
        {"kernel_size": 2, "padding": "causal", "strides": 2, "use_bias": False},
        {"kernel_size": (2,), "dilation_rate": 3, "activation": "sigmoid"},
    ],
    ids=str,
)
def test_conv1d_matches_keras(options):
    check_layer(lambda tf: tf.keras.layers.Conv1D(5, name="conv1d", **options), _SEQUENCES)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.MaxPooling2D(),
        lambda tf: tf.keras.layers.MaxPool2D(3, strides=2, padding="same"),
        lambda tf: tf.keras.layers.MaxPooling2D((2, 3), strides=(1, 2)),
        lambda tf: tf.keras.layers.AvgPool2D(3, strides=2, padding="same"),
        lambda tf: tf.keras.layers.AveragePooling2D((3, 2), strides=(1, 2), padding="same"),
        lambda tf: tf.keras.layers.GlobalAveragePooling2D(),
        lambda tf: tf.keras.layers.GlobalAveragePooling2D(keepdims=True),
    ],
    ids=["max", "max_same", "max_rect", "avg_same", "avg_rect_same", "global", "global_keepdims"],
)
def test_pooling_matches_keras(make):
    check_layer(make, _IMAGES)


@pytest.mark.parametrize(
    "ids",
    [np.array([[1, 4, 1], [0, 4, 4]], np.int32), np.array([3, -1, -5], np.int32), np.array([[1.7, 2.0]], np.float32)],
    ids=["repeats", "negative", "float_ids"],
)
def test_embedding_matches_keras_and_ids_carry_no_gradient(ids):
    # The gradient w.r.t. the table is TensorFlow's IndexedSlices densified; the ids' is None.
    check_layer(lambda tf: tf.keras.layers.Embedding(5, 3, name="embedding"), ids)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"axis": [1, -1]},  # Keras reads gamma (4, 3) into axes (3, 4) by a reshape
        {"axis": 1, "epsilon": 0.1, "center": False},
        {"scale": False, "axis": (-2,)},
        {"center": False, "scale": False},
    ],
    ids=str,
)
def test_layer_normalization_matches_keras(options):
    x = _rs.randn(2, 3, 4).astype(np.float32)
    layer = check_layer(lambda tf: tf.keras.layers.LayerNormalization(name="layer_normalization", **options), x)
    assert (layer.gamma is None, layer.beta is None) == (
        not options.get("scale", True),
        not options.get("center", True),
    )


def test_default_names_are_keras_and_unique():
    def names(tf):
        makers = [
            lambda: tf.keras.layers.Conv2D(1, 1),
            lambda: tf.keras.layers.Conv1D(1, 1),
            lambda: tf.keras.layers.MaxPooling2D(),
            lambda: tf.keras.layers.MaxPool2D(),
            lambda: tf.keras.layers.AveragePooling2D(2),
            lambda: tf.keras.layers.AvgPool2D(2),
            lambda: tf.keras.layers.GlobalAveragePooling2D(),
            lambda: tf.keras.layers.Embedding(2, 2),
            lambda: tf.keras.layers.LayerNormalization(),
        ]
        out = []
        for make in makers:
            first, second = make().name, make().name
            base = re.sub(r"_\d+$", "", first)
            assert first != second and re.fullmatch(re.escape(base) + r"_\d+", second), (first, second)
            out.append(base)
        return out

    assert names(gtf) == names(tf_real)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda tf: tf.keras.layers.Conv2D(64, 3), (1, 5, 5, 16)),
        (lambda tf: tf.keras.layers.Conv1D(64, 5), (1, 7, 16)),
        (lambda tf: tf.keras.layers.Embedding(200, 100), None),
    ],
    ids=["conv2d_glorot", "conv1d_glorot", "embedding_uniform"],
)
def test_default_initializers_have_keras_distributions(make, shape):
    # Keras' glorot_uniform fans count a convolution's window (fan_in = kh * kw * in); the
    # Embedding's 'uniform' is [-0.05, 0.05].
    def stats(tf):
        tf.keras.utils.set_random_seed(0)
        layer = make(tf)
        layer(tf.ones(shape) if shape else tf.constant([0, 1]))
        w = layer.weights[0].numpy()
        return np.round([w.mean(), w.std(), w.min(), w.max()], 2)

    np.testing.assert_allclose(stats(gtf), stats(tf_real), atol=0.011)


def test_tf_function_training_step_compiles_once_and_matches_keras():
    k_conv = _rs.randn(3, 3, 2, 4).astype(np.float32) * 0.3
    k_dense = _rs.randn(4, 1).astype(np.float32) * 0.3
    xs = [_rs.randn(2, 6, 6, 2).astype(np.float32) for _ in range(3)]
    ys = [_rs.randn(2, 1).astype(np.float32) for _ in range(3)]

    def program(tf):
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Conv2D(
                    4,
                    3,
                    padding="same",
                    activation="relu",
                    kernel_initializer=lambda shape, dtype=None: tf.constant(k_conv),
                ),
                tf.keras.layers.MaxPooling2D(),
                tf.keras.layers.LayerNormalization(),
                tf.keras.layers.GlobalAveragePooling2D(),
                tf.keras.layers.Dense(1, kernel_initializer=lambda shape, dtype=None: tf.constant(k_dense)),
            ]
        )
        opt = tf.keras.optimizers.SGD(0.1)
        model(tf.constant(xs[0]))  # build outside the compiled step

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        losses = []
        for x, y in zip(xs, ys):
            losses.append(step(tf.constant(x), tf.constant(y)))
            if tf is gtf:
                traces.append(step.trace_count)
        return [losses, model.trainable_variables]

    traces = []
    run_both(program)
    # gradkit's first call traces to find the Variables the step reads, then compiles the
    # step; the calls after it, with the same shapes, trace and compile nothing.
    assert traces[0] <= 2 and traces == [traces[0]] * 3, traces


def test_options_gradkit_does_not_implement_raise():
    layers = gtf.keras.layers
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*lora_rank=2"):
        layers.Conv2D(2, 3, lora_rank=2)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*rms_scaling"):
        layers.LayerNormalization(rms_scaling=True)
    with pytest.raises(TypeError, match=r"\[gradkit\].*float32"):
        layers.Conv2D(2, 3, dtype="float16")
    with pytest.raises(ValueError, match=r"\[gradkit\].*batch_input_shape"):
        layers.Conv2D(2, 3, batch_input_shape=(1, 4, 4, 1))
    # The defaults of what gradkit.tf leaves out are fine.
    layers.Conv2D(2, 3, kernel_regularizer=None, data_format="channels_last", dtype="float32")
    layers.Embedding(4, 2, mask_zero=False, weights=None)


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.keras.layers.Conv2D(3, 2, groups=2),  # filters not divisible by groups
        lambda tf: tf.keras.layers.Conv2D(4, 2, groups=2)(tf.ones([1, 3, 3, 3])),  # nor channels
        lambda tf: tf.keras.layers.Conv2D(2, 2, strides=2, dilation_rate=2),
        lambda tf: tf.keras.layers.Conv2D(2, 2, padding="causal"),
        lambda tf: tf.keras.layers.Conv2D(2, (2, 2, 2)),
        lambda tf: tf.keras.layers.Conv2D(0, 2),
        lambda tf: tf.keras.layers.MaxPooling2D(0),
        lambda tf: tf.keras.layers.Conv2D(2, 2, foo=1),
        lambda tf: tf.keras.layers.Conv2D(2, 2)(tf.ones([4, 4, 2])),
        lambda tf: tf.keras.layers.MaxPooling2D()(tf.ones([1, 2, 4, 4, 2])),
        lambda tf: tf.keras.layers.Embedding(0, 3),
        lambda tf: tf.keras.layers.LayerNormalization(axis=1.0),
    ],
    ids=[
        "filters_groups",
        "channels_groups",
        "strides_and_dilation",
        "causal_2d",
        "kernel_rank",
        "zero_filters",
        "zero_pool",
        "unknown_kwarg",
        "conv_rank",
        "pool_rank",
        "embedding_dim",
        "layer_norm_axis_type",
    ],
)
def test_bad_arguments_raise_as_in_keras(program):
    # run_both checks that gradkit raises the builtin class Keras raises; the message is gradkit's.
    error = run_both(program)
    assert isinstance(error, Exception) and str(error).startswith("[gradkit]"), error


def test_a_built_layer_refuses_another_input_size():
    def program(tf):
        layer = tf.keras.layers.Conv2D(2, 2)
        layer(tf.ones([1, 4, 4, 2]))
        return layer(tf.ones([1, 4, 4, 3]))

    error = run_both(program)
    assert re.search(r"\[gradkit\].*2 channels.*\(1, 4, 4, 3\)", str(error))


def test_embedding_refuses_an_index_outside_the_table():
    def program(tf):
        return tf.keras.layers.Embedding(5, 3)(tf.constant([1, 5]))

    error = run_both(program)  # TensorFlow: InvalidArgumentError
    assert re.search(r"\[gradkit\].*index 5 is not in \[-5, 5\)", str(error))


def test_layer_normalization_refuses_an_axis_outside_the_input():
    # Keras raises an IndexError from deep inside build; gradkit names the axis and the shape.
    with pytest.raises(ValueError, match=r"\[gradkit\].*axis=3.*\(2, 3\)"):
        gtf.keras.layers.LayerNormalization(axis=3)(gtf.ones([2, 3]))
