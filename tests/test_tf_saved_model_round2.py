"""``tf.saved_model`` and ``tf.train.Checkpoint`` cases from a differential hunt: a saved function
that assigns its argument to a Variable, signature keywords named by ``TensorSpec(name=...)``
and made unique as TensorFlow makes them, a concrete function with a Python default as a
signature, a Module without functions, Variables declared with a None size, and ``deepcopy`` of
a Module holding a ``tf.function``. Each program runs on gradkit and, where it is installed, on
TensorFlow; gradkit's loaded results are checked against the original object and TensorFlow's."""

import copy

import numpy as np
import pytest
from _two_sides import both

import gradkit.tf as gtf

_both = both


def _check(got, want):
    if want is None:
        return
    assert type(got) is type(want)
    if isinstance(got, dict):
        assert sorted(got) == sorted(want)
        for key in got:
            _check(got[key], want[key])
    elif isinstance(got, (list, tuple)):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            _check(a, b)
    elif isinstance(got, np.ndarray):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        assert got == want


# -- 1. a saved function assigning its argument ------------------------------------------------


@pytest.mark.parametrize("variant", ["assign", "assign_times_one", "assign_then_constant"])
def test_a_saved_function_assigning_its_argument_saves_and_assigns(tmp_path, variant):
    def program(tf, path):
        class M(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable([1.0, 2.0])

            @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
            def setv(self, x):
                if variant == "assign":
                    self.v.assign(x)
                elif variant == "assign_times_one":
                    self.v.assign(x * 1.0)
                else:
                    self.v.assign(x)
                    return tf.constant(0)
                return self.v.read_value()

        m = M()
        tf.saved_model.save(m, str(path))
        loaded = tf.saved_model.load(str(path))
        out = loaded.setv(tf.constant([7.0, 8.0])).numpy()
        original = m.setv(tf.constant([7.0, 8.0])).numpy()
        return {"out": out, "v": loaded.v.numpy(), "original": original, "original_v": m.v.numpy()}

    got, want = _both(program, tmp_path)
    np.testing.assert_allclose(got["v"], [7.0, 8.0])
    np.testing.assert_allclose(got["out"], got["original"])
    np.testing.assert_allclose(got["v"], got["original_v"])
    _check(got, want)


# -- 2. signature keywords -------------------------------------------------------------------


SIGNATURES = {
    "named": (lambda tf: [tf.TensorSpec([None], tf.float32, name="features")], lambda self, x: x * 2.0),
    "tuple": (
        lambda tf: [(tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32))],
        lambda self, pair: pair[0] - pair[1],
    ),
    "tuple_named": (
        lambda tf: [(tf.TensorSpec([2], tf.float32, name="a"), tf.TensorSpec([2], tf.float32))],
        lambda self, pair: pair[0] - pair[1],
    ),
    "dict": (
        lambda tf: [{"b": tf.TensorSpec([2], tf.float32), "a": tf.TensorSpec([2], tf.float32)}],
        lambda self, d: d["a"] - d["b"],
    ),
    "nested": (
        lambda tf: [((tf.TensorSpec([2], tf.float32), tf.TensorSpec([2], tf.float32)), tf.TensorSpec([2], tf.float32))],
        lambda self, p: p[0][0] - p[0][1] * p[1],
    ),
    "clash": (
        lambda tf: [tf.TensorSpec([2], tf.float32, name="pair_1"), (tf.TensorSpec([2]), tf.TensorSpec([2]))],
        lambda self, pair_1, pair: pair_1 - pair[0] * pair[1],
    ),
}


@pytest.mark.parametrize("case", sorted(SIGNATURES))
def test_signature_keywords_are_tensorflows(tmp_path, case):
    def program(tf, path):
        make_signature, fn = SIGNATURES[case]
        m = tf.Module()
        m.f = tf.function(fn.__get__(m), input_signature=make_signature(tf))
        tf.saved_model.save(m, str(path), signatures=m.f)
        serve = tf.saved_model.load(str(path)).signatures["serving_default"]
        keywords = sorted(serve.structured_input_signature[1]) if hasattr(serve, "structured_input_signature") else None
        return serve, keywords

    serve, tf_keywords = program(gtf, tmp_path / "gk")
    try:
        import tensorflow as rtf
    except ImportError:
        rtf = None
    if rtf is not None:
        tf_serve, tf_keywords = program(rtf, tmp_path / "tf")
    expected = {
        "named": ["features"],
        "tuple": ["pair", "pair_1"],
        "tuple_named": ["a", "pair"],
        "dict": ["d", "d_1"],
        "nested": ["p", "p_1", "p_2"],
        "clash": ["pair", "pair_1", "pair_2"],
    }[case]
    if tf_keywords is not None:
        assert tf_keywords == expected
    values = {k: np.arange(2, dtype=np.float32) + 3 * i for i, k in enumerate(expected)}
    got = {k: v.numpy() for k, v in serve(**{k: gtf.constant(v) for k, v in values.items()}).items()}
    if rtf is not None:
        want = {k: v.numpy() for k, v in tf_serve(**{k: rtf.constant(v) for k, v in values.items()}).items()}
        _check(got, want)
    if case == "named":
        with pytest.raises(TypeError, match=r"\[gradkit\] the SavedModel signature function 'serving_default' got"):
            serve(x=gtf.constant([1.0, 2.0]))


# -- 3. a concrete function with a Python default as a signature --------------------------------


def test_a_concrete_function_with_a_python_default_is_a_signature(tmp_path):
    def program(tf, path):
        class M(tf.Module):
            def __init__(self):
                super().__init__()
                self.k = tf.Variable(2.0)

            @tf.function
            def f(self, x, training=False):
                return x * self.k + (1.0 if training else 0.0)

        m = M()
        concrete = m.f.get_concrete_function(tf.TensorSpec([None], tf.float32))
        tf.saved_model.save(m, str(path), signatures={"serve": concrete})
        served = tf.saved_model.load(str(path)).signatures["serve"](x=tf.constant([1.0, 2.0, 3.0]))
        return {k: v.numpy() for k, v in served.items()}, m.f(tf.constant([1.0, 2.0, 3.0])).numpy()

    (got, original), want = _both(program, tmp_path)
    np.testing.assert_allclose(got["output_0"], original)
    _check(got, None if want is None else want[0])


# -- 4. a Module without functions; a loaded object saved again ------------------------------


def test_a_module_without_functions_saves_its_variables(tmp_path):
    def program(tf, path):
        m = tf.Module()
        m.v = tf.Variable([1.0, 2.0])
        m.sub = tf.Module()
        m.sub.w = tf.Variable(3.0)
        tf.saved_model.save(m, str(path))
        loaded = tf.saved_model.load(str(path))
        loaded.v.assign([4.0, 5.0])
        # Saved again (no functions): the values it holds now.
        tf.saved_model.save(loaded, str(path) + "_again")
        again = tf.saved_model.load(str(path) + "_again")
        return [loaded.v.numpy(), loaded.sub.w.numpy(), again.v.numpy(), again.sub.w.numpy()]

    got, want = _both(program, tmp_path)
    np.testing.assert_allclose(got[0], [4.0, 5.0])
    np.testing.assert_allclose(got[1], 3.0)
    np.testing.assert_allclose(got[2], [4.0, 5.0])
    np.testing.assert_allclose(got[3], 3.0)
    _check(got, want)


def test_a_loaded_object_with_functions_is_refused_with_advice(tmp_path):
    class M(gtf.Module):
        def __init__(self):
            super().__init__()
            self.v = gtf.Variable(2.0)

        @gtf.function(input_signature=[gtf.TensorSpec([None], gtf.float32)])
        def f(self, x):
            return x * self.v

    gtf.saved_model.save(M(), str(tmp_path / "a"))
    loaded = gtf.saved_model.load(str(tmp_path / "a"))
    with pytest.raises(
        NotImplementedError, match=r"\[gradkit\] saved_model.save got an object loaded .*Save the original"
    ):
        gtf.saved_model.save(loaded, str(tmp_path / "b"))
    assert not (tmp_path / "b").exists()


# -- 5. Variables declared with a None size ------------------------------------------------------


@pytest.mark.parametrize("shape", [None, [None]])
def test_a_checkpoint_restores_into_a_variable_declared_with_a_none_size(tmp_path, shape):
    def program(tf, path):
        saved = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0, 3.0])).save(str(path / "c"))
        w = tf.Variable([0.0, 0.0], shape=tf.TensorShape(shape))
        tf.train.Checkpoint(v=w).restore(saved).assert_consumed()
        return w.numpy()

    got, want = _both(program, tmp_path)
    np.testing.assert_allclose(got, [1.0, 2.0, 3.0])
    _check(got, want)


def test_a_checkpoint_of_another_rank_is_refused_for_a_declared_none_size(tmp_path):
    saved = gtf.train.Checkpoint(v=gtf.Variable([[1.0, 2.0]])).save(str(tmp_path / "c"))
    w = gtf.Variable([0.0, 0.0], shape=gtf.TensorShape([None]))
    with pytest.raises(
        ValueError, match=r"\[gradkit\] The checkpoint's value .* has shape \(1, 2\).*\(None,\) \(declared"
    ):
        gtf.train.Checkpoint(v=w).restore(saved)
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])


def test_a_saved_model_keeps_a_variable_declared_with_a_none_size(tmp_path):
    def program(tf, path):
        class M(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable([1.0, 2.0], shape=tf.TensorShape([None]))

            @tf.function(input_signature=[])
            def f(self):
                return self.v * 2.0

        m = M()
        tf.saved_model.save(m, str(path))
        loaded = tf.saved_model.load(str(path))
        first = loaded.f().numpy()
        loaded.v.assign([1.0, 2.0, 3.0])
        return [first, m.f().numpy(), loaded.f().numpy(), loaded.v.shape.as_list()]

    got, want = _both(program, tmp_path)
    np.testing.assert_allclose(got[0], got[1])
    np.testing.assert_allclose(got[2], [2.0, 4.0, 6.0])
    assert got[3] == [None]
    _check(got, want)


# -- 6. deepcopy of a Module holding a tf.function -----------------------------------------------


@pytest.mark.parametrize("variant", ["method", "attribute"])
def test_deepcopy_of_a_module_holding_a_tf_function(variant):
    def program(tf):
        class M(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable([1.0, 2.0])

            @tf.function
            def f(self, x):
                return x * self.v

        m = M()
        m.g = tf.function(lambda x: x + 1.0, reduce_retracing=True)
        if variant == "method":
            m.f(tf.constant([1.0, 1.0]))
        c = copy.deepcopy(m)
        c.v.assign([5.0, 5.0])
        return [
            c.f(tf.constant([1.0, 1.0])).numpy(),
            m.f(tf.constant([1.0, 1.0])).numpy(),
            c.g(tf.constant(1.0)).numpy(),
            c.g is not m.g,
            c.g.python_function is m.g.python_function,
        ]

    got = program(gtf)
    assert [np.asarray(x).tolist() for x in got] == [[5.0, 5.0], [1.0, 2.0], 2.0, True, True]
    try:
        import tensorflow as rtf
    except ImportError:
        return
    _check(got, program(rtf))
