"""``tf.keras.optimizers.MultiOptimizer`` and ``OptimizerMap`` against real Keras 3: weights routed
by path (an exact key, a pattern, the default), each optimizer's own state and rate, a rate
changed on one sub-optimizer between steps, eagerly and in ``tf.function``; the step counters,
the Variables, the config round trip and Keras' refusals."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import _compare, _np  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from tests._optimizer_steps import train_keras_variables  # noqa: E402

RNG = np.random.default_rng(9)
VALUES = {
    "backbone_kernel": RNG.standard_normal((3, 3)).astype(np.float32),
    "backbone_bias": RNG.standard_normal(3).astype(np.float32),
    "head_kernel": RNG.standard_normal((3, 2)).astype(np.float32),
    "scale": np.float32(0.7),
}


def _make(tf):
    opts = tf.keras.optimizers
    adam, sgd, default = opts.Adam(0.05), opts.SGD(0.1, momentum=0.5), opts.RMSprop(0.01)
    routing = opts.OptimizerMap(default, {"backbone_.*": sgd, "head_kernel": adam})
    return opts.MultiOptimizer(routing), (adam, sgd, default)


def _train(tf, compiled=False):
    multi, (adam, sgd, default) = _make(tf)

    def term(tf, name, w, i):
        return tf.reduce_sum((1.0 + 0.2 * i) * w**2 + tf.sin(w))

    def slower_sgd():
        sgd.learning_rate = 0.02

    trace = train_keras_variables(tf, multi, VALUES, term, compiled, at_step_2=slower_sgd)
    counters = [int(np.asarray(o.iterations)) for o in (multi, adam, sgd, default)]
    return trace, counters, len(multi.variables)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
def test_steps_match_keras(compiled):
    want_trace, want_counters, want_count = _train(tf_real, compiled)
    got_trace, got_counters, got_count = _train(gtf, compiled)
    _compare(_np(want_trace), _np(got_trace))
    assert got_counters == want_counters == [4, 4, 4, 4]
    assert got_count == want_count


def test_optimizer_map_routes_as_keras():
    for tf in (tf_real, gtf):
        _, (adam, sgd, default) = _make(tf)
        routing = tf.keras.optimizers.OptimizerMap(default, {"backbone_.*": sgd, "head_kernel": adam})
        assert routing["backbone_kernel"] is sgd and routing["head_kernel"] is adam and routing["other"] is default
        assert len(routing) == 2 and list(routing) == ["backbone_.*", "head_kernel"]
        clash = tf.keras.optimizers.OptimizerMap(default, {"a.*": sgd, ".*b": adam})
        with pytest.raises(ValueError, match="Multiple optimizers"):
            clash["ab"]
        with pytest.raises(ValueError):
            routing["head_kernel"] = sgd  # a key used twice


def test_config_round_trip_and_learning_rate_refused():
    multi, _ = _make(gtf)
    config = multi.get_config()
    assert config["optimizer_map"]["class_name"] == "OptimizerMap"
    again = gtf.keras.optimizers.MultiOptimizer.from_config(config)
    assert again.get_config() == config
    inner = again._optimizer_map
    assert type(inner["backbone_x"]).__name__ == "SGD" and type(inner["head_kernel"]).__name__ == "Adam"
    with pytest.raises(AttributeError, match=r"\[gradkit\].*sub-optimizers"):
        multi.learning_rate  # noqa: B018
    with pytest.raises(AttributeError, match=r"\[gradkit\]"):
        multi.learning_rate = 0.1
    with pytest.raises(TypeError, match=r"\[gradkit\].*default_optimizer"):
        gtf.keras.optimizers.OptimizerMap("adam")
