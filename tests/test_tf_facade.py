"""gradkit.tf against independent pure-JAX rewrites, including where TensorFlow returns None."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as tf


def close(a, b, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


def test_assignment_is_exact_where_tf_returns_none():
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as tape:
        c.assign(a + b)
        loss = tf.reduce_mean(c**2)
    ga, gb, gc = tape.gradient(loss, [a, b, c])
    want = jax.grad(lambda a, b: (a + b) ** 2, argnums=(0, 1))(1.0, 2.0)
    close(ga, want[0])
    close(gb, want[1])
    assert gc is None


def test_maml_meta_gradient_and_learned_learning_rate():
    w, lr = tf.Variable(1.5), tf.Variable(0.1)
    opt = tf.keras.optimizers.SGD(learning_rate=lr)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            inner_loss = (w * 3.0 - 2.0) ** 2
        g = inner.gradient(inner_loss, w)
        opt.apply_gradients(zip([g], [w]))
        meta = (w * 1.0 - 4.0) ** 2
    dw, dlr = outer.gradient(meta, [w, lr])

    def jax_meta(w0, lr):
        g = jax.grad(lambda w: (w * 3.0 - 2.0) ** 2)(w0)
        return (w0 - lr * g - 4.0) ** 2

    close(dw, jax.grad(jax_meta, 0)(1.5, 0.1))
    close(dlr, jax.grad(jax_meta, 1)(1.5, 0.1))


def keras_adam(lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    """Keras' documented Adam update, by hand: (init, step(grads, state, params) -> (params, state))."""

    def init(params):
        return 0, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params]

    def step(grads, state, params):
        t, ms, vs = state
        t += 1
        alpha = lr * np.sqrt(1 - beta_2**t) / (1 - beta_1**t)
        ms = [m + (g - m) * (1 - beta_1) for g, m in zip(grads, ms)]
        vs = [v + (g * g - v) * (1 - beta_2) for g, v in zip(grads, vs)]
        params = [p - m * alpha / (jnp.sqrt(v) + epsilon) for p, m, v in zip(params, ms, vs)]
        return params, (t, ms, vs)

    return init, step


def test_adam_matches_keras_update():
    w = tf.Variable([1.0, -2.0])
    opt = tf.keras.optimizers.Adam(learning_rate=0.1)
    init, step = keras_adam(0.1)
    p = [jnp.array([1.0, -2.0])]
    state = init(p)
    for _ in range(3):
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(1e-6 * w**2)  # small gradients: epsilon's placement shows
        opt.apply_gradients(zip([t.gradient(loss, w)], [w]))
        p, state = step([2e-6 * p[0]], state, p)
    close(w.numpy(), p[0])


def test_meta_gradient_through_keras_optimizer_steps():
    # apply_gradients inside an outer tape: the meta-gradient goes through the optimizer's
    # update (small gradients, where Adam's update depends on them most), as jax.grad of the
    # hand-written update says.
    c, d = np.array([3e-8, 5e-8], np.float32), np.array([2.0, 3.0], np.float32)

    def pure_adam(w0):
        init, step = keras_adam(0.1)
        (w,), _ = step([2 * c * w0], init([w0]), [w0])
        return jnp.sum(w * d)

    def pure_sgd(w0):
        return jnp.sum((w0 - 0.1 * 2 * (c * 1e7) * w0) * d)

    for opt, scale, pure in [
        (tf.keras.optimizers.Adam(0.1), 1.0, pure_adam),
        (tf.keras.optimizers.SGD(0.1, momentum=0.9), 1e7, pure_sgd),
    ]:
        w = tf.Variable([1.0, 0.5])
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                inner_loss = tf.reduce_sum(tf.constant(c * scale) * w**2)
            opt.apply_gradients(zip([inner.gradient(inner_loss, w)], [w]))
            meta = tf.reduce_sum(w * tf.constant(d))
        close(outer.gradient(meta, w), jax.grad(pure)(jnp.array([1.0, 0.5])), rtol=1e-4)


def test_meta_gradient_through_adam_with_an_exactly_zero_gradient_is_finite():
    # The second parameter's gradient is exactly 0 (v = 0): its update is 0 whatever w[1] is,
    # so d meta / d w[1] = d[1] by hand; the first is jax.grad of the hand-written update.
    c, d = np.array([1e-7, 0.0], np.float32), np.array([2.0, 3.0], np.float32)
    w = tf.Variable([1.0, 0.5])
    opt = tf.keras.optimizers.Adam(0.1)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner_loss = tf.reduce_sum(tf.constant(c) * w**2)
        opt.apply_gradients(zip([inner.gradient(inner_loss, w)], [w]))
        meta = tf.reduce_sum(w * tf.constant(d))
    got = np.asarray(outer.gradient(meta, w))

    def first(w0):
        init, step = keras_adam(0.1)
        (new,), _ = step([2 * c[0] * w0], init([w0]), [w0])
        return new * d[0]

    close(got, [jax.grad(first)(jnp.float32(1.0)), d[1]], rtol=1e-4)


def test_unknown_optimizer_options_raise_instead_of_being_ignored():
    with pytest.raises(ValueError, match=r"\[gradkit\].*gradient_accumulation_step"):
        tf.keras.optimizers.SGD(0.1, gradient_accumulation_step=4)  # Keras' is ..._steps
    tf.keras.optimizers.Adam(0.1, loss_scale_factor=None, use_ema=False)  # the defaults are fine


def test_batchnorm_update_is_exact_under_tape():
    x = tf.constant(np.arange(12.0).reshape(4, 3))
    bn = tf.keras.layers.BatchNormalization()
    bn(x, training=False)  # build
    g = tf.Variable(bn.gamma.numpy()[None, :])
    with tf.GradientTape() as t:
        t.watch(bn.moving_mean)
        bn(x * g, training=True)
        loss = tf.reduce_sum(bn.moving_mean)
    want = jax.grad(lambda g: jnp.sum(0.01 * jnp.mean(jnp.arange(12.0).reshape(4, 3) * g, axis=0)))(jnp.ones((1, 3)))
    close(t.gradient(loss, g), want)


def test_function_compiles_once_and_is_differentiable():
    v = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)], jit_compile=True, reduce_retracing=True)
    def f(x):
        return tf.math.sin(v * x)

    for i in range(5):
        f(tf.constant(float(i)))
    assert f.trace_count <= 2
    with tf.GradientTape() as t:
        y = f(tf.constant(3.0))
    close(t.gradient(y, v), 3.0 * np.cos(6.0))


def test_custom_gradient_with_variables():
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy, variables=None):
            return dy * 10.0, [dy * 100.0]

        return x * w, grad

    with tf.GradientTape() as t:
        y = f(tf.constant(3.0))
    close(t.gradient(y, w), 100.0)


def test_complex_convention_is_tensorflows():
    z = tf.Variable(tf.constant(1.0 + 2.0j, dtype=tf.complex64))
    with tf.GradientTape() as t:
        y = tf.math.real(z * tf.math.conj(z))
    g = t.gradient(y, z)
    assert complex(g) == pytest.approx(complex(np.conj(jax.grad(lambda z: jnp.real(z * jnp.conj(z)))(1.0 + 2.0j))))


def test_unknown_attribute_error():
    with pytest.raises(AttributeError, match=r"\[gradkit\].*gk.lift"):
        tf.no_such_op  # noqa: B018
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        tf.math.no_such_op  # noqa: B018


def test_ops_return_tensors_and_shapes():
    assert tf.eye(2, 3, batch_shape=[4]).shape == (4, 2, 3)
    assert tf.Variable(tf.zeros([2, 3])).shape.as_list() == [2, 3]
    assert tf.reduce_sum([tf.constant(1.0), tf.Variable(2.0)]).numpy() == 3.0
    assert tf.linalg.diag(tf.ones([2, 3])).shape == (2, 3, 3)
    out = tf.vectorized_map(lambda e: tf.reduce_sum(e**2), tf.ones([4, 3]))
    close(out, np.full(4, 3.0))
    close(tf.nest.flatten({"b": tf.constant(1.0), "a": [tf.Variable(2.0)]}), [2.0, 1.0])


def test_saved_model_roundtrip(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 2])])
        def f(self, x):
            return tf.reduce_sum(x**2, axis=1)

    tf.saved_model.save(M(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(loaded.f(x))
    close(t.gradient(y, x), 2 * x.numpy())


def test_gradkit_nn_functional_api():
    import gradkit as gk
    from gradkit import nn

    nn.set_seed(1)
    model = nn.Dense(2, activation="tanh")
    x = jnp.ones((3, 4))
    model(x)
    grads = gk.grad(lambda x: jnp.sum(model(x) ** 2), wrt=model.trainable_variables)(x)
    k, b = model.kernel.value, model.bias.value
    want = jax.grad(lambda k, b: jnp.sum(jnp.tanh(x @ k + b[None]) ** 2), argnums=(0, 1))(k, b)
    close(grads[0], want[0])
    close(grads[1], want[1])


def test_tf_function_training_step_with_adam_matches_keras_and_compiles_once():
    """Optimizer slots are Variables: a compiled step threads them, as tf.function does."""
    import jax
    import jax.numpy as jnp

    tf.keras.utils.set_random_seed(0)
    l1, l2 = tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)
    opt = tf.keras.optimizers.Adam(0.01)
    x = np.random.default_rng(0).standard_normal((16, 5)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((16, 3)).astype(np.float32)
    l2(l1(x))  # build the layers
    variables = l1.trainable_variables + l2.trainable_variables
    initial = [v.numpy() for v in variables]

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((l2(l1(x)) - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    losses = [float(step(x, y)) for _ in range(20)]

    def loss_fn(params):
        k1, b1, k2, b2 = params
        return jnp.mean((jnp.maximum(x @ k1 + b1[None], 0.0) @ k2 + b2[None] - y) ** 2)

    init, adam_step = keras_adam(0.01)
    params, want = [jnp.asarray(p) for p in initial], []
    state = init(params)
    for _ in range(20):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        params, state = adam_step(grads, state, params)
        want.append(float(loss))
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    for v, p in zip(variables, params):
        np.testing.assert_allclose(v.numpy(), p, rtol=1e-4, atol=1e-6)
    assert int(opt.iterations.numpy()) == 20
    assert step.trace_count <= 2  # one trace to find the Variables it reads, then the compiled step


def test_constants_and_variables_copy_numpy_inputs():
    # As in TensorFlow: a later write into the NumPy array changes neither.
    src = np.ones((64, 64), np.float32)
    c, v = tf.constant(src), tf.Variable(src)
    v2 = tf.Variable(tf.zeros([64, 64]))
    v2.assign(src)
    src[:] = 5.0
    for t in (c, v, v2):
        np.testing.assert_array_equal(t.numpy(), np.ones((64, 64), np.float32))


def test_a_numpy_array_keeps_its_dtype_and_python_numbers_get_tensorflows_defaults():
    # jax.enable_x64 is new in jax 0.8; jax.experimental.enable_x64 is the same before it.
    if hasattr(jax, "enable_x64"):
        enable_x64 = jax.enable_x64
    else:
        from jax.experimental import enable_x64
    with enable_x64(True):
        x = tf.Variable(np.array([3.0, 1.0]))  # float64, as in TensorFlow
        with tf.GradientTape() as t:
            y = tf.reduce_sum(x**2)
        assert x.dtype == np.float64 and t.gradient(y, x).dtype == np.float64
        assert tf.constant(np.array([1, 2])).dtype == np.int64
        assert tf.constant([1.0, 2.0]).dtype == np.float32 and tf.constant(3).dtype == np.int32
