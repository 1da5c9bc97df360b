"""A Variable created on a ``tf.function``'s (``gk.jit``'s) first call from a value whose computation
assigns another Variable: a ``tf.random.Generator`` draw (which advances the generator's state), a
counter incremented while the Variable is created. The initial value is lifted out of the call; the
assignment it took part in is applied once with it, so the call's own draws (on the first call and
later) are not the initializer's. Oracles: real TensorFlow (whose numbers differ, so draws are
compared with each other, as in test_tf_parity_random_extras.py), and jax.random by hand (a
Generator's state is a jax.random key: each draw splits it, keeps the first half and draws with the
second)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf
from gradkit._errors import GradkitError


def _same(a, b) -> bool:
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def _noisy_layer(tf, g):
    """A layer whose weights are drawn from ``g`` on its first call, which then adds noise from ``g`` at each call."""

    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(g.normal((3, 2)))
            return x * g.normal((3, 2))

    return M()


def p_generator_initializer_then_the_calls_draws(tf):
    g, twin = tf.random.Generator.from_seed(1), tf.random.Generator.from_seed(1)

    m = _noisy_layer(tf, g)
    first, second = m(tf.constant(1.0)), m(tf.constant(1.0))
    eager = [twin.normal((3, 2)) for _ in range(3)]  # the same draws, one after another
    return [
        _same(m.w, eager[0]),
        _same(first, eager[1]),
        _same(second, eager[2]),
        _same(g.state, twin.state),
        _same(first, m.w),
    ]


def p_generator_initializer_only(tf):
    g, twin = tf.random.Generator.from_seed(4), tf.random.Generator.from_seed(4)

    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(g.uniform((5,)))
            return x + self.w

    m = M()
    m(tf.constant(1.0))
    m(tf.constant(2.0))
    after = g.uniform((5,))  # the draw after the initializer's, eagerly
    return [_same(m.w, twin.uniform((5,))), _same(after, twin.uniform((5,))), _same(after, m.w)]


def _counter_program(where):
    def program(tf):
        count = tf.Variable(0.0)

        class M(tf.Module):
            def __init__(self):
                self.w = None

            @tf.function
            def __call__(self, x):
                if where == "every call, before the creation":
                    count.assign_add(1.0)
                    if self.w is None:
                        self.w = tf.Variable(count * 2.0)
                elif where == "while creating":
                    if self.w is None:
                        self.w = tf.Variable(count.assign_add(1.0) * 2.0)
                elif where == "creating code, unrelated to the value":
                    if self.w is None:
                        count.assign_add(1.0)
                        self.w = tf.Variable(tf.ones(()) * 3.0)
                else:  # creating code, after the creation
                    if self.w is None:
                        self.w = tf.Variable(tf.ones(()) * 3.0)
                        count.assign_add(1.0)
                return x * self.w

        m = M()
        first = m(tf.constant(1.0))
        return [first, m(tf.constant(2.0)), m.w, count]

    program.__name__ = f"p_counter_{where.replace(' ', '_').replace(',', '')}"
    return program


COUNTER_CASES = [
    "every call, before the creation",
    "while creating",
    "creating code, unrelated to the value",
    "creating code, after the creation",
]
PROGRAMS = [p_generator_initializer_then_the_calls_draws, p_generator_initializer_only] + [
    _counter_program(w) for w in COUNTER_CASES
]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(program)
    if program is p_generator_initializer_then_the_calls_draws:
        assert out == [True, True, True, True, False]


def _draw(state, shape):
    """A gradkit Generator's normal draw from ``state``, by hand: (the draw, the next state)."""
    keys = jax.random.split(jnp.asarray(state, jnp.uint32))
    return np.asarray(jax.random.normal(keys[1], shape, jnp.float32)), np.asarray(keys[0])


def _check_three_draws(s0, w, noise, state):
    """By hand from the state ``s0``: the weights are the first draw, the two calls' noise the next two."""
    want_w, s1 = _draw(s0, (3, 2))
    n1, s2 = _draw(s1, (3, 2))
    n2, s3 = _draw(s2, (3, 2))
    np.testing.assert_array_equal(w.numpy(), want_w)
    np.testing.assert_array_equal(noise[0], n1)
    np.testing.assert_array_equal(noise[1], n2)
    np.testing.assert_array_equal(state.numpy(), s3)


def test_generator_state_and_draws_by_hand():
    g = gtf.random.Generator.from_seed(1)
    s0 = g.state.numpy()

    m = _noisy_layer(gtf, g)
    noise = [m(gtf.constant(1.0)).numpy(), m(gtf.constant(1.0)).numpy()]
    _check_three_draws(s0, m.w, noise, g.state)


def test_a_failed_first_call_leaves_the_generator_state_alone_and_the_next_call_applies_the_draw():
    g = gtf.random.Generator.from_seed(2)
    s0 = g.state.numpy()
    fail = [True]

    class M(gtf.Module):
        def __init__(self):
            self.w = None

        @gtf.function
        def __call__(self, x):
            if self.w is None:
                self.w = gtf.Variable(g.normal((4,)))
            elif fail[0]:  # the call's own trace (after the one that created w) fails
                raise RuntimeError("the call's trace failed")
            return x * g.normal((4,))

    m = M()
    with pytest.raises(RuntimeError, match="the call's trace failed"):
        m(gtf.constant(1.0))
    np.testing.assert_array_equal(g.state.numpy(), s0)
    w, s1 = _draw(s0, (4,))
    np.testing.assert_array_equal(m.w.numpy(), w)
    fail[0] = False
    noise = m(gtf.constant(1.0)).numpy()
    n1, s2 = _draw(s1, (4,))
    np.testing.assert_array_equal(noise, n1)
    np.testing.assert_array_equal(g.state.numpy(), s2)


def test_a_refused_initial_value_leaves_the_generator_state_alone():
    g = gtf.random.Generator.from_seed(3)
    s0 = g.state.numpy()

    class M(gtf.Module):
        def __init__(self):
            self.w = None

        @gtf.function
        def __call__(self, x):
            if self.w is None:
                self.w = gtf.Variable(g.normal((3,)))
                self.v = gtf.Variable(x * 2.0)  # reads the argument: refused
            return x * self.w

    with pytest.raises(GradkitError, match=r"depends on the arguments"):
        M()(gtf.ones(3))
    np.testing.assert_array_equal(g.state.numpy(), s0)


def test_a_draw_shared_by_the_call_and_the_initializer_is_refused_and_changes_nothing():
    # The call draws from g before the lazily created Variable draws too: the generator's state at
    # the creation holds both draws, and the call (which draws again) cannot be given the state
    # advanced by the initializer's draw alone.
    g = gtf.random.Generator.from_seed(5)
    s0 = g.state.numpy()
    count = gtf.Variable(0.0)

    class M(gtf.Module):
        def __init__(self):
            self.w = None

        @gtf.function
        def __call__(self, x):
            count.assign_add(1.0)
            y = x * g.normal((3,))
            if self.w is None:
                self.w = gtf.Variable(g.normal((3,)), name="lazy")
            return y + self.w

    m = M()
    with pytest.raises(GradkitError, match=r"^\[gradkit\] .*'lazy'.*StateVar") as e:
        m(gtf.ones(3))
    assert "create it outside the function" in str(e.value)
    np.testing.assert_array_equal(g.state.numpy(), s0)
    assert float(count.numpy()) == 0.0


def _lazy_counting_step():
    """A native gk.jit step that creates and keeps ``w`` on its first call from a value
    computed with an assignment: ``w = 2 * count.assign_add(1)``; it returns x * w + count."""
    count = gk.Variable(0.0, name="count")
    box = {}

    def f(x):
        if "w" not in box:
            box["w"] = gk.Variable(count.assign_add(1.0).value * 2.0, name="w")
        return x * box["w"].value + count.value

    return gk.jit(f), count, box


def test_gk_jit_applies_the_assignment_made_while_creating_a_kept_variable_once():
    # Native gk.jit (no TensorFlow names): the counter is incremented once, by the creating code,
    # before the call, whose own trace increments nothing; the kept Variable starts from 2 * 1.
    step, count, box = _lazy_counting_step()
    assert float(step(1.0)) == 1.0 * 2.0 + 1.0
    assert float(count.value) == 1.0 and float(box["w"].value) == 2.0
    assert float(step(3.0)) == 3.0 * 2.0 + 1.0
    assert float(count.value) == 1.0


def test_gk_jit_with_a_tape_on_the_first_call():
    # The first call recorded by a tape: the initializer's assignment is applied once, and the
    # gradient with respect to the kept Variable is the call's: d(x * w + count)/dw = x.
    step, count, box = _lazy_counting_step()
    x = np.float32(3.0)
    with gtf.GradientTape() as tape:
        y = step(x)
    np.testing.assert_allclose(np.asarray(y), 3.0 * 2.0 + 1.0)
    np.testing.assert_allclose(np.asarray(tape.gradient(y, box["w"])), 3.0)
    assert float(count.value) == 1.0


def test_a_layer_built_inside_an_enclosing_tf_function():
    # The inner function's first call happens while the outer one is traced: the initializer's draw
    # still advances the state once (by hand, as above).
    g = gtf.random.Generator.from_seed(1)
    s0 = g.state.numpy()

    m = _noisy_layer(gtf, g)
    outer = gtf.function(lambda x: m(x) * 1.0)
    noise = [outer(gtf.constant(1.0)).numpy(), outer(gtf.constant(1.0)).numpy()]
    _check_three_draws(s0, m.w, noise, g.state)
