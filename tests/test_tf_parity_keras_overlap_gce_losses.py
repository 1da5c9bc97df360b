"""tf.keras.losses' Dice, Tversky and CategoricalGeneralizedCrossEntropy (functions and classes):
values and gradients against a NumPy transcription of Keras 3's formulas with central finite
differences, against Keras itself, and through a Variable assignment."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(3)
MASKS = (RNG.random((2, 3, 4)) > 0.5).astype(np.float32)
SOFT = RNG.uniform(0.05, 0.95, (2, 3, 4)).astype(np.float32)
LABELS = np.array([0, 2, 1, 2], np.int32)
PROBS = RNG.uniform(0.1, 1.0, (4, 3)).astype(np.float32)
PROBS /= PROBS.sum(-1, keepdims=True)
EPS = 1e-7


def dice_oracle(y, p, axis=None):
    axis = tuple(axis) if isinstance(axis, list) else axis
    return 1 - 2 * (y * p).sum(axis=axis) / (y.sum(axis=axis) + p.sum(axis=axis) + EPS)


def tversky_oracle(y, p, alpha=0.5, beta=0.5, axis=None):
    axis = tuple(axis) if isinstance(axis, list) else axis
    tp = (y * p).sum(axis=axis)
    fp, fn = ((1 - p) * y).sum(axis=axis), (p * (1 - y)).sum(axis=axis)
    return 1 - tp / (tp + alpha * fp + beta * fn + EPS)


def gce_oracle(y, p, q):
    return (1 - p[np.arange(len(y)), y.astype(int)] ** q) / q


CASES = {
    "dice_all": ("dice", dice_oracle, MASKS, SOFT, {}),
    "dice_samples": ("dice", dice_oracle, MASKS, SOFT, {"axis": (1, 2)}),
    "dice_last": ("dice", dice_oracle, MASKS, SOFT, {"axis": -1}),
    "tversky_all": ("tversky", tversky_oracle, MASKS, SOFT, {"alpha": 0.3, "beta": 0.7}),
    "tversky_list": ("tversky", tversky_oracle, MASKS, SOFT, {"axis": [1]}),
    "gce": ("categorical_generalized_cross_entropy", gce_oracle, LABELS, PROBS, {"q": 0.3}),
}


def _weights(shape):
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape)


def _value_and_grad(tf, fn, y, p):
    pv = tf.Variable(p)
    with tf.GradientTape() as tape:
        out = fn(y, pv)
        loss = tf.reduce_sum(out * _weights(tuple(out.shape)).astype(np.float32))
    return out.numpy(), tape.gradient(loss, pv).numpy()


def _numeric_grad(oracle, y, p, h=1e-6):
    p = p.astype(np.float64)
    w, grad = _weights(np.shape(oracle(y, p))), np.zeros(p.shape)
    for i in range(p.size):
        up, down = p.copy(), p.copy()
        up.flat[i] += h
        down.flat[i] -= h
        grad.flat[i] = ((oracle(y, up) - oracle(y, down)) * w).sum() / (2 * h)
    return grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_functions_match_the_formula(case):
    name, oracle, y, p, kw = CASES[case]
    fn = lambda a, b: getattr(gtf.keras.losses, name)(a, b, **kw)  # noqa: E731
    value, grad = _value_and_grad(gtf, fn, y, p)
    np.testing.assert_allclose(value, oracle(y.astype(np.float64), p.astype(np.float64), **kw), rtol=1e-5, atol=1e-6)
    expected = _numeric_grad(lambda a, b: oracle(a, b, **kw), y.astype(np.float64), p)
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_functions_match_keras(case):
    tf = pytest.importorskip("tensorflow")
    name, _, y, p, kw = CASES[case]
    ours, theirs = (
        _value_and_grad(m, lambda a, b, m=m: getattr(m.keras.losses, name)(a, b, **kw), y, p) for m in (gtf, tf)
    )
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-6)


CLASSES = [
    ("Dice", {"axis": (1, 2)}, MASKS, SOFT),
    ("Dice", {}, MASKS, SOFT),
    ("Tversky", {"alpha": 0.2, "beta": 0.8, "axis": (1, 2)}, MASKS, SOFT),
    ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, LABELS, PROBS),
    ("CategoricalGeneralizedCrossEntropy", {"q": 0.7}, LABELS[:, None], PROBS),  # Keras broadcasts (4, 1) labels
]


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", None, "mean_with_sample_weight"])
@pytest.mark.parametrize("index", range(len(CLASSES)))
def test_classes_match_keras(index, reduction):
    tf = pytest.importorskip("tensorflow")
    cls, kw, y, p = CLASSES[index]
    weight = np.linspace(0.5, 2.0, len(p)).astype(np.float32)
    results = []
    for m in (gtf, tf):
        loss = getattr(m.keras.losses, cls)(reduction=reduction, **kw)
        results.append(_value_and_grad(m, lambda a, b, loss=loss: loss(a, b, sample_weight=weight), y, p))
        results.append((loss.name, loss.get_config()))
    np.testing.assert_allclose(results[0][0], results[2][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[2][1], rtol=1e-4, atol=1e-6)
    assert results[1] == results[3]


def test_positional_arguments_and_from_config_match_keras():
    tf = pytest.importorskip("tensorflow")
    for cls, args in (
        ("Dice", ("sum", "d", (1,))),
        ("Tversky", (0.1, 0.9, "sum", "t", -1)),
        ("CategoricalGeneralizedCrossEntropy", (0.25, "none")),
    ):
        ours, theirs = getattr(gtf.keras.losses, cls)(*args), getattr(tf.keras.losses, cls)(*args)
        assert ours.get_config() == theirs.get_config()
        assert type(ours).from_config(ours.get_config()).get_config() == theirs.get_config()


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5])
def test_gce_refuses_q_outside_the_open_interval_as_keras(q):
    with pytest.raises(ValueError, match=r"\[gradkit\].*q must be in the interval"):
        gtf.keras.losses.CategoricalGeneralizedCrossEntropy(q=q)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf.keras.losses.CategoricalGeneralizedCrossEntropy(q=q)


def test_dice_refuses_a_float_axis():
    with pytest.raises(TypeError, match=r"\[gradkit\].*axis"):
        gtf.keras.losses.dice(MASKS, SOFT, axis=1.5)


@pytest.mark.parametrize(
    "cls,kw,y,p,oracle",
    [
        ("Dice", {"axis": (1, 2)}, MASKS, SOFT, lambda a, b: dice_oracle(a, b, axis=(1, 2)).mean()),
        ("Tversky", {"alpha": 0.3, "beta": 0.7}, MASKS, SOFT, lambda a, b: tversky_oracle(a, b, 0.3, 0.7)),
        ("CategoricalGeneralizedCrossEntropy", {"q": 0.4}, LABELS, PROBS, lambda a, b: gce_oracle(a, b, 0.4).mean()),
    ],
)
def test_gradient_flows_through_a_variable_assignment(cls, kw, y, p, oracle):
    # The predictions are assigned to a Variable from another one: gradkit differentiates through the
    # assignment (TensorFlow gives None for w).
    loss_fn = getattr(gtf.keras.losses, cls)(**kw)
    w = gtf.Variable(p / 2)
    held = gtf.Variable(np.zeros_like(p))
    with gtf.GradientTape() as tape:
        held.assign(w * 2.0)
        loss = loss_fn(y, held)
    grad = tape.gradient(loss, w).numpy()
    expected = 2 * _numeric_grad(oracle, y.astype(np.float64), p)
    np.testing.assert_allclose(grad, expected, rtol=1e-4, atol=1e-5)
