"""A ``tf.function`` sees a dict argument in the caller's key order (jax's pytrees sort keys), keyword
arguments sorted by name, and returns dicts in namedtuples in the order it built them: TensorFlow's
behaviour, checked by hand-computed values and against TensorFlow where installed."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import gradkit.tf as gtf

Out = collections.namedtuple("Out", ["metrics", "loss"])


def _programs(tf):
    @tf.function
    def concat_features(features):
        return tf.concat([features[k] for k in features], -1)

    @tf.function
    def weighted(parts):
        return sum(float(i + 1) * parts[k] for i, k in enumerate(parts))

    @tf.function
    def keywords(**kw):
        return tf.concat([kw[k] for k in kw], 0)

    @tf.function
    def named(x):
        return Out(metrics={"mse": x * 2.0, "acc": x * 3.0}, loss=x)

    one, two, three = tf.constant([[1.0]]), tf.constant([[2.0]]), tf.constant([[3.0]])
    return [
        concat_features({"zeta": one, "alpha": two, "mid": three}).numpy().tolist(),
        float(weighted({3: tf.constant(1.0), 1: tf.constant(10.0)})),
        keywords(z=tf.constant([1.0]), a=tf.constant([2.0])).numpy().tolist(),
        list(named(tf.constant(1.0)).metrics),
    ]


def test_dict_arguments_and_returned_namedtuple_dicts_keep_their_order():
    got = _programs(gtf)
    assert got[0] == [[1.0, 2.0, 3.0]]  # the caller's order: zeta, alpha, mid
    assert got[1] == 1 * 1.0 + 2 * 10.0  # keys 3 then 1
    assert got[2] == [2.0, 1.0]  # keyword arguments by name: a, z
    assert got[3] == ["mse", "acc"]


def test_a_new_key_order_is_a_new_trace():
    @gtf.function
    def first(d):
        return next(iter(d.values()))

    a, b = gtf.constant(1.0), gtf.constant(2.0)
    assert float(first({"a": a, "b": b})) == 1.0
    assert float(first({"b": b, "a": a})) == 2.0


def test_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _programs(gtf), _programs(tf)
    assert ours[:3] == theirs[:3]
    np.testing.assert_equal(ours[3], theirs[3])
