"""TensorFlow's "quickstart for experts" custom training loop, under ``import gradkit.tf as tf``.

A subclassed ``tf.keras.Model`` (Conv2D, Flatten, Dense), ``SparseCategoricalCrossentropy``,
Adam, ``Mean``/``SparseCategoricalAccuracy`` metrics, and ``@tf.function`` train and test
steps with ``tf.GradientTape``: the TensorFlow program text, on synthetic 8x8 images. Every
step's loss and the final weights are checked against a pure-JAX rewrite of the same training
(convolution, softmax cross-entropy and Keras' Adam update written out by hand); the compiled
step must not be traced again after its first call. Exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

rng = np.random.default_rng(0)
images = rng.normal(size=(16, 8, 8, 1)).astype(np.float32)
labels = rng.integers(0, 3, size=16).astype(np.int32)
BATCHES = [(images[i : i + 8], labels[i : i + 8]) for i in (0, 8)]
EPOCHS = 3


class MyModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="relu")
        self.flatten = tf.keras.layers.Flatten()
        self.d1 = tf.keras.layers.Dense(16, activation="relu")
        self.d2 = tf.keras.layers.Dense(3)

    def call(self, x):
        x = self.conv1(x)
        x = self.flatten(x)
        x = self.d1(x)
        return self.d2(x)


model = MyModel()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
test_loss = tf.keras.metrics.Mean(name="test_loss")


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(labels, predictions)
    return loss


@tf.function
def test_step(images, labels):
    predictions = model(images, training=False)
    test_loss(loss_object(labels, predictions))


model(BATCHES[0][0])  # one call makes the layers' weights (Keras 3's build() alone does not)
initial_weights = [np.asarray(w) for w in model.get_weights()]  # kernel, bias of each layer

losses, traces_after_first_step = [], None
for epoch in range(EPOCHS):
    train_loss.reset_state()
    train_accuracy.reset_state()
    test_loss.reset_state()
    for x, y in BATCHES:
        losses.append(float(train_step(x, y)))
        if traces_after_first_step is None:
            traces_after_first_step = train_step.experimental_get_tracing_count()
    for x, y in BATCHES:
        test_step(x, y)
    print(
        f"epoch {epoch + 1}: loss {float(train_loss.result()):.4f}, "
        f"accuracy {float(train_accuracy.result()) * 100:.1f}%, test loss {float(test_loss.result()):.4f}"
    )


# The pure-JAX rewrite: the same network, loss and Keras Adam, from the same initial weights.
def forward(params, x):
    k1, b1, k2, b2, k3, b3 = params
    h = jax.lax.conv_general_dilated(x, k1, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h + b1).reshape(x.shape[0], -1)
    h = jax.nn.relu(h @ k2 + b2)
    return h @ k3 + b3


def pure_loss(params, x, y):
    logits = forward(params, x)
    return jnp.mean(-jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def keras_adam(params, grads, m, v, step, lr=0.01, b1=0.9, b2=0.999, eps=1e-7):
    t = step + 1
    alpha = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
    m = [mi + (g - mi) * (1 - b1) for mi, g in zip(m, grads)]
    v = [vi + (g * g - vi) * (1 - b2) for vi, g in zip(v, grads)]
    params = [p - alpha * mi / (jnp.sqrt(vi) + eps) for p, mi, vi in zip(params, m, v)]
    return params, m, v


params = [jnp.asarray(w) for w in initial_weights]
m = [jnp.zeros_like(p) for p in params]
v = [jnp.zeros_like(p) for p in params]
want_losses = []
for step in range(EPOCHS * len(BATCHES)):
    x, y = BATCHES[step % len(BATCHES)]
    loss, grads = jax.value_and_grad(pure_loss)(params, x, y)
    want_losses.append(float(loss))
    params, m, v = keras_adam(params, grads, m, v, step)

ok = np.allclose(losses, want_losses, rtol=1e-4, atol=1e-5)
ok &= all(np.allclose(np.asarray(w), p, rtol=1e-4, atol=1e-5) for w, p in zip(model.get_weights(), params))
ok &= train_step.experimental_get_tracing_count() == traces_after_first_step
print("losses, gradkit.tf:", np.round(losses, 5).tolist())
print("losses, pure JAX:  ", np.round(want_losses, 5).tolist())
print("train_step traced", train_step.experimental_get_tracing_count(), "times in all (none after its first call)")
print("agrees with the pure-JAX rewrite" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
