"""Cardinalities by TensorFlow's rules: drawing from datasets (``sample_from_datasets``,
``choose_from_datasets``) is endless as soon as one of them is, else unknown; ``zip`` with an input
of unknown length is unknown, even beside an empty one. Oracles: TensorFlow's documented kernels'
rules (``DirectedInterleave``, ``Zip``), and TensorFlow itself."""

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
    }


WANT = {
    "sample_endless": INFINITE,
    "sample_finite_and_endless": INFINITE,
    "sample_finite": UNKNOWN,
    "choose_endless": INFINITE,
    "zip_empty_and_unknown": UNKNOWN,
    "zip_finite_and_endless": 2,
}


@pytest.mark.parametrize("name", sorted(WANT))
def test_cardinality_follows_tensorflows_rules(name):
    assert int(_cases(gtf)[name].cardinality()) == WANT[name]


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    theirs, ours = _cases(tf), _cases(gtf)
    for name in WANT:
        assert int(ours[name].cardinality()) == int(theirs[name].cardinality()), name
