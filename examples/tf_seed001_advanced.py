"""Seed 001 (TensorFlow's advanced automatic differentiation guide), ported to gradkit.tf.

Only the import differs from the guide (and random draws). Each section's numbers are
checked against an independent pure-JAX computation; exits non-zero on a mismatch.
``--plots DIR`` writes the guide's figures as PNG (needs matplotlib).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import gradkit
import gradkit.tf as tf

parser = argparse.ArgumentParser()
parser.add_argument("--plots", metavar="DIR", default=None)
args = parser.parse_args()
failures = []


def check(what, got, want, rtol=1e-5, atol=1e-5):
    ok = (got is None and want is None) or (
        got is not None and want is not None and np.allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)
    )
    print(f"[{'ok' if ok else 'MISMATCH'}] {what}")
    if not ok:
        failures.append(what)
        print(
            "   got ", None if got is None else np.asarray(got), "\n   want", None if want is None else np.asarray(want)
        )


def plt_or_none():
    if not args.plots:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots")
        return None
    os.makedirs(args.plots, exist_ok=True)
    return plt


plt = plt_or_none()
tf.keras.utils.set_random_seed(0)

# --- Controlling gradient recording: stop_recording ---------------------------------------------
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as t:
    x_sq = x * x
    with t.stop_recording():
        y_sq = y * y
    z = x_sq + y_sq
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
check("stop_recording: dz/dx", grad["x"], 4.0)
check("stop_recording: dz/dy is None", grad["y"], None)

# --- reset ----------------------------------------------------------------------------------------
x = tf.Variable(2.0)
y = tf.Variable(3.0)
reset = True
with tf.GradientTape() as t:
    y_sq = y * y
    if reset:
        # Throw out all the tape recorded so far.
        t.reset()
    z = x * x + y_sq
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
check("reset: dz/dx", grad["x"], 4.0)
check("reset: dz/dy is None", grad["y"], None)

# --- stop_gradient --------------------------------------------------------------------------------
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as t:
    y_sq = y**2
    z = x**2 + tf.stop_gradient(y_sq)
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])  # 2*x => 4
print("dz/dy:", grad["y"])
check("stop_gradient: dz/dx", grad["x"], 4.0)
check("stop_gradient: dz/dy is None", grad["y"], None)


# --- custom gradient --------------------------------------------------------------------------------
# Establish an identity operation, but clip during the gradient pass.
@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)

    return y, backward


v = tf.Variable(2.0)
with tf.GradientTape() as t:
    output = clip_gradients(v * v)
print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
with tf.GradientTape() as t:
    output = clip_gradients(v * v)
jax_clip = 2 * 2.0 * min(1.0, 0.5 / 1.0)  # d(v*v)/dv * clip_by_norm(1, 0.5)
check("custom_gradient: dv = 2.0", t.gradient(output, v), jax_clip)


# --- custom gradients in SavedModels ------------------------------------------------------------------
class MyModule(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)


model = MyModule()
with tempfile.TemporaryDirectory() as saved:
    path = os.path.join(saved, "saved_model")
    tf.saved_model.save(model, path, options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
    # Load it in a fresh process: nothing of this one (the Python closure) is reused.
    code = (
        "import gradkit.tf as tf\n"
        f"loaded = tf.saved_model.load({path!r})\n"
        "v = tf.Variable(2.0)\n"
        "with tf.GradientTape() as t:\n"
        "    output = loaded.call_custom_grad(v * v)\n"
        "print(float(t.gradient(output, v)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    print("loaded in a fresh process:", out.stdout.strip(), out.stderr.strip()[-500:])
    check("SavedModel custom gradient in a fresh process: 2.0", float(out.stdout.strip() or "nan"), 2.0)

# --- multiple tapes ---------------------------------------------------------------------------------------
x0 = tf.constant(0.0)
x1 = tf.constant(0.0)
with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
    tape0.watch(x0)
    tape1.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.sigmoid(x1)
    y = y0 + y1
    ys = tf.reduce_sum(y)
g0, g1 = tape0.gradient(ys, x0).numpy(), tape1.gradient(ys, x1).numpy()  # cos(x) => 1.0, sigmoid'(x) => 0.25
check("multiple tapes: cos(0)", g0, jnp.cos(0.0))
check("multiple tapes: sigmoid'(0)", g1, jax.grad(jax.nn.sigmoid)(0.0))

# --- higher-order gradients -------------------------------------------------------------------------------
x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = x * x * x
    # Compute the gradient inside the outer `t2` context manager
    # which means the gradient computation is differentiable as well.
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)
print("dy_dx:", dy_dx.numpy())  # 3 * x**2 => 3.0
print("d2y_dx2:", d2y_dx2.numpy())  # 6 * x => 6.0
check("higher order: dy/dx", dy_dx, jax.grad(lambda x: x**3)(1.0))
check("higher order: d2y/dx2", d2y_dx2, jax.grad(jax.grad(lambda x: x**3))(1.0))

# --- input gradient regularization ------------------------------------------------------------------------
x = tf.random.normal([7, 5])
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
with tf.GradientTape() as t2:
    # The inner tape only takes the gradient with respect to the input,
    # not the variables.
    with tf.GradientTape(watch_accessed_variables=False) as t1:
        t1.watch(x)
        y = layer(x)
        out = tf.reduce_sum(layer(x) ** 2)
    # 1. Calculate the input gradient.
    g1 = t1.gradient(out, x)
    # 2. Calculate the magnitude of the input gradient.
    g1_mag = tf.norm(g1)
# 3. Calculate the gradient of the magnitude with respect to the model.
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
print([var.shape for var in dg1_mag])
X = jnp.asarray(x.numpy())


def jax_g1_mag(k, b):
    g = jax.grad(lambda x: jnp.sum(jax.nn.relu(x @ k + b) ** 2))(X)
    return jnp.linalg.norm(g)


K, B = jnp.asarray(layer.kernel.numpy()), jnp.asarray(layer.bias.numpy())
want = jax.grad(jax_g1_mag, argnums=(0, 1))(K, B)
check("input-gradient regularisation: d|g1|/dkernel", dg1_mag[0], want[0], rtol=1e-4)
check("input-gradient regularisation: d|g1|/dbias", dg1_mag[1], want[1], rtol=1e-4)

# --- Jacobians: scalar source ---------------------------------------------------------------------------------
x = tf.linspace(-10.0, 10.0, 200 + 1)
delta = tf.Variable(0.0)
with tf.GradientTape() as tape:
    y = tf.nn.sigmoid(x + delta)
dy_dx = tape.jacobian(y, delta)
print(y.shape)
print(dy_dx.shape)
check("jacobian scalar source: sigmoid'", dy_dx, jax.vmap(jax.grad(jax.nn.sigmoid))(jnp.linspace(-10.0, 10.0, 201)))
if plt is not None:
    plt.figure()
    plt.plot(x.numpy(), y.numpy(), label="y")
    plt.plot(x.numpy(), dy_dx.numpy(), label="dy/dx")
    plt.legend()
    _ = plt.xlabel("x")
    plt.savefig(os.path.join(args.plots, "sigmoid_and_derivative.png"))
    plt.close()

# --- Jacobians: tensor source -------------------------------------------------------------------------------
x = tf.random.normal([7, 5])
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
with tf.GradientTape(persistent=True) as tape:
    y = layer(x)
print(y.shape)
print(layer.kernel.shape)
j = tape.jacobian(y, layer.kernel)
print(j.shape)
g = tape.gradient(y, layer.kernel)
print("g.shape:", g.shape)
j_sum = tf.reduce_sum(j, axis=[0, 1])
delta = tf.reduce_max(abs(g - j_sum)).numpy()
assert delta < 1e-3
print("delta:", delta)
X, K, B = (jnp.asarray(a.numpy()) for a in (x, layer.kernel, layer.bias))
check("jacobian tensor source: shape (7, 10, 5, 10)", j.shape, (7, 10, 5, 10))
check("jacobian tensor source: == jax.jacrev", j, jax.jacrev(lambda k: jax.nn.relu(X @ k + B))(K))
check("jacobian summed == gradient", j_sum, g)

# --- Hessian ----------------------------------------------------------------------------------------------------
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        x = layer1(x)
        x = layer2(x)
        loss = tf.reduce_mean(x**2)
    g = t1.gradient(loss, layer1.kernel)
h = t2.jacobian(g, layer1.kernel)
print(f"layer.kernel.shape: {layer1.kernel.shape}")
print(f"h.shape: {h.shape}")
n_params = tf.reduce_prod(layer1.kernel.shape)
g_vec = tf.reshape(g, [n_params, 1])
h_mat = tf.reshape(h, [n_params, n_params])


def imshow_zero_center(image, **kwargs):
    lim = tf.reduce_max(abs(image))
    plt.imshow(image, vmin=-lim, vmax=lim, cmap="seismic", **kwargs)
    plt.colorbar()


if plt is not None:
    plt.figure()
    imshow_zero_center(h_mat)
    plt.savefig(os.path.join(args.plots, "hessian.png"))
    plt.close()

eps = 1e-3
eye_eps = tf.eye(h_mat.shape[0]) * eps
# X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
# h_mat = ∇²f(X(k))
# g_vec = ∇f(X(k))
update = tf.linalg.solve(h_mat + eye_eps, g_vec)
# Reshape the update and apply it to the variable.
kernel_before = jnp.asarray(layer1.kernel.numpy())
_ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
check("hessian: shape (5, 8, 5, 8)", h.shape, (5, 8, 5, 8))
check("newton step applied", layer1.kernel.numpy(), kernel_before - np.reshape(update.numpy(), (5, 8)))
check(
    "newton step == solve(H + eps I, g)",
    update,
    np.linalg.solve(h_mat.numpy() + np.eye(40) * eps, g_vec.numpy()),
    rtol=1e-3,
    atol=1e-3,
)

# --- batch Jacobian ---------------------------------------------------------------------------------------------
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(x)
    y = layer1(x)
    y = layer2(y)
print(y.shape)
j = tape.jacobian(y, x)
print(j.shape)


def plot_as_patches(j):
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = tf.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch.
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    j = tf.reshape(j, [s[0] * s[1], s[2] * s[3]])
    imshow_zero_center(j, extent=[-0.5, s[2] - 0.5, s[0] - 0.5, -0.5])


if plt is not None:
    plt.figure()
    plot_as_patches(j)
    _ = plt.title("All (batch, batch) slices are diagonal")
    plt.savefig(os.path.join(args.plots, "batch_jacobian_patches.png"))
    plt.close()

j_sum = tf.reduce_sum(j, axis=2)
print(j_sum.shape)
j_select = tf.einsum("bxby->bxy", j)
print(j_select.shape)
jb = tape.batch_jacobian(y, x)
print(jb.shape)
error = tf.reduce_max(abs(jb - j_sum))
assert error < 1e-3
print(error.numpy())
X = jnp.asarray(x.numpy())
K1, B1, K2, B2 = (jnp.asarray(v.numpy()) for v in (layer1.kernel, layer1.bias, layer2.kernel, layer2.bias))
per_example = jax.vmap(jax.jacrev(lambda xi: jax.nn.elu(jax.nn.elu(xi @ K1 + B1) @ K2 + B2)))(X)
check("batch_jacobian: shape (7, 6, 5)", jb.shape, (7, 6, 5))
check("batch_jacobian == vmap(jacrev)", jb, per_example)
check("einsum diagonal == batch_jacobian", j_select, jb)

# --- batch Jacobian with BatchNormalization (examples interact) -------------------------------------------------
x = tf.random.normal([7, 5])
layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
bn = tf.keras.layers.BatchNormalization()
layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(x)
    y = layer1(x)
    y = bn(y, training=True)
    y = layer2(y)
j = tape.jacobian(y, x)
print(f"j.shape: {j.shape}")
if plt is not None:
    plt.figure()
    plot_as_patches(j)
    _ = plt.title("These slices are not diagonal")
    plt.savefig(os.path.join(args.plots, "batch_jacobian_batchnorm.png"))
    plt.close()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    # TensorFlow silently returns a (7, 6, 5) result whose contents are meaningless here;
    # gradkit returns the same and checks independence, warning that it is no per-example
    # Jacobian. check_independence=False skips the check.
    jb = tape.batch_jacobian(y, x)
for warning in caught:
    print("gradkit:", str(warning.message)[:120], "...")
print(f"jb.shape: {jb.shape}")
check(
    "batchnorm: gradkit warns that batch_jacobian is meaningless here",
    any(issubclass(w.category, gradkit.GradkitWarning) for w in caught),
    True,
)
check("batchnorm: batch_jacobian gives TF's shape", jb.shape, (7, 6, 5))
jb_unchecked = tape.batch_jacobian(y, x, check_independence=False)
check("batchnorm: the same as check_independence=False", bool(np.allclose(jb, jb_unchecked)), True)
check("batchnorm: full jacobian shape (7, 6, 7, 5)", j.shape, (7, 6, 7, 5))
X = jnp.asarray(x.numpy())
K1, B1, K2, B2 = (jnp.asarray(v.numpy()) for v in (layer1.kernel, layer1.bias, layer2.kernel, layer2.bias))
G, Be = jnp.asarray(bn.gamma.numpy()), jnp.asarray(bn.beta.numpy())


def jax_bn_net(x):
    h = jax.nn.elu(x @ K1 + B1)
    m, var = jnp.mean(h, axis=0), jnp.var(h, axis=0)
    return jax.nn.elu(((h - m) / jnp.sqrt(var + 1e-3) * G + Be) @ K2 + B2)


check("batchnorm: jacobian == jax.jacrev", j, jax.jacrev(jax_bn_net)(X), rtol=1e-4, atol=1e-5)
check(
    "batchnorm: moving_mean updated once by assignment",
    bn.moving_mean.numpy(),
    0.01 * np.mean(np.asarray(jax.nn.elu(X @ K1 + B1)), axis=0),
    rtol=1e-4,
)

print("FAILED:" if failures else "all checks passed", failures or "")
sys.exit(1 if failures else 0)
