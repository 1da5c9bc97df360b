"""Keras' own training loop, ``compile``/``fit``/``evaluate``, under ``import gradkit.tf as tf``.

A Sequential regression model trained with ``model.fit`` (SGD, mean squared error, a mean
absolute error metric, a validation split, early stopping), then evaluated: the Keras program
text. Every epoch's logged loss, the validation loss and the final weights are checked against
a pure-JAX rewrite of the same training (the same batches, the gradient by ``jax.grad``, the
SGD step written out). Exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(50, 3)).astype(np.float32)
y = (np.sin(x) @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
EPOCHS, BATCH, LR = 4, 10, 0.1

model = tf.keras.Sequential(
    [tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)]
)
model.compile(optimizer=tf.keras.optimizers.SGD(LR), loss="mse", metrics=["mae"])
initial = [np.array(w) for w in model.get_weights()]
history = model.fit(
    x,
    y,
    batch_size=BATCH,
    epochs=EPOCHS,
    validation_split=0.2,  # the last 10 examples
    shuffle=False,
    callbacks=[tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2)],
    verbose=2,
)
print("evaluate [loss, mae]:", model.evaluate(x, y, verbose=0))


# ---- the same training in pure JAX ----------------------------------------------------------
def predict(params, xb):
    w1, b1, w2, b2 = params
    return jnp.tanh(xb @ w1 + b1) @ w2 + b2


def mse(params, xb, yb):
    return jnp.mean((predict(params, xb) - yb) ** 2)


params = [jnp.asarray(w) for w in initial]
x_train, y_train, x_val, y_val = x[:40], y[:40], x[40:], y[40:]
losses, val_losses = [], []
for _ in range(len(history.history["loss"])):
    batch_losses = []
    for start in range(0, len(x_train), BATCH):
        xb, yb = x_train[start : start + BATCH], y_train[start : start + BATCH]
        loss, grads = jax.value_and_grad(mse)(params, xb, yb)
        params = [p - LR * g for p, g in zip(params, grads)]
        batch_losses.append(float(loss))
    losses.append(np.mean(batch_losses))  # equal batches: Keras' size-weighted mean
    val_losses.append(float(mse(params, x_val, y_val)))

ok = np.allclose(history.history["loss"], losses, rtol=1e-5)
ok &= np.allclose(history.history["val_loss"], val_losses, rtol=1e-5)
ok &= all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(model.get_weights(), params))
print("History loss:", np.round(history.history["loss"], 5).tolist())
print("pure JAX    :", np.round(losses, 5).tolist())
print("agree" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
