"""An integer index outside its axis, given to a Variable's slice, is refused as NumPy refuses it
(jax would clamp a read and drop a write, silently), on every path: eager, under a tape, inside
``gk.grad`` and ``gk.jit``, and through ``State.at``; the Variable is left unchanged. Oracle:
NumPy's own indexing of the same array."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

START = np.array([1.0, 2.0, 3.0], np.float32)


def _numpy_refuses(index) -> bool:
    try:
        START.copy()[index] = 9.0
    except IndexError:
        return True
    return False


def _paths(v):
    return {
        "eager assign": lambda index: v[index].assign(9.0),
        "eager read": lambda index: v[index] * 1.0,
        "assign under a tape": lambda index: _under_tape(lambda: v[index].assign(9.0)),
        "gk.grad": lambda index: gk.grad(lambda: jnp.sum(v[index].assign(9.0) * 1.0), wrt=v)(),
        "gk.jit": lambda index: gk.jit(lambda: v[index].assign(9.0) * 1.0)(),
        "State.at": lambda index: gk.State.of([v]).at[v][index].set(9.0),
    }


def _under_tape(fn):
    with gk.GradientTape():
        return fn()


@pytest.mark.parametrize("index", [3, -4, np.int64(7), np.array([0, 5]), jnp.array([5]), (slice(None), ...)])
@pytest.mark.parametrize("path", sorted(_paths(None)))
def test_out_of_range_indices_are_refused_as_numpy_refuses_them(path, index):
    v = gk.Variable(jnp.asarray(START), name="v")
    run = _paths(v)[path]
    if _numpy_refuses(np.asarray(index) if isinstance(index, jnp.ndarray) else index):
        with pytest.raises(IndexError, match=r"\[gradkit\] index -?\d+ is out of bounds for axis 0 with size 3"):
            run(index)
    else:
        run(index)
        return
    np.testing.assert_array_equal(v.numpy(), START)


GRID = np.arange(12.0, dtype=np.float32).reshape(3, 4)
BAD_MASKS = [
    np.array([True, False]),  # short: jax would read it as the indices of its True entries
    np.array([False, True, False, True]),  # long
    (slice(None), np.array([True, False, True])),
    (Ellipsis, np.array([True, False, True])),
    np.ones((3, 3), bool),
    jnp.array([True, False]),
]


def _mask_paths(v):
    return {
        **_paths(v),
        "tensor read under a tape": lambda index: _under_tape(lambda: (v * 1.0)[index]),
        "tensor .at under a tape": lambda index: _under_tape(lambda: (v * 1.0).at[index].set(9.0)),
    }


@pytest.mark.parametrize("index", BAD_MASKS, ids=repr)
@pytest.mark.parametrize("path", sorted(_mask_paths(None)))
def test_a_boolean_mask_of_the_wrong_shape_is_refused_as_numpy_refuses_it(path, index):
    grid = np.arange(3.0, dtype=np.float32) if type(index) is not tuple and index.ndim == 1 else GRID
    with pytest.raises(IndexError):
        grid.copy()[index if type(index) is tuple else np.asarray(index)]
    v = gk.Variable(jnp.asarray(grid), name="v")
    with pytest.raises(IndexError, match=r"\[gradkit\] a boolean mask of shape .* cannot index ax"):
        _mask_paths(v)[path](index)
    np.testing.assert_array_equal(v.numpy(), grid)


@pytest.mark.parametrize("index", [(Ellipsis, np.array([True, False, True, False])), GRID > 4.5, (True, 1)], ids=repr)
def test_masks_of_the_right_shape_write_where_numpy_writes(index):
    v = gk.Variable(jnp.asarray(GRID), name="v")
    v[index].assign(-1.0)
    expected = GRID.copy()
    expected[index] = -1.0
    np.testing.assert_array_equal(v.numpy(), expected)
    np.testing.assert_array_equal(np.asarray(v[index]), GRID[index] * 0.0 - 1.0)


@pytest.mark.parametrize("index", [2, -3, np.array([0, -1])])
def test_in_range_indices_write_where_numpy_writes(index):
    v = gk.Variable(jnp.asarray(START), name="v")
    v[index].assign(9.0)
    expected = START.copy()
    expected[index] = 9.0
    np.testing.assert_array_equal(v.numpy(), expected)


def test_jax_modes_asked_for_by_name_keep_jaxs_behaviour():
    v = gk.Variable(jnp.asarray(START), name="v")
    state = gk.State.of([v]).at[v][5].set(9.0, mode="drop")
    np.testing.assert_array_equal(np.asarray(state[v]), START)


@pytest.mark.parametrize("index", [5, -9])
def test_jax_clip_mode_writes_as_jax_does_on_every_path(index):
    # jax clamps the index in mode="clip": 5 writes the last element, -9 the first.
    expected = jnp.asarray(START).at[index].set(9.0, mode="clip")
    v = gk.Variable(jnp.asarray(START), name="v")
    np.testing.assert_array_equal(np.asarray(gk.State.of([v]).at[v][index].set(9.0, mode="clip")[v]), expected)
    np.testing.assert_array_equal(np.asarray(gk.Tensor(jnp.asarray(START)).at[index].set(9.0, mode="clip")), expected)
    with gk.GradientTape() as tape:
        y = v.read_value().at[index].set(v[0] * 10.0, mode="clip")
        loss = gk.numpy.sum(y)
    grad = jax.grad(lambda a: jnp.sum(a.at[index].set(a[0] * 10.0, mode="clip")))(jnp.asarray(START))
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, v)), grad)
