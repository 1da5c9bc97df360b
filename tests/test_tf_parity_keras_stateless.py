"""Keras 3's ``layer.stateless_call``: outputs from weights given as values, the updated
non-trainable values, the losses, and gradients to the values given (a MAML step on fast weights,
differentiated through the inner gradient). Oracles: a hand derivation, a pure-JAX rewrite of
the MAML step, and real Keras on TensorFlow where it is installed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

TFS = [pytest.param("gk", id="gradkit"), pytest.param("tf", id="tensorflow")]
X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
Y = np.ones((4, 1), np.float32)


def _tf(which):
    return gtf if which == "gk" else pytest.importorskip("tensorflow")


def _mlp(tf, **dense):
    model = tf.keras.Sequential(
        [tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="tanh", **dense), tf.keras.layers.Dense(1)]
    )
    model.set_weights([np.linspace(-1, 1, w.size, dtype=np.float32).reshape(w.shape) for w in model.get_weights()])
    return model


def _jax_maml(weights, lr=0.1):
    def loss(w):
        h = jnp.tanh(X @ w[0] + w[1][None, :])
        return jnp.mean((h @ w[2] + w[3][None, :] - Y) ** 2)

    def outer(w):
        g = jax.grad(loss)(w)
        return loss([wi - lr * gi for wi, gi in zip(w, g)])

    return outer(weights), jax.grad(outer)(weights)


@pytest.mark.parametrize("which", TFS)
def test_a_maml_step_on_fast_weights(which):
    tf = _tf(which)
    model = _mlp(tf)
    before = model.get_weights()
    x, y = tf.constant(X), tf.constant(Y)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            out, _ = model.stateless_call(model.trainable_variables, model.non_trainable_variables, x)
            loss = tf.reduce_mean((out - y) ** 2)
        grads = inner.gradient(loss, model.trainable_variables)
        fast = [v - 0.1 * g for v, g in zip(model.trainable_variables, grads)]
        out, _ = model.stateless_call(fast, [], x)
        meta_loss = tf.reduce_mean((out - y) ** 2)
    meta_grads = outer.gradient(meta_loss, model.trainable_variables)
    want_loss, want_grads = _jax_maml([jnp.asarray(w) for w in before])
    np.testing.assert_allclose(meta_loss.numpy(), want_loss, rtol=1e-5)
    for got, want in zip(meta_grads, want_grads):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-6)
    for got, want in zip(model.get_weights(), before):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("which", TFS)
def test_non_trainable_values_come_back_updated_and_the_layer_keeps_its_own(which):
    tf = _tf(which)
    layer = tf.keras.layers.BatchNormalization(momentum=0.5)
    x = tf.constant(X)
    layer(x)  # built, its statistics 0 and 1
    gamma, beta = (v.numpy() for v in layer.trainable_variables)
    out, (mean, variance) = layer.stateless_call(
        [gamma * 2, beta + 1], [np.ones(3, np.float32), np.ones(3, np.float32)], x, training=True
    )
    np.testing.assert_allclose(mean.numpy(), 0.5 + 0.5 * X.mean(0), rtol=1e-6)
    np.testing.assert_allclose(variance.numpy(), 0.5 + 0.5 * X.var(0), rtol=1e-5)
    normalized = (X - X.mean(0)) / np.sqrt(X.var(0) + layer.epsilon)
    np.testing.assert_allclose(out.numpy(), normalized * 2 + 1, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(layer.moving_mean.numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(layer.moving_variance.numpy(), np.ones(3, np.float32))


@pytest.mark.parametrize("which", TFS)
def test_losses_are_those_of_the_values_given(which):
    tf = _tf(which)
    model = _mlp(tf, kernel_regularizer=tf.keras.regularizers.l2(0.1))
    kernel = model.trainable_variables[0].numpy()
    values = [v.numpy() for v in model.trainable_variables]
    values[0] = kernel * 3
    _, _, losses = model.stateless_call(values, [], tf.constant(X), return_losses=True)
    np.testing.assert_allclose(float(tf.add_n(losses)), 0.1 * np.sum((kernel * 3) ** 2), rtol=1e-5)
    np.testing.assert_allclose(float(tf.add_n(model.losses)), 0.1 * np.sum(kernel**2), rtol=1e-5)


@pytest.mark.parametrize("which", TFS)
def test_wrong_lengths_and_an_unbuilt_layer_are_refused(which):
    tf = _tf(which)
    layer = tf.keras.layers.Dense(2)
    with pytest.raises(ValueError, match="built"):
        layer.stateless_call([], [], tf.constant(X))
    layer(tf.constant(X))
    with pytest.raises(ValueError, match="trainable_variables"):
        layer.stateless_call([layer.kernel], [], tf.constant(X))


def test_a_failed_call_leaves_the_layer_as_it_was():
    class Failing(gtf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(3,), initializer="ones")

        def call(self, x):
            self.add_loss(tf_sum(x))
            raise RuntimeError("boom")

    tf_sum = gtf.reduce_sum
    layer = Failing()
    layer.build((4, 3))
    with pytest.raises(RuntimeError, match="boom"):
        layer.stateless_call([np.zeros(3, np.float32)], [], gtf.constant(X))
    np.testing.assert_array_equal(layer.w.numpy(), np.ones(3, np.float32))
    assert layer.losses == []


def test_an_sgd_step_on_values_leaves_the_optimizer_and_the_variables_as_they_were():
    w = gtf.Variable([1.0, 2.0])
    optimizer = gtf.keras.optimizers.SGD(0.5)
    optimizer.build([w])
    state = [v.numpy() for v in optimizer.variables]  # iterations, learning rate
    (new_w,), new_state = optimizer.stateless_apply(
        state, [gtf.constant([2.0, -4.0])], [np.array([3.0, 3.0], np.float32)]
    )
    np.testing.assert_allclose(new_w.numpy(), [3.0 - 0.5 * 2.0, 3.0 + 0.5 * 4.0])
    assert int(new_state[0]) == 1
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert int(optimizer.iterations.numpy()) == 0


def test_a_jax_style_loop_matches_keras_stepping_its_variables():
    """stateless_call, a tape, optimizer.stateless_apply and metric.stateless_update_state for
    three steps, against the same loop on real Keras's Variables (Keras on TensorFlow refuses
    stateless_apply itself: its optimizer steps the Variables set to the same values)."""
    tf = pytest.importorskip("tensorflow")

    def loop(tf):
        model = tf.keras.Sequential(
            [
                tf.keras.Input((3,)),
                tf.keras.layers.Dense(4, activation="tanh"),
                tf.keras.layers.BatchNormalization(),
                tf.keras.layers.Dense(1),
            ]
        )
        model.set_weights([np.linspace(-1, 1, w.size, dtype=np.float32).reshape(w.shape) for w in model.get_weights()])
        optimizer, metric = tf.keras.optimizers.Adam(0.1), tf.keras.metrics.Mean()
        optimizer.build(model.trainable_variables)
        trainable = [v.numpy() for v in model.trainable_variables]
        non_trainable = [v.numpy() for v in model.non_trainable_variables]
        optimizer_state, metric_state = [v.numpy() for v in optimizer.variables], [v.numpy() for v in metric.variables]
        before = [v.numpy() for v in model.weights]
        losses = []
        for _ in range(3):
            values = [tf.constant(v) for v in trainable]
            with tf.GradientTape() as tape:
                tape.watch(values)
                out, non_trainable = model.stateless_call(values, non_trainable, tf.constant(X), training=True)
                loss = tf.reduce_mean((out - tf.constant(Y)) ** 2)
            grads = tape.gradient(loss, values)
            if tf is gtf:
                trainable, optimizer_state = optimizer.stateless_apply(optimizer_state, grads, trainable)
            else:
                for v, value in zip(model.trainable_variables + optimizer.variables, trainable + optimizer_state):
                    v.assign(value)
                optimizer.apply(grads)
                trainable = [v.numpy() for v in model.trainable_variables]
                optimizer_state = [v.numpy() for v in optimizer.variables]
                for v, value in zip(model.weights, before):
                    v.assign(value)
            metric_state = metric.stateless_update_state(metric_state, loss)
            losses.append(float(loss))
        return losses, trainable, optimizer_state, float(metric.stateless_result(metric_state))

    ours, theirs = loop(gtf), loop(tf)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-4)
    for a, b in zip(ours[1] + ours[2], theirs[1] + theirs[2]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours[3], np.mean(theirs[0]), rtol=1e-5)


@pytest.mark.parametrize("which", TFS)
def test_metric_state_as_values(which):
    tf = _tf(which)
    metric = tf.keras.metrics.Mean()
    metric.update_state(10.0)
    state = metric.stateless_update_state([np.float32(0.0), np.float32(0.0)], tf.constant([1.0, 2.0, 6.0]))
    np.testing.assert_allclose([float(v) for v in state], [9.0, 3.0])
    assert float(metric.stateless_result(state)) == 3.0
    assert [float(v) for v in metric.stateless_reset_state()] == [0.0, 0.0]
    assert float(metric.result()) == 10.0  # its own state untouched
    with pytest.raises(ValueError, match="metric_variables"):
        metric.stateless_update_state([np.float32(0.0)], 1.0)
