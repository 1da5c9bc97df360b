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
SEED = 0
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
    ``train(tf, models)`` runs under each module and the results are compared. TensorFlow's
    initial weights come from a fixed seed: from its global generator they would depend on the
    tests run before in the process, and a weight whose gradient happens to be near zero moves
    by a rounding-sized ratio in Adam's first steps."""
    tf_real.keras.utils.set_random_seed(SEED)
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


# -- CVAE (tensorflow.org/tutorials/generative/cvae) ----------------------------------------------

LATENT_DIM = 2
_BINARY = (_rs.rand(STEPS, BATCH, 8, 8, 1) > 0.5).astype(np.float32)  # binarized images
_EPS = _rs.randn(STEPS, BATCH, LATENT_DIM).astype(np.float32)  # reparameterize's draws, as data


def cvae_class(tf):
    class CVAE(tf.keras.Model):
        """Convolutional variational autoencoder."""

        def __init__(self, latent_dim):
            super().__init__()
            self.latent_dim = latent_dim
            self.encoder = tf.keras.Sequential(
                [
                    tf.keras.layers.InputLayer(input_shape=(8, 8, 1)),
                    tf.keras.layers.Conv2D(filters=4, kernel_size=3, strides=(2, 2), activation="relu"),
                    tf.keras.layers.Conv2D(filters=4, kernel_size=3, strides=(2, 2), activation="relu"),
                    tf.keras.layers.Flatten(),
                    # No activation
                    tf.keras.layers.Dense(latent_dim + latent_dim),
                ]
            )
            self.decoder = tf.keras.Sequential(
                [
                    tf.keras.layers.InputLayer(input_shape=(latent_dim,)),
                    tf.keras.layers.Dense(units=2 * 2 * 4, activation=tf.nn.relu),
                    tf.keras.layers.Reshape(target_shape=(2, 2, 4)),
                    tf.keras.layers.Conv2DTranspose(
                        filters=4, kernel_size=3, strides=2, padding="same", activation="relu"
                    ),
                    tf.keras.layers.Conv2DTranspose(
                        filters=4, kernel_size=3, strides=2, padding="same", activation="relu"
                    ),
                    # No activation
                    tf.keras.layers.Conv2DTranspose(filters=1, kernel_size=3, strides=1, padding="same"),
                ]
            )

        def sample(self, eps):
            return self.decode(eps, apply_sigmoid=True)

        def encode(self, x):
            mean, logvar = tf.split(self.encoder(x), num_or_size_splits=2, axis=1)
            return mean, logvar

        def reparameterize(self, mean, logvar, eps):
            return eps * tf.exp(logvar * 0.5) + mean

        def decode(self, z, apply_sigmoid=False):
            logits = self.decoder(z)
            if apply_sigmoid:
                probs = tf.sigmoid(logits)
                return probs
            return logits

    return CVAE


def cvae_train_step(tf, optimizer):
    def log_normal_pdf(sample, mean, logvar, raxis=1):
        log2pi = tf.math.log(2.0 * np.pi)
        return tf.reduce_sum(-0.5 * ((sample - mean) ** 2.0 * tf.exp(-logvar) + logvar + log2pi), axis=raxis)

    def compute_loss(model, x, eps):
        mean, logvar = model.encode(x)
        z = model.reparameterize(mean, logvar, eps)
        x_logit = model.decode(z)
        cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=x_logit, labels=x)
        logpx_z = -tf.reduce_sum(cross_ent, axis=[1, 2, 3])
        logpz = log_normal_pdf(z, 0.0, 0.0)
        logqz_x = log_normal_pdf(z, mean, logvar)
        return -tf.reduce_mean(logpx_z + logpz - logqz_x)

    @tf.function
    def train_step(model, x, eps):
        with tf.GradientTape() as tape:
            loss = compute_loss(model, x, eps)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss, gradients

    return train_step


def test_cvae_tutorial_matches_tensorflow_and_compiles_once():
    def build(tf):
        model = cvae_class(tf)(LATENT_DIM)
        assert len(model.encoder.layers) == 4 and len(model.decoder.layers) == 5  # InputLayer not listed
        return [model]

    def train(tf, models):
        (model,) = models
        step = cvae_train_step(tf, tf.keras.optimizers.Adam(1e-2))
        history = _steps_compile_once(
            tf, step, *[(model, tf.constant(x), tf.constant(e)) for x, e in zip(_BINARY, _EPS)]
        )
        return [history, model.get_weights(), model.sample(tf.constant(_EPS[0]))]

    run_ported(build, train)


# -- WGAN-GP gradient penalty (a second derivative through convolutions) -------------------------

_FAKE = np.tanh(_rs.randn(BATCH, 8, 8, 1)).astype(np.float32)
_ALPHA = _rs.rand(STEPS, BATCH, 1, 1, 1).astype(np.float32)  # tf.random.uniform([batch, 1, 1, 1]), as data


def make_critic(tf):
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8, 8, 1)),
            tf.keras.layers.Conv2D(4, 3, strides=2, padding="same"),
            tf.keras.layers.LeakyReLU(negative_slope=0.2),
            tf.keras.layers.Conv2D(4, 3, strides=2, padding="same"),
            tf.keras.layers.LeakyReLU(negative_slope=0.2),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(1),
        ]
    )


def wgan_gp_critic_step(tf, critic, optimizer, gp_weight=10.0):
    @tf.function
    def critic_step(real, fake, alpha):
        with tf.GradientTape() as tape:
            interpolated = real + alpha * (fake - real)
            with tf.GradientTape() as gp_tape:
                gp_tape.watch(interpolated)
                pred = critic(interpolated, training=True)
            grads = gp_tape.gradient(pred, [interpolated])[0]
            norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
            gp = tf.reduce_mean((norm - 1.0) ** 2)
            fake_logits = critic(fake, training=True)
            real_logits = critic(real, training=True)
            d_loss = tf.reduce_mean(fake_logits) - tf.reduce_mean(real_logits) + gp_weight * gp
        d_gradient = tape.gradient(d_loss, critic.trainable_variables)
        optimizer.apply_gradients(zip(d_gradient, critic.trainable_variables))
        return d_loss, gp, d_gradient

    return critic_step


def test_wgan_gp_critic_step_matches_tensorflow_and_compiles_once():
    def build(tf):
        return [make_critic(tf)]

    def train(tf, models):
        (critic,) = models
        step = wgan_gp_critic_step(tf, critic, tf.keras.optimizers.Adam(1e-3, beta_1=0.5, beta_2=0.9))
        args = [(tf.constant(_IMAGES), tf.constant(_FAKE), tf.constant(alpha)) for alpha in _ALPHA]
        return [_steps_compile_once(tf, step, *args), critic.get_weights()]

    run_ported(build, train)
