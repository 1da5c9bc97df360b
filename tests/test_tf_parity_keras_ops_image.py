"""Keras 3's ``keras.ops.image`` on gradkit.tf (``tf.keras.ops.image``): values, dtypes and shapes
against real Keras on TensorFlow in both data formats, gradients against TensorFlow's tape, the
ops inside ``tf.function``, and ``[gradkit]`` errors for bad input.

Where Keras 3.15 on TensorFlow goes wrong (``fill_mode='reflect'`` below index 0 and ``'mirror'``
in ``map_coordinates``; ``elastic_transform``'s equal x and y fields), gradkit follows Keras'
documentation: those are checked against hand values instead.
"""

import numpy as np
import pytest
from keras_ops_results import assert_same, case_ids, plain

import gradkit.tf as gtf

_RNG = np.random.default_rng(3)
IMG = _RNG.uniform(size=(2, 5, 6, 3)).astype(np.float32)
IMG_CF = np.ascontiguousarray(IMG.transpose(0, 3, 1, 2))
ONE = IMG[0]
U8 = _RNG.integers(0, 256, size=(2, 5, 6, 3)).astype(np.uint8)
I32 = _RNG.integers(-50, 50, size=(5, 6, 3)).astype(np.int32)
VOL = _RNG.uniform(size=(1, 4, 4, 4, 2)).astype(np.float32)
SHIFT = np.array([1, 0, 0.5, 0, 1, -1, 0, 0], np.float32)  # reads (x + 0.5, y - 1)
ROT = np.array([[0.8, -0.6, 2.0, 0.6, 0.8, -1.0, 0.0, 0.0], [1, 0.2, 0, 0.1, 1, 0, 0.01, 0.02]], np.float32)
START = np.array([[0, 0], [5, 0], [0, 4], [5, 4]], np.float32)
END = np.array([[0.5, 0.2], [4.6, 0.1], [0.3, 3.8], [5.0, 4.0]], np.float32)
COORDS = np.stack(np.meshgrid(np.linspace(0.2, 3.7, 4), np.linspace(-0.4, 5.3, 5), indexing="ij")).astype(np.float32)
PLANE = IMG[0, ..., 0]

# (name, args, kwargs): the same call on gtf.keras.ops.image and keras.ops.image.
CASES = (
    [("rgb_to_grayscale", (x,), {}) for x in (IMG, ONE, U8, I32, IMG[..., :1])]
    + [("rgb_to_grayscale", (IMG_CF,), dict(data_format="channels_first"))]
    + [(n, (x,), {}) for n in ("rgb_to_hsv", "hsv_to_rgb") for x in (IMG, ONE)]
    + [(n, (IMG_CF,), dict(data_format="channels_first")) for n in ("rgb_to_hsv", "hsv_to_rgb")]
    + [("resize", (IMG, (3, 4)), dict(interpolation=m)) for m in ("bilinear", "nearest", "bicubic", "area")]
    + [
        ("resize", (IMG, (8, 9)), dict(interpolation="lanczos3", antialias=True)),
        ("resize", (IMG, (3, 3)), dict(antialias=True)),
        ("resize", (ONE, (4, 2)), dict(crop_to_aspect_ratio=True)),
        ("resize", (IMG, (4, 2)), dict(pad_to_aspect_ratio=True, fill_value=0.5)),
        ("resize", (IMG, (2, 6)), dict(pad_to_aspect_ratio=True)),
        ("resize", (IMG_CF, (3, 4)), dict(data_format="channels_first")),
        ("resize", (U8, (3, 4)), {}),
        ("resize", (U8, (7, 9)), dict(interpolation="bicubic")),
        ("resize", (U8, (3, 4)), dict(interpolation="nearest")),
    ]
    + [
        ("pad_images", (IMG, 1, 2), dict(target_height=8, target_width=9)),
        ("pad_images", (ONE,), dict(bottom_padding=2, right_padding=1, target_height=7, target_width=7)),
        ("pad_images", (I32, 0, 1, 2, 3), {}),
        ("pad_images", (IMG_CF, 1, 0, 1, 0), dict(data_format="channels_first")),
        ("crop_images", (IMG, 1, 2), dict(target_height=3, target_width=3)),
        ("crop_images", (ONE,), dict(bottom_cropping=1, right_cropping=2, target_height=3, target_width=3)),
        ("crop_images", (U8, 1, 1, 1, 1), {}),
        ("crop_images", (IMG_CF, 0, 1, 2, 3), dict(data_format="channels_first")),
    ]
    + [
        ("extract_patches", (IMG, 2), {}),
        ("extract_patches", (ONE, (2, 3)), dict(strides=(1, 2), padding="same")),
        ("extract_patches", (IMG, 2), dict(strides=1, dilation_rate=2)),
        ("extract_patches", (IMG_CF, (2, 2)), dict(data_format="channels_first")),
        ("extract_patches", (VOL, (2, 2, 2)), {}),
        ("extract_patches_3d", (VOL, 2), dict(strides=1)),
        ("extract_patches_3d", (VOL[0], (2, 3, 2)), dict(padding="same")),
        (
            "extract_patches_3d",
            (np.ascontiguousarray(VOL.transpose(0, 4, 1, 2, 3)), 2),
            dict(data_format="channels_first"),
        ),
    ]
    + [
        ("gaussian_blur", (IMG,), {}),
        ("gaussian_blur", (ONE,), dict(kernel_size=(5, 3), sigma=(1.5, 0.7))),
        ("gaussian_blur", (IMG_CF,), dict(kernel_size=(3, 5), sigma=(2.0, 1.0), data_format="channels_first")),
        ("sobel_edges", (IMG,), {}),
        ("sobel_edges", (IMG_CF,), dict(data_format="channels_first")),
        ("ssim", (IMG, IMG[::-1]), dict(filter_size=3)),
        ("ssim", (ONE, ONE * 0.9 + 0.05), dict(filter_size=5, filter_sigma=1.0, max_val=2.0)),
        ("ssim", (IMG_CF, IMG_CF[::-1]), dict(filter_size=3, data_format="channels_first")),
    ]
    + [
        ("affine_transform", (IMG, SHIFT), dict(fill_mode=f, interpolation=i))
        for f in ("constant", "nearest", "wrap", "reflect")
        for i in ("bilinear", "nearest")
    ]
    + [
        ("affine_transform", (IMG, ROT), dict(fill_value=0.5)),
        ("affine_transform", (ONE, ROT[1]), {}),
        ("affine_transform", (IMG_CF, ROT), dict(data_format="channels_first", fill_mode="wrap")),
        ("affine_transform", (U8, ROT), {}),
        ("affine_transform", (U8, ROT), dict(interpolation="nearest")),
        ("perspective_transform", (IMG, START, END), {}),
        ("perspective_transform", (ONE, START, END), dict(interpolation="nearest", fill_value=1.0)),
        (
            "perspective_transform",
            (IMG_CF, np.stack([START, END]), np.stack([END, START])),
            dict(data_format="channels_first"),
        ),
    ]
    + [
        ("map_coordinates", (PLANE, COORDS, o), dict(fill_mode=f))
        for o in (0, 1)
        for f in ("constant", "nearest", "wrap")
    ]
    + [
        ("map_coordinates", (PLANE, np.abs(COORDS) + 3.0, 1), dict(fill_mode="reflect")),
        ("map_coordinates", (PLANE, COORDS, 1), dict(fill_value=-1.0)),
        ("map_coordinates", (IMG[0], np.stack([COORDS[0], COORDS[1], np.full((4, 5), 1.3, np.float32)]), 1), {}),
        ("map_coordinates", (I32[..., 0], COORDS, 1), {}),
        ("map_coordinates", (I32[..., 0], COORDS, 0), dict(fill_mode="nearest")),
    ]
    + [
        ("scale_and_translate", (IMG, (2, 8, 4, 3), [1.5, 0.7], [0.5, -0.2], (1, 2), m), {})
        for m in ("linear", "bicubic", "lanczos3", "lanczos5")
    ]
    + [
        ("scale_and_translate", (IMG, (2, 3, 4, 3), [0.6, 0.7], [0.0, 0.0], (1, 2), "linear"), dict(antialias=False)),
    ]
)


def _keras():
    return pytest.importorskip("keras")


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_op_matches_keras(case):
    keras = _keras()
    name, args, kwargs = case
    want = plain(getattr(keras.ops.image, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(gtf.keras.ops.image, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name, tol=1e-4)


def test_ops_match_keras_inside_tf_function():
    keras = _keras()
    results = gtf.function(lambda: [getattr(gtf.keras.ops.image, n)(*a, **k) for n, a, k in CASES])()
    for (name, args, kwargs), got in zip(CASES, results):
        want = plain(getattr(keras.ops.image, name)(*args, **kwargs), keras.backend.standardize_dtype)
        assert_same(plain(got, lambda d: np.dtype(d).name), want, name, tol=1e-4)


def test_names_are_keras_image_names():
    keras = _keras()
    theirs = sorted(n for n in dir(keras.ops.image) if not n.startswith("_"))
    ours = sorted(n for n in dir(gtf.keras.ops.image) if not n.startswith("_"))
    assert ours == theirs


# -- gradients (TensorFlow's tape as the oracle) ------------------------------------------------

GRADS = [
    ("rgb_to_grayscale", (), {}),
    ("rgb_to_hsv", (), {}),
    ("resize", ((3, 4),), {}),
    ("resize", ((8, 9),), dict(interpolation="bicubic", data_format="channels_first")),
    ("resize", ((4, 2),), dict(pad_to_aspect_ratio=True)),
    ("pad_images", (1, 2), dict(target_height=8, target_width=9)),
    ("crop_images", (1, 2), dict(target_height=3, target_width=3, data_format="channels_first")),
    ("extract_patches", (2,), dict(strides=1)),
    ("gaussian_blur", (), dict(kernel_size=(5, 3), sigma=(1.5, 0.7))),
    ("gaussian_blur", (), dict(data_format="channels_first")),
    ("sobel_edges", (), {}),
    ("sobel_edges", (), dict(data_format="channels_first")),
    ("scale_and_translate", ((2, 8, 4, 3), [1.5, 0.7], [0.5, -0.2], (1, 2), "cubic"), {}),
]


@pytest.mark.parametrize("case", GRADS, ids=case_ids(GRADS))
def test_gradient_matches_tensorflow(case):
    keras = _keras()
    tf_real = pytest.importorskip("tensorflow")
    name, args, kwargs = case
    x0 = IMG_CF if kwargs.get("data_format") == "channels_first" else IMG
    weights = np.cos(np.arange(np.asarray(getattr(keras.ops.image, name)(x0, *args, **kwargs)).size)).astype("f")

    def loss(ops, x):
        out = getattr(ops.image, name)(x, *args, **kwargs)
        return ops.sum(ops.reshape(out, (-1,)) * weights)

    xt = tf_real.constant(x0)
    with tf_real.GradientTape() as tape:
        tape.watch(xt)
        want_loss = loss(keras.ops, xt)
    want = tape.gradient(want_loss, xt).numpy()
    xg = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        got_loss = loss(gtf.keras.ops, xg)
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(tape.gradient(got_loss, xg).numpy(), want, rtol=1e-3, atol=1e-4)


def test_ssim_gradient_matches_tensorflow():
    keras = _keras()
    tf_real = pytest.importorskip("tensorflow")
    other = IMG[::-1]
    xt = tf_real.constant(IMG)
    with tf_real.GradientTape() as tape:
        tape.watch(xt)
        want_loss = keras.ops.sum(keras.ops.image.ssim(xt, other, filter_size=3))
    want = tape.gradient(want_loss, xt).numpy()
    xg = gtf.Variable(IMG)
    with gtf.GradientTape() as tape:
        got_loss = gtf.keras.ops.sum(gtf.keras.ops.image.ssim(xg, other, filter_size=3))
    np.testing.assert_allclose(tape.gradient(got_loss, xg).numpy(), want, rtol=1e-3, atol=1e-4)


def test_hsv_to_rgb_gradient_matches_finite_differences():
    """TensorFlow registers no gradient for HSVToRGB; gradkit's is the derivative of its formula."""
    hsv = (IMG[0] * 0.8 + 0.1).astype(np.float32)  # away from the hue sextants' edges
    direction = np.cos(np.arange(hsv.size)).reshape(hsv.shape).astype(np.float32)
    weights = np.sin(np.arange(hsv.size)).reshape(hsv.shape).astype(np.float32)

    def loss(x):
        return gtf.reduce_sum(gtf.keras.ops.image.hsv_to_rgb(x) * weights)

    xg = gtf.Variable(hsv)
    with gtf.GradientTape() as tape:
        value = loss(xg)
    grad = tape.gradient(value, xg).numpy()
    step = 1e-3
    numeric = (float(loss(hsv + step * direction)) - float(loss(hsv - step * direction))) / (2 * step)
    np.testing.assert_allclose(float(np.sum(grad * direction)), numeric, rtol=2e-2)


@pytest.mark.parametrize("name", ["affine_transform", "map_coordinates"])
def test_sampling_gradient_is_the_adjoint(name):
    """The images' gradient of a linear resampling is its transpose: <A x, y> = <x, A^T y>."""
    ops = gtf.keras.ops.image
    if name == "affine_transform":
        x0, fn = IMG, lambda x: ops.affine_transform(x, ROT, fill_mode="reflect")
    else:
        x0, fn = PLANE, lambda x: ops.map_coordinates(x, COORDS, 1, fill_mode="wrap")
    y = np.sin(np.arange(np.asarray(fn(x0)).size)).reshape(np.asarray(fn(x0)).shape).astype(np.float32)
    xg = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        inner = gtf.reduce_sum(fn(xg) * y)
    grad = tape.gradient(inner, xg).numpy()
    np.testing.assert_allclose(float(np.sum(grad * x0)), float(inner), rtol=1e-4)


@pytest.mark.parametrize("fill_mode", ["constant", "nearest", "wrap"])
def test_map_coordinates_gradient_with_respect_to_the_coordinates(fill_mode):
    """Linear interpolation's derivative along each axis: against Keras on TensorFlow's tape and a
    central difference (the coordinates stay clear of the grid points, where it jumps)."""
    plane = np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.5
    coords = np.array([[0.5, 1.25, -0.4], [1.5, 2.75, 3.3]], np.float32)
    weights = np.array([1.0, -2.0, 0.5], np.float32)

    def grad(tf, ops):
        c = tf.constant(coords)
        with tf.GradientTape() as tape:
            tape.watch(c)
            out = tf.reduce_sum(ops.image.map_coordinates(tf.constant(plane), c, 1, fill_mode=fill_mode) * weights)
        return np.asarray(tape.gradient(out, c))

    got = grad(gtf, gtf.keras.ops)

    def value(c):
        out = gtf.keras.ops.image.map_coordinates(plane.astype(np.float64), c, 1, fill_mode=fill_mode)
        return float(np.sum(np.asarray(out) * weights))

    step = 1e-3
    numeric = np.zeros_like(coords)
    for index in np.ndindex(coords.shape):
        shift = np.zeros_like(coords, dtype=np.float64)
        shift[index] = step
        numeric[index] = (value(coords + shift) - value(coords - shift)) / (2 * step)
    np.testing.assert_allclose(got, numeric, rtol=1e-3, atol=1e-3)
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, grad(tf, keras.ops), rtol=1e-5, atol=1e-5)


# -- hand values where Keras on TensorFlow goes wrong; elastic_transform ------------------------


def test_map_coordinates_reflect_and_mirror_follow_keras_documentation():
    row = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)  # a b c d
    cols = np.array([-3.0, -2.0, -1.0, 0.0, 3.0, 4.0, 5.0, 6.0], np.float32)
    coords = np.stack([np.zeros_like(cols), cols])
    reflect = gtf.keras.ops.image.map_coordinates(row, coords, 0, fill_mode="reflect").numpy()
    mirror = gtf.keras.ops.image.map_coordinates(row, coords, 0, fill_mode="mirror").numpy()
    np.testing.assert_array_equal(reflect, [3, 2, 1, 1, 4, 4, 3, 2])  # (d c b a | a b c d | d c b a)
    np.testing.assert_array_equal(mirror, [4, 3, 2, 1, 4, 3, 2, 1])  # (d c b | a b c d | c b a)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_elastic_transform_fields(data_format):
    ops = gtf.keras.ops.image
    x = IMG if data_format == "channels_last" else IMG_CF
    kw = dict(alpha=2.0, sigma=1.0, data_format=data_format)
    a, b = ops.elastic_transform(x, seed=4, **kw), ops.elastic_transform(x, seed=4, **kw)
    assert a.shape == x.shape and a.dtype == gtf.float32
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # an int seed repeats
    assert not np.allclose(a.numpy(), x)
    generator = gtf.keras.random.SeedGenerator(1)
    c, d = ops.elastic_transform(x, seed=generator, **kw), ops.elastic_transform(x, seed=generator, **kw)
    assert not np.allclose(c.numpy(), d.numpy())  # a SeedGenerator moves on
    same = ops.elastic_transform(x, alpha=0.0, sigma=1.0, seed=4, data_format=data_format)
    np.testing.assert_allclose(same.numpy(), x, atol=1e-6)  # no displacement: the images back
    single = ops.elastic_transform(x[0], seed=4, **kw)
    assert single.shape == x[0].shape
    xg = gtf.Variable(x)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(ops.elastic_transform(xg, seed=4, **kw))
    grad = tape.gradient(loss, xg).numpy()
    assert grad.shape == x.shape and np.isfinite(grad).all() and abs(grad.sum() - x.size) < 1e-2 * x.size


def test_elastic_transform_in_tf_function_draws_anew_with_a_seed_generator():
    generator = gtf.keras.random.SeedGenerator(2)
    fn = gtf.function(lambda x: gtf.keras.ops.image.elastic_transform(x, sigma=1.0, seed=generator))
    a, b = fn(IMG), fn(IMG)
    assert a.shape == IMG.shape and not np.allclose(a.numpy(), b.numpy())


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,kind,text",
    [
        (lambda o: o.rgb_to_grayscale(IMG[..., :2]), ValueError, "3 .RGB. or 1"),
        (lambda o: o.rgb_to_hsv(U8), ValueError, "floats"),
        (lambda o: o.resize(IMG[0, 0], (2, 2)), ValueError, "rank 3"),
        (lambda o: o.resize(IMG, (2, 2), crop_to_aspect_ratio=True, pad_to_aspect_ratio=True), ValueError, "one of"),
        (lambda o: o.resize(IMG, (2, 0)), ValueError, "positive"),
        (lambda o: o.resize(IMG, (2, 2), interpolation="cubic"), ValueError, "interpolation"),
        (lambda o: o.pad_images(IMG, 1, 1), ValueError, "exactly two"),
        (lambda o: o.pad_images(IMG, 4, 1, target_height=6, target_width=9), ValueError, "bottom_padding must be"),
        (lambda o: o.crop_images(IMG, -1, 0, 1, 1), ValueError, "top_cropping must be >= 0"),
        (lambda o: o.extract_patches(IMG, (1, 2, 3, 4)), ValueError, "tuple of 2"),
        (lambda o: o.gaussian_blur(U8), TypeError, "floats"),
        (lambda o: o.sobel_edges(ONE), ValueError, "rank"),
        (lambda o: o.ssim(IMG, IMG[:, :4]), ValueError, "same shape"),
        (lambda o: o.ssim(IMG, IMG), ValueError, "filter_size"),
        (lambda o: o.affine_transform(IMG, SHIFT, fill_mode="mirror"), ValueError, "fill_mode"),
        (lambda o: o.affine_transform(IMG, SHIFT, interpolation="bicubic"), ValueError, "interpolation"),
        (lambda o: o.perspective_transform(IMG, START[:3], END[:3]), ValueError, r"\(4, 2\)"),
        (lambda o: o.map_coordinates(PLANE, COORDS[:1], 1), ValueError, "one leading entry per axis"),
        (lambda o: o.map_coordinates(PLANE, COORDS, 3), NotImplementedError, "order 0"),
        (lambda o: o.elastic_transform(U8), TypeError, "floats"),
        (lambda o: o.scale_and_translate(IMG, (2, 3, 4, 3), [1.0], [0.0], (1, 2), "linear"), ValueError, "spatial"),
        (lambda o: o.scale_and_translate(IMG, (2, 3, 4, 3), [1.0], [0.0], (1,), "area"), ValueError, "method"),
        (lambda o: o.rgb_to_grayscale(IMG, data_format="NHWC"), ValueError, "data_format"),
    ],
)
def test_bad_input_raises_a_gradkit_error(call, kind, text):
    with pytest.raises(kind, match=r"\[gradkit\].*" + text):
        call(gtf.keras.ops.image)


def test_functional_model_records_image_ops():
    inputs = gtf.keras.Input((5, 6, 3))
    outputs = gtf.keras.ops.image.resize(gtf.keras.ops.image.rgb_to_grayscale(inputs), (3, 3))
    model = gtf.keras.Model(inputs, outputs)
    assert tuple(model(IMG).shape) == (2, 3, 3, 1)


# -- bfloat16 images: TensorFlow's color kernels and Keras' affine_transform take them -------------

BF16_CALLS = {
    "tf.image.rgb_to_hsv": lambda tf, ops, x: tf.image.rgb_to_hsv(x),
    "tf.image.hsv_to_rgb": lambda tf, ops, x: tf.image.hsv_to_rgb(x),
    "tf.image.rgb_to_grayscale": lambda tf, ops, x: tf.image.rgb_to_grayscale(x),
    "tf.image.rgb_to_yiq": lambda tf, ops, x: tf.image.rgb_to_yiq(x),
    "tf.image.yuv_to_rgb": lambda tf, ops, x: tf.image.yuv_to_rgb(x),
    "tf.image.adjust_hue": lambda tf, ops, x: tf.image.adjust_hue(x, 0.2),
    "tf.image.adjust_saturation": lambda tf, ops, x: tf.image.adjust_saturation(x, 1.5),
    "keras.rgb_to_hsv": lambda tf, ops, x: ops.image.rgb_to_hsv(x),
    "keras.hsv_to_rgb": lambda tf, ops, x: ops.image.hsv_to_rgb(x),
    "keras.affine_transform": lambda tf, ops, x: ops.image.affine_transform(x, ROT),
    "keras.affine_transform_nearest": lambda tf, ops, x: ops.image.affine_transform(
        x, SHIFT, interpolation="nearest", fill_mode="nearest"
    ),
}


@pytest.mark.parametrize("name", sorted(BF16_CALLS))
def test_bfloat16_images_are_taken_as_tensorflow_takes_them(name):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    want = BF16_CALLS[name](tf, keras.ops, tf.cast(IMG, tf.bfloat16))
    got = BF16_CALLS[name](gtf, gtf.keras.ops, gtf.cast(IMG, gtf.bfloat16))
    assert got.dtype.name == want.dtype.name == "bfloat16"
    assert tuple(got.shape) == tuple(want.shape)
    # TensorFlow's bfloat16 kernels round at other steps: within a couple of bfloat16 steps.
    np.testing.assert_allclose(
        np.asarray(gtf.cast(got, gtf.float32)), tf.cast(want, tf.float32).numpy(), rtol=2e-2, atol=1e-2
    )


def test_bfloat16_affine_transform_has_a_gradient():
    x = gtf.Variable(gtf.cast(IMG, gtf.bfloat16))
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.cast(gtf.keras.ops.image.affine_transform(x, ROT), gtf.float32))
    grad = tape.gradient(loss, x)
    assert grad.dtype == gtf.bfloat16 and tuple(grad.shape) == IMG.shape


# -- crop_images: crops larger than the image ---------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,word",
    [
        (dict(top_cropping=3, bottom_cropping=3, left_cropping=0, right_cropping=0), "target_height"),
        (dict(top_cropping=0, bottom_cropping=0, left_cropping=4, right_cropping=3), "target_width"),
        (dict(top_cropping=2, bottom_cropping=4, left_cropping=0, right_cropping=0), "target_height"),
    ],
)
def test_crop_images_refuses_crops_larger_than_the_image_as_keras_does(kwargs, word):
    keras = pytest.importorskip("keras")
    with pytest.raises(ValueError, match=f"{word} must be >= 0"):
        keras.ops.image.crop_images(IMG, **kwargs)
    with pytest.raises(ValueError, match=rf"\[gradkit\].*crop_images: {word} must be >= 0.*size [56]"):
        gtf.keras.ops.image.crop_images(IMG, **kwargs)


def test_crop_images_may_crop_the_whole_image_away():
    keras = pytest.importorskip("keras")
    kwargs = dict(top_cropping=2, bottom_cropping=3, left_cropping=1, right_cropping=1)  # height 5: nothing left
    want = keras.ops.image.crop_images(IMG, **kwargs)
    got = gtf.keras.ops.image.crop_images(IMG, **kwargs)
    assert tuple(got.shape) == tuple(want.shape) == (2, 0, 4, 3)
