"""``tf.saved_model`` keeps the saved object's Variables and submodules: the loaded object has
them at the same places, its functions read and assign them, a tape differentiates with respect
to them (to second order), ``signatures`` serve keyword calls, and nested input signatures load.
Oracles: pure-JAX rewrites, hand derivations, and TensorFlow itself where it is installed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

W = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
X = np.array([[0.1, 0.2], [0.3, -0.4]], np.float32)


def _program(tf, path):
    """The same module saved and loaded on either system; what the loaded object gives."""

    class Sub(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable([1.0, 2.0])

        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def shift(self, x):
            return x + self.v

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(W)
            self.c = tf.Variable(3.0, trainable=False)
            self.sub = Sub()
            self.pair = [tf.Variable(0.5), {"k": tf.Variable([2.0])}]

        @tf.function(input_signature=[tf.TensorSpec([2, 2], tf.float32)])
        def f(self, x):
            return tf.matmul(x, self.w) * self.c

        @tf.function(input_signature=[])
        def inc(self):
            self.c.assign_add(1.0)
            return self.c.read_value()

        @tf.function(input_signature=[(tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32))])
        def nested(self, xy):
            return xy[0] * xy[1] + self.pair[0]

    m = M()
    tf.saved_model.save(m, str(path), signatures={"serving_default": m.f})
    loaded = tf.saved_model.load(str(path))
    out = {
        "f": loaded.f(tf.constant(X)).numpy(),
        "w": loaded.w.numpy(),
        "sub.v": loaded.sub.v.numpy(),
        "sub.shift": loaded.sub.shift(tf.constant([1.0, 1.0])).numpy(),
        "pair": [loaded.pair[0].numpy(), loaded.pair[1]["k"].numpy()],
        "nested": loaded.nested((tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))).numpy(),
        "signature": {k: v.numpy() for k, v in loaded.signatures["serving_default"](x=tf.constant(X)).items()},
    }
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded.f(tf.constant(X)))
    out["dw"], out["dsub"] = [None if g is None else g.numpy() for g in tape.gradient(y, [loaded.w, loaded.sub.v])]
    out["inc"] = [float(loaded.inc()), float(loaded.inc())]
    loaded.w.assign(loaded.w * 2.0)
    out["f_after"] = loaded.f(tf.constant(X)).numpy()  # c is 5 now, w doubled
    out["saved_c"] = float(m.c.numpy())
    return out


def test_the_loaded_object_has_the_variables_and_submodules(tmp_path):
    got = _program(gtf, tmp_path)
    np.testing.assert_allclose(got["f"], X @ W * 3.0, rtol=1e-6)
    np.testing.assert_allclose(got["w"], W)
    np.testing.assert_allclose(got["sub.v"], [1.0, 2.0])
    np.testing.assert_allclose(got["sub.shift"], [2.0, 3.0])
    np.testing.assert_allclose(got["pair"][0], 0.5)
    np.testing.assert_allclose(got["pair"][1], [2.0])
    np.testing.assert_allclose(got["nested"], [3.5, 8.5])
    np.testing.assert_allclose(got["signature"]["output_0"], X @ W * 3.0, rtol=1e-6)
    # d sum(x @ w * c) / dw = c * x^T 1 (a hand derivation); the function never reads sub.v: None.
    np.testing.assert_allclose(got["dw"], 3.0 * X.T @ np.ones((2, 2), np.float32), rtol=1e-6)
    assert got["dsub"] is None
    assert got["inc"] == [4.0, 5.0]
    np.testing.assert_allclose(got["f_after"], X @ (2.0 * W) * 5.0, rtol=1e-6)
    assert got["saved_c"] == 3.0


def test_matches_tensorflow(tmp_path):
    rtf = pytest.importorskip("tensorflow")
    ours, theirs = _program(gtf, tmp_path / "gk"), _program(rtf, tmp_path / "tf")
    assert ours.keys() == theirs.keys()
    for key in ours:
        if key == "dsub":
            assert ours[key] is None and theirs[key] is None
        elif key in ("signature",):
            assert ours[key].keys() == theirs[key].keys()
            np.testing.assert_allclose(ours[key]["output_0"], theirs[key]["output_0"], rtol=1e-6)
        elif key == "pair":
            for a, b in zip(ours[key], theirs[key]):
                np.testing.assert_allclose(a, b)
        else:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)


def test_second_order_gradients_through_a_loaded_function(tmp_path):
    class M(gtf.Module):
        def __init__(self):
            super().__init__()
            self.w = gtf.Variable(W)

        @gtf.function(input_signature=[gtf.TensorSpec([2, 2], gtf.float32)])
        def f(self, x):
            return gtf.nn.tanh(gtf.matmul(x, self.w))

    gtf.saved_model.save(M(), str(tmp_path))
    loaded = gtf.saved_model.load(str(tmp_path))
    x = gtf.constant(X)
    with gtf.GradientTape() as outer:
        outer.watch(x)
        with gtf.GradientTape() as inner:
            inner.watch(x)
            y = gtf.reduce_sum(loaded.f(x) ** 2)
        z = gtf.reduce_sum(inner.gradient(y, x))
    second = outer.gradient(z, x).numpy()

    def loss(x):
        return jnp.sum(jnp.tanh(x @ W) ** 2)

    want = jax.grad(lambda x: jnp.sum(jax.grad(loss)(x)))(X)
    np.testing.assert_allclose(second, want, rtol=1e-5, atol=1e-6)


def test_an_object_with_one_function_serves_it_by_default(tmp_path):
    class M(gtf.Module):
        @gtf.function(input_signature=[gtf.TensorSpec([2], gtf.float32), gtf.TensorSpec([], gtf.float32)])
        def scale(self, x, factor):
            return {"scaled": x * factor, "sum": gtf.reduce_sum(x)}

    gtf.saved_model.save(M(), str(tmp_path))
    serve = gtf.saved_model.load(str(tmp_path)).signatures["serving_default"]
    out = serve(x=gtf.constant([1.0, 2.0]), factor=gtf.constant(3.0))
    assert sorted(out) == ["scaled", "sum"]
    np.testing.assert_allclose(out["scaled"].numpy(), [3.0, 6.0])
    with pytest.raises(TypeError, match=r"\[gradkit\] a SavedModel signature function of several arguments takes"):
        serve(gtf.constant([1.0, 2.0]), gtf.constant(3.0))


def test_a_nested_argument_of_another_structure_is_refused(tmp_path):
    class M(gtf.Module):
        @gtf.function(input_signature=[(gtf.TensorSpec([2], gtf.float32), gtf.TensorSpec([2], gtf.float32))])
        def add(self, xy):
            return xy[0] + xy[1]

    gtf.saved_model.save(M(), str(tmp_path))
    loaded = gtf.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded.add([np.ones(2, np.float32), np.ones(2, np.float32)]).numpy(), [2.0, 2.0])
    with pytest.raises(TypeError, match=r"\[gradkit\] the loaded function add got ndarray as argument 0"):
        loaded.add(np.ones(2, np.float32))


def _keras_program(tf, keras, path):
    """A Keras model saved as it is: TensorFlow serves its call as serving_default(inputs=...)."""
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"), keras.layers.Dense(2)])
    model.set_weights([np.full(w.shape, 0.1 * (i + 1), np.float32) for i, w in enumerate(model.get_weights())])
    tf.saved_model.save(model, str(path))
    loaded = tf.saved_model.load(str(path))
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0  # a batch size the model never saw
    served = loaded.signatures["serving_default"](inputs=tf.constant(x))
    by_position = loaded.signatures["serving_default"](tf.constant(x))  # TensorFlow 2.21 takes it in order too
    np.testing.assert_allclose(by_position["output_0"].numpy(), served["output_0"].numpy())
    return sorted(served), served["output_0"].numpy(), np.asarray(model(x))


def test_a_keras_model_is_saved_with_its_call(tmp_path):
    keys, served, direct = _keras_program(gtf, gtf.keras, tmp_path)
    h = np.maximum(np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0 @ np.full((4, 3), 0.1) + 0.2, 0.0)
    np.testing.assert_allclose(served, h @ np.full((3, 2), 0.3) + 0.4, rtol=1e-6)  # by hand
    np.testing.assert_allclose(direct, served, rtol=1e-6)
    assert keys == ["output_0"]
    loaded = gtf.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(np.asarray(loaded(np.ones((5, 4), np.float32))).shape, (5, 2))


def test_a_keras_model_is_saved_as_tensorflow_saves_it(tmp_path):
    rtf = pytest.importorskip("tensorflow")
    import keras

    ours, theirs = _keras_program(gtf, gtf.keras, tmp_path / "gk"), _keras_program(rtf, keras, tmp_path / "tf")
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def _guide_module(tf, path):
    """TensorFlow's "Introduction to modules" guide: a tf.function without an input_signature,
    called before saving; the loaded one runs for the calls it was traced for."""

    class Dense(tf.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.w = tf.Variable(np.arange(n_in * n_out, dtype=np.float32).reshape(n_in, n_out) / 10)
            self.b = tf.Variable(tf.zeros([n_out]))

        def __call__(self, x):
            return tf.nn.relu(tf.nn.bias_add(tf.matmul(x, self.w), self.b))

    class Sequential(tf.Module):
        def __init__(self):
            super().__init__()
            self.dense_1, self.dense_2 = Dense(3, 3), Dense(3, 2)

        @tf.function
        def __call__(self, x, scale=1.0):
            return self.dense_2(self.dense_1(x)) * scale

    model = Sequential()
    model([[2.0, 2.0, 2.0]])  # a Python list: its values are part of the trace, as in TensorFlow
    model(tf.constant([[2.0, 2.0, 2.0], [1.0, 0.0, 1.0]]), scale=2.0)
    tf.saved_model.save(model, str(path))
    loaded = tf.saved_model.load(str(path))
    out = [
        loaded([[2.0, 2.0, 2.0]]).numpy(),
        loaded(tf.constant([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]]), scale=2.0).numpy(),
    ]
    for call in (lambda: loaded([[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]]), lambda: loaded([[2.0, 2.0, 2.0]], scale=3.0)):
        with pytest.raises(ValueError, match="Could not find matching concrete function"):
            call()
    return out


def test_functions_traced_before_saving_are_saved_for_those_calls(tmp_path):
    w1 = np.arange(9, dtype=np.float32).reshape(3, 3) / 10
    w2 = np.arange(6, dtype=np.float32).reshape(3, 2) / 10

    def by_hand(x, scale=1.0):
        return np.maximum(np.maximum(np.asarray(x, np.float32) @ w1, 0) @ w2, 0) * scale

    got = _guide_module(gtf, tmp_path)
    np.testing.assert_allclose(got[0], by_hand([[2.0, 2.0, 2.0]]), rtol=1e-6)
    np.testing.assert_allclose(got[1], by_hand([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]], 2.0), rtol=1e-6)


def test_functions_traced_before_saving_match_tensorflow(tmp_path):
    rtf = pytest.importorskip("tensorflow")
    for ours, theirs in zip(_guide_module(gtf, tmp_path / "gk"), _guide_module(rtf, tmp_path / "tf")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def _batch_program(tf, path):
    """A serving function whose signature has a None batch size, which it reads with tf.shape and
    tf.size, and which calls another tf.function that has an input_signature of its own."""

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0, 2.0], [0.5, -1.0]])

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def inner(self, x):
            return tf.matmul(x, self.w)

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def serve(self, x):
            n = tf.cast(tf.shape(x)[0], tf.float32)
            return self.inner(x) / n + tf.cast(tf.size(x), tf.float32)

    tf.saved_model.save(M(), str(path))
    loaded = tf.saved_model.load(str(path))
    one, three = np.array([[1.0, 2.0]], np.float32), np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]], np.float32)
    out = {"one": loaded.serve(tf.constant(one)).numpy(), "three": loaded.serve(tf.constant(three)).numpy()}
    errors = []
    for bad in (np.ones((1, 1, 2), np.float32), np.float32(1.0), np.ones((2, 3), np.float32)):
        with pytest.raises(TypeError) as info:
            loaded.serve(tf.constant(bad))
        errors.append(str(info.value))
    return out, errors


def test_a_signature_with_a_none_size_serves_every_size(tmp_path):
    out, errors = _batch_program(gtf, tmp_path)
    w = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    for key, x in (("one", [[1.0, 2.0]]), ("three", [[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]])):
        x = np.array(x, np.float32)
        np.testing.assert_allclose(out[key], x @ w / len(x) + x.size, rtol=1e-6)  # NumPy oracle
    assert all(e.startswith("[gradkit] the loaded function serve got a value of shape") for e in errors)


def test_a_signature_with_a_none_size_matches_tensorflow(tmp_path):
    rtf = pytest.importorskip("tensorflow")
    (ours, _), (theirs, _) = _batch_program(gtf, tmp_path / "gk"), _batch_program(rtf, tmp_path / "tf")
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6)
