"""Cardinalities by TensorFlow's rules: drawing from datasets (``sample_from_datasets``,
``choose_from_datasets``) is endless as soon as one of them is, else unknown; ``zip`` with an input
of unknown length is unknown, even beside an empty one. Oracles: TensorFlow's documented kernels'
rules (``DirectedInterleave``, ``Zip``), and TensorFlow itself."""

import numpy as np
import pytest

import gradkit.tf as gtf

INFINITE, UNKNOWN = -1, -2


def _cases(tf):
    endless = tf.data.Dataset.range(3).repeat()
    finite = tf.data.Dataset.range(2)
    filtered = tf.data.Dataset.range(4).filter(lambda x: x > 1)
    return {
        "sample_endless": tf.data.Dataset.sample_from_datasets([endless, endless], seed=1),
        "sample_finite_and_endless": tf.data.Dataset.sample_from_datasets([finite, endless], seed=1),
        "sample_finite": tf.data.Dataset.sample_from_datasets([finite, finite], seed=1),
        "choose_endless": tf.data.Dataset.choose_from_datasets([endless, endless], tf.data.Dataset.range(2).repeat()),
        "zip_empty_and_unknown": tf.data.Dataset.zip(tf.data.Dataset.range(0), filtered),
        "zip_finite_and_endless": tf.data.Dataset.zip(finite, endless),
        # unbatch: the leading dimension of any component that knows it; unknown where it is 0
        "unbatch_known_beside_unknown": tf.data.Dataset.zip(
            (
                tf.data.Dataset.from_tensors(np.arange(3)).repeat(2),
                tf.data.Dataset.range(2).map(lambda x: tf.fill([3], x)),
            )
        ).unbatch(),
        "unbatch_empty_rows": tf.data.Dataset.from_tensors(np.zeros((0, 2), np.float32)).unbatch(),
        "unbatch_endless_unknown_rows": tf.data.Dataset.range(3).map(lambda x: tf.zeros([x])).repeat().unbatch(),
    }


WANT = {
    "sample_endless": INFINITE,
    "sample_finite_and_endless": INFINITE,
    "sample_finite": UNKNOWN,
    "choose_endless": INFINITE,
    "zip_empty_and_unknown": UNKNOWN,
    "zip_finite_and_endless": 2,
    "unbatch_known_beside_unknown": 6,
    "unbatch_empty_rows": UNKNOWN,
    "unbatch_endless_unknown_rows": INFINITE,
}


@pytest.mark.parametrize("name", sorted(WANT))
def test_cardinality_follows_tensorflows_rules(name):
    assert int(_cases(gtf)[name].cardinality()) == WANT[name]


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    theirs, ours = _cases(tf), _cases(gtf)
    for name in WANT:
        assert int(ours[name].cardinality()) == int(theirs[name].cardinality()), name


def test_unbatch_splits_rows_of_zero_size_elements():
    # Two rows of shape (0,): no size to infer, each row kept (by hand; TensorFlow 2.21 crashes here).
    rows = list(gtf.data.Dataset.from_tensors(np.zeros((2, 0), np.float32)).unbatch().as_numpy_iterator())
    assert [r.shape for r in rows] == [(0,), (0,)]
