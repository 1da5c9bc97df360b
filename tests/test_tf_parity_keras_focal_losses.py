"""tf.keras.losses' focal cross-entropies (binary and categorical, functions and classes):
values and gradients against a NumPy transcription of Keras 3's formulas, and against Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(7)
LABELS = (RNG.random((4, 3)) > 0.5).astype(np.float32)
PROBS = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
LOGITS = RNG.normal(size=(4, 3)).astype(np.float32)
ONE_HOT = np.eye(3, dtype=np.float32)[RNG.integers(0, 3, 4)]
EPS = 1e-7

BINARY = {
    "default": {},
    "balanced": {"apply_class_balancing": True, "alpha": 0.3},
    "gamma": {"gamma": 1.5, "label_smoothing": 0.1},
    "logits": {"from_logits": True, "gamma": 3.0},
    "axis0": {"axis": 0},
}
CATEGORICAL = {
    "default": {},
    "alpha_gamma": {"alpha": 0.5, "gamma": 1.0},
    "smoothing": {"label_smoothing": 0.2},
    "logits": {"from_logits": True},
}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def binary_oracle(
    y, p, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1
):
    y, p = y.astype(np.float64), p.astype(np.float64)
    y = y * (1 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))
        p = _sigmoid(p)
    else:
        q = np.clip(p, EPS, 1 - EPS)
        bce = -(y * np.log(q) + (1 - y) * np.log(1 - q))
    p_t = y * p + (1 - y) * (1 - p)
    focal = (1 - p_t) ** gamma * bce
    if apply_class_balancing:
        focal = (y * alpha + (1 - y) * (1 - alpha)) * focal
    return focal.mean(axis=axis)


def categorical_oracle(y, p, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    y, p = y.astype(np.float64), p.astype(np.float64)
    y = y * (1 - label_smoothing) + label_smoothing / y.shape[-1]
    if from_logits:
        p = np.exp(p - p.max(axis=axis, keepdims=True))
    q = np.clip(p / p.sum(axis=axis, keepdims=True), EPS, 1 - EPS)
    return (alpha * (1 - q) ** gamma * -y * np.log(q)).sum(axis=axis)


def _value_and_grad(tf, fn, y, p):
    pv = tf.Variable(p)
    with tf.GradientTape() as tape:
        out = fn(y, pv)
        weights = np.arange(1, 1 + int(np.prod(out.shape)), dtype=np.float32).reshape(tuple(out.shape))
        loss = tf.reduce_sum(out * weights)  # the same weights as _numeric_grad's
    return loss.numpy(), tape.gradient(loss, pv).numpy()


def _numeric_grad(oracle, y, p, weights_shape):
    w = np.arange(1, 1 + int(np.prod(weights_shape)), dtype=np.float64).reshape(weights_shape)
    h, grad = 1e-6, np.zeros(p.shape)
    for i in range(p.size):
        up, down = p.astype(np.float64).copy(), p.astype(np.float64).copy()
        up.flat[i] += h
        down.flat[i] -= h
        grad.flat[i] = ((oracle(y, up) - oracle(y, down)) * w).sum() / (2 * h)
    return grad


CASES = [("binary", n) for n in sorted(BINARY)] + [("categorical", n) for n in sorted(CATEGORICAL)]


def _case(kind, name):
    """(options, labels, predictions, NumPy oracle) of one case."""
    kw = (BINARY if kind == "binary" else CATEGORICAL)[name]
    oracle = binary_oracle if kind == "binary" else categorical_oracle
    return kw, (LABELS if kind == "binary" else ONE_HOT), (LOGITS if kw.get("from_logits") else PROBS), oracle


@pytest.mark.parametrize("kind,name", CASES)
def test_focal_losses_match_the_formula(kind, name):
    kw, y, p, oracle = _case(kind, name)
    want = oracle(y, p, **kw)
    fn = lambda a, b: getattr(gtf.keras.losses, f"{kind}_focal_crossentropy")(a, b, **kw)  # noqa: E731
    np.testing.assert_allclose(fn(y, p).numpy(), want, rtol=1e-5, atol=1e-6)
    _, grad = _value_and_grad(gtf, fn, y, p)
    expected = _numeric_grad(lambda a, b: oracle(a, b, **kw), y, p, want.shape)
    np.testing.assert_allclose(grad, expected, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("kind,name", CASES)
def test_functions_match_keras(kind, name):
    tf = pytest.importorskip("tensorflow")
    kw, y, p, _ = _case(kind, name)
    ours, theirs = (
        _value_and_grad(m, lambda a, b, m=m: getattr(m.keras.losses, f"{kind}_focal_crossentropy")(a, b, **kw), y, p)
        for m in (gtf, tf)
    )
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
def test_classes_match_keras(reduction):
    tf = pytest.importorskip("tensorflow")
    weight = np.array([1.0, 0.5, 2.0, 0.0], np.float32)
    for cls, y, kw in (
        ("BinaryFocalCrossentropy", LABELS, {"apply_class_balancing": True, "gamma": 1.0}),
        ("CategoricalFocalCrossentropy", ONE_HOT, {"alpha": 0.4}),
    ):
        ours = getattr(gtf.keras.losses, cls)(reduction=reduction, **kw)
        theirs = getattr(tf.keras.losses, cls)(reduction=reduction, **kw)
        np.testing.assert_allclose(
            ours(y, PROBS, sample_weight=weight).numpy(),
            theirs(y, PROBS, sample_weight=weight).numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
        assert ours.name == theirs.name
