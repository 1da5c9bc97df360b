"""tf.summary against TensorFlow 2.21: the same summaries written by TensorFlow and by gradkit.tf
into two directories, both read back with TensorFlow's own reader (which checks every CRC), must
hold the same events, field for field and byte for byte but for the wall times (and the PNG
bytes, compared as the pixels TensorFlow decodes). The checksum and the record framing are
also checked on their own, without TensorFlow."""

import importlib.util
import os
import struct
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from gradkit.tf._summary import histogram as gk_histogram
from gradkit.tf._summary import records

sys.path.insert(0, str(Path(__file__).parent))
from _oracles import count_compiles  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

# TensorFlow 2.21's scalar/histogram/image/text summaries are TensorBoard's code.
needs_tensorboard = pytest.mark.skipif(
    importlib.util.find_spec("tensorboard") is None, reason="TensorFlow's tf.summary ops need tensorboard"
)


def _tf():
    return pytest.importorskip("tensorflow")


def _step_dtype(tf):
    """TensorFlow takes an int64 Variable as a step; gradkit (JAX without x64) has int32 ones."""
    return tf.int32 if tf is gtf else tf.int64


# -- the checksum and the framing, without TensorFlow ---------------------------------------------


def test_crc32c_known_vectors():
    assert records.crc32c(b"123456789") == 0xE3069283
    assert records.crc32c(b"") == 0
    # RFC 3720 (iSCSI), appendix B.4
    assert records.crc32c(bytes(32)) == 0x8A9136AA
    assert records.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert records.crc32c(bytes(range(32))) == 0x46DD794E
    assert records.crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    data = bytes(range(256)) * 5 + b"tail"
    assert records.crc32c(data[777:], records.crc32c(data[:777])) == records.crc32c(data)


def test_record_framing():
    framed = records.frame(b"hello")
    length, length_crc = struct.unpack("<QI", framed[:12])
    assert length == 5 and framed[12:17] == b"hello"
    assert length_crc == records.masked_crc32c(framed[:8])
    crc = records.crc32c(b"hello")
    masked = ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
    assert struct.unpack("<I", framed[17:])[0] == masked


def test_crc32c_is_fast_enough_for_many_records():
    import time

    start = time.perf_counter()
    for _ in range(2000):
        records.frame(b"x" * 64)
    records.crc32c(bytes(200_000))
    assert time.perf_counter() - start < 2.0


def test_histogram_buckets_match_tensorboards_numpy_reference():
    # TensorBoard's own NumPy version (histogram_pb) of the same algorithm, for data with no ties at edges.
    data = np.array([0.0, 1.0, 2.5, 3.0, 10.0])
    got = gk_histogram.buckets(data, 4)
    np.testing.assert_array_equal(got[:, 2], [2.0, 2.0, 0.0, 1.0])
    np.testing.assert_array_equal(got[:, 0], [0.0, 2.5, 5.0, 7.5])
    assert got[-1, 1] == 10.0


# -- reading both directories back ----------------------------------------------------------------


def _records(tf_real, logdir: Path) -> list[bytes]:
    files = sorted(logdir.iterdir())
    assert len(files) == 1, files
    assert files[0].name.startswith("events.out.tfevents.")
    return [r.numpy() for r in tf_real.data.TFRecordDataset(str(files[0]))]


def _both(tmp_path, program, *args):
    """``program(tf, logdir, *args)`` with TensorFlow and gradkit.tf; their events, TensorFlow's first."""
    tf_real = _tf()
    out = []
    for tf, name in ((tf_real, "tf"), (gtf, "gk")):
        logdir = tmp_path / name
        program(tf, str(logdir), *args)
        out.append(_records(tf_real, logdir))
    return out


def _without_wall_time(record: bytes) -> bytes:
    assert record[0] == 0x09  # Event.wall_time, a double, comes first
    return record[9:]


def _assert_same_events(tf_records, gk_records, images=False):
    tf_real = _tf()
    assert len(gk_records) == len(tf_records)
    for ours, theirs in zip(gk_records, tf_records):
        a, b = tf_real.compat.v1.Event.FromString(theirs), tf_real.compat.v1.Event.FromString(ours)
        assert (a.step, a.file_version, a.source_metadata.writer) == (b.step, b.file_version, b.source_metadata.writer)
        assert len(a.summary.value) == len(b.summary.value)
        for va, vb in zip(a.summary.value, b.summary.value):
            assert va.tag == vb.tag
            assert va.metadata.plugin_data.plugin_name == vb.metadata.plugin_data.plugin_name
            assert va.metadata.plugin_data.content == vb.metadata.plugin_data.content
            assert va.metadata.display_name == vb.metadata.display_name
            assert va.metadata.summary_description == vb.metadata.summary_description
            assert va.tensor.dtype == vb.tensor.dtype
            assert va.tensor.tensor_shape == vb.tensor.tensor_shape
            assert va.simple_value == vb.simple_value
            if not va.HasField("tensor"):
                continue
            xa, xb = tf_real.make_ndarray(va.tensor), tf_real.make_ndarray(vb.tensor)
            if images and va.metadata.plugin_data.plugin_name == "images":
                assert xa[:2].tolist() == xb[:2].tolist()  # width, height
                for pa, pb in zip(xa[2:], xb[2:]):
                    np.testing.assert_array_equal(tf_real.io.decode_png(pa).numpy(), tf_real.io.decode_png(pb).numpy())
            else:
                np.testing.assert_array_equal(xa, xb)
        if not (images and any(v.metadata.plugin_data.plugin_name == "images" for v in a.summary.value)):
            assert _without_wall_time(ours) == _without_wall_time(theirs)


# -- the summary ops --------------------------------------------------------------------------------


def _scalars(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)
    step = tf.Variable(7, dtype=_step_dtype(tf))
    with writer.as_default():
        assert bool(tf.summary.scalar("py_float", 0.1, step=0))
        tf.summary.scalar("tensor", tf.constant(2.5), step=1, description="a *Markdown* description")
        tf.summary.scalar("int", 3, step=2**40)
        tf.summary.scalar("numpy64", np.float64(1 / 3), step=-5)
        tf.summary.scalar("bool", True, step=3)
        tf.summary.scalar("variable", tf.Variable(-1.25), step=step)
        step.assign(9)  # a Variable step is read when the summary is written
        tf.summary.scalar("variable", 4.0, step=step)
        tf.summary.experimental.set_step(step)
        step.assign(11)
        tf.summary.scalar("default_step", 5.0)
        tf.summary.experimental.set_step(None)
    with writer.as_default(step=12):
        tf.summary.scalar("as_default_step", 6.0)
        assert tf.summary.experimental.get_step() == 12
    assert tf.summary.experimental.get_step() is None
    writer.close()


@needs_tensorboard
def test_scalar_matches_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _scalars))


def _in_current_directory(tf, logdir):
    # An empty logdir is the current directory, as in TensorFlow.
    Path(logdir).mkdir()
    previous = Path.cwd()
    try:
        os.chdir(logdir)
        writer = tf.summary.create_file_writer("")
        with writer.as_default(step=3):
            tf.summary.scalar("here", 1.5)
        writer.close()
    finally:
        os.chdir(previous)


@needs_tensorboard
def test_an_empty_logdir_writes_in_the_current_directory(tmp_path):
    _assert_same_events(*_both(tmp_path, _in_current_directory))


_HIST_DATA = {
    "normal": np.random.default_rng(0).normal(size=(40, 5)).astype(np.float32),
    "ints": np.arange(-7, 50, 3).astype(np.int32),
    "constant": np.full(6, 2.5),
    "single": np.array([4.0]),
    "empty": np.zeros((0,), np.float32),
    "edges": np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0]),
    "wide": np.array([-1e30, 1e30, 0.0]),
}


def _histograms(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=1):
        for name, data in _HIST_DATA.items():
            tf.summary.histogram(name, data)
            # (a float64 tensor is float32 in gradkit, as JAX's default)
            tf.summary.histogram(name + "_tensor", tf.constant(data.astype(np.float32)), step=2, buckets=7)
        tf.summary.histogram("one_bucket", _HIST_DATA["normal"], buckets=1)
        tf.summary.histogram("zero_buckets", _HIST_DATA["normal"], buckets=0)
        tf.summary.histogram("negative_buckets", [1.0, 2.0], buckets=-3)
        tf.summary.histogram("empty_zero_buckets", [], buckets=0)
        tf.summary.histogram("list", [[1, 2], [2, 9]], description="nested list")
        tf.summary.histogram("variable", tf.Variable([0.5, -0.5, 3.0]))
    writer.close()


@needs_tensorboard
def test_histogram_matches_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _histograms))


_RNG = np.random.default_rng(1)
_IMAGES = {
    "gray_uint8": _RNG.integers(0, 256, size=(2, 5, 4, 1)).astype(np.uint8),
    "rgb_uint8": _RNG.integers(0, 256, size=(5, 3, 6, 3)).astype(np.uint8),
    "rgba_uint8": _RNG.integers(0, 256, size=(1, 4, 4, 4)).astype(np.uint8),
    "gray_alpha_uint8": _RNG.integers(0, 256, size=(1, 2, 3, 2)).astype(np.uint8),
    "rgb_float32": _RNG.uniform(-0.2, 1.2, size=(4, 3, 5, 3)).astype(np.float32),
    "gray_float64": _RNG.uniform(0, 1, size=(2, 4, 4, 1)),
    "rgb_int16": _RNG.integers(-300, 32767, size=(1, 3, 3, 3)).astype(np.int16),
    "rgb_int8": _RNG.integers(-128, 128, size=(1, 3, 3, 3)).astype(np.int8),
}


def _image_summaries(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=3):
        for name, data in _IMAGES.items():
            tf.summary.image(name, data)
        tf.summary.image("tensor_float", tf.constant(_IMAGES["rgb_float32"]), max_outputs=2, description="d")
        tf.summary.image("one", _IMAGES["rgb_uint8"], max_outputs=1)
        tf.summary.image("none", _IMAGES["rgb_uint8"], max_outputs=0)
        tf.summary.image("all", _IMAGES["rgb_uint8"], max_outputs=10)
    writer.close()


@needs_tensorboard
def test_image_matches_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _image_summaries), images=True)


def _texts(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=4):
        tf.summary.text("str", "hello **world**")
        tf.summary.text("unicode", "gradients \u2207 \u00e9t\u00e9")
        tf.summary.text("bytes", b"raw bytes", step=5, description="bytes")
        tf.summary.text("list", ["a", "bc", ""])
        tf.summary.text("table", [["x", "y"], ["1", "2"]])
        tf.summary.text("numpy", np.array(["p", "q"]))
    writer.close()


@needs_tensorboard
def test_text_matches_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _texts))


def _writes(tf, logdir):
    tf_real = _tf()
    metadata = tf_real.compat.v1.SummaryMetadata(display_name="shown", summary_description="described")
    metadata.plugin_data.plugin_name = "custom"
    metadata.plugin_data.content = b"\x08\x01"
    summary = tf_real.compat.v1.Summary()
    summary.value.add(tag="raw", simple_value=1.5)
    other = tf_real.compat.v1.Summary()
    other.value.add(tag="raw2", simple_value=-2.0)
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=6):
        assert bool(tf.summary.write("int32", tf.constant([1, 2, 3])))
        tf.summary.write("float64", np.array([[0.5, 1.0]]), step=7)
        tf.summary.write("python_float", 0.1)
        tf.summary.write("bool", np.array([True, False]))
        tf.summary.write("uint8", np.arange(4, dtype=np.uint8))
        tf.summary.write("string", "text")
        tf.summary.write("strings", ["a", "b"])
        tf.summary.write("with_metadata", 2.0, metadata=metadata)
        tf.summary.write("with_metadata_bytes", 3.0, metadata=metadata.SerializeToString())
        tf.summary.write("callable", lambda: tf.constant(9.0))
        tf.summary.experimental.write_raw_pb(summary.SerializeToString(), step=8)
        tf.summary.experimental.write_raw_pb([summary.SerializeToString(), other.SerializeToString()], step=9)
    writer.close()


def test_write_matches_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _writes))


def _scopes(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)

    @tf.function
    def traced(x):
        with tf.name_scope("block"):
            tf.summary.write("a", x, step=1)
            tf.summary.write("a", x, step=2)
        with tf.name_scope("block"):  # a graph scope: block_1
            tf.summary.write("a", x, step=3)
        with tf.summary.experimental.summary_scope("my op!", "default") as (tag, scope):
            tf.summary.write(tag, x, step=4)
        return x

    with writer.as_default():
        with tf.name_scope("outer"):
            with tf.name_scope("inner"):
                tf.summary.write("x y", 1.0, step=0)
                with tf.summary.experimental.summary_scope("my op!", "default") as (tag, scope):
                    assert (tag, scope) == ("outer/inner/my op!", "outer/inner/myop/")
                with tf.summary.experimental.summary_scope(None, "default") as (tag, scope):
                    assert (tag, scope) == ("outer/inner/default", "outer/inner/default/")
            traced(tf.constant(2.0))  # a tf.function's scopes start at the root
    writer.close()


def test_name_scopes_prefix_tags_as_tensorflow(tmp_path):
    _assert_same_events(*_both(tmp_path, _scopes))


@needs_tensorboard
def test_name_scopes_of_typed_summaries(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default(step=1), tf.name_scope("train"):
            tf.summary.scalar("loss/total", 1.0)
            tf.summary.histogram("weights", [1.0, 2.0])
            tf.summary.text("note", "n")
            tf.summary.image("img", _IMAGES["gray_uint8"])
        writer.close()

    _assert_same_events(*_both(tmp_path, program), images=True)


def _recording(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)
    flags = []
    with writer.as_default(step=1):
        flags.append(bool(tf.summary.should_record_summaries()))
        with tf.summary.record_if(False):
            flags.append(bool(tf.summary.write("off", 1.0)))
            flags.append(bool(tf.summary.should_record_summaries()))
            with tf.summary.record_if(True):
                flags.append(bool(tf.summary.write("on", 2.0)))
        with tf.summary.record_if(tf.constant(False)):
            flags.append(bool(tf.summary.write("tensor_off", 3.0)))
        counter = tf.Variable(0)
        with tf.summary.record_if(lambda: counter % 2 == 0):
            for i in range(4):
                flags.append(bool(tf.summary.write("every_other", float(i), step=i)))
                counter.assign_add(1)
    flags.append(bool(tf.summary.should_record_summaries()))  # no default writer
    writer.close()
    assert flags == [True, False, False, True, False, True, False, True, False, False]


def test_record_if(tmp_path):
    _assert_same_events(*_both(tmp_path, _recording))


def _no_writer(tf, logdir):
    writer = tf.summary.create_file_writer(logdir)  # made, never the default
    assert not bool(tf.summary.write("w", 1.0))
    assert not bool(tf.summary.write("no_step", 1.0))  # no writer: no step needed
    with tf.summary.create_noop_writer().as_default():
        assert not bool(tf.summary.write("noop", 1.0, step=1))
        tf.summary.flush()
    tf.summary.flush()
    writer.close()


def test_no_default_writer_writes_nothing(tmp_path):
    tf_records, gk_records = _both(tmp_path, _no_writer)
    assert len(gk_records) == 1  # the file-version event only
    _assert_same_events(tf_records, gk_records)


def test_no_default_writer_returns_false_for_every_op():
    for result in (
        gtf.summary.scalar("s", 1.0, step=1),
        gtf.summary.histogram("h", [1.0], step=1),
        gtf.summary.image("i", _IMAGES["gray_uint8"], step=1),
        gtf.summary.text("t", "x", step=1),
    ):
        assert result.dtype == np.bool_ and not bool(result)


# -- inside tf.function ------------------------------------------------------------------------------


def _compiled_training(tf, logdir, compiles=None):
    writer = tf.summary.create_file_writer(logdir)
    step = tf.Variable(0, dtype=_step_dtype(tf))
    w = tf.Variable(1.5)

    @tf.function
    def train(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((w * x) ** 2)
            tf.summary.write("loss", loss, step=step)
        grad = tape.gradient(loss, w)
        w.assign_sub(0.125 * grad)
        tf.summary.write("grad", grad, step=step)
        tf.summary.write("constant", 0.5, step=step)
        with tf.summary.record_if(step % 2 == 0):
            tf.summary.write("even_steps", w, step=step)
        step.assign_add(1)
        return loss, grad

    out = []
    x = tf.constant([1.0, 2.0])
    with writer.as_default():
        out.append(train(x))
        calls = lambda: out.extend(train(x) for _ in range(3))  # noqa: E731
        if compiles is None:
            calls()
        else:
            compiles.append(count_compiles(calls))
            compiles.append(train.experimental_get_tracing_count())
    writer.close()
    return [(float(loss), float(grad)) for loss, grad in out]


def test_compiled_step_writes_each_call_and_compiles_once(tmp_path):
    compiles = []
    tf_records, gk_records = _both(
        tmp_path, lambda tf, logdir: _compiled_training(tf, logdir, compiles if tf is gtf else None)
    )
    assert compiles == [0, 1]
    _assert_same_events(tf_records, gk_records)
    tf_real = _tf()
    events = [tf_real.compat.v1.Event.FromString(r) for r in gk_records[1:]]
    losses = [
        (e.step, float(tf_real.make_ndarray(e.summary.value[0].tensor)))
        for e in events
        if e.summary.value[0].tag == "loss"
    ]
    assert losses == [(0, 11.25), (1, 0.703125), (2, 0.0439453125), (3, 0.00274658203125)]


def test_compiled_step_gradients_are_those_without_summaries(tmp_path):
    with_summaries = _compiled_training(gtf, str(tmp_path / "a"))
    tf_real = _tf()
    assert with_summaries == _compiled_training(tf_real, str(tmp_path / "b"))


def test_compiled_function_keeps_the_writer_it_was_traced_with(tmp_path):
    def program(tf, logdir):
        first = tf.summary.create_file_writer(logdir)
        results = []

        @tf.function
        def log(x):
            return tf.summary.write("x", x, step=1)

        results.append(bool(log(tf.constant(1.0))))  # traced without a writer: never writes
        with first.as_default():
            results.append(bool(log(tf.constant(2.0))))
        first.close()
        assert results == [False, False]

    _assert_same_events(*_both(tmp_path, program))


def test_default_step_variable_is_read_at_each_call(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        step = tf.Variable(100, dtype=_step_dtype(tf))

        @tf.function
        def log(x):
            tf.summary.write("x", x)
            return x

        with writer.as_default(step=step):
            for i in range(3):
                log(tf.constant(float(i)))
                step.assign_add(5)
        writer.close()

    _assert_same_events(*_both(tmp_path, program))


def test_control_flow_inside_tf_function(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)

        @tf.function
        def log(x, n):
            tf.cond(
                x > 0, lambda: tf.summary.write("positive", x, step=1), lambda: tf.summary.write("other", x, step=2)
            )
            tf.cond(
                tf.constant(True),
                lambda: tf.summary.write("taken", x, step=3),
                lambda: tf.summary.write("not", x, step=3),
            )

            def body(i):
                tf.summary.write("loop", x + tf.cast(i, tf.float32), step=i)
                return (i + 1,)

            tf.while_loop(lambda i: i < n, body, [tf.constant(0, dtype=n.dtype)])
            return x

        with writer.as_default():
            log(tf.constant(1.5), tf.constant(3, dtype=_step_dtype(tf)))
            log(tf.constant(-1.0), tf.constant(2, dtype=_step_dtype(tf)))
        writer.close()

    _assert_same_events(*_both(tmp_path, program))


def test_as_default_inside_tf_function_flushes_at_each_call(tmp_path):
    tf_real = _tf()
    writer = gtf.summary.create_file_writer(str(tmp_path))

    @gtf.function
    def log(x):
        with writer.as_default(step=4):
            gtf.summary.write("x", x)
        return x

    for i in range(3):
        log(gtf.constant(float(i)))
        assert len(_records(tf_real, tmp_path)) == 2 + i  # written out by the call itself
    writer.close()


@needs_tensorboard
def test_typed_summaries_inside_tf_function(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        step = tf.Variable(1, dtype=_step_dtype(tf))

        @tf.function
        def log(x, images):
            tf.summary.scalar("mean", tf.reduce_mean(x), step=step)
            tf.summary.histogram("x", x, step=step, buckets=4)
            tf.summary.image("images", images, step=step, max_outputs=2)
            tf.summary.text("note", "constant text", step=step)
            step.assign_add(1)
            return x

        with writer.as_default():
            for i in range(2):
                log(tf.constant([1.0, 2.0, 4.0, 1.0 + i]), tf.constant(_IMAGES["rgb_float32"] * (i + 1) / 2))
        writer.close()

    _assert_same_events(*_both(tmp_path, program), images=True)


@needs_tensorboard
def test_summaries_under_a_tape_leave_gradients_alone(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        w = tf.Variable([1.0, -2.0])
        x = tf.constant([3.0, 0.5])
        with writer.as_default(step=0), tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(w * x)
            tf.summary.scalar("y", y)
            tf.summary.histogram("w", w)
            z = y * y
        grads = [tape.gradient(y, w).numpy().tolist(), tape.gradient(z, w).numpy().tolist()]
        writer.close()
        return grads, [v.name for v in tape.watched_variables()]

    results = []
    _both(tmp_path, lambda tf, logdir: results.append(program(tf, logdir)))
    assert results[0] == results[1]


# -- files, flushing, closing ------------------------------------------------------------------------


def test_file_name_first_event_and_crc_checks(tmp_path):
    tf_real = _tf()
    for tf, name in ((tf_real, "tf"), (gtf, "gk")):
        tf.summary.create_file_writer(str(tmp_path / name / "deep"), filename_suffix="xyz").close()
    tf_file = next((tmp_path / "tf" / "deep").iterdir())
    gk_file = next((tmp_path / "gk" / "deep").iterdir())
    # events.out.tfevents.<seconds>.<hostname>.<pid>.<n>.xyz: the same but for the time and the counter
    assert gk_file.name.split(".")[:3] == tf_file.name.split(".")[:3]
    assert gk_file.name.split(".")[4:6] == tf_file.name.split(".")[4:6] and gk_file.name.endswith(".xyz")
    (first,) = _records(tf_real, tmp_path / "gk" / "deep")
    event = tf_real.compat.v1.Event.FromString(first)
    assert event.file_version == "brain.Event:2" and event.wall_time == int(gk_file.name.split(".")[3])
    _assert_same_events(_records(tf_real, tmp_path / "tf" / "deep"), [first])
    # TensorFlow's reader checks the CRCs: a flipped byte in the data is a DataLossError.
    data = bytearray(gk_file.read_bytes())
    data[20] ^= 1
    gk_file.write_bytes(bytes(data))
    with pytest.raises(tf_real.errors.DataLossError):
        list(tf_real.data.TFRecordDataset(str(gk_file)))


def test_queue_flush_and_close(tmp_path):
    # set_as_default has no undo: run it in a thread of its own (default writers are per thread).
    failures = []

    def run():
        try:
            _queue_flush_and_close(tmp_path)
        except BaseException as error:  # noqa: BLE001 - raised again below
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]
    assert gtf.summary.experimental.get_step() is None  # this thread's defaults are untouched


def _queue_flush_and_close(tmp_path):
    tf_real = _tf()
    writer = gtf.summary.create_file_writer(str(tmp_path), max_queue=2)
    path = next(tmp_path.iterdir())
    count = lambda: len(list(tf_real.data.TFRecordDataset(str(path))))  # noqa: E731
    assert count() == 1  # the file-version event is written at once
    writer.set_as_default(step=1)
    gtf.summary.write("a", 1.0)
    gtf.summary.write("a", 2.0)
    assert count() == 1  # queued
    gtf.summary.write("a", 3.0)  # more than max_queue: written out
    assert count() == 4
    gtf.summary.write("a", 4.0)
    gtf.summary.flush()
    assert count() == 5
    gtf.summary.write("a", 5.0)
    gtf.summary.flush(writer=writer)
    assert count() == 6
    gtf.summary.write("a", 6.0)
    writer.close()
    assert count() == 7
    writer.close()  # again: nothing happens, as in TensorFlow
    writer.flush()
    with pytest.raises(RuntimeError, match=r"^\[gradkit\].*closed"):
        writer.as_default()
    with pytest.raises(gtf.errors.NotFoundError, match=r"^\[gradkit\].*closed"):
        gtf.summary.write("a", 7.0)  # the closed writer is still the default
    with gtf.summary.create_noop_writer().as_default():
        pass


def test_as_default_exit_flushes_and_restores(tmp_path):
    tf_real = _tf()
    outer = gtf.summary.create_file_writer(str(tmp_path / "outer"))
    inner = gtf.summary.create_file_writer(str(tmp_path / "inner"))
    with outer.as_default(step=1):
        with inner.as_default(step=2):
            gtf.summary.write("in", 1.0)
        assert gtf.summary.experimental.get_step() == 1
        gtf.summary.write("out", 1.0)
    for name, tag, step in (("inner", "in", 2), ("outer", "out", 1)):
        (_, last) = _records(tf_real, tmp_path / name)  # flushed on exit, before close
        event = tf_real.compat.v1.Event.FromString(last)
        assert (event.summary.value[0].tag, event.step) == (tag, step)
    outer.close()
    inner.close()


def test_thousands_of_records(tmp_path):
    tf_real = _tf()
    writer = gtf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        for i in range(3000):
            gtf.summary.write("loss", np.float32(i / 7), step=i)
    writer.close()
    got = _records(tf_real, tmp_path)
    assert len(got) == 3001
    last = tf_real.compat.v1.Event.FromString(got[-1])
    assert last.step == 2999 and tf_real.make_ndarray(last.summary.value[0].tensor) == np.float32(2999 / 7)


# -- refusals ----------------------------------------------------------------------------------------


@needs_tensorboard
@pytest.mark.parametrize(
    "call",
    [
        lambda tf: tf.summary.scalar("a", [1.0, 2.0], step=1),
        lambda tf: tf.summary.scalar("a", 1.0, step=1.5),
        lambda tf: tf.summary.scalar("a", 1.0, step=[1, 2]),
        lambda tf: tf.summary.scalar("a", 1.0, step=tf.constant(1.0)),
        lambda tf: tf.summary.scalar("a", 1.0),
        lambda tf: tf.summary.text("a", 1, step=1),
        lambda tf: tf.summary.text("a", tf.constant(1), step=1),
        lambda tf: tf.summary.image("a", np.zeros((2, 2, 1), np.uint8), step=1),
        lambda tf: tf.summary.image("a", np.zeros((1, 2, 2, 5), np.uint8), step=1),
        lambda tf: tf.summary.image("a", np.zeros((1, 2, 2, 1), np.uint8), step=1, max_outputs=-1),
        lambda tf: tf.summary.image("a", np.zeros((1, 2, 2, 1), bool), step=1),
        lambda tf: tf.summary.histogram("a", [1.0], step=1, buckets=2.0),
        lambda tf: tf.summary.histogram("a", [1.0], step=1, buckets=np.int64(3)),
        lambda tf: tf.summary.flush(writer=3),
        lambda tf: tf.summary.create_file_writer(None),
    ],
)
def test_bad_input_raises_tensorflows_error_class(tmp_path, call):
    tf_real = _tf()
    classes = []
    for tf in (tf_real, gtf):
        writer = tf.summary.create_file_writer(str(tmp_path / tf.__name__))
        with writer.as_default(), pytest.raises(Exception) as caught:
            call(tf)
        writer.close()
        classes.append(caught)
    theirs, ours = classes
    assert str(ours.value).startswith("[gradkit]")
    for base in (ValueError, TypeError, AttributeError, RuntimeError):
        if isinstance(theirs.value, base):
            assert isinstance(ours.value, base), (theirs.value, ours.value)
    if isinstance(theirs.value, tf_real.errors.InvalidArgumentError):
        assert isinstance(ours.value, gtf.errors.InvalidArgumentError), ours.value


def test_refused_and_missing_names():
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] tf.summary.audio .*wave"):
        gtf.summary.audio("a", np.zeros((1, 10, 1), np.float32), 16000, step=1)
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] tf.summary.trace_on .*jax.profiler"):
        gtf.summary.trace_on(graph=True)
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit.tf.summary has no 'nonexistent'"):
        gtf.summary.nonexistent  # noqa: B018
    assert isinstance(gtf.summary.create_noop_writer(), gtf.summary.SummaryWriter)
