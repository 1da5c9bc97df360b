"""Reverse over forward with respect to the tangents: a tape that recorded a tangent
differentiates the JVP an accumulator computes with it (``d(J t)/dt = J``), as TensorFlow's
tapes do. Oracles: hand derivations, and TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

P, T = np.array([1.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32)


def _through_keras_jvp(tf, ops):
    p, t = tf.constant(P), tf.constant(T)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(p)
        tape.watch(t)
        _, tangent = ops.linalg.jvp(lambda z: z * z, (p,), (t,))
        by_t = tf.reduce_sum(tangent)
        _, tangent = ops.linalg.jvp(lambda z: z * z, (p,), (p,))  # the primal as its own tangent
        by_p = tf.reduce_sum(tangent)
    return [np.asarray(tape.gradient(by_t, p)), np.asarray(tape.gradient(by_t, t)), np.asarray(tape.gradient(by_p, p))]


def _through_accumulators(tf):
    p, t = tf.constant(P), tf.constant(T)
    with tf.GradientTape() as tape:
        tape.watch(t)
        with tf.autodiff.ForwardAccumulator(p, t) as acc:
            y = tf.reduce_sum(tf.sin(p) * p)
        first = acc.jvp(y)
    with tf.GradientTape() as outer:
        outer.watch(t)  # the primal's path is not watched: only the tangent's
        with tf.autodiff.ForwardAccumulator(p, 2.0 * t) as acc:
            y = tf.reduce_sum(p**3)
        second = acc.jvp(y)
    return [np.asarray(tape.gradient(first, t)), np.asarray(outer.gradient(second, t))]


def test_keras_jvp_gradients_by_hand():
    # d/dp sum(2 p t) = 2 t, d/dt = 2 p; with t = p, sum(2 p^2) gives 4 p.
    got = _through_keras_jvp(gtf, gtf.keras.ops)
    for g, want in zip(got, [2 * T, 2 * P, 4 * P]):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_accumulator_tangent_gradients_by_hand():
    # d/dt sum((p cos p + sin p) t) = p cos p + sin p; d/dt sum(3 p^2 2t) = 6 p^2.
    got = _through_accumulators(gtf)
    np.testing.assert_allclose(got[0], P * np.cos(P) + np.sin(P), rtol=1e-6)
    np.testing.assert_allclose(got[1], 6 * P**2, rtol=1e-6)


def test_matches_tensorflow():
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    for g, w in zip(_through_keras_jvp(gtf, gtf.keras.ops), _through_keras_jvp(tf, keras.ops)):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    for g, w in zip(_through_accumulators(gtf), _through_accumulators(tf)):
        np.testing.assert_allclose(g, w, rtol=1e-6)
