"""tf.keras.losses' Circle and CTC losses (functions and classes): values and gradients against
NumPy references (Keras 3's Circle formula; Graves' CTC forward recursion) with central finite
differences, against Keras itself, and through a Variable assignment."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(5)
EMB = RNG.normal(size=(6, 3)).astype(np.float32)
EMB /= np.linalg.norm(EMB, axis=-1, keepdims=True)
PAIRS = np.array([0, 1, 0, 1, 2, 2], np.int32)
SINGLETONS = np.array([0, 1, 0, 1, 2, 3], np.int32)  # classes 2 and 3 once: Keras masks those samples out
LOGITS = RNG.normal(size=(3, 5, 4)).astype(np.float32)
SEQS = np.array([[1, 2, 0], [3, 3, 0], [2, 1, 3]], np.int32)


def _lse(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m, axis)


def circle_oracle(y, p, gamma=80.0, margin=0.4, remove_diagonal=True):
    dist = np.maximum(1 - p @ p.T, 0)
    pos = y[:, None] == y[None, :]
    neg = ~pos
    if remove_diagonal:
        pos &= ~np.eye(len(y), dtype=bool)
    pos_w = np.maximum((margin + dist) * pos, 0)
    neg_w = np.maximum((1 + margin - dist) * neg, 0)
    p_loss = _lse(np.where(pos, -gamma * pos_w * (margin - dist), -np.inf), 1)
    n_loss = _lse(np.where(neg, gamma * neg_w * (1 - margin - dist), -np.inf), 1)
    return np.logaddexp(0, p_loss + n_loss)


def ctc_oracle(labels, logits):
    """Graves' forward recursion over (blank, l1, blank, ..., lL, blank), in float64."""
    out = []
    for lab, x in zip(labels, logits.astype(np.float64)):
        lp = x - _lse(x, -1)[:, None]
        ext = [0]
        for c in lab[lab != 0]:
            ext += [int(c), 0]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = lp[0, 0]
        if len(ext) > 1:
            alpha[1] = lp[0, ext[1]]
        for t in range(1, len(x)):
            new = np.full(len(ext), -np.inf)
            for s in range(len(ext)):
                prev = [alpha[s]] + ([alpha[s - 1]] if s else [])
                if s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2]:
                    prev.append(alpha[s - 2])
                new[s] = _lse(np.array(prev), 0) + lp[t, ext[s]]
            alpha = new
        out.append(-_lse(alpha[-2:], 0) if len(ext) > 1 else -alpha[-1])
    return np.array(out)


def _weights(shape):
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape)


def _value_and_grad(tf, fn, y, p):
    pv = tf.Variable(p)
    with tf.GradientTape() as tape:
        out = fn(y, pv)
        loss = tf.reduce_sum(out * _weights(tuple(out.shape)).astype(np.float32))
    return out.numpy(), tape.gradient(loss, pv).numpy()


def _numeric_grad(f, p, h=1e-5):
    p = p.astype(np.float64)
    w, grad = _weights(np.shape(f(p))), np.zeros(p.shape)
    for i in range(p.size):
        up, down = p.copy(), p.copy()
        up.flat[i] += h
        down.flat[i] -= h
        grad.flat[i] = ((f(up) - f(down)) * w).sum() / (2 * h)
    return grad


CASES = {
    "circle": ("circle", lambda y, p: circle_oracle(y, p), PAIRS, EMB, {}),
    "circle_options": (
        "circle",
        lambda y, p: circle_oracle(y, p, 3.0, 0.25, False),
        SINGLETONS,
        EMB,
        {"gamma": 3.0, "margin": 0.25, "remove_diagonal": False},
    ),
    "circle_singletons": ("circle", lambda y, p: circle_oracle(y, p, 4.0), SINGLETONS, EMB, {"gamma": 4.0}),
    "ctc": ("ctc", ctc_oracle, SEQS, LOGITS, {}),
    "ctc_empty_labels": ("ctc", ctc_oracle, np.zeros((3, 2), np.int32), LOGITS, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_functions_match_the_reference(case):
    name, oracle, y, p, kw = CASES[case]
    value, grad = _value_and_grad(gtf, lambda a, b: getattr(gtf.keras.losses, name)(a, b, **kw), y, p)
    np.testing.assert_allclose(value, oracle(y, p.astype(np.float64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, _numeric_grad(lambda q: oracle(y, q), p), rtol=1e-3, atol=1e-4)


KERAS_CASES = {
    **CASES,
    "ctc_no_alignment": ("ctc", None, np.array([[1, 1, 1], [3, 3, 0], [2, 2, 2]]), LOGITS[:, :4], {}),
}


@pytest.mark.parametrize("case", sorted(KERAS_CASES))
def test_functions_match_keras(case):
    # Labels no alignment can produce (1, 1, 1 in 4 frames) give Keras' large finite loss.
    tf = pytest.importorskip("tensorflow")
    name, _, y, p, kw = KERAS_CASES[case]
    ours, theirs = (
        _value_and_grad(m, lambda a, b, m=m: getattr(m.keras.losses, name)(a, b, **kw), y, p) for m in (gtf, tf)
    )
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-4)


def test_ctc_keeps_float64_as_keras():
    # Keras computes in float32 and returns float64 for float64 logits.
    tf = pytest.importorskip("tensorflow")
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        ours = gtf.keras.losses.ctc(SEQS, LOGITS.astype(np.float64))
        assert ours.dtype == np.float64
        ours = ours.numpy()
    theirs = tf.keras.losses.ctc(SEQS, LOGITS.astype(np.float64))
    assert theirs.dtype == tf.float64
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-6)


def test_ctc_second_derivative_is_exact():
    # d/dx sum(grad ** 2) = 2 H grad, against finite differences of the reference's gradient.
    # TensorFlow 2.21 gives NaN here.
    logits, labels = LOGITS[:2, :4, :3], np.array([[1, 2], [2, 0]])
    x = gtf.Variable(logits)
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            loss = gtf.reduce_sum(gtf.keras.losses.ctc(labels, x))
        g = inner.gradient(loss, x)
        s = gtf.reduce_sum(g * g)
    ours = outer.gradient(s, x).numpy()

    def grad_of(q):
        return _numeric_grad(lambda r: ctc_oracle(labels, r) / _weights(2), q, h=1e-5)

    def sum_sq(q):
        return np.sum(grad_of(q) ** 2)

    h, expected = 1e-3, np.zeros(logits.shape)
    for i in range(logits.size):
        up, down = logits.astype(np.float64).copy(), logits.astype(np.float64).copy()
        up.flat[i] += h
        down.flat[i] -= h
        expected.flat[i] = (sum_sq(up) - sum_sq(down)) / (2 * h)
    np.testing.assert_allclose(ours, expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", None, "mean_with_sample_weight"])
@pytest.mark.parametrize(
    "cls,kw,y,p",
    [
        ("Circle", {"gamma": 4.0}, SINGLETONS, EMB),
        ("Circle", {}, PAIRS, EMB),
        ("CTC", {}, SEQS, LOGITS),
    ],
)
def test_classes_match_keras(cls, kw, y, p, reduction):
    tf = pytest.importorskip("tensorflow")
    weight = np.linspace(0.5, 2.0, len(p)).astype(np.float32)
    results = []
    for m in (gtf, tf):
        loss = getattr(m.keras.losses, cls)(reduction=reduction, **kw)
        results.append(_value_and_grad(m, lambda a, b, loss=loss: loss(a, b, sample_weight=weight), y, p))
        results.append(_value_and_grad(m, lambda a, b, loss=loss: loss(a, b), y, p))
        results.append((loss.name, loss.get_config()))
    for ours, theirs in zip(results[:2], results[3:5]):
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-4)
    assert results[2] == results[5]


def test_circle_mean_leaves_out_the_samples_keras_masks():
    # Samples 4 and 5 have no other sample of their class: their loss is 0 and the mean is over the other four.
    per_sample = circle_oracle(SINGLETONS, EMB.astype(np.float64), 4.0)
    assert np.all(per_sample[4:] == 0) and np.all(per_sample[:4] > 0)
    value = gtf.keras.losses.Circle(gamma=4.0)(SINGLETONS, EMB).numpy()
    np.testing.assert_allclose(value, per_sample[:4].mean(), rtol=1e-5)


@pytest.mark.parametrize("y,p", [(SEQS[0], LOGITS), (SEQS, LOGITS[0])])
def test_ctc_refuses_the_shapes_keras_refuses(y, p):
    with pytest.raises(ValueError, match=r"\[gradkit\].*ctc expects"):
        gtf.keras.losses.ctc(y, p)


@pytest.mark.parametrize(
    "cls,kw,y,p,oracle",
    [
        ("Circle", {"gamma": 4.0, "reduction": "sum"}, PAIRS, EMB, lambda y, q: circle_oracle(y, q, 4.0).sum()),
        ("CTC", {}, SEQS, LOGITS, lambda y, q: ctc_oracle(y, q).mean()),
    ],
)
def test_gradient_flows_through_a_variable_assignment(cls, kw, y, p, oracle):
    # TensorFlow gives None for w: the assignment cuts its tape.
    loss_fn = getattr(gtf.keras.losses, cls)(**kw)
    w, held = gtf.Variable(p / 2), gtf.Variable(np.zeros_like(p))
    with gtf.GradientTape() as tape:
        held.assign(w * 2.0)
        loss = loss_fn(y, held)
    expected = 2 * _numeric_grad(lambda q: oracle(y, q), p)
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), expected, rtol=1e-3, atol=1e-4)
