"""``strategy.extended`` (TensorFlow's StrategyExtended) of gradkit's one-replica strategies:
the same program on gradkit and, where it is installed, on TensorFlow, compared."""

import pytest

import gradkit.tf as gtf


def _program(tf, which):
    strategy = {
        "mirrored": lambda: tf.distribute.MirroredStrategy(),
        "one_device": lambda: tf.distribute.OneDeviceStrategy("/cpu:0"),
        "default": tf.distribute.get_strategy,
    }[which]()
    e = strategy.extended
    out = {}
    for name in ("worker_devices", "parameter_devices"):
        try:
            out[name] = getattr(e, name)
        except RuntimeError as error:
            out[name] = "RuntimeError" if "unsupported by default" in str(error) else str(error)
    out["flags"] = (e.experimental_require_static_shapes, e.should_checkpoint, e.should_save_summary)
    with strategy.scope():
        v = tf.Variable(1.0)
    w = tf.Variable(2.0)
    out["created_in_scope"] = (e.variable_created_in_scope(v), e.variable_created_in_scope(w))
    e.update(v, lambda var, d: var.assign_add(d), args=(tf.constant(3.0),))
    out["updated"] = float(v.numpy())
    out["reduce_to"] = float(e.reduce_to(tf.distribute.ReduceOp.SUM, tf.constant(2.0), v))
    pairs = [(tf.constant(2.0), v), (tf.constant(4.0), v)]
    out["batch_reduce_to"] = [float(t) for t in e.batch_reduce_to(tf.distribute.ReduceOp.MEAN, pairs)]
    out["value_container"] = e.value_container(v) is v
    out["call_for_each_replica"] = float(e.call_for_each_replica(lambda x: x * 2, args=(tf.constant(3.0),)))
    out["read_var"] = float(e.read_var(v))
    out["update_non_slot"] = e.update_non_slot(v, lambda: 7) if which != "mirrored" else None
    try:
        with e.colocate_vars_with(v):
            tf.Variable(5.0)
        out["colocate"] = "ok"
    except RuntimeError as error:
        out["colocate"] = "needs scope" if "strategy.scope()" in str(error) else str(error)
    with strategy.scope(), e.colocate_vars_with(v):
        out["colocate_in_scope"] = float(tf.Variable(5.0).numpy())
    return out


@pytest.mark.parametrize("which", ["mirrored", "one_device", "default"])
def test_strategy_extended_as_tensorflow(which):
    got = _program(gtf, which)
    cpu = ("/job:localhost/replica:0/task:0/device:CPU:0",)
    if which == "default":
        assert got["worker_devices"] == got["parameter_devices"] == "RuntimeError"
        assert got["created_in_scope"] == (True, True) and got["colocate"] == "ok"
    else:
        assert got["worker_devices"] == got["parameter_devices"] == cpu
        assert got["created_in_scope"] == (True, False) and got["colocate"] == "needs scope"
    assert got["updated"] == 4.0 and got["read_var"] == 4.0
    assert got["reduce_to"] == 2.0 and got["batch_reduce_to"] == [2.0, 4.0]
    assert got["call_for_each_replica"] == 6.0 and got["value_container"] is True
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert got == _program(tf, which)


def _model_strategy(tf):
    s = tf.distribute.MirroredStrategy()
    with s.scope():
        sequential = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        x = tf.keras.Input((3,))
        functional = tf.keras.Model(x, tf.keras.layers.Dense(1)(x))
    outside = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    got = [sequential.distribute_strategy is s, functional.distribute_strategy is s]
    got.append(outside.distribute_strategy is tf.distribute.get_strategy())
    with s.scope():
        got.append(outside.distribute_strategy is s)  # made outside: the current strategy
    return got


def test_a_keras_model_knows_the_strategy_it_was_made_under():
    assert _model_strategy(gtf) == [True, True, True, True]
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert _model_strategy(tf) == [True, True, True, True]


def _ungrouped(tf):
    v = tf.Variable(1.0)
    e = tf.distribute.get_strategy().extended
    pair = e.update(v, lambda var: (var * 2, var * 3), group=False)
    one = e.update(v, lambda var: var * 4, group=False)
    return [[float(x) for x in item] for item in pair], [float(x) for x in one]


def test_update_with_group_false_gives_each_replicas_results():
    got = _ungrouped(gtf)
    assert got == ([[2.0], [3.0]], [4.0])
    try:
        import tensorflow as tf
    except ImportError:
        return
    assert got == _ungrouped(tf)
