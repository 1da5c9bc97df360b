"""``tf.TensorShape``'s shape algebra (``merge_with``, ``is_compatible_with``, ``concatenate``,
``most_specific_compatible_shape``, ``with_rank*``, ``assert_*``) on TensorShapes and on a tensor's
``.shape``; its constructor's rules and ``str``; ``TensorSpec.from_tensor`` / ``from_spec``;
``experimental_relax_shapes`` as ``reduce_retracing``. Oracles: TensorFlow 2.21 where installed,
and TensorFlow's documented rules."""

import numpy as np
import pytest

import gradkit.tf as gtf

TS = gtf.TensorShape


def _algebra(tf):
    x = tf.ones([2, 3])
    S = tf.TensorShape
    out = {
        "merge": S([None, 3]).merge_with([2, None]).as_list(),
        "merge unknown": S(None).merge_with([1, 2]).as_list(),
        "compatible": [S([None, 3]).is_compatible_with(s) for s in ([2, 3], [2, 4], [2], None)],
        "concatenate": S([1, None]).concatenate([3]).as_list(),
        "concatenate unknown": S([1]).concatenate(None).rank,
        "most specific": S([1, 2]).most_specific_compatible_shape([1, 3]).as_list(),
        "most specific ranks": S([1, 2]).most_specific_compatible_shape([1]).rank,
        "with_rank": x.shape.with_rank(2).as_list(),
        "with_rank unknown": S(None).with_rank(3).as_list(),
        "at least": x.shape.with_rank_at_least(1).as_list(),
        "at most": x.shape.with_rank_at_most(2).as_list(),
        "str": [str(S([2, 3])), str(S([None])), str(S([4])), str(tf.Variable(tf.ones([2, 3])).shape)],
        "int": S(3).as_list(),
        "unknown item": S(None)[0],
        "spec": repr(tf.TensorSpec.from_tensor(x, name="x")),
        "spec from spec": repr(tf.TensorSpec.from_spec(tf.TensorSpec([None, 2], tf.int32, name="a"))),
        "spec of unknown rank": repr(tf.TensorSpec(None, tf.float32)),
    }
    errors = {}
    for label, call in (
        ("merge", lambda: S([2, 3]).merge_with([3, 3])),
        ("with_rank", lambda: x.shape.with_rank(3)),
        ("at least", lambda: x.shape.with_rank_at_least(3)),
        ("at most", lambda: x.shape.with_rank_at_most(1)),
        ("has rank", lambda: x.shape.assert_has_rank(1)),
        ("same rank", lambda: S([1, 2]).assert_same_rank([1])),
        ("compatible", lambda: x.shape.assert_is_compatible_with([2, 4])),
        ("fully defined", lambda: S([None, 2]).assert_is_fully_defined()),
        ("negative", lambda: S([-1, 2])),
    ):
        try:
            call()
            errors[label] = None
        except ValueError:
            errors[label] = "ValueError"
    return out, errors


def test_shape_algebra_follows_tensorflows_rules():
    out, errors = _algebra(gtf)
    assert out["merge"] == [2, 3] and out["merge unknown"] == [1, 2]
    assert out["compatible"] == [True, False, False, True]
    assert out["concatenate"] == [1, None, 3] and out["concatenate unknown"] is None
    assert out["most specific"] == [1, None] and out["most specific ranks"] is None
    assert out["with_rank"] == [2, 3] and out["with_rank unknown"] == [None, None, None]
    assert out["str"] == ["(2, 3)", "(None,)", "(4,)", "(2, 3)"]
    assert out["int"] == [3] and out["unknown item"] is None
    assert set(errors.values()) == {"ValueError"}
    with pytest.raises(ValueError, match=r"\[gradkit\] Shapes \(2, 3\) and \(3, 3\) are not compatible"):
        TS([2, 3]).merge_with([3, 3])


def test_shape_algebra_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _algebra(gtf) == _algebra(tf)


def test_relax_shapes_is_reduce_retracing():
    @gtf.function(experimental_relax_shapes=True)
    def f(x):
        return x * 2

    for n in (2, 3, 4):
        np.testing.assert_array_equal(f(gtf.ones([n])).numpy(), np.full(n, 2.0))
    assert f.experimental_get_tracing_count() == 2  # the second shape widens to (None,), as TensorFlow does


def _kinds(tf):
    x = tf.zeros([2, 3])
    spec = tf.TensorSpec([2], tf.int32)
    return {
        "shape is a TensorShape": [isinstance(s, tf.TensorShape) for s in (x.shape, x.shape[1:], tf.Variable(x).shape)],
        "tuple is not": isinstance((2, 3), tf.TensorShape),
        "plain values fit no spec": [
            spec.is_compatible_with(v) for v in ([1, 2], np.array([1, 2], np.int32), 3, [1, 2, 3])
        ],
        "tensors and specs do": [
            spec.is_compatible_with(v) for v in (tf.constant([1, 2]), tf.TensorSpec([None], tf.int32))
        ],
        "dimension_value": [tf.compat.dimension_value(d) for d in tf.TensorShape([3, None])],
    }


_KINDS_EXPECTED = {
    "shape is a TensorShape": [True, True, True],
    "tuple is not": False,
    "plain values fit no spec": [False] * 4,
    "tensors and specs do": [True, True],
    "dimension_value": [3, None],
}


def test_a_tensors_shape_is_a_tensor_shape_and_specs_take_only_tensors():
    assert _kinds(gtf) == _KINDS_EXPECTED


def test_shape_kinds_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _kinds(tf) == _KINDS_EXPECTED
