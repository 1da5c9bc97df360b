"""gradkit.tf against real TensorFlow: the same program text under both modules.

Each program is a function of the module ``tf``; results are compared for values
(rtol 1e-5), None-ness, shapes and exception classes. Programs that assign Variables
pass ``track_assignments=False`` under gradkit (its TensorFlow parity mode).
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
import gradkit.tf as gtf  # noqa: E402


def _tape(tf, **kw):
    if tf is gtf:
        kw.setdefault("track_assignments", False)
    return tf.GradientTape(**kw)


def _np(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (str, type)):
        return x
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _compare(a, b):
    if a is None or b is None:
        assert a is None and b is None, (a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _compare(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _compare(x, y)
    elif isinstance(a, (str, type)):
        assert a == b
    else:
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def run_both(program):
    out = {}
    for name, tf in (("tf", tf_real), ("gk", gtf)):
        try:
            out[name] = _np(program(tf))
        except Exception as e:  # compare exception classes
            out[name] = e
    if isinstance(out["tf"], Exception) or isinstance(out["gk"], Exception):
        # gradkit's exceptions derive from the builtin class TensorFlow raises.
        assert isinstance(out["gk"], Exception) and isinstance(out["tf"], Exception), out
        builtin = next(c for c in type(out["tf"]).__mro__ if c.__module__ == "builtins")
        assert isinstance(out["gk"], builtin), (out["tf"], out["gk"])
        return out["gk"]
    _compare(out["tf"], out["gk"])
    return out["gk"]


def run_both_ok(program):
    """``run_both`` where neither raises: the outputs, compared."""
    out = run_both(program)
    assert not isinstance(out, Exception), out
    return out


def programs(namespace: dict) -> list:
    """A test module's parity programs: its functions named ``p_...``, in name order."""
    return [v for k, v in sorted(namespace.items()) if k.startswith("p_") and callable(v)]


def run_program(program):
    """``run_both(program)``: the outputs compared (or the exception both raised, of the same
    builtin class). A program named ``p_..._refuses_...`` is expected to raise, any other not."""
    return run_both(program)


def invalid_argument(tf, fn) -> str:
    """``"InvalidArgumentError"`` if ``fn()`` raises ``tf.errors.InvalidArgumentError``, else ``"accepted"``:
    a program's outcome that ``run_both`` compares between TensorFlow and gradkit."""
    try:
        fn()
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    return "accepted"


def check_refused_unless_valid(program, valid_program) -> None:
    """``program`` gives the same outcome under both modules: ``invalid_argument``'s refusal, or,
    for ``valid_program``, the same values."""
    outcome = run_program(program)
    assert not isinstance(outcome, Exception)
    if program is not valid_program:
        assert str(outcome) == "InvalidArgumentError"


def p_assign_scenario(tf):
    a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    with _tape(tf) as tape:
        c.assign(a + b)
        loss = tf.reduce_mean(c**2)
    return tape.gradient(loss, [a, b, c])


def p_slice_assign(tf):
    x = tf.Variable([[2.0, 3.0, 4.0], [1.0, 10.0, 100.0]])
    patch = tf.Variable([[0.0, 1.0], [2.0, 3.0]])
    with _tape(tf, persistent=True) as g:
        g.watch(patch)
        x[:2, :2].assign(patch)
        o = tf.reduce_mean(tf.tensordot(x, tf.transpose(x), axes=1))
    return [g.gradient(o, patch), g.gradient(o, x)]


def p_output_gradients_extension(tf):
    a = [tf.Variable(1.0), tf.Variable(4.0)]
    b = [tf.Variable(2.0), tf.Variable(9.0)]
    c = [tf.Variable(3.0), tf.Variable(0.0)]
    x = tf.Variable(0.01)
    with _tape(tf, persistent=True) as tape:
        c_ = tf.nest.map_structure(lambda _a, _b: (1 - x) * _a + x * _b, a, b)
        tf.nest.map_structure(lambda x, y: x.assign(y), c, c_)
        loss = tf.norm(c)
    return [
        tape.gradient(loss, c, output_gradients=tape.gradient(c_, b)),
        tape.gradient(loss, c, output_gradients=tape.gradient(c_, x)),
        tape.gradient(loss, x),
    ]


def p_output_gradients_indexed_slices(tf):
    # A gather's gradient handed on as an upstream gradient: TensorFlow densifies it.
    w = tf.Variable(np.arange(12.0, dtype="float32").reshape(4, 3))
    with _tape(tf, persistent=True) as tape:
        y = w * 2.0
        z = [w * 3.0, w**2]
    upstream = tf.IndexedSlices(tf.ones((2, 3)), tf.constant([0, 3]), tf.constant([4, 3]))
    return [
        tape.gradient(y, w, output_gradients=upstream),
        tape.gradient(z, w, output_gradients=[upstream, tf.ones((4, 3))]),
    ]


def p_stop_recording_reset_stop_gradient(tf):
    x, y = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    r1 = t.gradient(z, {"x": x, "y": y})
    with tf.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    r2 = t.gradient(z, {"x": x, "y": y})
    with tf.GradientTape() as t:
        z = x**2 + tf.stop_gradient(y**2)
    return [r1, r2, t.gradient(z, {"x": x, "y": y})]


def p_multiple_tapes_higher_order(tf):
    x0, x1 = tf.constant(0.0), tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = tf.reduce_sum(tf.math.sin(x0) + tf.nn.sigmoid(x1))
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy = t1.gradient(y, x)
    return [tape0.gradient(ys, x0), tape1.gradient(ys, x1), dy, t2.gradient(dy, x)]


def p_persistent_error(tf):
    x = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    return t.gradient(y, x)


def p_unconnected_zero_and_watch(tf):
    x, y = tf.Variable([1.0, 2.0]), tf.Variable(3.0)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as t:
        t.watch(x)
        z = tf.reduce_sum(x * y)
    return [
        t.gradient(z, [x, y]),
        t.gradient(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO),
        t.gradient(z, x, output_gradients=tf.constant(2.0)),
    ]


def p_jacobians(tf):
    x = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(3, 4).astype(np.float32))
    w = tf.Variable(np.arange(20.0, dtype=np.float32).reshape(4, 5) / 10.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.nn.elu(tf.matmul(x, w))
        s = tf.reduce_sum(y, axis=1)
    return [
        t.jacobian(y, w),
        t.jacobian(y, x),
        t.batch_jacobian(y, x),
        t.jacobian(s, {"w": w}),
        t.gradient(y, {"a": [w], "b": x}),
    ]


def p_ops(tf):
    x = tf.Variable([[1.0, -2.0], [3.0, 0.5]])
    with tf.GradientTape() as t:
        y = tf.concat([tf.math.exp(x), tf.square(x)], 0)
        y = tf.pad(y, [[1, 0], [0, 1]], constant_values=1.0)
        y = tf.reduce_max(y, axis=0) + tf.reduce_prod(tf.clip_by_value(x, 0.0, 2.0))
        y = tf.norm(y) + tf.reduce_sum(tf.gather(x, [1, 0], axis=1) * tf.one_hot([0, 1], 2))
        y = y + tf.reduce_sum(tf.einsum("ij,jk->ik", x, tf.eye(2))) + tf.reduce_sum(tf.math.softplus(x))
        y = y + tf.norm([tf.reduce_sum(x), tf.constant(2.0)]) + tf.reduce_sum(tf.linalg.solve(x, tf.ones([2, 1])))
    return [
        y,
        t.gradient(y, x),
        tf.shape(x),
        tf.range(5),
        tf.linspace(0.0, 1.0, 5),
        tf.split(tf.reshape(tf.range(6), [2, 3]), [1, 2], axis=1),
    ]


def p_custom_gradient(tf):
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)

        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        out = clip_gradients(v * v)
    return t.gradient(out, v)


def p_custom_gradient_missing_variables(tf):
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def f(x):
        def grad(dy):
            return dy

        return x * w, grad

    with tf.GradientTape() as t:
        y = f(tf.constant(3.0))
    return t.gradient(y, w)


def p_complex(tf):
    z = tf.Variable(tf.constant(1.0 + 2.0j, dtype=tf.complex64))
    with tf.GradientTape() as t:
        y = tf.math.real(z * tf.math.conj(z))
    return t.gradient(y, z)


def p_dense_shapes(tf):
    # Names differ on purpose: Keras 3 (TF 2.16+) says 'kernel'; gradkit.tf keeps TF2/Keras 2's 'dense/kernel:0'.
    layer = tf.keras.layers.Dense(3)
    x = tf.ones([2, 4])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(layer(x) ** 2)
    return [list(v.shape) for v in layer.trainable_variables] + [
        list(g.shape) for g in t.gradient(y, layer.trainable_variables)
    ]


def _optimizer_steps(tf, opt, steps=5, w=None):
    # Small gradients: sqrt(v) is then near epsilon, where Keras' Adam and optax.adam part ways.
    w = tf.Variable([1.0, -2.0, 0.5]) if w is None else w
    trace = []
    for i in range(steps):
        with _tape(tf) as tape:
            loss = tf.reduce_sum((1e-6 * (i + 1)) * w**2 + 1e-7 * w)
        opt.apply_gradients(zip([tape.gradient(loss, w)], [w]))
        trace.append(w.numpy())
    return trace


def p_adam(tf):
    return _optimizer_steps(tf, tf.keras.optimizers.Adam(learning_rate=0.1))


def p_adam_amsgrad(tf):
    return _optimizer_steps(tf, tf.keras.optimizers.Adam(0.05, beta_1=0.8, epsilon=1e-6, amsgrad=True))


def p_sgd_nesterov(tf):
    return _optimizer_steps(tf, tf.keras.optimizers.SGD(1e4, momentum=0.9, nesterov=True))


def p_sgd_momentum_learning_rate_changed_between_steps(tf):
    opt, w = tf.keras.optimizers.SGD(1e4, momentum=0.9), tf.Variable([1.0, -2.0, 0.5])
    trace = _optimizer_steps(tf, opt, steps=2, w=w)
    opt.learning_rate = 3e4
    return trace + _optimizer_steps(tf, opt, steps=3, w=w)


def p_sgd_plain(tf):
    return _optimizer_steps(tf, tf.keras.optimizers.SGD(2e4))


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    run_both(program)


def test_norm_of_list_of_scalars():
    def prog(tf):
        return tf.norm([tf.constant(3.0), tf.Variable(4.0)])

    run_both(prog)
