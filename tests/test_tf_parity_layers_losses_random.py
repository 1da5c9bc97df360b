"""gradkit.tf's Keras layers, tf.nn losses, tf.Module and tf.random against real TensorFlow."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_LOGITS = _rs.randn(2, 3, 4).astype(np.float32)
_SOFT = np.abs(_rs.randn(2, 3, 4)).astype(np.float32)  # sums to one along no axis


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_cross_entropy_gradients_are_tensorflows_for_labels_not_summing_to_one(axis):
    # TensorFlow's gradient with respect to the logits is softmax - labels (exact only for labels
    # summing to one); gradkit gave the exact sum(labels) * softmax - labels.
    def program(tf):
        labels, logits = tf.Variable(_SOFT), tf.Variable(_LOGITS)
        with tf.GradientTape() as tape:
            loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis)
        return [loss, *tape.gradient(loss, [labels, logits])]

    run_both(program)


def test_softmax_cross_entropy_second_order_matches_tensorflow():
    def program(tf):
        logits = tf.Variable([[1.0, 2.0, 3.0]])
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = tf.nn.softmax_cross_entropy_with_logits(labels=[[0.2, 0.3, 0.9]], logits=logits)
            g = inner.gradient(loss, logits)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, logits)

    run_both(program)


def test_softmax_cross_entropy_mixed_second_order_is_that_of_its_gradient():
    # The gradient with respect to the logits is TensorFlow's softmax(logits) - labels, so its
    # derivative with respect to trainable labels is -I by hand (TensorFlow's registered
    # second-order gradient leaves the labels out and gives 0). The labels' gradient is
    # -log_softmax(logits), whose derivative with respect to the logits is -(I - softmax), as in
    # TensorFlow and jax (tests/test_tf_parity_softmax_xent_second_order.py compares them).
    logits = gtf.Variable([[0.5, -1.0, 2.0]])
    labels = gtf.Variable([[0.2, 0.3, 0.6]])  # summing to 1.1: the correction is live
    with gtf.GradientTape(persistent=True) as outer:
        with gtf.GradientTape(persistent=True) as inner:
            loss = gtf.reduce_sum(gtf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        by_logits = inner.gradient(loss, logits)
        by_labels = inner.gradient(loss, labels)
        first_logit, first_label = by_logits[0, 0], by_labels[0, 0]
    softmax = np.exp([0.5, -1.0, 2.0]) / np.exp([0.5, -1.0, 2.0]).sum()
    np.testing.assert_allclose(by_logits.numpy(), [softmax - [0.2, 0.3, 0.6]], rtol=1e-6)
    np.testing.assert_allclose(outer.gradient(first_logit, labels).numpy(), [[-1.0, 0.0, 0.0]], atol=1e-7)
    np.testing.assert_allclose(outer.gradient(first_label, logits).numpy(), [softmax - [1.0, 0.0, 0.0]], atol=1e-6)
    assert outer.gradient(first_label, labels) is None  # the labels' gradient does not depend on them


@pytest.mark.parametrize("labels", [[3, 0], [-1, 0]])
def test_sparse_softmax_cross_entropy_refuses_labels_outside_the_classes(labels):
    # gradkit gave NaN silently; TensorFlow raises.
    with pytest.raises(ValueError, match=r"\[gradkit\].*valid range"):
        gtf.nn.sparse_softmax_cross_entropy_with_logits(labels=gtf.constant(labels), logits=gtf.ones([2, 3]))


def test_sparse_softmax_cross_entropy_refuses_labels_of_the_wrong_shape():
    run_both(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=tf.ones([2, 3, 4])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape"):
        gtf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=gtf.ones([2, 3, 4]))


def test_sigmoid_cross_entropy_refuses_labels_of_another_shape():
    # gradkit broadcast labels (2, 1) against logits (2, 3) silently; TensorFlow raises ValueError.
    run_both(lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2, 1]), logits=tf.ones([2, 3])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*same shape"):
        gtf.nn.sigmoid_cross_entropy_with_logits(labels=gtf.ones([2, 1]), logits=gtf.ones([2, 3]))


_X = _rs.randn(4, 3, 5).astype(np.float32)


@pytest.mark.parametrize(
    "options",
    [
        {"center": False, "scale": False},
        {"center": False, "momentum": 0.5},
        {"scale": False, "epsilon": 0.1},
        {"axis": 1},
        {"axis": 1, "gamma_initializer": "random_uniform"},
        {"axis": [1]},
        {"gamma_initializer": "zeros", "beta_initializer": "ones", "moving_variance_initializer": "zeros"},
    ],
    ids=str,
)
def test_batch_normalization_options_match_keras(options):
    # center, scale and the initializers were swallowed by **kwargs and ignored; axis other
    # than -1 raised.
    def program(tf):
        tf.keras.utils.set_random_seed(0)
        bn = tf.keras.layers.BatchNormalization(**options)
        x = tf.constant(_X)
        with tf.GradientTape() as tape:
            y = bn(x, training=True)
            loss = tf.reduce_sum(y * x)
        grads = tape.gradient(loss, bn.trainable_variables)
        stats = [bn.moving_mean, bn.moving_variance, bn(x, training=False)]
        if "random" in str(options):  # values differ from Keras' draws; shapes must not
            y, grads, stats = y.shape.as_list(), [g.shape.as_list() for g in grads], stats[:1]
        names = [v.name.split("/")[-1].split(":")[0] for v in bn.variables]
        return [y, grads, stats, names, bn.gamma is None, bn.beta is None]

    run_both(program)


def test_batch_normalization_refuses_keras_options_it_does_not_implement():
    with pytest.raises(TypeError, match=r"\[gradkit\].*renorm=True"):
        gtf.keras.layers.BatchNormalization(renorm=True)
    gtf.keras.layers.BatchNormalization(renorm=False, beta_regularizer=None)  # the defaults are fine


@pytest.mark.parametrize("init", ["random_normal", "random_uniform"])
def test_dense_initializer_names_have_keras_defaults(init):
    # gradkit.tf took gradkit.nn's: stddev 1 and [0, 1), where Keras' are stddev 0.05 and [-0.05, 0.05].
    def program(tf):
        tf.keras.utils.set_random_seed(0)
        layer = tf.keras.layers.Dense(200, kernel_initializer=init, bias_initializer=init)
        layer(tf.ones([1, 300]))
        k = layer.kernel.numpy()
        return [np.round([k.mean(), k.std(), k.min(), k.max()], 2)]

    out = {name: program(tf)[0] for name, tf in (("tf", tf_real), ("gk", gtf))}
    # The extremes of normal draws are themselves random; only a uniform's are its bounds.
    compared = slice(None) if init == "random_uniform" else slice(0, 2)
    np.testing.assert_allclose(out["gk"][compared], out["tf"][compared], atol=0.011)


def test_dense_takes_a_keras_style_initializer_callable():
    # Keras calls init(shape, dtype=...); gradkit called it with (key, shape, dtype): TypeError.
    def program(tf):
        layer = tf.keras.layers.Dense(2, kernel_initializer=lambda shape, dtype=None: 3 * tf.ones(shape))
        return layer(tf.ones([1, 4]))

    run_both(program)


def test_dense_without_bias_has_bias_none_and_refuses_another_input_size():
    def program(tf):
        layer = tf.keras.layers.Dense(2, use_bias=False)
        layer(tf.ones([1, 3]))
        return [layer.bias is None, len(layer.variables)]

    run_both(program)
    layer = gtf.keras.layers.Dense(2)
    layer(gtf.ones([1, 3]))

    def twice(tf):
        layer = tf.keras.layers.Dense(2)
        return [layer(tf.ones([1, 3])), layer(tf.ones([1, 4]))]

    run_both(twice)  # both raise ValueError
    with pytest.raises(ValueError, match=r"\[gradkit\].*3 features.*\(1, 4\)"):
        layer(gtf.ones([1, 4]))


def test_sequential_names_are_unique_as_in_keras():
    def program(tf):
        names = [tf.keras.Sequential().name, tf.keras.Sequential().name]
        return [names[1] == names[0] + "_1" or names[1].rsplit("_", 1)[0] == names[0].rsplit("_", 1)[0]]

    assert run_both(program) == [True]
    a, b = gtf.keras.Sequential(), gtf.keras.Sequential()
    assert a.name != b.name and b.name.startswith("sequential_")


@pytest.mark.parametrize(
    "draw",
    [
        lambda tf, m, s, lo, hi: tf.random.normal([4], mean=m, stddev=s),
        lambda tf, m, s, lo, hi: tf.random.truncated_normal([4], mean=m, stddev=s),
        lambda tf, m, s, lo, hi: tf.random.uniform([4], lo, hi),
    ],
    ids=["normal", "truncated_normal", "uniform"],
)
def test_random_draws_differentiate_through_tensor_parameters(draw):
    # gradkit raised (a jax call on a recorded tensor, or a Variable jax cannot take); TensorFlow
    # computes standard * stddev + mean (u * (maxval - minval) + minval), so a tape sees them.
    def program(tf):
        tf.random.set_seed(0)
        m, s, lo, hi = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(-1.0), tf.Variable(3.0)
        with tf.GradientTape() as tape:
            y = draw(tf, m, s, lo, hi)
        grads = tape.gradient(y, [m, s, lo, hi])
        # d/dmean and d/dminval + d/dmaxval are 4 whatever the draw; the others depend on it.
        return [
            y.shape.as_list(),
            [g is None for g in grads],
            grads[0] if grads[0] is not None else grads[2] + grads[3],
        ]

    run_both(program)


def test_an_op_seeded_draw_ignores_the_other_draws_as_in_tensorflow():
    # gradkit folded the op seed into the next global key, so a draw between set_seed and the
    # seeded one changed it (and the seeded draw moved the global sequence on).
    def program(tf):
        tf.random.set_seed(1)
        a = tf.random.normal([3], seed=5)
        tf.random.set_seed(1)
        tf.random.uniform([2])
        tf.random.normal([3], seed=7)
        b = tf.random.normal([3], seed=5)
        tf.random.set_seed(1)
        c = tf.random.normal([3])
        tf.random.set_seed(1)
        tf.random.normal([3], seed=5)
        d = tf.random.normal([3])
        return [bool(np.array_equal(a, b)), bool(np.array_equal(c, d))]

    assert run_both(program) == [True, True]


def test_set_random_seed_seeds_numpy_and_python_too():
    import random

    def program(tf):
        tf.keras.utils.set_random_seed(3)
        return [np.random.rand(2), np.asarray(random.random())]

    run_both(program)


@pytest.mark.parametrize(
    "draw",
    [
        lambda tf: tf.random.uniform([2], 0, dtype=tf.int32),
        lambda tf: tf.random.uniform([2], 3, 3, dtype=tf.int32),
        lambda tf: tf.random.normal([-1]),
    ],
    ids=["int_without_maxval", "int_empty_range", "negative_shape"],
)
def test_random_refuses_what_tensorflow_refuses(draw):
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        draw(gtf)
    with pytest.raises((ValueError, tf_real.errors.InvalidArgumentError)):
        draw(tf_real)


def test_uniform_with_minval_above_maxval_is_tensorflows_affine_map():
    # jax.random.uniform clamps to minval (every draw 2.0); TensorFlow gives u * (1 - 2) + 2.
    y = gtf.random.uniform([1000], 2.0, 1.0).numpy()
    assert 1.0 <= y.min() < 1.1 and 1.9 < y.max() <= 2.0


def test_tf_function_draws_afresh_at_each_call_and_repeats_after_set_seed():
    # gradkit drew at trace time, so every call of the compiled function gave the same numbers.
    def program(tf):
        @tf.function
        def f(x):
            return [x + tf.random.normal([2]), tf.random.uniform([2], seed=3), tf.random.normal([2], mean=x)]

        tf.random.set_seed(0)
        first = [f(tf.constant(1.0)) for _ in range(3)]
        tf.random.set_seed(0)
        again = [f(tf.constant(1.0)) for _ in range(3)]
        fresh = [not np.array_equal(first[0][i], first[1][i]) for i in range(3)]
        repeats = all(np.array_equal(a, b) for x, y in zip(first, again) for a, b in zip(x, y))
        return [fresh, repeats]

    assert run_both(program) == [[True, True, True], True]
    f = gtf.function(lambda x: x + gtf.random.normal([2]))
    for _ in range(3):
        f(gtf.constant(1.0))
    assert f.trace_count == 1


def test_tf_function_training_step_with_noise_differentiates_fresh_noise():
    w = gtf.Variable([1.0, 2.0])

    @gtf.function
    def step():
        with gtf.GradientTape() as tape:
            noisy = gtf.random.normal([2], mean=w)
            loss = gtf.reduce_sum(noisy * w)
        return tape.gradient(loss, w), noisy

    (g1, n1), (g2, n2) = step(), step()
    np.testing.assert_allclose(g1.numpy(), n1.numpy() + w.numpy(), rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), n2.numpy() + w.numpy(), rtol=1e-6)
    assert not np.array_equal(n1.numpy(), n2.numpy())


def test_a_custom_gradient_that_draws_gives_its_grad_fn_the_forwards_draw():
    # TensorFlow runs a custom_gradient's function once per call, so a grad_fn closing over a
    # draw sees the draw the forward used (the gradient of x * n is n = y / x at x = 1). gradkit
    # runs it several times (traced for the forward and for grad_fn), each drawing anew: the
    # gradient was another draw eagerly, and inside tf.function the call raised a TypeError
    # (a typed PRNG key closed over by the traced program). An op-seeded draw inside keeps
    # TensorFlow's rule: it is the op's next draw since set_seed, as outside the function.
    def program(tf):
        @tf.custom_gradient
        def noisy(x):
            n = tf.random.normal([3])
            seeded = tf.random.normal([3], seed=5)

            def grad(up):
                return up * (n + seeded)

            return x * (n + seeded), grad

        @tf.function
        def compiled(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = noisy(x)
            return y, tape.gradient(y, x)

        tf.random.set_seed(1)
        x = tf.ones([3])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = noisy(x)
        out = [bool(np.array_equal(tape.gradient(y, x), y))]
        for _ in range(2):
            y, g = compiled(x)
            out.append(bool(np.array_equal(g, y)))
        tf.random.set_seed(1)
        with tf.GradientTape() as tape:
            y = noisy(x)
        after = tf.random.normal([3], seed=5)
        tf.random.set_seed(1)
        tf.random.normal([3], seed=5)
        out.append(bool(np.array_equal(after, tf.random.normal([3], seed=5))))
        return out

    assert run_both(program) == [True, True, True, True]


def test_a_draw_inside_a_recorded_transform_inside_tf_function_differentiates():
    # A draw inside tf.vectorized_map under a tape inside tf.function: the recorded program
    # closed over the tf.function's typed PRNG key and the call raised a TypeError.
    w = gtf.Variable(2.0)

    @gtf.function
    def step(x):
        with gtf.GradientTape() as tape:
            y = gtf.vectorized_map(lambda r: r * gtf.random.normal([]) * w, x)
        return y, tape.gradient(y, w)

    y, g = step(gtf.ones([4]))
    np.testing.assert_allclose(g.numpy(), np.sum(y.numpy()) / 2.0, rtol=1e-5)


def test_a_tf_function_call_that_raises_leaves_the_random_sequence_alone():
    # gradkit's failed call used up a runtime seed, so every later call drew what the call
    # after it would have (in TensorFlow the calls after a failed one draw as if it never ran).
    def program(tf):
        # Without autograph, which this function does not need: in a full run of the suite,
        # TensorFlow's autograph once ran another function's conversion for it (a TypeError from
        # its tf__compiled).
        @tf.function(autograph=False)
        def f(x, fail):
            y = x + tf.random.normal([3])
            if fail:
                raise ValueError("boom")
            return y

        tf.random.set_seed(0)
        clean = [f(tf.zeros([3]), False) for _ in range(2)]
        tf.random.set_seed(0)
        with pytest.raises(ValueError):
            f(tf.zeros([3]), True)
        after = [f(tf.zeros([3]), False) for _ in range(2)]
        return [bool(np.array_equal(a, b)) for a, b in zip(clean, after)]

    assert run_both(program) == [True, True]


def test_module_refuses_an_invalid_name_and_has_with_name_scope():
    # gradkit accepted "bad name" and had no tf.Module.with_name_scope (AttributeError).
    run_both(lambda tf: tf.Module(name="bad name"))
    with pytest.raises(ValueError, match=r"\[gradkit\].*valid module name"):
        gtf.Module(name="bad name")

    def program(tf):
        class Scale(tf.Module):
            def __init__(self):
                super().__init__(name="scale")
                self.w = tf.Variable(2.0, name="w")

            @tf.Module.with_name_scope
            def __call__(self, x):
                self.b = tf.Variable(1.0, name="b")
                return x * self.w + self.b

        m = Scale()
        return [m(3.0), [v.name for v in m.variables], m.__call__.__name__]

    run_both(program)


def test_with_name_scope_nests_as_in_tensorflow():
    def program(tf):
        class Inner(tf.Module):
            @tf.Module.with_name_scope
            def __call__(self):
                self.v = tf.Variable(1.0, name="v")
                return self.v

        class Outer(tf.Module):
            def __init__(self):
                super().__init__(name="outer")
                self.early = Inner(name="early")

            @tf.Module.with_name_scope
            def __call__(self):
                self.late = Inner(name="late")
                return [self.early().name, self.late().name, tf.Variable(0.0).name]

        return Outer()() + [tf.Variable(0.0, name="top").name]

    run_both(program)
