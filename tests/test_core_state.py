"""State: an immutable pytree mapping Variables to values."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _oracles import assert_close

import gradkit as gk


@pytest.fixture
def abw():
    return (
        gk.Variable(1.0, name="a"),
        gk.Variable(2.0, name="b"),
        gk.Variable(np.arange(4.0, dtype=np.float32), name="w"),
    )


def test_assign_returns_new_state_and_leaves_the_old_one(abw):
    a, b, w = abw
    s = gk.State.of([a, w])
    s2 = s.assign(a, 5.0)
    s3 = s2.assign_add(a, 1.0).assign_sub(w, 1.0)
    assert (float(s[a]), float(s2[a]), float(s3[a])) == (1.0, 5.0, 6.0)
    assert_close(s3[w], np.arange(4.0) - 1.0)
    assert_close(s[w], np.arange(4.0))
    assert float(a.value) == 1.0  # no State operation touches the live Variable


def test_state_is_immutable(abw):
    a, _, _ = abw
    s = gk.State.of([a])
    with pytest.raises(AttributeError, match=r"^\[gradkit\] a State is immutable"):
        s.anything = 1


def test_at_index_set(abw):
    _, _, w = abw
    s = gk.State.of([w])
    s2 = s.at[w][1:3].set(jnp.array([10.0, 20.0]))
    assert_close(s2[w], np.array([0.0, 10.0, 20.0, 3.0], np.float32))
    assert_close(s.at[w][0].add(5.0)[w], np.array([5.0, 1.0, 2.0, 3.0], np.float32))
    assert_close(s[w], np.arange(4.0, dtype=np.float32))
    assert float(s2.at[w][2].get()) == 20.0


def test_a_variable_in_a_state_index_is_refused_with_both_readings_offered(abw):
    _, _, w = abw
    k = gk.Variable(np.array([1, 2]), name="k")
    s = gk.State.of([w, k]).assign(k, np.array([0, 3]))
    for index in (k, k[0], slice(None, k[0])):
        with pytest.raises(TypeError, match=r"^\[gradkit\] state.at\['w'\]\[...\] got .*Variable 'k'"):
            s.at[w][index].set(9.0)
    # The two readings it offers, by hand: the State's value [0, 3], the live value [1, 2].
    assert_close(s.at[w][s[k]].set(9.0)[w], np.array([9.0, 1.0, 2.0, 9.0], np.float32))
    assert_close(s.at[w][k.value].set(9.0)[w], np.array([0.0, 9.0, 9.0, 3.0], np.float32))


def test_a_variable_has_no_jax_at_and_says_what_to_write_instead(abw):
    _, _, w = abw
    with pytest.raises(AttributeError, match=r"^\[gradkit\] Variable 'w' has no \.at: .*v\[idx\]\.assign\(p\)"):
        w.at[0].set(1.0)
    assert not hasattr(w, "at")


def test_of_dedups_and_reads_nested_structures(abw):
    a, b, w = abw
    s = gk.State.of([a, (b, a), {"z": w, "again": b}])
    assert len(s) == 3
    assert list(s) == [a, b, w]  # first appearance, in jax's flattening order
    assert a in s and gk.Variable(1.0) not in s


def test_constructor_validates_and_keeps_last_duplicate(abw):
    a, _, w = abw
    s = gk.State([(a, 1.0), (a, 7.0)])
    assert len(s) == 1 and float(s[a]) == 7.0
    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\] cannot assign a value of shape \(2,\)"):
        gk.State({w: jnp.ones(2)})
    with pytest.raises(TypeError, match=r"^\[gradkit\] State keys must be Variables"):
        gk.State({"a": 1.0})


def test_missing_variable_is_a_clear_error(abw):
    a, b, _ = abw
    with pytest.raises(gk.GradkitError, match=r"^\[gradkit\] Variable 'b' is not in this State"):
        gk.State.of([a])[b]


def test_commit_writes_back(abw):
    a, b, w = abw
    s = gk.State.of([a, w]).assign(a, 9.0).at[w][0].set(-1.0)
    s.commit()
    assert float(a.value) == 9.0 and float(b.value) == 2.0
    assert_close(w.value, np.array([-1.0, 1.0, 2.0, 3.0], np.float32))


def test_merge_right_wins(abw):
    a, b, w = abw
    merged = gk.State({a: 1.0, w: np.zeros(4, np.float32)}) | gk.State({b: 5.0, a: 3.0})
    assert list(merged) == [a, w, b]
    assert (float(merged[a]), float(merged[b])) == (3.0, 5.0)


def test_pytree_leaves_and_tree_map(abw):
    a, b, w = abw
    s = gk.State.of([a, b, w])
    leaves = jax.tree.leaves(s)
    assert_close(leaves, [jnp.float32(1.0), jnp.float32(2.0), jnp.arange(4.0)])
    doubled = jax.tree.map(lambda x: x * 2, s)
    assert isinstance(doubled, gk.State) and float(doubled[b]) == 4.0
    # Paths name the Variables, for error messages and checkpoint keys.
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(s)[0]]
    assert paths == ["['a']", "['b']", "['w']"]


def test_jax_jit_and_grad_over_state(abw):
    a, _, w = abw
    s = gk.State.of([a, w])

    def loss(state):
        return state[a] * jnp.sum(state[w] ** 2)

    grads = jax.jit(jax.grad(loss))(s)
    # Hand derivation: d/da = sum(w^2) = 14; d/dw = 2 a w.
    assert float(grads[a]) == 14.0
    assert_close(grads[w], 2.0 * np.arange(4.0, dtype=np.float32))


def test_vmap_over_batched_state(abw):
    a, _, w = abw
    s = gk.State.of([a, w])
    batch = jax.tree.map(lambda x: jnp.stack([x, x + 1.0, x * 3.0]), s)
    out = jax.vmap(lambda st: st[a] * jnp.sum(st[w]))(batch)
    # Per example: a * sum(w) with (a, w) = (1, w), (2, w + 1), (3, 3w); sum(w) = 6.
    assert_close(out, jnp.array([6.0, 2.0 * 10.0, 3.0 * 18.0]))


@pytest.mark.parametrize("optimizer", [optax.sgd(0.1), optax.adam(0.1)], ids=["sgd", "adam"])
def test_optax_update_over_state(abw, optimizer):
    a, _, w = abw
    s = gk.State.of([a, w])

    def loss(state):
        return state[a] ** 2 + jnp.sum(state[w] ** 2)

    params = {"a": jnp.float32(1.0), "w": jnp.arange(4.0)}
    opt_state, ref_state = optimizer.init(s), optimizer.init(params)
    for _ in range(3):
        updates, opt_state = optimizer.update(jax.grad(loss)(s), opt_state, s)
        s = gk.apply_updates(s, updates)
        ref_updates, ref_state = optimizer.update(
            jax.grad(lambda p: p["a"] ** 2 + jnp.sum(p["w"] ** 2))(params), ref_state, params
        )
        params = optax.apply_updates(params, ref_updates)
    assert isinstance(s, gk.State)
    assert_close([s[a], s[w]], [params["a"], params["w"]])
    assert float(a.value) == 1.0


def test_a_tapes_gradients_in_a_state_go_to_optax(abw):
    a, _, w = abw
    optimizer = optax.adam(0.1)
    s = gk.State.of([a, w])
    with gk.GradientTape() as tape:
        loss = a**2 + gk.numpy.sum(w**2)
    grads = gk.State(dict(zip([a, w], tape.gradient(loss, [a, w]))))
    assert jax.tree_util.tree_structure(grads) == jax.tree_util.tree_structure(s)  # arrays, as in s
    updates, _ = optimizer.update(grads, optimizer.init(s), s)
    params = {"a": jnp.float32(1.0), "w": jnp.arange(4.0)}  # the oracle: the same step on a dict
    ref_grads = jax.grad(lambda p: p["a"] ** 2 + jnp.sum(p["w"] ** 2))(params)
    ref, _ = optimizer.update(ref_grads, optimizer.init(params), params)
    assert_close([updates[a], updates[w]], [ref["a"], ref["w"]])


def test_apply_updates_to_variables(abw):
    a, _, w = abw
    grads = gk.grad(lambda: a**2 + jnp.sum(w**2), wrt=[a, w])()
    updates, _ = optax.sgd(0.5).update(grads, optax.sgd(0.5).init(grads))
    returned = gk.apply_updates([a, w], updates)
    assert returned[0] is a
    # a - 0.5 * 2a = 0; w - 0.5 * 2w = 0.
    assert float(a.value) == 0.0
    assert_close(w.value, np.zeros(4, np.float32))


def test_apply_updates_takes_python_scalars(abw):
    a, _, w = abw
    # The oracle: optax.apply_updates on the same values as a plain pytree.
    updates = {"a": 0.5, "w": np.arange(4.0) / 4}
    want = optax.apply_updates({"a": jnp.float32(1.0), "w": jnp.arange(4.0)}, updates)
    gk.apply_updates([a, w], [updates["a"], updates["w"]])
    assert_close([a.value, w.value], [want["a"], want["w"]])
    assert a.dtype == jnp.float32 and w.dtype == jnp.float32


def test_apply_updates_bad_update_changes_nothing(abw):
    a, _, w = abw
    with pytest.raises(
        gk.GradkitError, match=r"^\[gradkit\] apply_updates: the update for Variable 'w' has shape \(3,\)"
    ):
        gk.apply_updates([a, w], [jnp.float32(1.0), jnp.ones(3)])
    assert float(a.value) == 1.0
    assert_close(w.value, np.arange(4.0, dtype=np.float32))


def test_repr_is_readable(abw):
    a, _, w = abw
    assert repr(gk.State.of([a, w])) == "State({a: 1., w: [0., 1., 2., 3.]})"


def test_pickle_copy_and_deepcopy_round_trip(abw):
    # Checkpointing a State with pickle (or copying it) must keep it a usable State: its
    # entries are found through the Variables the copy holds.
    import copy
    import pickle

    a, b, w = abw
    state = gk.State.of([a, w])
    for twin, twin_a, twin_w in (pickle.loads(pickle.dumps((state, a, w))), copy.deepcopy((state, a, w))):
        assert twin.variables == (twin_a, twin_w)
        assert_close(twin[twin_a], state[a])
        assert_close(twin[twin_w], state[w])
        assert twin_a in twin and a not in twin
    shallow = copy.copy(state)
    assert shallow.variables == state.variables
    assert_close(shallow[w], state[w])
    spec = pickle.loads(pickle.dumps(state.axes({w: 0}, default=None)))
    with pytest.raises(TypeError, match="state.axes"):
        spec.commit()


def test_a_donated_state_of_live_variables_is_committed_before_they_are_read(abw):
    # A State holds the Variables' own buffers (no copy per step), so donating it donates them,
    # as donating any JAX array does: the step's result, committed, is what they hold then.
    a, b, w = abw
    step = jax.jit(lambda s: jax.tree.map(lambda x: x + 1, s), donate_argnums=0)
    for k in (1, 2):
        step(gk.State.of([a, w])).commit()
        assert_close(a.value, 1.0 + k)
        assert_close(w.value, np.arange(4.0) + k)


def test_apply_updates_to_a_state_refuses_a_broadcasting_update(abw):
    # p + u would broadcast: the new State would hold w at another shape than the Variable's,
    # as apply_updates on the Variables themselves refuses.
    a, _, w = abw
    state = gk.State.of([a, w])
    updates = jax.tree.map(jnp.sum, state)  # w's update is a scalar
    with pytest.raises(
        gk.GradkitError, match=r"^\[gradkit\] apply_updates: the update for Variable 'w' has shape \(\)"
    ):
        gk.apply_updates(state, updates)
    # A batched State (per-example) takes updates of its own shapes.
    batch = jax.tree.map(lambda x: jnp.stack([x, x]), state)
    new = gk.apply_updates(batch, jax.tree.map(jnp.ones_like, batch))
    assert_close(new[w], np.stack([np.arange(4.0) + 1] * 2))


def test_key_paths_are_distinct_when_names_repeat():
    # A checkpoint keyed by paths (a dict {keystr(path): leaf}) must keep every Variable.
    u, v, x = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0, name="Variable#0")
    state = gk.State.of([u, x, v])
    flat = {jax.tree_util.keystr(p): leaf for p, leaf in jax.tree_util.tree_flatten_with_path(state)[0]}
    assert len(flat) == 3
    assert sorted(float(leaf) for leaf in flat.values()) == [1.0, 2.0, 3.0]
    assert flat["['Variable#0']"] == 3.0
