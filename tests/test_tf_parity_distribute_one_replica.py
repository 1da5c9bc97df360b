"""``tf.distribute`` as one replica: the distributed-training guide's custom loop (a loss scaled
by ``compute_average_loss`` over the global batch, ``strategy.run``, ``strategy.reduce``, a
distributed dataset) and ``fit`` under ``strategy.scope()`` train as TensorFlow's
``MirroredStrategy`` does on one CPU; contexts and reductions follow TensorFlow's rules;
``tf.__version__`` names the TensorFlow release gradkit.tf follows. Oracles: TensorFlow 2.21
where installed, and the plain (strategy-free) loop."""

import numpy as np
import pytest

import gradkit.tf as gtf

_RNG = np.random.default_rng(1)
_X = _RNG.normal(size=(16, 3)).astype(np.float32)
_Y = (_X @ np.array([[0.5], [-1.0], [2.0]], np.float32)).astype(np.float32)
_W0 = [np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)]


def _custom_loop(tf, use_strategy=True):
    strategy = tf.distribute.MirroredStrategy() if use_strategy else None
    global_batch = 8

    def build():
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        model.set_weights(_W0)
        return model, tf.keras.optimizers.SGD(0.1)

    if use_strategy:
        with strategy.scope():
            model, optimizer = build()
    else:
        model, optimizer = build()
    dataset = tf.data.Dataset.from_tensor_slices((_X, _Y)).batch(global_batch)
    if use_strategy:
        dataset = strategy.experimental_distribute_dataset(dataset)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum(tf.square(model(x) - y), axis=-1)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(x, y):
        if not use_strategy:
            return train_step(x, y)
        per_replica = strategy.run(train_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    losses = []
    for _ in range(3):
        for x, y in dataset:
            losses.append(float(distributed_step(x, y)))
    return losses, [w.numpy() if hasattr(w, "numpy") else np.asarray(w) for w in model.get_weights()]


def test_the_custom_loop_trains_as_without_a_strategy():
    with_strategy, plain = _custom_loop(gtf), _custom_loop(gtf, use_strategy=False)
    np.testing.assert_allclose(with_strategy[0], plain[0], rtol=1e-6)
    for a, b in zip(with_strategy[1], plain[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_the_custom_loop_matches_tensorflows_mirrored_strategy():
    tf = pytest.importorskip("tensorflow")
    if len(tf.config.list_logical_devices()) != 1:
        pytest.skip("TensorFlow sees more than one device here: its MirroredStrategy has several replicas")
    ours, theirs = _custom_loop(gtf), _custom_loop(tf)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def _contexts(tf):
    strategy = tf.distribute.MirroredStrategy()
    out = [tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(), strategy.num_replicas_in_sync]
    with strategy.scope():
        out += [tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context()]
        out.append(tf.distribute.get_strategy() is strategy)
        out.append(strategy.run(lambda: tf.distribute.in_cross_replica_context()))
        value = strategy.run(lambda x: x * 2.0, args=(tf.constant([[1.0, 2.0], [3.0, 4.0]]),))
        out.append(strategy.reduce("SUM", value, axis=0).numpy().tolist())
        out.append(strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None).numpy().tolist())
        out.append(len(strategy.experimental_local_results(value)))
    return out


def test_contexts_and_reductions_follow_tensorflows_rules():
    assert _contexts(gtf) == [False, False, 1, True, True, True, False, [8.0, 12.0], [[2.0, 4.0], [6.0, 8.0]], 1]


def test_contexts_and_reductions_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    if len(tf.config.list_logical_devices()) != 1:
        pytest.skip("TensorFlow sees more than one device here")
    assert _contexts(gtf) == _contexts(tf)


def test_multi_worker_strategies_are_refused_and_the_version_is_tensorflows():
    with pytest.raises(NotImplementedError, match=r"\[gradkit\] tf.distribute.MultiWorkerMirroredStrategy"):
        gtf.distribute.MultiWorkerMirroredStrategy()
    assert gtf.__version__ == gtf.version.VERSION == "2.21.0"


def test_symbolic_gradients_are_refused_with_the_tape_to_use():
    for name in ("gradients", "hessians"):
        with pytest.raises(RuntimeError, match=rf"\[gradkit\] tf.{name} differentiates a TensorFlow graph.*tape"):
            getattr(gtf, name)(gtf.constant(1.0), gtf.constant(2.0))
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(RuntimeError):  # eager TensorFlow refuses too
        tf.gradients(tf.constant(1.0), tf.constant(2.0))


def test_scopes_of_two_strategies_nested_are_refused_as_tensorflow_refuses_them():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        outer = lib.distribute.MirroredStrategy()
        with outer.scope(), outer.scope():  # the same strategy again is fine
            pass
        with pytest.raises(RuntimeError, match="Mixing different tf.distribute.Strategy objects"):
            with outer.scope(), lib.distribute.OneDeviceStrategy("/cpu:0").scope():
                pass
        assert not lib.distribute.has_strategy()


def _replica_rules(tf):
    """What the replica and cross-replica contexts allow and give, as TensorFlow's rules have it."""

    def outcome(fn):
        try:
            value = fn()
        except RuntimeError:
            return "RuntimeError"
        except tf.errors.InvalidArgumentError:
            return "InvalidArgumentError"
        return np.asarray(value).tolist() if hasattr(value, "numpy") or np.ndim(value) else value

    strategy = tf.distribute.MirroredStrategy()
    losses = tf.constant([1.0, 2.0, 3.0])
    out = [outcome(lambda: strategy.run(lambda: tf.distribute.get_strategy() is strategy))]
    out.append(outcome(lambda: strategy.reduce("MEAN", tf.constant([1, 2]), axis=0)))
    out.append(outcome(lambda: strategy.reduce("MEAN", tf.constant([[1.0, 2.0], [3.0, 5.0]]), axis=1)))
    out.append(outcome(lambda: tf.nn.compute_average_loss(losses, global_batch_size=-1)))
    batch_size = tf.function(lambda x, n: tf.nn.compute_average_loss(x, global_batch_size=n))
    out.append(outcome(lambda: batch_size(losses, tf.constant(-1))))
    out.append(outcome(lambda: batch_size(losses, tf.constant(4))))
    with strategy.scope():
        merged = strategy.run(
            lambda: tf.distribute.get_replica_context().merge_call(
                lambda s: (tf.distribute.in_cross_replica_context(), tf.distribute.get_replica_context() is None)
            )
        )
        out.append(list(merged))
        out.append(outcome(lambda: tf.nn.compute_average_loss(losses)))
        out.append(outcome(lambda: tf.nn.scale_regularization_loss(tf.constant(2.0))))
        out.append(outcome(lambda: strategy.run(lambda: strategy.reduce("SUM", losses, axis=None))))
        out.append(outcome(lambda: strategy.run(lambda: tf.nn.compute_average_loss(losses))))
        out.append(outcome(lambda: tf.nn.compute_average_loss(losses, global_batch_size=6)))
    return out


def test_replica_context_rules_by_hand():
    """By TensorFlow's documented rules: a MEAN of integers is a true division; a per-replica loss
    is refused outside strategy.run unless its global batch size is given; reduce is refused inside it."""
    assert _replica_rules(gtf) == [
        True,
        1.5,
        [1.5, 4.0],
        "InvalidArgumentError",
        "InvalidArgumentError",
        1.5,
        [True, True],
        "RuntimeError",
        "RuntimeError",
        "RuntimeError",
        2.0,
        1.0,
    ]


def test_replica_context_rules_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    if len(tf.config.list_logical_devices()) != 1:
        pytest.skip("TensorFlow sees more than one device here")
    assert _replica_rules(gtf) == _replica_rules(tf)


@pytest.mark.parametrize(
    "device", ["/foo:0", "/cpu:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"]
)
def test_one_device_strategy_reads_its_device_as_tensorflow(device):
    def outcome(tf):
        try:
            tf.distribute.OneDeviceStrategy(device)
        except ValueError:
            return "ValueError"
        return "ok"

    assert outcome(gtf) == ("ValueError" if device == "/foo:0" else "ok")
    tf = pytest.importorskip("tensorflow")
    assert outcome(gtf) == outcome(tf)
