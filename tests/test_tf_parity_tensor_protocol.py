"""Tensors and Variables in Python's and NumPy's protocols, as TensorFlow's eager ones behave:
``==`` across shapes that do not broadcast (so ``v in variables`` works), NumPy functions on a
Variable, a Variable slice shown and converted as the tensor it reads, ``f"{t}"``, ``bool`` of an
empty tensor, ``hasattr(x, "numpy")`` inside ``tf.function``, ``.device`` and the older names.
Each program runs on real TensorFlow too where it is installed (the oracle); the expected values
written here are NumPy's or Python's."""

import re

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

TFS = [pytest.param("gk", id="gradkit"), pytest.param("tf", id="tensorflow")]


def _tf(which):
    return gtf if which == "gk" else pytest.importorskip("tensorflow")


@pytest.mark.parametrize("which", TFS)
def test_membership_and_list_methods_over_variables_of_different_shapes(which):
    tf = _tf(which)
    a, b, c = tf.Variable([1.0, 2.0]), tf.Variable([1.0, 2.0, 3.0]), tf.Variable(4.0)
    variables = [a, b]
    assert b in variables and variables.index(b) == 1
    variables.remove(b)
    assert variables == [a] or len(variables) == 1 and variables[0] is a
    assert tf.Variable([1.0, 2.0, 3.0, 4.0]) not in [a, b]
    # a scalar broadcasts against every shape: compared elementwise, as before
    assert np.array_equal((a == c).numpy(), [False, False])


@pytest.mark.parametrize("which", TFS)
def test_equality_of_shapes_that_do_not_broadcast_is_a_scalar(which):
    tf = _tf(which)
    x = tf.constant([1.0, 2.0])
    for other in (tf.constant([1.0, 2.0, 3.0]), [1.0, 2.0, 3.0], np.ones(3, np.float32), tf.Variable([1.0, 2.0, 3.0])):
        eq, ne = x == other, x != other
        assert eq.shape == () and ne.shape == ()
        assert bool(eq) is False and bool(ne) is True
    assert (x == None) is False and (x != None) is True  # noqa: E711 (the operator is what is tested)
    assert np.array_equal((x == tf.constant([1.0, 5.0])).numpy(), [True, False])


@pytest.mark.parametrize("which", TFS)
def test_equality_of_shapes_that_do_not_broadcast_inside_a_function_and_under_a_tape(which):
    tf = _tf(which)

    @tf.function
    def equal(x, y):
        return x == y, x != y

    eq, ne = equal(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))
    assert (bool(eq), bool(ne)) == (False, True)
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape():
        y = v * 2.0
        assert bool(y == tf.constant([2.0, 4.0, 6.0])) is False
        assert np.array_equal((y == np.array([2.0, 0.0], np.float32)).numpy(), [True, False])


@pytest.mark.parametrize("which", TFS)
def test_numpy_functions_on_a_variable_give_numpy_values(which):
    tf = _tf(which)
    v = tf.Variable([[1.0, 2.0], [5.0, 3.0]])
    value = np.array([[1.0, 2.0], [5.0, 3.0]], np.float32)
    for fn in (np.sum, np.mean, np.max, np.argmax, np.cumsum, np.squeeze, np.round, np.real, np.transpose):
        out = fn(v)
        assert isinstance(out, (np.ndarray, np.generic)), (fn, type(out))
        np.testing.assert_array_equal(out, fn(value))
    np.testing.assert_array_equal(np.sum(v, axis=0), [6.0, 5.0])
    flat = np.reshape(v, (-1,))
    flat[0] = 9.0  # a NumPy array of its own: the Variable is unchanged
    np.testing.assert_array_equal(v.numpy(), value)


def test_native_variable_methods_stay_jax_values():
    v = gk.Variable(np.ones(3, np.float32))
    assert not isinstance(v.sum(), np.ndarray) and float(v.sum()) == 3.0
    assert isinstance(np.sum(v), np.generic) and np.sum(v) == 3.0


@pytest.mark.parametrize("which", TFS)
def test_a_variable_slice_shows_and_converts_as_the_tensor_it_reads(which):
    tf = _tf(which)
    v = tf.Variable([1.5, 2.0])
    assert f"{v[0]}" == "1.5" and f"{v[0]:.2f}" == "1.50"
    assert re.search(r"\(1\.5,? shape=\(\), dtype=float32\)", str(v[0]))
    assert "numpy=1.5" in repr(v[0])
    assert type(v[0].numpy()) is np.float32
    rows = list(tf.Variable([[1.0, 2.0], [3.0, 4.0]])[0])
    assert [float(r) for r in rows] == [1.0, 2.0] and all(hasattr(r, "numpy") for r in rows)


@pytest.mark.parametrize("which", TFS)
def test_format_without_a_spec_is_the_value(which):
    tf = _tf(which)
    assert f"loss={tf.constant(0.25)}" == "loss=0.25"
    assert f"{tf.constant(3)}" == "3"
    assert f"{tf.constant([1.0, 2.0])}" == str(np.array([1.0, 2.0], np.float32))


@pytest.mark.parametrize("which", TFS)
def test_an_empty_tensor_is_false(which):
    tf = _tf(which)
    assert bool(tf.zeros([0])) is False and bool(tf.zeros([2, 0])) is False
    assert bool(tf.constant([3.0])) is True
    with pytest.raises(ValueError):
        bool(tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("which", TFS)
def test_a_traced_tensor_has_no_numpy(which):
    tf = _tf(which)
    seen = []

    @tf.function
    def f(x):
        seen.append((hasattr(x, "numpy"), x.device))
        return x * 2.0

    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    assert seen[0] == (False, "")

    @tf.function
    def g(x):
        return x.numpy()

    with pytest.raises(AttributeError, match="numpy"):
        g(tf.constant(1.0))


def test_calling_numpy_inside_a_function_explains_the_way_out():
    @gtf.function
    def g(x):
        return x.numpy()

    with pytest.raises(gtf.errors.OperatorNotAllowedInGraphError, match=r"^\[gradkit\].*Return the tensor"):
        g(gtf.constant(1.0))


def test_python_control_flow_inside_a_function_keeps_its_own_explanation():
    @gtf.function
    def f(x):
        return x if x > 0 else -x

    with pytest.raises(gtf.errors.OperatorNotAllowedInGraphError, match="Python control flow"):
        f(gtf.constant(1.0))


@pytest.mark.parametrize("which", TFS)
def test_device_names_and_older_names(which):
    tf = _tf(which)
    v, t = tf.Variable(1.0), tf.constant([1.0])
    pattern = r"/job:localhost/replica:0/task:0/device:(CPU|GPU|TPU):\d+"
    for name in (v.device, t.device, t.backing_device, (t * 2.0).device):
        assert re.fullmatch(pattern, name), name
    assert bool(v.is_initialized()) is True and v.initializer is None
    assert v.experimental_ref().deref() is v and t.experimental_ref().deref() is t
    assert t.experimental_ref() == t.ref()


def test_device_name_is_where_jax_keeps_the_value():
    import jax

    device = jax.devices()[0]
    kind = {"cpu": "CPU", "tpu": "TPU"}.get(device.platform, "GPU")
    assert gtf.constant(1.0).device == f"/job:localhost/replica:0/task:0/device:{kind}:{device.id}"


@pytest.mark.parametrize("which", TFS)
def test_print_sorts_a_dicts_keys(which, capfd):
    import sys

    tf = _tf(which)
    tf.print({"loss": 0.5, "acc": [1, 2]}, {"z": {"y": 1, "x": 2}, "a": 3}, output_stream=sys.stdout)
    assert capfd.readouterr().out == "{'acc': [1, 2], 'loss': 0.5} {'a': 3, 'z': {'x': 2, 'y': 1}}\n"
