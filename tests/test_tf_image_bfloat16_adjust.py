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
    if name == "sobel_edges":
        # Summed in float32 and rounded once (by hand); TensorFlow's bfloat16 convolution rounds as
        # its CPU kernel does (oneDNN's differs from CPU to CPU): to bfloat16's precision.
        np.testing.assert_array_equal(got, _sobel_rounded_once())
    if name != "stateless_random_brightness":  # its draw is not TensorFlow's (README)
        np.testing.assert_allclose(got, want, atol=1.6e-2, rtol=1.6e-2)


def _sobel_rounded_once():
    """``sobel_edges`` of the bfloat16 image of ``_run``, summed exactly in float32 (the products
    of bfloat16 values and the kernels' small integers are exact) and rounded to bfloat16 once."""
    import jax.numpy as jnp

    x = np.random.RandomState(0).rand(1, 4, 5, 3).astype("float32")
    x = np.asarray(jnp.asarray(x, jnp.bfloat16).astype(jnp.float32))
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    dy = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float32)
    out = []
    for kernel in (dy, dy.T):
        acc = np.zeros_like(x)
        for i in range(3):
            for j in range(3):
                acc += kernel[i, j] * padded[:, i : i + x.shape[1], j : j + x.shape[2], :]
        out.append(acc)
    return np.asarray(jnp.asarray(np.stack(out, axis=-1), jnp.bfloat16).astype(jnp.float32))
