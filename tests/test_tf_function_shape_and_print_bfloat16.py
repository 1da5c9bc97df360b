"""A ``tf.function`` returning ``x.shape`` returns it as an int32 tensor, as TensorFlow does;
``tf.print`` writes a bfloat16 as the float32 it widens to, in up to 9 digits (TensorFlow's
text). Oracles: the shapes and the widened values written out by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def test_a_returned_shape_is_an_int32_tensor():
    shape = gtf.function(lambda x: x.shape)(gtf.zeros([2, 3]))
    assert shape.dtype == gtf.int32 and shape.numpy().tolist() == [2, 3]
    both = gtf.function(lambda x: (gtf.shape(x), x.shape))(gtf.zeros([4]))
    assert [b.numpy().tolist() for b in both] == [[4], [4]]


def test_bfloat16_prints_as_its_float32_value(capsys):
    gtf.print(gtf.constant([1 / 3, 2 / 3, 0.1, 2.0], gtf.bfloat16))
    # bfloat16(1/3) is 0.333984375 exactly, and so on; 2 reads back in its shortest form.
    assert capsys.readouterr().err.strip() == "[0.333984375 0.66796875 0.100097656 2]"


def test_matches_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    values = np.array([1 / 3, 2 / 3, 0.1, 2.0, -7.5e-3], np.float32)
    path = tmp_path / "tf.txt"
    tf.print(tf.constant(values, tf.bfloat16), output_stream=f"file://{path}")
    gtf.print(gtf.constant(values, gtf.bfloat16), output_stream=f"file://{tmp_path / 'gk.txt'}")
    assert (tmp_path / "gk.txt").read_text() == path.read_text()
    assert tf.function(lambda x: x.shape)(tf.zeros([2, 3])).numpy().tolist() == [2, 3]
