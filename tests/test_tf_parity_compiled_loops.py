"""``tf.map_fn``, ``tf.scan``, ``tf.foldl`` and ``tf.foldr`` inside ``tf.function`` run as one
``jax.lax.scan``: their function is traced once, as TensorFlow traces it into one loop op.
Checked against real TensorFlow (values, gradients, how often the function runs) and a NumPy
loop; a function that assigns a Variable still runs (row by row)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.linspace(-1.0, 1.0, 15, dtype="float32").reshape(5, 3)


def _loops(tf, x, v):
    return [
        tf.map_fn(lambda r: tf.reduce_sum(r * v), x),
        tf.map_fn(
            lambda r: {"double": r * 2.0, "sum": tf.reduce_sum(r)},
            x,
            fn_output_signature={"double": tf.float32, "sum": tf.float32},
        ),
        tf.scan(lambda a, r: a * 0.5 + r * v, x, initializer=tf.zeros(3)),
        tf.scan(lambda a, r: a * 0.5 + r, x, reverse=True),
        tf.scan(lambda a, r: (a[0] + r, a[1] * 0.9 + tf.reduce_sum(r)), x, initializer=(tf.zeros(3), 1.0)),
        tf.foldl(lambda a, r: a + tf.reduce_sum(r * v), x, initializer=0.0),
        tf.foldr(lambda a, r: a * 0.5 + r, x),
        tf.scan(lambda a, r: a + r["p"] * r["q"], {"p": x, "q": x[::-1]}, initializer=tf.ones(3)),
    ]


def p_values_inside_tf_function(tf):
    v = tf.Variable([1.0, -2.0, 0.5])
    return tf.function(lambda x: _loops(tf, x, v))(X)


def p_gradients_with_a_tape_inside_tf_function(tf):
    v = tf.Variable([1.0, -2.0, 0.5])

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            total = sum(tf.reduce_sum(tf.nest.flatten(out)[0] ** 2) for out in _loops(tf, x, v))
        return [total, *tape.gradient(total, [v, x])]

    return step(tf.constant(X))


def p_gradients_with_the_tape_outside(tf):
    v = tf.Variable([1.0, -2.0, 0.5])
    x = tf.constant(X)
    run = tf.function(lambda x: _loops(tf, x, v))
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = sum(tf.reduce_sum(tf.nest.flatten(out)[-1] ** 2) for out in run(x))
    return [total, *tape.gradient(total, [v, x])]


def p_each_function_is_traced_once(tf):
    calls = []

    def counted(name, fn):
        def run(*args):
            calls.append(name)
            return fn(*args)

        return run

    @tf.function(autograph=False)
    def step(x):
        return [
            tf.map_fn(counted("map", lambda r: r * 2.0), x),
            tf.scan(counted("scan", lambda a, r: a + r), x),
            tf.foldl(counted("foldl", lambda a, r: a + r), x, initializer=tf.zeros(3)),
        ]

    out = step(X)
    return [out, sorted(calls)]


def p_a_function_assigning_a_variable(tf):
    v = tf.Variable(0.0)

    def body(r):
        v.assign_add(tf.reduce_sum(r))
        return r * v

    out = tf.function(lambda x: tf.map_fn(body, x))(X)
    return [out, v]


def p_a_variable_built_lazily_inside_the_function(tf):
    class Scale(tf.Module):
        w = None

        def __call__(self, row):
            if self.w is None:
                self.w = tf.Variable(tf.ones([3]) * 2.0)  # built at the first call, from a computed value
            return tf.reduce_sum(self.w * row)

    outputs = []
    for loop in ("map_fn", "foldl"):
        scale = Scale()
        if loop == "map_fn":
            run = tf.function(lambda x, scale=scale: tf.map_fn(scale, x))
        else:
            run = tf.function(lambda x, scale=scale: tf.foldl(lambda a, r: a + scale(r), x, initializer=0.0))
        outputs += [run(X), scale.w, run(X)]
    return outputs


def test_a_long_scan_matches_a_numpy_loop():
    x = np.random.default_rng(0).normal(size=(300, 4)).astype("float32")
    run = gtf.function(lambda x: gtf.scan(lambda a, r: a * 0.9 + gtf.tanh(r), x))
    expected, acc = [], x[0]
    expected.append(acc)
    for row in x[1:]:
        acc = acc * np.float32(0.9) + np.tanh(row)
        expected.append(acc)
    np.testing.assert_allclose(run(x).numpy(), np.stack(expected), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(x * 2).numpy()[0], x[0] * 2, rtol=1e-6)  # the first row starts the scan
    assert run.experimental_get_tracing_count() == 1


def test_each_row_draws_its_own_random_numbers():
    draws = gtf.function(lambda x: gtf.map_fn(lambda r: gtf.random.uniform([]) + 0.0 * r, x))(np.zeros(6, "float32"))
    assert len(set(draws.numpy().tolist())) == 6


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome


@pytest.mark.parametrize("reverse", [False, True])
def test_keras_ops_scan_inside_tf_function_is_jax_lax_scan(reverse):
    import jax
    import jax.numpy as jnp

    x = np.random.default_rng(2).normal(size=(200, 3)).astype("float32")
    v = gtf.Variable([0.5, -1.0, 2.0])

    def step(carry, row):
        h = carry["h"] * 0.9 + gtf.keras.ops.tanh(row * v)
        return {"h": h, "n": carry["n"] + 1}, gtf.keras.ops.sum(h)

    def oracle(v_value):
        def pure(carry, row):
            h = carry["h"] * 0.9 + jnp.tanh(row * v_value)
            return {"h": h, "n": carry["n"] + 1}, jnp.sum(h)

        return jax.lax.scan(pure, {"h": jnp.zeros(3), "n": jnp.int32(0)}, x, reverse=reverse)

    @gtf.function
    def run(x):
        with gtf.GradientTape() as tape:
            carry, ys = gtf.keras.ops.scan(step, {"h": gtf.zeros(3), "n": gtf.constant(0)}, x, reverse=reverse)
            total = gtf.reduce_sum(ys) + gtf.reduce_sum(carry["h"] ** 2)
        return carry, ys, tape.gradient(total, v)

    carry, ys, gradient = run(x)
    (expected_carry, expected_ys) = oracle(v.numpy())
    np.testing.assert_allclose(carry["h"].numpy(), expected_carry["h"], rtol=1e-5, atol=1e-6)
    assert int(carry["n"]) == 200
    np.testing.assert_allclose(ys.numpy(), expected_ys, rtol=1e-5, atol=1e-5)

    def total(v_value):
        c, y = oracle(v_value)
        return jnp.sum(y) + jnp.sum(c["h"] ** 2)

    np.testing.assert_allclose(gradient.numpy(), jax.grad(total)(v.numpy()), rtol=1e-4)
    assert run.experimental_get_tracing_count() == 1
