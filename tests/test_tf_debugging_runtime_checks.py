"""``tf.debugging``'s value assertions inside compiled functions (``tf.function``, ``gk.jit``):
the call that finds a condition false raises the assertion's own error, with its message; a
passing check costs no retrace; the failed call changes no Variable; gradients through the
asserted values are unchanged. TensorFlow's side of these programs is in
``test_tf_parity_debugging.py``; here, gradkit's mechanism (``gradkit/_core/runtime_checks.py``)."""

import logging
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as tf
from gradkit._core import runtime_checks

# On a GPU, programs run asynchronously. A check traced by an eager (not compiled) gk.grad or
# jacobian runs as its own small program whose result nothing waits for, and a tf.function that
# returns and assigns nothing under a tape leaves nothing to wait for either. Such calls wait at
# JAX's effects barrier (runtime_checks.wait_for_effects), so the calls tested below raise on a GPU
# too (seen on an H200 with jax 0.11.2); on a CPU the check raises inside the call anyway.


def _positive_doubled():
    @tf.function
    def f(x):
        tf.debugging.assert_positive(x, message="inputs")
        return x * 2.0

    return f


def test_the_call_raises_the_assertions_error_with_its_message():
    f = _positive_doubled()
    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        f(tf.constant([1.0, -2.0]))
    error = caught.value
    assert not isinstance(error, jax.errors.JaxRuntimeError)
    assert error.message == (
        "[gradkit] inputs.  \nCondition x > 0 did not hold element-wise:\nx (shape=(2,) dtype=float32) = \n"
        "['1.0', '-2.0']"
    )
    assert error.error_code == tf.errors.INVALID_ARGUMENT and error.op is None


def test_passing_calls_do_not_retrace():
    f = _positive_doubled()
    for value in ([1.0, 2.0], [3.0, 4.0]):
        f(tf.constant(value))
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant([-1.0, 4.0]))
    f(tf.constant([5.0, 6.0]))
    assert f.experimental_get_tracing_count() == 1


def test_gk_jit_traces_once_and_raises():
    @gk.jit
    def f(x):
        tf.debugging.assert_less(x, 3.0, message="small")
        return jnp.sum(x)

    assert float(f(jnp.array([1.0, 2.0]))) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^\[gradkit\] small\nCondition x < y did not hold"):
        f(jnp.array([1.0, 5.0]))
    assert float(f(jnp.array([0.5, 2.0]))) == 2.5
    assert f.trace_count == 1


def test_a_failed_call_changes_no_variable():
    v = tf.Variable([1.0, 2.0])
    steps = tf.Variable(0)

    @tf.function
    def step(x):
        v.assign(v * x)
        steps.assign_add(1)
        tf.debugging.assert_all_finite(v, "v")
        return v

    step(tf.constant([2.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="v : Tensor had Inf values"):
        step(tf.constant([np.inf, 1.0]))
    assert v.numpy().tolist() == [2.0, 4.0] and int(steps.numpy()) == 1


def test_under_a_tape_the_call_itself_raises():
    v = tf.Variable([-1.0, 2.0])
    f = _positive_doubled()
    reached = []
    with pytest.raises(tf.errors.InvalidArgumentError):
        with tf.GradientTape():
            f(v)
            reached.append("after the call")
    assert reached == []


def test_under_a_tape_a_function_that_returns_nothing_still_checks():
    @tf.function
    def check_only(x):
        tf.debugging.assert_positive(x, message="only a check")

    v = tf.Variable([1.0])
    with tf.GradientTape():
        assert check_only(v) is None
    v.assign([-1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="only a check"):
        with tf.GradientTape():
            check_only(v)


def test_gradients_through_asserted_values_are_unchanged():
    def loss_fn(with_checks):
        @tf.function
        def loss(v):
            with tf.GradientTape() as tape:
                y = tf.sin(v) * v
                if with_checks:
                    tf.debugging.assert_less(y, 10.0)
                    y = tf.debugging.check_numerics(y, "y")
                total = tf.reduce_sum(y * y)
            return total, tape.gradient(total, v)

        return loss

    v = tf.Variable([0.5, 1.5, -2.0])
    checked, plain = loss_fn(True)(v), loss_fn(False)(v)
    x = np.array([0.5, 1.5, -2.0], np.float32)
    exact = 2 * (np.sin(x) * x) * (np.cos(x) * x + np.sin(x))  # d/dx (x sin x)^2
    np.testing.assert_allclose(checked[1].numpy(), exact, rtol=1e-5)
    np.testing.assert_array_equal(checked[1].numpy(), plain[1].numpy())
    np.testing.assert_array_equal(checked[0].numpy(), plain[0].numpy())
    with tf.GradientTape() as outer:  # and a tape around the call differentiates through it
        total, _ = loss_fn(True)(v)
    np.testing.assert_allclose(outer.gradient(total, v).numpy(), exact, rtol=1e-5)


def test_nested_functions_raise_from_the_outer_call():
    inner = _positive_doubled()
    outer = tf.function(lambda x: inner(x) + 1.0)
    assert outer(tf.constant([1.0])).numpy().tolist() == [3.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="inputs"):
        outer(tf.constant([-1.0]))


def test_a_check_in_a_traced_loop_body():
    @tf.function
    def count_down(n):
        def body(i, total):
            tf.debugging.assert_non_negative(i, message="counter")
            return i - 1, total + i

        return tf.while_loop(lambda i, total: i > -2, body, (n, 0))[1]

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"counter\.  \nCondition x >= 0"):
        count_down(tf.constant(3))


def test_vectorized_map_checks_every_example():
    @tf.function
    def f(xs):
        return tf.vectorized_map(lambda x: (tf.debugging.assert_positive(x, message="row"), x * 2.0)[1], xs)

    assert f(tf.constant([[1.0], [2.0]])).numpy().tolist() == [[2.0], [4.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="row"):
        f(tf.constant([[1.0], [-2.0]]))


def test_no_log_record_for_a_failed_check(caplog):
    f = _positive_doubled()
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(tf.errors.InvalidArgumentError):
            f(tf.constant([-1.0]))
    assert not [r for r in caplog.records if "callback failed" in r.getMessage()]


def test_each_thread_gets_its_own_failure():
    functions = {}
    for name in ("first", "second"):

        def make(name=name):
            return tf.function(lambda x: (tf.debugging.assert_positive(x, message=name), x)[1])

        functions[name] = make()
    caught = {}

    def run(name):
        for _ in range(5):
            try:
                functions[name](tf.constant([-1.0]))
            except tf.errors.InvalidArgumentError as error:
                caught.setdefault(name, set()).add(error.message.split(".")[0])

    threads = [threading.Thread(target=run, args=(name,)) for name in functions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert caught == {"first": {"[gradkit] first"}, "second": {"[gradkit] second"}}


def test_other_runtime_errors_are_not_taken_for_checks():
    assert runtime_checks.failed_check(RuntimeError("[gradkit runtime check #0] x")) is None
    assert runtime_checks.failed_check(ValueError("x")) is None


def test_a_failure_reported_at_the_effects_barrier_is_raised_once(monkeypatch):
    """As on a GPU: a check's failure reaches the host at jax.effects_barrier, not through the
    call's results, and JAX reports it again at every later barrier."""
    try:
        runtime_checks._on_host(lambda ok: ValueError("the check's own error"), np.array([False]))
    except runtime_checks.REPORTS as report:
        reported = report
    monkeypatch.setattr(jax, "effects_barrier", lambda: (_ for _ in ()).throw(reported))
    with pytest.raises(ValueError, match="the check's own error"):
        with runtime_checks.raised_as_their_own():
            runtime_checks.wait_for_effects()
    with runtime_checks.raised_as_their_own():
        runtime_checks.wait_for_effects()  # the same report again: already raised, so not again
    not_raised_yet = runtime_checks._CheckFailed("[gradkit runtime check #123456789] a failure")
    monkeypatch.setattr(jax, "effects_barrier", lambda: (_ for _ in ()).throw(not_raised_yet))
    with pytest.raises(runtime_checks.REPORTS, match="a failure"):
        runtime_checks.wait_for_effects()


def test_saved_model_refuses_a_function_holding_checks(tmp_path):
    class Checked(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
        def f(self, x):
            tf.debugging.assert_positive(x)
            tf.debugging.assert_rank(x, 1)  # a static assertion alone would be fine
            return x * 2.0

    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] saved_model.save cannot save f: it checks values"):
        tf.saved_model.save(Checked(), str(tmp_path))


@pytest.mark.parametrize(
    "transform",
    ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"] + ["vmap", "jit"],
)
def test_gk_transforms_raise_the_assertions_error(transform):
    def f(x):
        tf.debugging.assert_positive(x, message="positive")
        return jnp.sum(x**2)

    transformed = getattr(gk, transform)(f)
    transformed(jnp.array([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^\[gradkit\] positive\.  \nCondition x > 0"):
        transformed(jnp.array([-1.0, 2.0]))


def test_eager_vectorized_map_under_a_tape_raises_from_the_call():
    x = tf.Variable([[1.0], [2.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.vectorized_map(lambda r: (tf.debugging.assert_positive(r), r * r)[1], x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[2.0], [4.0]])
    x.assign([[1.0], [-2.0]])
    reached = []
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x > 0"):
        with tf.GradientTape():
            tf.vectorized_map(lambda r: (tf.debugging.assert_positive(r), r * r)[1], x)
            reached.append("after the call")
    assert reached == []
