"""Inside tf.function, TensorFlow's while_loop, map_fn, scan, foldl and foldr are one op that
reads every loop variable and element: a gradient with respect to one the results do not use
is zeros there, not None (eagerly, where the loop runs in Python, it is None in both)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit as gk  # noqa: E402
import gradkit.tf as gtf  # noqa: E402

X = np.array([[0.46, -1.15, 1.35], [-0.05, 1.12, -0.86]], np.float32)
V = np.array([0.3, -0.7, 1.1], np.float32)

# Each: the loop, and which gradient is zeros inside tf.function (by hand: no result's value
# depends on that input).
LOOPS = {
    "while_body_replaces": (
        lambda tf, x, v: tf.while_loop(
            lambda i, y: i < tf.constant(3), lambda i, y: (i + 1, tf.tanh(tf.stack([v, v]))), [tf.constant(0), x]
        )[1],
        "x",
    ),
    "while_unused_variable": (
        lambda tf, x, v: tf.while_loop(lambda i, y, z: i < 2, lambda i, y, z: (i + 1, y * x, z), (0, x, v))[1],
        "v",
    ),
    "map_fn_ignores_rows": (lambda tf, x, v: tf.map_fn(lambda r: tf.sin(v), x), "x"),
    "scan_ignores_rows": (lambda tf, x, v: tf.scan(lambda a, r: tf.tanh(a * v), x, initializer=v), "x"),
    "foldl_ignores_rows": (lambda tf, x, v: tf.foldl(lambda a, r: a * v, x, initializer=v), "x"),
    "foldr_ignores_initializer": (lambda tf, x, v: tf.foldr(lambda a, r: r * 2.0, x, initializer=v), "v"),
}


@pytest.mark.parametrize("wrap", ["eager", "function"])
@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_loop_input_the_results_do_not_use_gets_tensorflows_gradient(name, wrap):
    loop, unused = LOOPS[name]

    def program(tf):
        x, v = tf.constant(X), tf.Variable(V)
        f = (lambda x: loop(tf, x, v)) if wrap == "eager" else tf.function(lambda x: loop(tf, x, v))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
            loss = tf.reduce_sum(y * y)
        return tape.gradient(loss, {"x": x, "v": v})

    gradients = _ok(program)
    if wrap == "function":
        np.testing.assert_array_equal(gradients[unused], np.zeros_like(X if unused == "x" else V))


def test_a_batch_jacobian_over_a_fold_of_the_batch_is_refused_not_nan():
    """tf.foldr over the batch axis mixes examples: gradkit's batch_jacobian refuses that (its
    check), and gave NaN here instead; with the check off it is TensorFlow's per-example blocks."""

    def program(tf, **kw):
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x) * tf.reduce_sum(tf.foldr(lambda a, r: a + r, x))
        return tape.batch_jacobian(y, x, **kw)

    with pytest.warns(gk.GradkitWarning, match="examples interact"):
        warned = program(gtf)  # TensorFlow's result, with a warning that it is no per-example Jacobian
    expected = program(tf_real).numpy()
    np.testing.assert_allclose(warned, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(program(gtf, check_independence=False), expected, rtol=1e-5, atol=1e-6)
    # By hand, TensorFlow's algorithm (the Jacobian of the batch's sum of each target row):
    # d/dx[b, j] of sum_c sin(x[c, i]) * s, with s the sum of all of x (through the fold).
    s = X.sum()
    by_hand = np.eye(3) * (np.cos(X) * s)[:, :, None] + np.sin(X).sum(axis=0)[None, :, None]
    np.testing.assert_allclose(expected, by_hand, rtol=1e-5, atol=1e-6)


def test_a_traced_while_loop_carries_nested_loop_variables():
    def program(tf):
        @tf.function
        def f(n, x):
            return tf.while_loop(
                lambda i, s: i < n,
                lambda i, s: (i + 1, {"b": s["b"] * 2, "a": (s["a"][0] + x, s["a"][1] - 1.0)}),
                (tf.constant(0), {"b": tf.constant([1, 2]), "a": (tf.constant(0.0), tf.constant([1.0, 2.0]))}),
            )

        i, s = f(tf.constant(3), tf.constant(0.5))
        return [i, s["a"][0], s["a"][1], s["b"]]

    out = _ok(program)
    # by hand: 3 steps of the body
    np.testing.assert_allclose(out[1], 1.5)
    np.testing.assert_array_equal(out[3], [8, 16])


def test_map_fn_and_scan_over_no_rows_give_empty_results_of_the_right_shape():
    def program(tf):
        x = tf.zeros([0, 2])
        return [
            tf.map_fn(lambda r: tf.reduce_sum(r), x),
            tf.scan(lambda a, r: a + r, x, initializer=tf.zeros([2])),
            tf.foldl(lambda a, r: a + r, x, initializer=tf.ones([2])),
        ]

    out = _ok(program)
    assert [o.shape for o in out] == [(0,), (0, 2), (2,)]
    # A row's result of shape (2,) stacks to (0, 2); eager TensorFlow gives (0,) here, its empty
    # TensorArray not knowing the element shape.
    assert gtf.map_fn(lambda r: r * 2, gtf.zeros([0, 2])).shape == (0, 2)


def test_a_traced_while_loop_whose_body_grows_a_variable_says_how_to_write_it():
    @gtf.function
    def f(n):
        return gtf.while_loop(
            lambda i, x: i < n,
            lambda i, x: (i + 1, gtf.concat([x, x], 0)),
            [gtf.constant(0), gtf.ones([1])],
            shape_invariants=[gtf.TensorShape([]), gtf.TensorShape([None])],
        )

    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.while_loop inside tf.function.*shape \(1,\).*shape \(2,\)"):
        f(gtf.constant(3))
