"""tf.function's experimental_get_tracing_count: TensorFlow's count of traces for a sequence of
calls (same and new shapes, Python values, keyword and defaulted arguments, Variables read or
passed, input_signature, reduce_retracing, get_concrete_function, failed calls, under gradient
tapes, TensorFlow-parity ones included) against real TensorFlow, and by TensorFlow's rule
(one trace per new function type) without it."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _tape(track):
    def call(tf, f, x):
        # A TensorFlow-parity tape (track_assignments=False) runs a second program in gradkit.
        kw = {"track_assignments": track} if tf is gtf else {}
        with tf.GradientTape(**kw) as t:
            t.watch(x)
            y = f(x)
        return t.gradient(y, x)

    return call


def _plain(tf, f, x):
    return f(x)


def _nested(tf, f, x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    return t2.gradient(g, x)


_parity, _tracking = _tape(False), _tape(True)


def _reads(tf, **options):
    v = tf.Variable(1.5)
    return tf.function(lambda x: tf.reduce_sum(x * v), **options)


def _assigns(tf, **options):
    u = tf.Variable(1.0)

    def step(x):
        u.assign(tf.reduce_sum(x))
        return u * x

    return tf.function(step, **options)


def _ones(tf, *shape):
    return tf.ones(list(shape))


_SIG = {"input_signature": "[None]"}

# name: (function maker, options, calls as (how, shape)), counts after each call (TensorFlow 2.21's).
SEQUENCES = {
    "reads_variable_same_shape": (_reads, {}, [(_plain, 2), (_plain, 2), (_plain, 3)], [1, 1, 2]),
    "reads_variable_under_tapes": (_reads, {}, [(_plain, 2), (_parity, 2), (_tracking, 2), (_nested, 3)], [1, 1, 1, 2]),
    "tape_first": (_reads, {}, [(_parity, 2), (_plain, 2), (_tracking, 3), (_plain, 3)], [1, 1, 2, 2]),
    "assigns_under_parity_tape": (
        _assigns,
        {},
        [(_plain, 2), (_parity, 2), (_tracking, 2), (_parity, 3), (_plain, 3)],
        [1, 1, 1, 2, 2],
    ),
    "parity_tape_first": (_assigns, {}, [(_parity, 2), (_plain, 2), (_parity, 2)], [1, 1, 1]),
    "input_signature_new_shapes": (_reads, _SIG, [(_plain, 2), (_parity, 3), (_plain, 4), (_nested, 5)], [1, 1, 1, 1]),
    "input_signature_assigns": (_assigns, _SIG, [(_parity, 2), (_plain, 3), (_tracking, 4)], [1, 1, 1]),
}


def _counts(tf, name):
    make, options, calls, _ = SEQUENCES[name]
    if "input_signature" in options:
        options = {"input_signature": [tf.TensorSpec([None], tf.float32)]}
    f = make(tf, **options)
    counts = []
    for how, size in calls:
        how(tf, f, _ones(tf, size))
        counts.append(f.experimental_get_tracing_count())
    return counts


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_counts_follow_tensorflows_rule(name):
    # Oracle: TensorFlow's rule, one trace per new function type (the counts listed above).
    assert _counts(gtf, name) == SEQUENCES[name][3]


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_counts_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    assert _counts(gtf, name) == _counts(tf, name)


def _calls_with(tf):
    """Calls of other argument kinds, each a (name, function, list of calls)."""
    w1, w2 = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])

    def bad(x):
        return tf.reshape(x, [7])

    return [
        ("python_floats", tf.function(lambda x: x * 2.0), [lambda f: f(1.0), lambda f: f(2.0), lambda f: f(1.0)]),
        (
            "numpy_arrays",
            tf.function(lambda x: x * 2),
            [lambda f: f(1), lambda f: f(np.ones(2, np.float32)), lambda f: f(np.ones(2, np.float32) * 3)],
        ),
        (
            "variables_passed",
            tf.function(lambda x: x * 2.0),
            [lambda f: f(w1), lambda f: f(w2), lambda f: f(tf.constant([1.0, 2.0]))],
        ),
        (
            "keyword_and_default",
            tf.function(lambda x, y=1: x * y),
            [
                lambda f: f(_ones(tf, 2)),
                lambda f: f(_ones(tf, 2), y=1),
                lambda f: f(x=_ones(tf, 2)),
                lambda f: f(_ones(tf, 2), 2),
            ],
        ),
        (
            "reduce_retracing",
            tf.function(lambda x: x * 2.0, reduce_retracing=True),
            [lambda f, s=s: f(_ones(tf, *s)) for s in ((2,), (3,), (4,), (2, 2), (3, 3))],
        ),
        (
            "concrete_unknown_dimension",
            tf.function(lambda x: x * 2.0),
            [
                lambda f: f.get_concrete_function(tf.TensorSpec([None], tf.float32)),
                lambda f: f(_ones(tf, 3)),
                lambda f: f(_ones(tf, 2, 2)),
            ],
        ),
        (
            "concrete_after_call",
            tf.function(lambda x: x * 2.0),
            [
                lambda f: f(_ones(tf, 3)),
                lambda f: f.get_concrete_function(tf.TensorSpec([3], tf.float32)),
                lambda f: f.get_concrete_function(tf.TensorSpec([None], tf.float32)),
                lambda f: f(_ones(tf, 5)),
            ],
        ),
        ("failed_calls", tf.function(bad), [lambda f: f(_ones(tf, 2)), lambda f: f(_ones(tf, 7))]),
    ]


# TensorFlow 2.21's counts after each call.
KINDS = {
    "python_floats": [1, 2, 2],
    "numpy_arrays": [1, 2, 2],
    "variables_passed": [1, 1, 2],
    "keyword_and_default": [1, 1, 1, 2],
    "reduce_retracing": [1, 2, 2, 3, 3],
    "concrete_unknown_dimension": [1, 1, 2],
    "concrete_after_call": [1, 1, 2, 2],
    "failed_calls": [0, 1],
}


def _kind_counts(tf, name):
    f, calls = next((f, calls) for n, f, calls in _calls_with(tf) if n == name)
    counts = []
    for call in calls:
        try:
            call(f)
        except (TypeError, ValueError):  # a failed trace counts nothing
            pass
        counts.append(f.experimental_get_tracing_count())
    return counts


@pytest.mark.parametrize("name", sorted(KINDS))
def test_argument_kinds_follow_tensorflows_rule(name):
    assert _kind_counts(gtf, name) == KINDS[name]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_argument_kinds_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    assert _kind_counts(gtf, name) == _kind_counts(tf, name)
