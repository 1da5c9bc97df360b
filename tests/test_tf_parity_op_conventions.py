"""Op conventions where gradkit.tf once parted from TensorFlow 2.21 on valid code (found by a
differential fuzzer): the order of ties in a descending ``tf.sort``, ``tf.pow``'s gradient
w.r.t. the exponent where ``x <= 0``, ``reduce_max``/``reduce_min``'s gradient over a NaN,
``argmax``/``argmin`` over NaN, and the updates' gradient of ``tensor_scatter_nd_update`` with
a repeated index. ``tf.math.cumprod`` keeps its exact gradient where ``x`` has zeros, which
TensorFlow's is not (pinned below).

Each program is a function of the module ``tf``. Oracles: a hand derivation (runs without
TensorFlow), a pure-JAX rewrite, and real TensorFlow where it is installed."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

NAN = np.nan
W5 = [1.0, 10.0, 100.0, 1000.0, 10000.0]


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _assert_same(got, want):
    if isinstance(got, list):  # the program's structure; ``want`` may write a tensor as a nested list
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _assert_same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # NaN matches NaN


def _tensorflow():
    tf = pytest.importorskip("tensorflow")
    return tf


# -- 1. tf.sort / tf.argsort: stable both ways ----------------------------------------------------


def p_sort_descending_ties(tf):
    x = tf.Variable([0.0, 2.0, 0.0, 2.0, -1.0])
    with tf.GradientTape() as t:
        s = tf.sort(x, direction="DESCENDING")
        loss = tf.reduce_sum(s * tf.constant(W5))
    return [s, t.gradient(loss, x)]


def p_sort_descending_axis0(tf):
    x = tf.Variable([[1.0, 5.0], [1.0, 5.0], [0.0, 7.0]])
    with tf.GradientTape() as t:
        s = tf.sort(x, axis=0, direction="DESCENDING")
        loss = tf.reduce_sum(s * tf.constant([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]]))
    return [s, t.gradient(loss, x)]


def p_sort_signed_zeros(tf):
    # 0.0 and -0.0 are equal: a tie, kept in order both ways.
    x = tf.Variable([0.0, -0.0, 0.0])
    with tf.GradientTape(persistent=True) as t:
        down = tf.reduce_sum(tf.sort(x, direction="DESCENDING") * tf.constant([1.0, 10.0, 100.0]))
        up = tf.reduce_sum(tf.sort(x) * tf.constant([1.0, 10.0, 100.0]))
    return [t.gradient(down, x), t.gradient(up, x)]


def p_argsort_ties(tf):
    x = tf.constant([0.0, 2.0, 0.0, 2.0, -1.0])
    return [
        tf.argsort(x, direction="DESCENDING"),
        tf.argsort(x, direction="DESCENDING", stable=True),
        tf.argsort(x),
        tf.argsort(x, stable=True),
    ]


# -- 2. tf.pow: the exponent's gradient is 0 where x <= 0 -----------------------------------------


def p_pow_grads(tf):
    x = tf.Variable([0.0, 2.0, -1.0, 0.0, -2.0])
    p = tf.Variable([2.0, 0.0, 3.0, 0.0, 2.0])
    with tf.GradientTape() as t:
        z = tf.pow(x, p)
    return [z, *t.gradient(z, [x, p])]


def p_pow_math_alias_broadcast(tf):
    x = tf.Variable([1.0, 2.0, -3.0])
    p = tf.Variable(2.0)
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.math.pow(x, p))
    return t.gradient(loss, [x, p])


def p_pow_of_two_python_numbers(tf):
    # The exponent takes the base's dtype: a float power of 0.9; 2 ** 0.5 of an int base is refused.
    try:
        tf.math.pow(2, 0.5)
        refused = 0
    except TypeError:
        refused = 1
    return [tf.math.pow(0.9, 3), tf.math.pow(2, 3), tf.math.pow(2.0, -1), refused]


def p_pow_python_exponent(tf):
    # |x| ** 0.5 at 0: an infinite upstream times abs's gradient sign(0) = 0 is NaN.
    x = tf.Variable([0.0, 2.0, -1.0])
    with tf.GradientTape(persistent=True) as t:
        squared, zeroth, root = tf.pow(x, 2.0), tf.pow(x, 0), tf.pow(tf.abs(x), 0.5)
    return [t.gradient(squared, x), t.gradient(zeroth, x), t.gradient(root, x)]


def p_pow_complex(tf):
    c = tf.Variable([1 + 1j, -2 + 0j, 0.5 - 1j], dtype=tf.complex64)
    p = tf.Variable([2 + 0j, 0.5 + 0j, 1.5 + 0.5j], dtype=tf.complex64)
    with tf.GradientTape() as t:
        loss = tf.math.real(tf.reduce_sum(tf.pow(c, p) * (2 - 1j)))
    return t.gradient(loss, [c, p])


def p_pow_second_order_and_forward(tf):
    x = tf.Variable([0.5, 2.0, -1.0])
    p = tf.Variable([2.0, 3.0, 2.0])
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.pow(x, p) * tf.constant([1.0, 2.0, 3.0]))
        gx, gp = inner.gradient(y, [x, p])
    with tf.autodiff.ForwardAccumulator([x, p], [tf.constant([1.0, -1.0, 0.5]), tf.constant([0.5, 1.0, 1.0])]) as acc:
        z = tf.pow(x, p)
    return [*outer.gradient(gx, [x, p]), *outer.gradient(gp, [x, p]), outer.jacobian(gp, p), acc.jvp(z)]


def p_pow_in_function(tf):
    x = tf.Variable([0.0, 2.0, -1.0])
    p = tf.Variable([2.0, 0.0, 3.0])

    @tf.function
    def step():
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.pow(x, p))
        return t.gradient(loss, [x, p])

    return [*step(), *step()]


# -- 3. reduce_max / reduce_min: ties share the gradient, a NaN makes it NaN ----------------------


def p_reduce_extremes_nan(tf):
    x = tf.Variable([[1.0, NAN, 3.0], [2.0, 2.0, 1.0]])
    with tf.GradientTape(persistent=True) as t:
        everything = tf.reduce_max(x)
        rows = tf.math.reduce_max(x, axis=1, keepdims=True)
        columns = tf.reduce_min(x, axis=0)
        weighted = tf.reduce_sum(tf.reduce_max(x, axis=1) * tf.constant([0.0, 4.0]))
    return [t.gradient(everything, x), t.gradient(rows, x), t.gradient(columns, x), t.gradient(weighted, x)]


def p_reduce_extremes_in_function_and_forward(tf):
    x = tf.Variable([[NAN, 1.0], [3.0, 3.0], [-1.0, 2.0]])

    @tf.function
    def step():
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.reduce_max(x, axis=1)) + tf.reduce_min(x[1:])
        return t.gradient(loss, x)

    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        y = tf.reduce_max(x, axis=1)
    return [step(), acc.jvp(y)]


# -- 4. argmax / argmin skip NaN ------------------------------------------------------------------


def p_argmax_argmin_nan(tf):
    x = tf.constant([[NAN, 1.0, 2.0], [3.0, NAN, 1.0], [NAN, NAN, NAN]])
    return [tf.argmax(x, axis=1), tf.argmin(x, axis=1), tf.argmax(x, axis=0), tf.argmin(x), tf.argmax(x[0])]


INF, LOWEST, HIGHEST = np.inf, float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)
EDGE_ROWS = [
    [NAN, -INF],
    [-INF, NAN],
    [NAN, NAN, NAN],
    [NAN, 1.0, NAN, 1.0],
    [NAN, LOWEST],
    [LOWEST, NAN, HIGHEST],
    [NAN, INF],
    [INF, NAN, INF],
    [1.0, NAN, -INF],
    [NAN, -INF, LOWEST],
]


def p_argmax_argmin_edges(tf):
    out = []
    for row in EDGE_ROWS:
        for dtype in (tf.float32, tf.float16):
            x = tf.cast(tf.constant([row], tf.float32), dtype)
            out += [tf.argmax(x, axis=1), tf.argmin(x, axis=1)]
    return out


# -- 5. tensor_scatter_nd_update: every update gets its index's gradient --------------------------


def p_scatter_update_duplicates(tf):
    base = tf.Variable([0.0, 0.0, 0.0])
    upd = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(
            tf.tensor_scatter_nd_update(base, [[0], [0], [2]], upd) * tf.constant([10.0, 100.0, 1000.0])
        )
    return t.gradient(loss, [base, upd])


def p_scatter_update_rows(tf):
    base = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    upd = tf.Variable([[7.0, 8.0], [9.0, 10.0]])
    weights = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    @tf.function
    def step():
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.tensor_scatter_nd_update(base, tf.constant([[1], [1]]), upd * 2.0) * weights)
        return t.gradient(loss, [base, upd])

    return step()


# -- the table: program, hand-derived answer (None: TensorFlow is the only oracle) ----------------

LOG2 = math.log(2.0)
PROGRAMS = {
    "sort_descending_ties": (p_sort_descending_ties, [[2, 2, 0, 0, -1], [100, 1, 1000, 10, 10000]]),
    # column 0: [1, 1, 0] keeps rows 0, 1, 2; column 1: [5, 5, 7] becomes rows 2, 0, 1.
    "sort_descending_axis0": (p_sort_descending_axis0, [[[1, 7], [1, 5], [0, 5]], [[1, 20], [10, 200], [100, 2]]]),
    "sort_signed_zeros": (p_sort_signed_zeros, [[1, 10, 100], [1, 10, 100]]),
    "argsort_ties": (p_argsort_ties, [[1, 3, 0, 2, 4], [1, 3, 0, 2, 4], [4, 0, 2, 1, 3], [4, 0, 2, 1, 3]]),
    # z = x ** p; dz/dx = p x ** (p - 1) (0 * 0 ** -1 = NaN at x = p = 0); dz/dp = z log x, 0 where x <= 0.
    "pow_grads": (p_pow_grads, [[0, 1, -1, 1, 4], [0, 0, 3, NAN, -4], [0, LOG2, 0, 0, 0]]),
    "pow_math_alias_broadcast": (p_pow_math_alias_broadcast, [[2, 4, -6], 4 * LOG2]),
    "pow_python_exponent": (p_pow_python_exponent, [[0, 4, -2], [NAN, 0, 0], [NAN, 0.5 / math.sqrt(2), -0.5]]),
    "pow_of_two_python_numbers": (p_pow_of_two_python_numbers, [0.9**3, 8, 0.5, 1]),
    "pow_complex": (p_pow_complex, None),
    "pow_second_order_and_forward": (p_pow_second_order_and_forward, None),
    "pow_in_function": (p_pow_in_function, [[0, 0, 3], [0, LOG2, 0]] * 2),
    # Entries equal to the result share the upstream gradient; where the result is NaN none is
    # equal, and TensorFlow's 0 / 0 makes the whole group NaN.
    "reduce_extremes_nan": (
        p_reduce_extremes_nan,
        [[[NAN] * 3] * 2, [[NAN] * 3, [0.5, 0.5, 0]], [[1, NAN, 0], [0, NAN, 1]], [[NAN] * 3, [2, 2, 0]]],
    ),
    "reduce_extremes_in_function_and_forward": (
        p_reduce_extremes_in_function_and_forward,
        [[[NAN, NAN], [0.5, 0.5], [1, 1]], [NAN, 1, 1]],
    ),
    "argmax_argmin_nan": (p_argmax_argmin_nan, [[2, 0, 0], [1, 2, 0], [1, 0, 0], [1, 0, 1], 2]),
    "argmax_argmin_edges": (p_argmax_argmin_edges, None),
    # Every update gets the upstream gradient at its index; the tensor none where it was written.
    "scatter_update_duplicates": (p_scatter_update_duplicates, [[0, 100, 0], [10, 10, 1000]]),
    "scatter_update_rows": (p_scatter_update_rows, [[[1, 2], [0, 0], [5, 6]], [[6, 8], [6, 8]]]),
}


@pytest.mark.parametrize("name", sorted(n for n, (_, want) in PROGRAMS.items() if want is not None))
def test_gradkit_matches_the_hand_derivation(name):
    program, want = PROGRAMS[name]
    _assert_same(_np(program(gtf)), want)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradkit_matches_tensorflow(name):
    tf = _tensorflow()
    program, _ = PROGRAMS[name]
    _assert_same(_np(program(gtf)), _np(program(tf)))


def test_argmax_never_picks_nan_and_picks_the_first_of_equal_entries():
    # Without TensorFlow: NaN-free rows agree with NumPy; a NaN never wins unless the row is all NaN.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(40, 6)).astype(np.float32)
    np.testing.assert_array_equal(gtf.argmax(x, axis=1).numpy(), np.argmax(x, axis=1))
    np.testing.assert_array_equal(gtf.argmin(x, axis=1).numpy(), np.argmin(x, axis=1))
    x[rng.random(x.shape) < 0.3] = np.nan
    for got in (gtf.argmax(x, axis=1).numpy(), gtf.argmin(x, axis=1).numpy()):
        chosen = x[np.arange(len(x)), got]
        assert np.all(~np.isnan(chosen) | np.all(np.isnan(x), axis=1))


def test_the_power_operator_on_tensors_keeps_jax_rule_where_tf_pow_takes_tensorflows():
    # ``x ** p`` is gradkit's Tensor operator, shared with gk.numpy code: jax's rule, whose
    # exponent gradient is NaN where x < 0 (no real logarithm). ``tf.pow`` gives TensorFlow's 0.
    x = gtf.Variable([2.0, -1.0])
    p = gtf.Variable([1.0, 3.0])
    with gtf.GradientTape(persistent=True) as t:
        by_operator = x**p
        by_tf_pow = gtf.pow(x, p)
    want = jax.grad(lambda e: jnp.sum(jnp.power(jnp.array([2.0, -1.0]), e)))(jnp.array([1.0, 3.0]))
    np.testing.assert_allclose(t.gradient(by_operator, p).numpy(), want)
    assert np.isnan(want[1])
    np.testing.assert_allclose(t.gradient(by_tf_pow, p).numpy(), [2 * LOG2, 0.0])


# -- 5b. gradkit's own contract: scatter assignments on a Variable keep gradients, exactly: at a --
# -- repeated index the update written (the last) gets it, the one it overwrote none             --


def test_variable_scatter_updates_give_the_written_update_its_gradient():
    v = gtf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    u = gtf.Variable([[7.0, 8.0], [9.0, 10.0]])
    weights = gtf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for write in (
        lambda: v.scatter_nd_update([[1], [1]], u),
        lambda: v.scatter_update(gtf.IndexedSlices(u, gtf.constant([1, 1]))),
    ):
        with gtf.GradientTape() as t:
            write()
            loss = gtf.reduce_sum(v * weights)
        gv, gu = t.gradient(loss, [v, u])
        np.testing.assert_allclose(gv.numpy(), [[1, 2], [0, 0], [5, 6]])
        # Row 1 holds u[1] after the writes: d loss / d u = [[0, 0], [3, 4]] by hand (finite
        # differences in u[0] leave the loss unchanged).
        np.testing.assert_allclose(gu.numpy(), [[0, 0], [3, 4]])


# -- 6. tf.math.cumprod: gradkit's gradient is the exact derivative; TensorFlow's is not at zeros --


def _cumprod_loss(x, weights, exclusive, reverse):
    if reverse:
        x = jnp.flip(x)
    if exclusive:
        x = jnp.concatenate([jnp.ones(1, x.dtype), x[:-1]])
    out = jnp.cumprod(x)
    return jnp.sum((jnp.flip(out) if reverse else out) * weights)


CUMPROD_X = [2.0, 0.0, 3.0, 5.0]
CUMPROD_W = [1.0, 10.0, 100.0, 1000.0]


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("x0", [CUMPROD_X, [0.0, 4.0, 0.0, 3.0], [1.5, -2.0, 0.5, 3.0]])
def test_cumprod_gradient_is_the_exact_derivative(x0, exclusive, reverse):
    x = gtf.Variable(x0)
    with gtf.GradientTape() as t:
        loss = gtf.reduce_sum(gtf.math.cumprod(x, exclusive=exclusive, reverse=reverse) * gtf.constant(CUMPROD_W))
    want = jax.grad(_cumprod_loss)(jnp.asarray(x0), jnp.asarray(CUMPROD_W), exclusive, reverse)
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), want, rtol=1e-6)


def test_cumprod_gradient_at_a_zero_differs_from_tensorflows_by_design():
    # By hand: d/dx1 of sum(w * cumprod(x)) = sum_{i >= 1} w_i * prod_{j <= i, j != 1} x_j
    # = 10 * 2 + 100 * 6 + 1000 * 30 = 30620. TensorFlow 2.21 divides by x with div_no_nan
    # (cumsum(cumprod(x) * upstream, reverse) / x, 0 where x == 0), so it returns 0 there.
    x = gtf.Variable(CUMPROD_X)
    with gtf.GradientTape() as t:
        loss = gtf.reduce_sum(gtf.math.cumprod(x) * gtf.constant(CUMPROD_W))
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), [1.0, 30620.0, 0.0, 0.0])

    tf = _tensorflow()
    xt = tf.Variable(CUMPROD_X)
    with tf.GradientTape() as t:
        loss = tf.reduce_sum(tf.math.cumprod(xt) * tf.constant(CUMPROD_W))
    np.testing.assert_allclose(t.gradient(loss, xt).numpy(), [1.0, 0.0, 0.0, 0.0])
