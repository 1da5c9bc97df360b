"""gradkit.tf against real TensorFlow: ``batch_jacobian`` inside ``tf.function``, where the
values are unknown while the step is traced (so the program itself checks, on a CPU, whether
the per-example Jacobians may be used), called again with other values."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _tape, run_both  # noqa: E402

X = np.random.default_rng(7).standard_normal((5, 4)).astype(np.float32)
W = np.random.default_rng(8).standard_normal((4, 3)).astype(np.float32) / 2


def _calls(tf, program):
    """``program`` traced once by ``tf.function`` and called on three batches."""
    w = tf.Variable(W)
    step = tf.function(lambda x: program(tf, x, w))
    return [step(tf.constant(x)) for x in (X, X * 3.0 + 1.0, -X)]


def _batch_jacobian(tf, f, x):
    with _tape(tf) as tape:
        tape.watch(x)
        y = f(x)
    return tape.batch_jacobian(y, x)


def p_an_mlp_in_tf_function(tf):
    return _calls(tf, lambda tf, x, w: _batch_jacobian(tf, lambda x: tf.tanh(x @ w) ** 2, x))


def p_a_graph_that_reads_the_batch_size_in_tf_function(tf):
    # Run on one example, reduce_sum(ones_like(x)) counts one example: not the batch's rows.
    return _calls(tf, lambda tf, x, w: _batch_jacobian(tf, lambda x: tf.sin(x) * tf.reduce_sum(tf.ones_like(x)), x))


def p_a_value_dependent_batch_size_read_in_tf_function(tf):
    # The count enters only where x > 1: some calls' values confirm the per-example Jacobians, some do not.
    def f(tf, x, w):
        return _batch_jacobian(tf, lambda x: tf.where(x > 1.0, x * tf.reduce_sum(tf.ones_like(x)), tf.sin(x)), x)

    return _calls(tf, f)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    got = run_both(program)  # compares every call's Jacobians with TensorFlow's
    assert len(got) == 3 and all(np.shape(j)[0] == 5 and np.shape(j)[-1] == 4 for j in got)
