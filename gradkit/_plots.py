"""The figures of seed 001 (TensorFlow's advanced-autodiff guide), drawn from gradkit.tf.

Needs matplotlib (``pip install gradkit[plots]``); without it nothing is written.
"""

from __future__ import annotations

import os


def write_seed001_figures(directory: str) -> list[str]:
    """Write the guide's figures as PNG files into ``directory``; return their paths."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figures written (pip install 'gradkit[plots]').")
        return []
    import gradkit.tf as tf

    tf.keras.utils.set_random_seed(0)
    written = []

    def save(name):
        path = os.path.join(directory, name)
        plt.savefig(path)
        plt.close()
        written.append(path)

    def imshow_zero_center(image, **kwargs):
        lim = tf.reduce_max(abs(image))
        plt.imshow(image, vmin=-lim, vmax=lim, cmap="seismic", **kwargs)
        plt.colorbar()

    def plot_as_patches(j):
        # Reorder axes so the diagonals will each form a contiguous patch.
        j = tf.transpose(j, [1, 0, 3, 2])
        lim = tf.reduce_max(abs(j))
        j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
        s = j.shape
        j = tf.reshape(j, [s[0] * s[1], s[2] * s[3]])
        imshow_zero_center(j, extent=[-0.5, s[2] - 0.5, s[0] - 0.5, -0.5])

    # A scalar source: the sigmoid and its derivative.
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    plt.figure()
    plt.plot(x.numpy(), y.numpy(), label="y")
    plt.plot(x.numpy(), dy_dx.numpy(), label="dy/dx")
    plt.legend()
    plt.xlabel("x")
    save("sigmoid_and_derivative.png")

    # The Hessian of a two-layer network's loss with respect to the first kernel.
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            h = layer2(layer1(x))
            loss = tf.reduce_mean(h**2)
        g = t1.gradient(loss, layer1.kernel)
    hessian = t2.jacobian(g, layer1.kernel)
    n_params = tf.reduce_prod(layer1.kernel.shape)
    plt.figure()
    imshow_zero_center(tf.reshape(hessian, [n_params, n_params]))
    plt.title("Hessian")
    save("hessian.png")

    # Batch Jacobians: independent examples give diagonal (batch, batch) slices ...
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(layer1(x))
    plt.figure()
    plot_as_patches(tape.jacobian(y, x))
    plt.title("All (batch, batch) slices are diagonal")
    save("batch_jacobian_patches.png")

    # ... BatchNormalization in training mode mixes the batch: they are not.
    bn = tf.keras.layers.BatchNormalization()
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer2(bn(layer1(x), training=True))
    plt.figure()
    plot_as_patches(tape.jacobian(y, x))
    plt.title("These slices are not diagonal")
    plt.xlabel("Don't use `batch_jacobian`")
    save("batch_jacobian_batchnorm.png")
    return written
