"""tf.keras.random: Keras 3's shapes, dtypes and seed rules (an int seed repeats its draws, a
SeedGenerator moves on, also inside tf.function and a compiled training step, None draws from the
global generator), and the distributions' moments. The numbers are not TensorFlow's (another
generator), so values are compared by their statistics, shapes and dtypes against real Keras."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import gradkit.tf as gtf  # noqa: E402

R = gtf.keras.random

# name -> (args, kwargs), called the same way on keras.random and tf.keras.random.
CALLS = {
    "normal": (((2, 3),), dict(mean=1.0, stddev=2.0)),
    "normal_f16": (((4,),), dict(dtype="float16")),
    "uniform": (((3,),), dict(minval=-1.0, maxval=2.0)),
    "truncated_normal": (((2, 2),), {}),
    "randint": (((5,), 0, 4), {}),
    "randint_int8": (((5,), 0, 4), dict(dtype="int8")),
    "categorical": ((np.zeros((2, 3), np.float32), 4), {}),
    "dropout": ((np.ones((2, 3), np.float32), 0.5), {}),
    "shuffle": ((np.arange(6, dtype=np.int32).reshape(3, 2),), {}),
    "gamma": (((3,), 2.0), {}),
    "binomial": (((3,), 5.0, 0.5), {}),
    "beta": (((3,), 2.0, 3.0), {}),
}


@pytest.mark.parametrize("key", sorted(CALLS))
def test_shapes_and_dtypes_match_keras(key):
    args, kwargs = CALLS[key]
    name = key.split("_")[0] if key not in ("truncated_normal",) else key
    want = getattr(keras.random, name)(*args, seed=1, **kwargs)
    got = getattr(R, name)(*args, seed=1, **kwargs)
    assert isinstance(got, gtf.Tensor)
    assert tuple(got.shape) == tuple(want.shape)
    want_dtype = keras.backend.standardize_dtype(want.dtype)
    assert np.dtype(got.dtype).name == {"int64": "int32"}.get(want_dtype, want_dtype)


def test_int_seed_repeats_and_seed_generator_moves_on():
    assert np.array_equal(R.normal((4,), seed=3).numpy(), R.normal((4,), seed=3).numpy())
    assert not np.array_equal(R.normal((4,), seed=3).numpy(), R.normal((4,), seed=4).numpy())
    g, h = R.SeedGenerator(5), R.SeedGenerator(5)
    first, second = R.uniform((4,), seed=g).numpy(), R.uniform((4,), seed=g).numpy()
    assert not np.array_equal(first, second)
    assert np.array_equal(R.uniform((4,), seed=h).numpy(), first)  # the same sequence from the same seed
    assert g.state.numpy().tolist() == [5, 2] and not g.state.trainable
    assert g.state.name.startswith("seed_generator_state")


def test_no_seed_draws_from_the_global_generator():
    gtf.keras.utils.set_random_seed(11)
    a, b = R.normal((3,)).numpy(), R.normal((3,)).numpy()
    gtf.keras.utils.set_random_seed(11)
    assert np.array_equal(R.normal((3,)).numpy(), a) and not np.array_equal(a, b)
    assert R.SeedGenerator().state.numpy()[0] != 0  # seeded from Python's generator, as Keras


def test_tf_function_draws_anew_with_a_seed_generator():
    g = R.SeedGenerator(1)
    draw = gtf.function(lambda: (R.normal((3,), seed=g), R.normal((3,), seed=7), R.uniform((3,))))
    (a, fixed_a, free_a), (b, fixed_b, free_b) = draw(), draw()
    assert not np.array_equal(a.numpy(), b.numpy())
    assert np.array_equal(fixed_a.numpy(), fixed_b.numpy())
    assert not np.array_equal(free_a.numpy(), free_b.numpy())
    assert g.state.numpy().tolist() == [1, 2]
    eager = R.SeedGenerator(1)
    assert np.array_equal(R.normal((3,), seed=eager).numpy(), a.numpy())  # compiled and eager agree


def test_compiled_training_step_draws_anew():
    class NoisyDense(gtf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = R.SeedGenerator(3)
            self.dense = gtf.keras.layers.Dense(1)

        def call(self, x, training=False):
            if training:
                x = R.dropout(x, 0.5, seed=self.seed_generator)
            return self.dense(x)

    model = gtf.keras.Sequential([gtf.keras.Input((4,)), NoisyDense()])
    model.compile(optimizer=gtf.keras.optimizers.SGD(0.01), loss="mse")
    x, y = np.ones((6, 4), np.float32), np.zeros((6, 1), np.float32)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, shuffle=False)
    assert model.layers[-1].seed_generator.state.numpy().tolist() == [3, 3]  # one draw per step


def test_moments():
    n = 20000
    x = R.normal((n,), mean=1.0, stddev=2.0, seed=1).numpy()
    assert abs(x.mean() - 1.0) < 0.06 and abs(x.std() - 2.0) < 0.06
    u = R.uniform((n,), minval=-1.0, maxval=3.0, seed=2).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05
    t = R.truncated_normal((n,), stddev=1.0, seed=3).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.03
    k = R.randint((n,), 2, 6, seed=4).numpy()
    assert set(np.unique(k).tolist()) == {2, 3, 4, 5}
    g = R.gamma((n,), 3.0, seed=5).numpy()
    assert abs(g.mean() - 3.0) < 0.1 and abs(g.var() - 3.0) < 0.3
    b = R.binomial((n,), 10.0, 0.3, seed=6).numpy()
    assert abs(b.mean() - 3.0) < 0.1 and set(np.unique(b).tolist()) <= set(range(11))
    beta = R.beta((n,), 2.0, 6.0, seed=7).numpy()
    assert 0 < beta.min() and beta.max() < 1 and abs(beta.mean() - 0.25) < 0.01
    logits = np.log(np.array([[0.2, 0.8], [0.9, 0.1]], np.float32))
    c = R.categorical(logits, 5000, seed=8).numpy()
    assert c.shape == (2, 5000) and abs(c[0].mean() - 0.8) < 0.03 and abs(c[1].mean() - 0.1) < 0.03


def test_dropout_and_shuffle():
    x = np.ones((200, 50), np.float32)
    out = R.dropout(x, 0.3, seed=1).numpy()
    assert abs((out == 0).mean() - 0.3) < 0.02 and np.allclose(out[out != 0], 1 / 0.7)
    shared = R.dropout(x, 0.5, noise_shape=(None, 1), seed=2).numpy()
    assert np.all(shared == shared[:, :1])  # one draw per row, broadcast along the columns
    assert np.array_equal(R.dropout(x, 0.0).numpy(), x) and not R.dropout(x, 1.0).numpy().any()
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = R.shuffle(values, seed=3).numpy()
    assert sorted(rows.tolist()) == values.tolist()
    columns = R.shuffle(values, axis=1, seed=3).numpy()
    assert np.array_equal(np.sort(columns, axis=1), values)


def test_gradients_flow_through_draws():
    x = gtf.Variable(np.ones((4, 5), np.float32))
    mean, stddev = gtf.Variable(0.5), gtf.Variable(2.0)
    with gtf.GradientTape(persistent=True) as tape:
        dropped = R.dropout(x, 0.5, seed=1)
        drawn = R.normal((1000,), mean=mean, stddev=stddev, seed=2)
        loss = gtf.reduce_sum(dropped) + gtf.reduce_sum(drawn)
    kept = dropped.numpy() != 0
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), kept * 2.0)
    standard = (drawn.numpy() - 0.5) / 2.0
    np.testing.assert_allclose(float(tape.gradient(loss, mean)), 1000.0)
    np.testing.assert_allclose(float(tape.gradient(loss, stddev)), standard.sum(), rtol=1e-4)


def test_seed_generator_config_and_namespace():
    g = R.SeedGenerator(9, name="gen")
    assert g.get_config() == {"seed": 9, "name": "gen"}
    assert R.SeedGenerator.from_config(g.get_config()).state.numpy().tolist() == [9, 0]
    ours = {n for n in dir(R) if not n.startswith("_")}
    assert ours <= {n for n in dir(keras.random) if not n.startswith("_")} and "SeedGenerator" in ours


@pytest.mark.parametrize(
    "call,text",
    [
        (lambda: R.uniform((2,), dtype="int32"), "floating point dtype"),
        (lambda: R.randint((2,), 0, 3, dtype="float32"), "integer dtype"),
        (lambda: R.normal((2,), seed="a"), "seed"),
        (lambda: R.categorical(np.zeros(3, np.float32), 2), "2-D logits"),
        (lambda: R.SeedGenerator(seed=1.5), "integer"),
        (lambda: R.SeedGenerator(1, backend="jax"), "keyword"),
    ],
)
def test_bad_arguments_raise_gradkit_errors(call, text):
    with pytest.raises(ValueError, match=r"\[gradkit\].*" + text):
        call()
