"""``tf.keras.callbacks.TensorBoard``: the event files ``fit`` and ``evaluate`` write, read back
with TensorBoard's own reader. Oracles: the training history (each ``epoch_<metric>`` is its
logged value at that epoch), and Keras 3 where installed (the same tags, steps and values;
Keras' extra ``keras`` tag is its model graph, which gradkit does not write)."""

import os
import warnings

import numpy as np
import pytest

import gradkit.tf as gtf

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
tensor_util = pytest.importorskip("tensorboard.util.tensor_util")

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(32, 3)).astype(np.float32)
_Y = (_X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


def _events(directory):
    out = {}
    for sub in sorted(os.listdir(directory)):
        acc = event_accumulator.EventAccumulator(
            os.path.join(directory, sub), size_guidance={"tensors": 0, "histograms": 0, "scalars": 0}
        )
        acc.Reload()
        for tag in acc.Tags().get("tensors", []):
            values = []
            for e in acc.Tensors(tag):
                array = tensor_util.make_ndarray(e.tensor_proto)
                scalar = array.size == 1 and array.dtype.kind == "f"
                values.append((e.step, round(float(array.ravel()[0]), 5) if scalar else "tensor"))
            out[(sub, tag)] = values
        for tag in acc.Tags().get("scalars", []):
            out[(sub, tag)] = [(e.step, round(float(e.value), 5)) for e in acc.Scalars(tag)]
    return out


def _run(K, directory, update_freq):
    m = K.Sequential([K.Input((3,)), K.layers.Dense(1, kernel_initializer="zeros", name="dense")], name="net")
    m.compile(optimizer=K.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = m.fit(
            _X,
            _Y,
            validation_split=0.25,
            epochs=3,
            batch_size=8,
            verbose=0,
            shuffle=False,
            callbacks=[K.callbacks.TensorBoard(directory, histogram_freq=1, update_freq=update_freq)],
        )
        m.evaluate(_X, _Y, verbose=0, callbacks=[K.callbacks.TensorBoard(directory)])
    return history.history, _events(directory)


def test_epoch_scalars_are_the_history(tmp_path):
    history, events = _run(gtf.keras, str(tmp_path), "epoch")
    for name in ("loss", "mae"):
        assert [v for _, v in events[("train", f"epoch_{name}")]] == pytest.approx(history[name], rel=1e-5)
        assert [v for _, v in events[("validation", f"epoch_{name}")]] == pytest.approx(
            history[f"val_{name}"], rel=1e-5
        )
        assert [s for s, _ in events[("train", f"epoch_{name}")]] == [0, 1, 2]
    assert [v for _, v in events[("train", "epoch_learning_rate")]] == pytest.approx([0.1] * 3)
    assert ("train", "batch_loss") not in events
    assert [s for s, _ in events[("train", "net/dense/kernel/histogram")]] == [0, 1, 2]
    # After each epoch's validation and the evaluate call: at the optimizer's step (3 batches an epoch).
    assert [s for s, _ in events[("validation", "evaluation_loss_vs_iterations")]] == [3, 6, 9, 9]


def test_batch_scalars_every_update_freq_batches(tmp_path):
    _, events = _run(gtf.keras, str(tmp_path), 2)
    # Batch scalars at every second of the 3 x 3 training batches. The writer stays the default
    # between batches, recording only at even batch counts, as in Keras: so the epoch scalars
    # are recorded only for the epoch ending at batch 6.
    assert [s for s, _ in events[("train", "batch_loss")]] == [2, 4, 6, 8]
    assert [s for s, _ in events[("train", "epoch_loss")]] == [1]


def test_event_files_match_keras(tmp_path):
    pytest.importorskip("keras")
    import keras

    for update_freq in ("epoch", 2):
        _, ours = _run(gtf.keras, str(tmp_path / f"ours{update_freq}"), update_freq)
        _, theirs = _run(keras, str(tmp_path / f"theirs{update_freq}"), update_freq)
        _compare(ours, theirs)


def _compare(ours, theirs):
    theirs.pop(("train", "keras"), None)  # Keras' model graph
    assert set(ours) == set(theirs)
    for key in ours:
        assert [s for s, _ in ours[key]] == [s for s, _ in theirs[key]], key
        for (_, a), (_, b) in zip(ours[key], theirs[key]):
            if a != "tensor":
                assert a == pytest.approx(b, rel=1e-4, abs=1e-6), key


def _nested_model(K):
    pre = K.layers.Dense(3, name="pre")
    pre.build((None, 3))  # built before the model: its weights' paths do not name the model
    inner = K.Sequential([K.layers.Dense(2, name="d_in")], name="inner")
    return K.Sequential([K.Input((3,)), pre, inner, K.layers.Dense(1, name="d_out")], name="outer")


def test_histogram_tags_are_the_weights_paths(tmp_path):
    pytest.importorskip("keras")
    import keras

    tags = {}
    for name, K in (("ours", gtf.keras), ("theirs", keras)):
        model = _nested_model(K)
        model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse")
        callback = K.callbacks.TensorBoard(str(tmp_path / name), histogram_freq=1, write_graph=False)
        model.fit(_X, _Y, epochs=1, verbose=0, callbacks=[callback])
        tags[name] = sorted(tag for _, tag in _events(str(tmp_path / name)) if tag.endswith("/histogram"))
    assert tags["ours"] == tags["theirs"]
    assert {"pre/kernel/histogram", "outer/inner/d_in/kernel/histogram"} <= set(tags["ours"])


def test_profiling_and_embeddings_are_refused():
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*profile_batch"):
        gtf.keras.callbacks.TensorBoard(profile_batch=2)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*embeddings_freq"):
        gtf.keras.callbacks.TensorBoard(embeddings_freq=1)
