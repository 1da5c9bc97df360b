"""tf.image's adjustments and ``sobel_edges`` of bfloat16 images, against TensorFlow (skipped
without it): the same dtype out, and values to bfloat16's precision."""

import numpy as np
import pytest

import gradkit.tf as gtf

_OPS = {
    "adjust_brightness": (0.2,),
    "adjust_contrast": (1.5,),
    "adjust_gamma": (0.5,),
    "per_image_standardization": (),
    "sobel_edges": (),
    "stateless_random_brightness": (0.2, (1, 2)),
}


def _run(tf, name):
    x = np.random.RandomState(0).rand(1, 4, 5, 3).astype("float32")
    y = getattr(tf.image, name)(tf.cast(tf.constant(x), tf.bfloat16), *_OPS[name])
    return str(np.dtype(getattr(y.dtype, "as_numpy_dtype", y.dtype))), np.asarray(tf.cast(y, tf.float32))


@pytest.mark.parametrize("name", sorted(_OPS))
def test_bfloat16_images_as_tensorflow(name):
    dtype, got = _run(gtf, name)
    # TensorFlow standardizes a non-float16 image in float32.
    assert dtype == ("float32" if name == "per_image_standardization" else "bfloat16")
    assert np.all(np.isfinite(got))
    tf = pytest.importorskip("tensorflow")
    want_dtype, want = _run(tf, name)
    assert dtype == want_dtype
    if name == "sobel_edges":  # summed in float32 and rounded once, as TensorFlow's kernel
        np.testing.assert_array_equal(got, want)
    elif name != "stateless_random_brightness":  # its draw is not TensorFlow's (README)
        np.testing.assert_allclose(got, want, atol=1.6e-2, rtol=1.6e-2)
