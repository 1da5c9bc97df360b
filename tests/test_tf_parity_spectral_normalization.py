"""``tf.keras.layers.SpectralNormalization`` and ``Wrapper`` against real Keras 3 (weights,
power iteration, outputs, configs, weights files), and the gradient through its kernel
assignment against a pure-JAX rewrite of spectral normalization. Also: another layer's weight
held as an attribute (tied weights) is tracked as Keras tracks it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 4)).astype("float32")
KERNEL = RNG.normal(size=(4, 3)).astype("float32")
BIAS = RNG.normal(size=(3,)).astype("float32")
U = RNG.normal(size=(1, 3)).astype("float32") * 0.02
IMAGES = RNG.normal(size=(2, 5, 5, 2)).astype("float32")
CONV_KERNEL = RNG.normal(size=(3, 3, 2, 4)).astype("float32")


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    # `h @ kernel + bias` broadcasts by rank as TensorFlow does; the suite's strict rank-promotion
    # mode is for gradkit's own internals.
    with jax.numpy_rank_promotion("allow"):
        yield


def _paths(variables):
    return [v.path for v in variables]


def _dense_sn(tf, power_iterations=2, kernel=KERNEL):
    dense = tf.keras.layers.Dense(
        3,
        kernel_initializer=tf.keras.initializers.Constant(kernel),
        bias_initializer=tf.keras.initializers.Constant(BIAS),
        name="d",
    )
    layer = tf.keras.layers.SpectralNormalization(dense, power_iterations=power_iterations, name="sn")
    layer(X)
    layer.vector_u.assign(U)
    return layer


def p_dense_weights_and_training_steps(tf):
    layer = _dense_sn(tf)
    out = [_paths(layer.weights), _paths(layer.trainable_weights), _paths(layer.non_trainable_weights)]
    out.append(layer(X))  # inference: the kernel as it is
    for _ in range(3):
        out += [layer(X, training=True), layer.vector_u, layer.kernel, layer.layer.kernel]
    return out


def p_one_power_iteration(tf):
    layer = _dense_sn(tf, power_iterations=1)
    return [layer(X, training=True), layer.vector_u, layer.kernel]


def p_conv2d_in_a_model(tf):
    conv = tf.keras.layers.Conv2D(4, 3, kernel_initializer=tf.keras.initializers.Constant(CONV_KERNEL))
    layer = tf.keras.layers.SpectralNormalization(conv)
    model = tf.keras.Sequential([tf.keras.Input((5, 5, 2)), layer])
    layer.vector_u.assign(np.linspace(-0.03, 0.02, 4, dtype="float32")[None])
    first = model(IMAGES, training=True)
    return [
        first,
        model(IMAGES),
        layer.vector_u,
        tuple(layer.vector_u.shape),
        [str(tuple(w.shape)) for w in model.weights],
    ]


def p_embedding_output_cast_to_the_ids_dtype(tf):
    table = np.arange(15, dtype="float32").reshape(5, 3) / 4
    # Named: auto-generated layer names are numbered process-wide, differently in each framework.
    embedding = tf.keras.layers.Embedding(
        5, 3, embeddings_initializer=tf.keras.initializers.Constant(table), name="embedding"
    )
    layer = tf.keras.layers.SpectralNormalization(embedding, name="sn")
    ids = np.array([[1, 4]], "int32")
    out = layer(ids)
    return [out, str(out.dtype.name), _paths(layer.weights)]


def p_all_zero_kernel_left_as_it_is(tf):
    layer = _dense_sn(tf, kernel=np.zeros((4, 3), "float32"))
    return [layer(X, training=True), layer.vector_u, layer.kernel]


def p_inside_tf_function(tf):
    layer = _dense_sn(tf)

    @tf.function
    def step(x):
        return layer(x, training=True)

    return [step(X), step(X), layer.vector_u, layer.kernel]


def p_config(tf):
    layer = _dense_sn(tf)
    config = layer.get_config()
    facts = [config["power_iterations"], config["layer"]["class_name"]]
    remade = tf.keras.layers.SpectralNormalization.from_config(config)
    return [*facts, remade.power_iterations, remade.layer.units]


def p_refuses_a_layer_without_a_kernel(tf):
    return tf.keras.layers.SpectralNormalization(tf.keras.layers.ReLU())(X)


def p_refuses_zero_power_iterations(tf):
    return tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(2), power_iterations=0)


def p_wrapper_refuses_a_non_layer(tf):
    return tf.keras.layers.Wrapper(3)


def p_wrapper_subclass(tf):
    class Doubled(tf.keras.layers.Wrapper):
        def call(self, inputs):
            return 2.0 * self.layer(inputs)

    layer = Doubled(
        tf.keras.layers.Dense(3, kernel_initializer=tf.keras.initializers.Constant(KERNEL), name="d"), name="doubled"
    )
    out = layer(X)
    return [
        out,
        _paths(layer.weights),
        sorted(layer.get_config()),
        isinstance(tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(1)), tf.keras.layers.Wrapper),
    ]


def _tied(tf):
    class Tied(tf.keras.layers.Layer):
        """A decoder using its encoder's kernel, transposed (tied weights)."""

        def __init__(self, encoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder = encoder

        def build(self, shape):
            self.kernel = self.encoder.kernel  # held as an attribute: one of this layer's weights in Keras
            self.bias = self.add_weight(shape=(4,), initializer="ones", name="bias")

        def call(self, h):
            return h @ tf.transpose(self.kernel) + self.bias

    encoder = tf.keras.layers.Dense(3, kernel_initializer=tf.keras.initializers.Constant(KERNEL), name="enc")
    inputs = tf.keras.Input((4,))
    outputs = Tied(encoder, name="dec")(encoder(inputs))
    return tf.keras.Model(inputs, outputs), encoder


def p_tied_weight_held_as_an_attribute(tf):
    model, _ = _tied(tf)
    decoder = model.layers[-1]
    return [_paths(decoder.weights), _paths(model.weights), _paths(model.trainable_weights), model(X)]


@pytest.mark.parametrize("writer", ["tf", "gk"])
def test_weights_files_cross_load(writer, tmp_path):
    libraries = {"tf": tf_real, "gk": gtf}
    path = str(tmp_path / "sn.weights.h5")
    written = libraries[writer].keras.Sequential([libraries[writer].keras.Input((4,)), _dense_sn(libraries[writer])])
    written.layers[0](X, training=True)  # a normalized kernel and a new vector_u to save
    written.save_weights(path)
    for reader in ("tf", "gk"):
        model = libraries[reader].keras.Sequential([libraries[reader].keras.Input((4,)), _dense_sn(libraries[reader])])
        model.load_weights(path)
        for read, wrote in zip(model.weights, written.weights):
            np.testing.assert_array_equal(np.asarray(read.numpy()), np.asarray(wrote.numpy()))


@pytest.mark.parametrize("writer", ["tf", "gk"])
def test_tied_weights_files_cross_load(writer, tmp_path):
    libraries = {"tf": tf_real, "gk": gtf}
    path = str(tmp_path / "tied.weights.h5")
    written, encoder = _tied(libraries[writer])
    encoder.kernel.assign(KERNEL[::-1].copy())
    written.save_weights(path)
    for reader in ("tf", "gk"):
        model, _ = _tied(libraries[reader])
        model.load_weights(path)
        np.testing.assert_allclose(np.asarray(model(X)), np.asarray(written(X)), rtol=1e-6)


def _spectral_normalization_oracle(kernel, vector_u, bias, power_iterations):
    """Miyato et al.'s spectral normalization, written in JAX: ``u`` and ``v`` held constant."""
    weights = kernel.reshape(-1, kernel.shape[-1])
    u = vector_u
    for _ in range(power_iterations):
        v = u @ weights.T
        v = v / jnp.linalg.norm(v)
        u = v @ weights
        u = u / jnp.linalg.norm(u)
    u, v = jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)
    sigma = (v @ weights @ u.T).reshape(())
    return jnp.sum(jnp.tanh(X @ (kernel / sigma) + bias) ** 2)


@pytest.mark.parametrize("compiled", [False, True])
def test_gradient_through_the_kernel_assignment(compiled):
    layer = _dense_sn(gtf)

    def loss_and_gradient():
        with gtf.GradientTape() as tape:
            loss = gtf.reduce_sum(gtf.tanh(layer(X, training=True)) ** 2)
        return loss, tape.gradient(loss, [layer.kernel, layer.layer.bias, layer.vector_u])

    loss, (d_kernel, d_bias, d_u) = (gtf.function(loss_and_gradient) if compiled else loss_and_gradient)()
    expected_loss = _spectral_normalization_oracle(KERNEL, U, BIAS, 2)
    d_kernel_expected, d_bias_expected = jax.grad(_spectral_normalization_oracle, argnums=(0, 2))(KERNEL, U, BIAS, 2)
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    np.testing.assert_allclose(d_kernel.numpy(), d_kernel_expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(d_bias.numpy(), d_bias_expected, rtol=1e-4, atol=1e-6)
    assert d_u is None  # u enters only through stop_gradient: unconnected, as TensorFlow says it


def test_refusals_leave_the_wrapped_layer_unchanged():
    dense = gtf.keras.layers.Dense(2)
    with pytest.raises(ValueError, match=r"\[gradkit\].*power_iterations"):
        gtf.keras.layers.SpectralNormalization(dense, power_iterations=0)
    with pytest.raises(ValueError, match=r"\[gradkit\].*neither a 'kernel' nor an 'embeddings'"):
        gtf.keras.layers.SpectralNormalization(gtf.keras.layers.ReLU())(X)
    assert not dense.built


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
