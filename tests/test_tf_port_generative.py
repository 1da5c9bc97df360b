"""TensorFlow's generative-model tutorials (DCGAN, CVAE) and the WGAN-GP gradient penalty,
ported unchanged to gradkit.tf and run against real TensorFlow 2.21 / Keras 3 as the oracle.

Each program is the tutorial's text at tiny sizes (noise and random draws passed in as data, so
both modules see the same numbers). Both modules build the models, gradkit's get TensorFlow's
initial weights by ``set_weights``, then losses, gradients and weights after a few optimizer
steps in ``tf.function`` are compared. The gradkit steps are also checked to compile once.
"""

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import _np  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    # Keras 3 warns about the tutorials' legacy input_shape= arguments; gradkit.tf warns the same.
    "ignore:Do not pass an `input_shape`:UserWarning",
    "ignore:Argument `input_shape` is deprecated:UserWarning",
)

_rs = np.random.RandomState(0)
NOISE_DIM, BATCH, STEPS = 8, 3, 3
_IMAGES = np.tanh(_rs.randn(BATCH, 8, 8, 1)).astype(np.float32)  # in [-1, 1], as the tutorial's
_NOISE = _rs.randn(STEPS, BATCH, NOISE_DIM).astype(np.float32)


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    # Tutorial code broadcasts by rank as TensorFlow does; the suite's strict rank-promotion mode
    # is for gradkit's own internals.
    with jax.numpy_rank_promotion("allow"):
        yield


def _close(a, b, rtol=2e-4, atol=2e-5):
    """Values compared as in test_tf_parity, with room for float32 summation order over a few
    Adam steps of convolutions."""
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
    else:
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def run_ported(build, train):
    """``build(tf)`` makes the models; gradkit's get TensorFlow's initial weights; then
    ``train(tf, models)`` runs under each module and the results are compared."""
    tf_models = build(tf_real)
    gk_models = build(gtf)
    for tf_model, gk_model in zip(tf_models, gk_models):
        assert [tuple(v.shape) for v in gk_model.weights] == [tuple(v.shape) for v in tf_model.weights]
        assert [tuple(v.shape) for v in gk_model.trainable_weights] == [
            tuple(v.shape) for v in tf_model.trainable_weights
        ]
        gk_model.set_weights(tf_model.get_weights())
    expected = train(tf_real, tf_models)
    got = train(gtf, gk_models)
    _close(expected, got)
    return got


# -- DCGAN (tensorflow.org/tutorials/generative/dcgan) --------------------------------------------


def make_generator_model(tf):
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Dense(2 * 2 * 4, use_bias=False, input_shape=(NOISE_DIM,)))
    model.add(tf.keras.layers.BatchNormalization())
    model.add(tf.keras.layers.LeakyReLU())

    model.add(tf.keras.layers.Reshape((2, 2, 4)))
    assert model.output_shape == (None, 2, 2, 4) if tf is tf_real else True  # (gradkit: no output_shape)

    model.add(tf.keras.layers.Conv2DTranspose(4, (5, 5), strides=(1, 1), padding="same", use_bias=False))
    model.add(tf.keras.layers.BatchNormalization())
    model.add(tf.keras.layers.LeakyReLU())

    model.add(tf.keras.layers.Conv2DTranspose(4, (5, 5), strides=(2, 2), padding="same", use_bias=False))
    model.add(tf.keras.layers.BatchNormalization())
    model.add(tf.keras.layers.LeakyReLU())

    model.add(
        tf.keras.layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh")
    )
    return model


def make_discriminator_model(tf, dropout=0.3):
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Conv2D(4, (5, 5), strides=(2, 2), padding="same", input_shape=[8, 8, 1]))
    model.add(tf.keras.layers.LeakyReLU())
    model.add(tf.keras.layers.Dropout(dropout))

    model.add(tf.keras.layers.Conv2D(4, (5, 5), strides=(2, 2), padding="same"))
    model.add(tf.keras.layers.LeakyReLU())
    model.add(tf.keras.layers.Dropout(dropout))

    model.add(tf.keras.layers.Flatten())
    model.add(tf.keras.layers.Dense(1))
    return model


def dcgan_train_step(tf, generator, discriminator, traces=None, learning_rate=1e-4):
    cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def discriminator_loss(real_output, fake_output):
        real_loss = cross_entropy(tf.ones_like(real_output), real_output)
        fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
        return real_loss + fake_loss

    def generator_loss(fake_output):
        return cross_entropy(tf.ones_like(fake_output), fake_output)

    generator_optimizer = tf.keras.optimizers.Adam(learning_rate)
    discriminator_optimizer = tf.keras.optimizers.Adam(learning_rate)

    @tf.function
    def train_step(images, noise):
        if traces is not None:
            traces.append(1)
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated_images = generator(noise, training=True)

            real_output = discriminator(images, training=True)
            fake_output = discriminator(generated_images, training=True)

            gen_loss = generator_loss(fake_output)
            disc_loss = discriminator_loss(real_output, fake_output)

        gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
        gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

        generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
        discriminator_optimizer.apply_gradients(zip(gradients_of_discriminator, discriminator.trainable_variables))
        return gen_loss, disc_loss, gradients_of_generator, gradients_of_discriminator

    return train_step


def _steps_compile_once(tf, step, *args_per_step):
    """Run the steps; under gradkit, those after the first neither trace nor compile."""
    results = [step(*args_per_step[0])]
    first = step.trace_count if tf is gtf else None
    rest = lambda: [step(*args) for args in args_per_step[1:]]  # noqa: E731
    if tf is gtf:
        compiles = count_compiles(lambda: results.extend(jax.block_until_ready(_np(rest()))))
        assert (compiles, step.trace_count) == (0, first), "a same-shaped step traced or compiled again"
    else:
        results.extend(rest())
    return results


# Kernel shapes repeat across the layers (4 channels throughout): gradkit draws initial weights
# eagerly, compiling once per shape, and a small test should not spend its time there.


def test_dcgan_tutorial_matches_tensorflow_and_compiles_once():
    def build(tf):
        # Dropout at rate 0 keeps the comparison deterministic (the masks are checked below).
        return make_generator_model(tf), make_discriminator_model(tf, dropout=0.0)

    def train(tf, models):
        generator, discriminator = models
        generated = generator(tf.constant(_NOISE[0]), training=False)  # the tutorial's untrained look
        decision = discriminator(generated)
        step = dcgan_train_step(tf, generator, discriminator)
        history = _steps_compile_once(tf, step, *[(tf.constant(_IMAGES), tf.constant(noise)) for noise in _NOISE])
        return [generated, decision, history, generator.get_weights(), discriminator.get_weights()]

    run_ported(build, train)


def test_dcgan_discriminator_step_draws_fresh_dropout_masks():
    discriminator = make_discriminator_model(gtf, dropout=0.3)
    optimizer = gtf.keras.optimizers.Adam(0.0)  # weights stay: only the masks change
    cross_entropy = gtf.keras.losses.BinaryCrossentropy(from_logits=True)

    @gtf.function
    def step(images):
        with gtf.GradientTape() as tape:
            output = discriminator(images, training=True)
            loss = cross_entropy(gtf.ones_like(output), output)
        optimizer.apply_gradients(
            zip(tape.gradient(loss, discriminator.trainable_variables), discriminator.trainable_variables)
        )
        return loss

    losses = [float(step(gtf.constant(_IMAGES)).numpy()) for _ in range(3)]
    assert len(set(losses)) == 3, losses  # a mask baked in at trace time would repeat the loss
