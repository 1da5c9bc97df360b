"""Keras' subclassing API (tf.keras.layers.Layer, tf.keras.Model), its weightless layers and
tf.keras.initializers under gradkit.tf, against real TensorFlow 2.21 / Keras 3.

Programs take the module ``tf``; weights are made equal by ``set_weights`` (random values of
each weight's shape, or TensorFlow's own weights copied over), then outputs, gradients,
variable lists and optimizer steps are compared.
"""

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import _compare, _np, run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_X = _rs.randn(4, 3).astype(np.float32)
_IMAGES = _rs.randn(6, 4, 5).astype(np.float32)
_LABELS = np.array([0, 2, 1, 2, 0, 1], np.int32)
_X4 = _rs.randn(3, 4, 5).astype(np.float32)


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    # The Keras guide's `tf.matmul(x, w) + b` broadcasts by rank as TensorFlow does; the suite's
    # strict rank-promotion mode is for gradkit's own internals.
    with jax.numpy_rank_promotion("allow"):
        yield


def _same_weights(model, seed=0):
    """Give the model's weights the same random values under both modules (by shape, in order)."""
    rng = np.random.default_rng(seed)
    model.set_weights([rng.standard_normal(tuple(v.shape)).astype(np.float32) for v in model.weights])


def _shapes(variables):
    return [tuple(v.shape) for v in variables]


def _linear_class(tf):
    class Linear(tf.keras.layers.Layer):  # the Keras custom-layer guide's, unchanged
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True, name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    return Linear


def test_the_keras_guide_linear_layer_matches_tensorflow():
    def program(tf):
        layer = _linear_class(tf)(5)
        built_before = layer.built
        layer(tf.constant(_X))
        _same_weights(layer)
        with tf.GradientTape() as tape:
            y = layer(tf.constant(_X))
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, layer.trainable_weights)
        return [
            y,
            grads,
            [built_before, layer.built, type(layer.weights).__name__],
            _shapes(layer.trainable_variables),
            _shapes(layer.non_trainable_weights),
        ]

    run_both(program)


def test_sublayers_come_in_the_order_keras_tracked_them():
    # A list filled after another layer was set, a dict filled later, an attribute set again, a
    # layer popped from a list: Keras orders layers (and so weights, get_weights and set_weights) as it tracked them.
    def program(tf):
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.blocks = []
                self.blocks.append(tf.keras.layers.Dense(3, name="b0"))
                self.head = tf.keras.layers.Dense(3, name="head")
                self.blocks.append(tf.keras.layers.Dense(3, name="b1"))
                self.by_name = {}
                self.tail = tf.keras.layers.Dense(3, name="first_tail")
                self.tail(np.zeros((1, 3), np.float32))  # built, then replaced: still tracked
                self.c = [tf.keras.layers.Dense(3, name="c0"), tf.keras.layers.Dense(3, name="c1")]
                self.c.pop()
                self.by_name["x"] = tf.keras.layers.Dense(2, name="dx")
                self.tail = tf.keras.layers.Dense(3, name="tail")

            def call(self, x):
                y = self.head(self.blocks[1](self.blocks[0](self.c[0](x))))
                return self.by_name["x"](self.tail(y))

        model = Net()
        model(tf.constant(_X))
        _same_weights(model, seed=2)
        return [[layer.name for layer in model.layers], [v.path for v in model.weights], model(tf.constant(_X))]

    run_both(program)


def test_weights_made_in_init_nested_layers_and_lists_come_in_keras_order():
    def program(tf):
        class Block(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.first = tf.keras.layers.Dense(2)
                self.counter = self.add_weight(shape=(2,), initializer="zeros", trainable=False, name="counter")
                self.stack = [tf.keras.layers.Dense(3), tf.keras.layers.Dense(1, use_bias=False)]
                self.scale = self.add_weight((3,), "ones")  # Keras 3's positional shape, initializer
                self.raw = tf.Variable(tf.ones([2]))  # not a weight in Keras 3 (TensorFlow backend)

            def call(self, x):
                y = self.stack[0](self.first(x)) * self.scale
                return self.stack[1](y) + tf.reduce_sum(self.counter)

        class Outer(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.head = tf.keras.layers.Dense(2)

            def call(self, x):
                return self.head(self.block(x))

        model = Outer()
        model(tf.constant(_X))
        _same_weights(model, seed=1)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(tf.constant(_X)) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        return [
            loss,
            grads,
            _shapes(model.weights),
            _shapes(model.trainable_weights),
            _shapes(model.non_trainable_variables),
            [len(model.layers), len(model.block.weights), model.count_params()],
        ]

    run_both(program)


def test_set_weights_takes_tensorflows_own_weights():
    tf_layer = _linear_class(tf_real)(3)
    tf_layer(tf_real.constant(_X))
    gk_layer = _linear_class(gtf)(3)
    gk_layer(gtf.constant(_X))
    gk_layer.set_weights(tf_layer.get_weights())
    _compare(_np(tf_layer(tf_real.constant(_X))), _np(gk_layer(gtf.constant(_X))))
    with pytest.raises(ValueError, match=r"\[gradkit\].*2 weights"):
        gk_layer.set_weights(tf_layer.get_weights()[:1])
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape"):
        gk_layer.set_weights([np.zeros((2, 3), np.float32), np.zeros(3, np.float32)])


def test_training_reaches_nested_layers_as_in_keras():
    def program(tf):
        seen = []

        class Probe(tf.keras.layers.Layer):
            def call(self, x, training=None):
                seen.append(training)
                return x

        class Plain(tf.keras.layers.Layer):  # its call takes no training; its sublayers still get it
            def __init__(self):
                super().__init__()
                self.probe = Probe()

            def call(self, x):
                return self.probe(x)

        class Outer(tf.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.plain = Probe(), Probe(), Plain()

            def call(self, x, training=False):
                seen.append(("outer", training))
                x = self.a(x, training=True)  # an explicit value is seen by the calls after it
                return self.plain(self.b(x))

        outer, plain = Outer(), Plain()
        x = tf.ones([1, 2])
        outer(x), plain(x)  # first calls build (Keras may trace them once more)
        seen.clear()
        outer(x)
        outer(x, training=True)
        plain(x, training=True)
        plain(x)
        return [str(seen)]

    run_both(program)


def test_dropout_and_batch_normalization_follow_the_models_training():
    def program(tf):
        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.dense = tf.keras.layers.Dense(8)
                self.norm = tf.keras.layers.BatchNormalization()
                self.drop = tf.keras.layers.Dropout(0.5)

            def call(self, x, training=False):
                return self.drop(self.norm(self.dense(x)))

        model = Net()
        x = tf.constant(_X)
        model(x)
        _same_weights(model, seed=2)
        model.norm.moving_variance.assign(tf.ones([8]))  # positive, as a variance is
        inference = model(x)
        again = model(x)
        before = model.norm.moving_mean.numpy()
        trained = model(x, training=True).numpy()
        # Dropout in training: each entry is dropped (0) or scaled by 1 / (1 - rate).
        model.drop.rate = 0.0
        kept = model(x, training=True).numpy()
        zero_or_scaled = np.all((trained == 0) | np.isclose(trained, 2 * kept, rtol=1e-5, atol=1e-6))
        return [inference, again, before, model.norm.moving_mean, [bool(zero_or_scaled), bool((trained == 0).any())]]

    run_both(program)


def _quickstart_model(tf, dropout):
    class MyModel(tf.keras.Model):  # TensorFlow's "quickstart for experts", Conv2D left out
        def __init__(self):
            super().__init__()
            self.flatten = tf.keras.layers.Flatten()
            self.d1 = tf.keras.layers.Dense(16, activation="relu")
            self.dropout = tf.keras.layers.Dropout(dropout)
            self.d2 = tf.keras.layers.Dense(3)

        def call(self, x, training=False):
            x = self.flatten(x)
            x = self.d1(x)
            x = self.dropout(x, training=training)
            return self.d2(x)

    return MyModel()


def _train_step(tf, model, optimizer, traces):
    @tf.function
    def train_step(images, labels):
        traces.append(1)
        with tf.GradientTape() as tape:
            logits = model(images, training=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    return lambda: train_step(tf.constant(_IMAGES), tf.constant(_LABELS))


def test_the_quickstart_training_loop_matches_tensorflow():
    def program(tf):
        model = _quickstart_model(tf, dropout=0.0)
        model(tf.constant(_IMAGES))
        _same_weights(model, seed=3)
        step = _train_step(tf, model, tf.keras.optimizers.Adam(0.01), [])
        losses = [step() for _ in range(3)]
        return [losses, model.get_weights(), _shapes(model.trainable_variables)]

    run_both(program)


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_the_quickstart_training_step_compiles_once(dropout):
    # The first call traces (more than once while it creates the optimizer's slots, as in
    # TensorFlow); the same-shaped steps after it neither trace nor compile.
    traces = []
    step = _train_step(gtf, _quickstart_model(gtf, dropout), gtf.keras.optimizers.Adam(0.01), traces)
    step().numpy()
    first = len(traces)
    assert count_compiles(lambda: [step().numpy() for _ in range(3)]) == 0
    assert len(traces) == first


def test_a_model_with_dropout_draws_fresh_masks_at_each_compiled_step():
    model = _quickstart_model(gtf, dropout=0.5)
    gtf.random.set_seed(0)
    step = _train_step(gtf, model, gtf.keras.optimizers.SGD(0.0), [])  # rate 0: only the masks change
    losses = [float(step().numpy()) for _ in range(3)]
    assert len(set(losses)) == 3, losses  # a mask baked in at trace time would repeat the loss
    inference = model(gtf.constant(_IMAGES)).numpy()
    np.testing.assert_array_equal(inference, model(gtf.constant(_IMAGES), training=False).numpy())


def test_dropout_gradient_is_the_mask_scaled():
    # Hand derivation: y = x * m / (1 - rate) with m in {0, 1}, so dy/dx = y / x elementwise.
    x = gtf.Variable(np.abs(_rs.randn(200)).astype(np.float32) + 0.5)
    layer = gtf.keras.layers.Dropout(0.25, seed=3)
    with gtf.GradientTape() as tape:
        y = layer(x, training=True)
    grad = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(grad, y.numpy() / x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.unique(grad), [0.0, 1 / 0.75], rtol=1e-6)


def test_a_frozen_sublayer_is_left_out_of_trainable_variables():
    def program(tf):
        model = _quickstart_model(tf, dropout=0.0)
        model(tf.constant(_IMAGES))
        model.d1.trainable = False
        lists = [_shapes(model.trainable_variables), _shapes(model.non_trainable_weights)]
        model.trainable = False
        lists += [_shapes(model.trainable_weights), model.d2.trainable]
        model.trainable = True
        return [*lists, _shapes(model.trainable_weights), model.d1.trainable]

    run_both(program)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.Flatten(),
        lambda tf: tf.keras.layers.Flatten(data_format="channels_first"),
        lambda tf: tf.keras.layers.Reshape((2, -1)),
        lambda tf: tf.keras.layers.Reshape((5, 2, 2)),
        lambda tf: tf.keras.layers.Activation("relu"),
        lambda tf: tf.keras.layers.Activation("softmax"),
        lambda tf: tf.keras.layers.Activation(tf.nn.tanh),
        lambda tf: tf.keras.layers.Dropout(0.5),  # not training: the input as it is
    ],
)
def test_weightless_layers_and_their_gradients_match_tensorflow(make):
    def program(tf):
        x = tf.Variable(_X4)
        layer = make(tf)
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_sum(
                y * tf.constant(np.linspace(-1, 1, int(np.prod(y.shape)), dtype=np.float32).reshape(tuple(y.shape)))
            )
        return [y, tape.gradient(loss, x), len(layer.weights)]

    run_both(program)


def test_flatten_of_a_vector_and_reshape_errors_match_tensorflow():
    run_both(lambda tf: tf.keras.layers.Flatten()(tf.ones([3])))
    run_both(lambda tf: tf.keras.layers.Reshape((3, 3))(tf.ones([2, 4, 5])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*target_shape"):
        gtf.keras.layers.Reshape((3, 3))(gtf.ones([2, 4, 5]))
    run_both(lambda tf: tf.keras.layers.Dropout(1.5))


@pytest.mark.parametrize("name", ["zeros", "ones", "identity"])
def test_constant_initializers_are_exact(name):
    def program(tf):
        init = tf.keras.initializers.get(name)
        layer = tf.keras.layers.Dense(3, kernel_initializer=name, bias_initializer="ones")
        layer(tf.ones([2, 3]))
        return [init((3, 3)), layer.kernel, type(init).__name__]

    run_both(program)
    run_both(lambda tf: tf.keras.initializers.Constant(2.5)((2, 3)))
    run_both(lambda tf: tf.keras.initializers.Identity(gain=3.0)((2, 4)))


_RANDOM_INITIALIZERS = [
    ("RandomNormal", {}),
    ("RandomNormal", {"mean": 1.0, "stddev": 0.3}),
    ("RandomUniform", {}),
    ("RandomUniform", {"minval": 0.0, "maxval": 2.0}),
    ("TruncatedNormal", {}),
    ("TruncatedNormal", {"stddev": 1.0}),
    ("GlorotUniform", {}),
    ("GlorotNormal", {}),
    ("HeNormal", {}),
    ("HeUniform", {}),
    ("LecunNormal", {}),
    ("LecunUniform", {}),
    ("VarianceScaling", {"scale": 3.0, "mode": "fan_out", "distribution": "untruncated_normal"}),
    ("VarianceScaling", {"mode": "fan_avg", "distribution": "uniform"}),
]


@pytest.mark.parametrize("shape", [(300, 200), (3, 3, 40, 30)])
@pytest.mark.parametrize("cls, kwargs", _RANDOM_INITIALIZERS)
def test_random_initializers_draw_keras_distributions(cls, kwargs, shape):
    # Draws differ from TensorFlow's; their mean, spread and bounds (the fan rule for a
    # convolution kernel included) must be Keras'.
    def stats(tf):
        tf.keras.utils.set_random_seed(0)  # fixed draws: the check cannot fail by chance on one run
        values = getattr(tf.keras.initializers, cls)(**kwargs)(shape).numpy()
        return np.array([values.mean(), values.std(), values.min(), values.max()])

    tf_stats, gk_stats = stats(tf_real), stats(gtf)
    spread = tf_stats[1]
    # Five standard errors of a mean (or of a difference of two standard deviations) of this
    # many draws: gradkit's draws are not TensorFlow's.
    tolerance = 5 * spread / np.sqrt(np.prod(shape)) + 1e-4
    expected_mean = kwargs.get("mean", (kwargs.get("minval", 0.0) + kwargs.get("maxval", 0.0)) / 2)
    np.testing.assert_allclose(gk_stats[0], expected_mean, atol=tolerance)
    np.testing.assert_allclose(gk_stats[1], tf_stats[1], atol=tolerance)
    unbounded = cls == "RandomNormal" or kwargs.get("distribution") == "untruncated_normal"
    if not unbounded:  # uniform and truncated draws fill their range up to its bounds
        np.testing.assert_allclose(gk_stats[2:], tf_stats[2:], atol=0.05 * spread + 1e-4)


def test_orthogonal_initializer_is_orthogonal_with_its_gain():
    for shape in [(6, 4), (4, 6), (2, 3, 5)]:
        q = gtf.keras.initializers.Orthogonal(gain=2.0)(shape).numpy().reshape(-1, shape[-1])
        gram = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
        np.testing.assert_allclose(gram, 4.0 * np.eye(min(q.shape)), atol=1e-5)
    run_both(lambda tf: tf.keras.initializers.Orthogonal()((3,)))  # both refuse rank 1


def test_initializer_instances_repeat_and_seeds_fix_them_as_in_keras():
    def program(tf):
        unseeded, seeded = tf.keras.initializers.HeNormal(), tf.keras.initializers.RandomUniform(seed=4)
        same = [np.array_equal(unseeded((3, 2)), unseeded((3, 2))), np.array_equal(seeded((5,)), seeded((5,)))]
        twin = tf.keras.initializers.RandomUniform(seed=4)
        return [same, np.array_equal(seeded((5,)), twin((5,)))]

    run_both(program)


def test_initializer_names_and_instances_reach_dense():
    def program(tf):
        tf.keras.utils.set_random_seed(0)
        inits = ["he_uniform", "lecun_normal", "truncated_normal", "GlorotNormal", tf.keras.initializers.HeNormal()]
        kernels = []
        for init in inits:
            layer = tf.keras.layers.Dense(100, kernel_initializer=init)
            layer(tf.ones([1, 400]))
            kernels.append(np.round(layer.kernel.numpy().std(), 2))
        names = [type(tf.keras.initializers.get(n)).__name__ for n in ["glorot_uniform", "he_normal", "Orthogonal"]]
        return [np.array(kernels), names]

    out = {name: program(tf) for name, tf in (("tf", tf_real), ("gk", gtf))}
    np.testing.assert_allclose(out["gk"][0], out["tf"][0], atol=0.011)
    assert out["gk"][1] == out["tf"][1]


def test_unknown_initializer_names_and_keras_options_raise_clear_errors():
    run_both(lambda tf: tf.keras.initializers.get("no_such_init"))
    with pytest.raises(ValueError, match=r"\[gradkit\].*no_such_init.*he_normal"):
        gtf.keras.layers.Dense(2, kernel_initializer="no_such_init")(gtf.ones([1, 2]))

    class Overwritten(gtf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(2,), overwrite_with_gradient=True)

        def call(self, x):
            return x

    with pytest.raises(TypeError, match=r"\[gradkit\].*overwrite_with_gradient"):
        Overwritten()(gtf.ones([2]))
    run_both(lambda tf: tf.keras.layers.Layer(foo=1))


def test_whole_model_saving_raises_and_names_save_weights():
    model = _quickstart_model(gtf, dropout=0.0)
    model(gtf.constant(_IMAGES))
    with pytest.raises(TypeError, match="filepath"):  # model.save("m.keras"): test_tf_keras_model_saving.py
        model.save()
    with pytest.raises(TypeError, match=r"\[gradkit\].*save_weights"):
        model.export()
    with pytest.raises(ValueError, match=r"\[gradkit\].*compile\(\)"):
        model.fit(_IMAGES, np.zeros(len(_IMAGES)))
    with pytest.raises(ValueError, match=r"\[gradkit\].*tf.keras.Input"):
        gtf.keras.Model(inputs=gtf.ones([1]), outputs=gtf.ones([1]))


def test_predict_and_class_relations_match_keras():
    def program(tf):
        model = _quickstart_model(tf, dropout=0.5)
        model(tf.constant(_IMAGES))
        _same_weights(model, seed=5)
        relations = [
            isinstance(model, tf.keras.layers.Layer),
            isinstance(tf.keras.Sequential(), tf.keras.Model),
            isinstance(tf.keras.layers.Dense(2), tf.keras.layers.Layer),
            model.built,
        ]
        return [model.predict(_IMAGES, verbose=0), relations, _shapes(model.weights)]

    run_both(program)


def test_model_build_makes_the_weights_without_a_call():
    model = _quickstart_model(gtf, dropout=0.5)
    model.build((None, 4, 5))
    assert model.built and _shapes(model.weights) == [(20, 16), (16,), (16, 3), (3,)]


def test_a_layer_names_its_dtype_as_keras_does():
    def program(tf):
        class Scale(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones")

            def call(self, inputs):
                return tf.cast(inputs, self.dtype) * self.w * 2.0  # a custom layer's usual cast

        layer = Scale()
        out = layer(tf.constant([[1, 2]]))  # integer inputs
        dense = tf.keras.layers.Dense(2)
        return out, [layer.dtype, layer.compute_dtype, layer.variable_dtype, dense.dtype, dense.compute_dtype]

    want, got = program(tf_real), program(gtf)
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
    assert got[1] == want[1] == ["float32"] * 5


def _initializer_classes(tf):
    K = tf.keras
    x = np.ones((1, 2), np.float32)

    class Scaled(K.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer=K.initializers.Ones)

        def call(self, x):
            return x * self.w

    dense = K.layers.Dense(2, kernel_initializer=K.initializers.Ones, bias_initializer=K.initializers.Zeros)
    return [
        type(K.initializers.get(K.initializers.Ones)).__name__,
        dense(x),
        Scaled()(x),
        dense.get_config()["kernel_initializer"]["class_name"],
    ]


def test_an_initializer_class_is_made_an_instance_as_in_keras():
    outcome = run_both(_initializer_classes)
    assert not isinstance(outcome, Exception)


def _build_without_a_shape(tf):
    K = tf.keras

    class NoShape(K.layers.Layer):
        def build(self):  # Keras 3 calls a build that takes no shape without one
            self.w = self.add_weight(shape=(1,), initializer="ones")

        def call(self, x):
            return x * (self.w + 1.0)

    inputs = K.Input((2,))
    model = K.Model(inputs, NoShape()(inputs))
    return [NoShape()(np.ones((1, 2), np.float32)), model(np.ones((1, 2), np.float32))]


def test_a_build_without_a_shape_argument_is_called_without_one():
    outcome = run_both(_build_without_a_shape)
    assert not isinstance(outcome, Exception)


def _state_written_in_call(tf):
    K = tf.keras
    x = np.ones((4, 3), np.float32)

    class Counter(K.layers.Layer):
        def build(self, input_shape):
            self.count = self.add_weight(shape=(), initializer="zeros", trainable=False)

        def call(self, x):
            self.count.assign_add(1.0)
            return x

    counts = []
    layer = Counter()
    K.Sequential([K.Input((3,)), layer])
    counts.append(layer.count)
    layer = Counter()
    inputs = K.Input((3,))
    model = K.Model(inputs, K.layers.Dense(1, kernel_initializer="ones")(layer(inputs)))
    counts.append(layer.count.numpy())
    model.compile("sgd", "mse")
    model.fit(x, np.ones((4, 1), np.float32), batch_size=2, epochs=1, verbose=0)
    counts.append(layer.count)
    built = Counter()
    K.Sequential([built]).build((None, 3))
    counts.append(built.count)
    norm = K.layers.BatchNormalization()
    inputs = K.Input((3,))
    K.Model(inputs, norm(inputs, training=True))
    return [counts, norm.moving_mean]


def test_building_a_model_leaves_the_state_its_layers_assign_as_keras_does():
    # Keras builds symbolically and assigns nothing; gradkit runs the calls on zeros and puts
    # back what they assigned: the counter counts only the two training batches.
    outcome = run_both(_state_written_in_call)
    assert not isinstance(outcome, Exception)
    assert [float(np.asarray(c)) for c in outcome[0]] == [0.0, 0.0, 2.0, 0.0]


def _sequential_builds_with_unknown_sizes(tf):
    K = tf.keras
    x = np.zeros((1, 4, 2), np.float32)

    class AddPositions(K.layers.Layer):
        def build(self, input_shape):
            self.length = input_shape[1]  # None for sequences of any length

        def call(self, x):
            n = self.length if self.length is not None else tf.shape(x)[1]
            return x + tf.cast(tf.range(n), x.dtype)[None, :, None]

    class FlattenByBatch(K.layers.Layer):
        def build(self, input_shape):
            self.batch = input_shape[0]

        def call(self, x):
            return tf.reshape(x, (-1 if self.batch is None else self.batch, 4))

    built = K.Sequential([AddPositions()])
    built.build((None, None, 2))
    return [
        K.Sequential([K.Input((None, 2)), AddPositions()])(x),
        built(x),
        K.Sequential([K.Input((2, 2)), FlattenByBatch()])(np.ones((3, 2, 2), np.float32)),
    ]


def test_a_sequential_builds_its_layers_with_none_for_unknown_sizes_as_keras():
    outcome = run_both(_sequential_builds_with_unknown_sizes)
    assert not isinstance(outcome, Exception)


def _weight_names_and_add_metric(tf):
    K = tf.keras
    layer = K.layers.Layer()
    outcomes = []
    for attempt in (lambda: layer.add_weight(shape=(1,), name="a/b"), lambda: layer.add_metric(1.0)):
        try:
            attempt()
            outcomes.append("accepted")
        except ValueError:
            outcomes.append("ValueError")
        except NotImplementedError:
            outcomes.append("NotImplementedError")
    return outcomes


def test_a_weight_name_with_a_slash_and_add_metric_are_refused_as_in_keras():
    outcome = run_both(_weight_names_and_add_metric)
    assert outcome == ["ValueError", "NotImplementedError"]
