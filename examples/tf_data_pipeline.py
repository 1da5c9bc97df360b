"""A ``tf.data`` input pipeline feeding Keras' ``fit``, under ``import gradkit.tf as tf``.

The TensorFlow program text: ``from_tensor_slices`` -> ``shuffle`` -> ``map`` (standardize the
features, cast the targets) -> ``batch`` -> ``prefetch``, and a small regression model fit on it
for a few epochs of SGD. The shuffle is seeded by ``tf.random.set_seed``, so a twin pipeline made
after the same seed, keeping each example's index, gives the same order every epoch: the pure-JAX
oracle reads from it which examples each batch holds (each epoch a new permutation), standardizes
and batches them by hand and steps SGD with ``jax.grad``. The logged losses and the final weights
must agree. Exits non-zero on a mismatch.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import gradkit.tf as tf

rng = np.random.default_rng(0)
features = rng.normal(loc=3.0, scale=2.0, size=(60, 3))  # float64, as NumPy makes them
targets = (np.sin(features) @ np.array([1.0, -2.0, 0.5]))[:, None]
MEAN, STD = features.mean(axis=0).astype(np.float32), features.std(axis=0).astype(np.float32)
EPOCHS, BATCH, LR = 3, 16, 0.05


def pipeline(keep_index=False):
    ds = tf.data.Dataset.from_tensor_slices((features, targets, np.arange(len(features))))
    ds = ds.shuffle(buffer_size=len(features))  # a new order each epoch
    if keep_index:
        return ds.map(lambda x, y, i: i).batch(BATCH)
    ds = ds.map(lambda x, y, i: ((tf.cast(x, tf.float32) - MEAN) / STD, tf.cast(y, tf.float32)))
    return ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)


tf.random.set_seed(1)
train = pipeline()
print("element_spec:", train.element_spec)
model = tf.keras.Sequential(
    [tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(8, activation="tanh"), tf.keras.layers.Dense(1)]
)
model.compile(optimizer=tf.keras.optimizers.SGD(LR), loss="mse")
initial = [np.array(w) for w in model.get_weights()]
# shuffle=False: Keras ignores fit's shuffle for a dataset (and warns when it is True); the dataset shuffles itself.
history = model.fit(train, epochs=EPOCHS, shuffle=False, verbose=2)


# ---- the same training in pure JAX ----------------------------------------------------------
tf.random.set_seed(1)
twin = pipeline(keep_index=True)
orders = [np.concatenate([batch.numpy() for batch in twin]) for _ in range(EPOCHS)]


def mse(params, xb, yb):
    w1, b1, w2, b2 = params
    return jnp.mean((jnp.tanh(xb @ w1 + b1) @ w2 + b2 - yb) ** 2)


params = [jnp.asarray(w) for w in initial]
x_all = ((features - MEAN) / STD).astype(np.float32)
losses = []
for order in orders:
    total = 0.0
    for start in range(0, len(order), BATCH):
        index = order[start : start + BATCH]
        loss, grads = jax.value_and_grad(mse)(params, x_all[index], targets[index].astype(np.float32))
        params = [p - LR * g for p, g in zip(params, grads)]
        total += float(loss) * len(index)
    losses.append(total / len(order))  # Keras' loss: the mean over examples

ok = all(sorted(order.tolist()) == list(range(len(features))) for order in orders)
ok &= not np.array_equal(orders[0], orders[1])  # reshuffled each epoch
ok &= np.allclose(history.history["loss"], losses, rtol=1e-5)
ok &= all(np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(model.get_weights(), params))
print("History loss:", np.round(history.history["loss"], 5).tolist())
print("pure JAX    :", np.round(losses, 5).tolist())
print("agree" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
