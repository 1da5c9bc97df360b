"""gk.Tensor has jax.Array's methods and properties (clip, cumsum, std, at[...].set, real, mT, ...),
each recorded under a tape: values and gradients equal jax's on plain arrays (the oracle), on
recorded and on concrete tensors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close

import gradkit as gk

gnp = gk.numpy
X0 = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4) / 10

CASES = {
    "mT": lambda a: a.mT,
    "std": lambda a: a.std(),
    "var": lambda a: a.var(axis=0, ddof=1),
    "cumsum": lambda a: a.cumsum(axis=1),
    "cumprod": lambda a: a.cumprod(axis=0),
    "ravel": lambda a: a.ravel(),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "clip": lambda a: a.clip(0.2, 0.8),
    "round": lambda a: a.round(1) + a,
    "dot": lambda a: a.dot(a.T),
    "take": lambda a: a.take(jnp.array([1, 5])),
    "repeat": lambda a: a.repeat(2, axis=0),
    "sort": lambda a: a.sort(axis=1),
    "argsort": lambda a: a.argsort(axis=1) * 1.0 + a,
    "argmax": lambda a: a + a.argmax(),
    "ptp": lambda a: a.ptp(axis=1),
    "trace": lambda a: a[:, :3].trace(),
    "diagonal": lambda a: a.diagonal(),
    "conj": lambda a: a.conj(),
    "real_imag": lambda a: a.real + a.imag,
    "any_all": lambda a: a * a.any() * a.all(),
    "copy": lambda a: a.copy() * 2,
    "sum_where": lambda a: a.sum(axis=1, where=jnp.array([True, False, True, True])),
    "max_initial": lambda a: a.max(axis=0, initial=0.5),
    "mean_keepdims": lambda a: a.mean(axis=1, keepdims=True),
    "squeeze": lambda a: a[None].squeeze(),
    "at_set": lambda a: a.at[0, 1].set(5.0),
    "at_add_tensor": lambda a: a.at[:, 0].add(a[:, 1]),
    "at_multiply": lambda a: a.at[1].multiply(3.0),
    "at_get": lambda a: a.at[jnp.array([0, 2]), 1:].get(),
    "at_max": lambda a: a.at[0].max(0.3),
    "sizes": lambda a: a * a.itemsize + a.nbytes,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_array_method_value_and_gradient_match_jax(name):
    f = CASES[name]
    want = f(jnp.asarray(X0))
    want_grad = jax.grad(lambda a: jnp.sum(jnp.sin(f(a))))(jnp.asarray(X0))
    v = gk.Variable(X0)
    with gk.GradientTape() as tape:
        y = f(gnp.multiply(v, 1.0))
        loss = gnp.sum(gnp.sin(y))
    assert_close(np.asarray(y), np.asarray(want))
    assert_close(np.asarray(tape.gradient(loss, v)), np.asarray(want_grad))
    assert_close(np.asarray(f(gk.Tensor(jnp.asarray(X0)))), np.asarray(want))  # a concrete tensor: eager


def test_at_update_leaves_the_tensor_unchanged_and_names_the_updates_on_a_typo():
    t = gk.Tensor(jnp.ones(3))
    u = t.at[1].set(5.0)
    assert_close(np.asarray(u), np.array([1.0, 5.0, 1.0], np.float32))
    assert_close(np.asarray(t), np.ones(3, np.float32))
    with pytest.raises(AttributeError, match=r"^\[gradkit\] t.at\[...\] has no update 'sett'; the updates are add"):
        t.at[0].sett(1.0)


@pytest.mark.parametrize(
    "method",
    [
        lambda t, h: t.clip(0.1, h),
        lambda t, h: t.clip(max=h),
        lambda t, h: t.at[0, 0].set(h),
        lambda t, h: t.at[0].multiply(h),
    ],
)
def test_a_float_argument_of_clip_or_an_update_is_a_runtime_value(method):
    from _oracles import count_compiles

    w = gk.Variable(X0)
    compiles, grads = [], []
    # The first two values warm up (the first step of a fresh process may compile a second time,
    # for the tape's own helpers); every new value after them must reuse the compiled program.
    for h in [0.2, 0.25, 0.3, 0.4, 0.5, 0.6]:

        def step(h=h):
            with gk.GradientTape() as tape:
                y = gnp.sum(method(w * 1.0, h) ** 2)
            grads.append(np.asarray(tape.gradient(y, w)))

        compiles.append(count_compiles(step))
        want = jax.grad(lambda u, h=h: jnp.sum(method(u * 1.0, h) ** 2))(jnp.asarray(X0))
        assert_close(grads[-1], np.asarray(want))
    assert compiles[2:] == [0, 0, 0, 0], compiles


@pytest.mark.parametrize(
    "index",
    [np.True_, np.False_, np.array(True), (1, np.True_), (np.True_, slice(1, 3))],
    ids=["np.True_", "np.False_", "0-d array", "int, np.True_", "np.True_, slice"],
)
def test_a_numpy_scalar_boolean_index_adds_an_axis_as_in_numpy(index):
    """``t[np.True_]`` adds an axis of length 1 (0 for False), as NumPy and ``t[True]`` do;
    jax reads a NumPy boolean scalar as a mask it cannot trace. Oracle: NumPy's shape and
    jax.grad of the same indexing on a plain array, where the index is a Python bool."""
    as_python = (
        tuple(bool(i) if isinstance(i, (np.bool_, np.ndarray)) else i for i in index)
        if type(index) is tuple
        else bool(index)
    )
    v = gk.Variable(X0)
    with gk.GradientTape() as tape:
        y = (v * 2.0)[index]
        loss = gnp.sum(gnp.sin(y))
    assert y.shape == X0[index].shape
    expected = jax.grad(lambda a: jnp.sum(jnp.sin((a * 2.0)[as_python])))(jnp.asarray(X0))
    assert_close(tape.gradient(loss, v).numpy(), np.asarray(expected))


@pytest.mark.parametrize("kind", ["tensor", "variable", "gk.Variable"])
def test_a_list_index_raises_a_clear_error_naming_both_meanings(kind):
    """TensorFlow reads ``t[[0, 1]]`` as ``t[0, 1]``, NumPy as rows 0 and 1, and jax refuses it;
    gradkit refuses it with an error naming both spellings rather than guess. Oracle: NumPy's
    values for the two spellings the error suggests."""
    import gradkit.tf as gtf

    value = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = {"tensor": gtf.constant(value), "variable": gtf.Variable(value), "gk.Variable": gk.Variable(value)}[kind]
    with pytest.raises(TypeError, match=r"\[gradkit\] a list index \[0, 1\].*t\[0, 1\].*np\.array"):
        x[[0, 1]]
    assert float(np.asarray(x[0, 1])) == value[0, 1]
    assert np.asarray(x[np.array([0, 1])]).shape == value[np.array([0, 1])].shape
