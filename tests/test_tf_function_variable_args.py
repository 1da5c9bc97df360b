"""``tf.function`` with Variables passed as arguments, against real TensorFlow: the same program
text under both modules (values, shapes and exception classes compared)."""

import pytest

import gradkit.tf as gtf


def _tape(tf, **kw):
    if tf is gtf:
        kw.setdefault("track_assignments", False)  # gradkit.tf's TensorFlow parity mode
    return tf.GradientTape(**kw)


def p_assign_add_argument(tf):
    v = tf.Variable([1.0, 2.0])
    f = tf.function(lambda v, x: v.assign_add(x * v))
    outs = [f(v, tf.constant(0.5)), f(v, tf.constant(-1.5))]
    return [*outs, v]


def p_list_and_dict_of_variables(tf):
    a, b, c = tf.Variable(1.0), tf.Variable([2.0, 3.0]), tf.Variable(4.0)

    @tf.function
    def step(vs, named, x, n):
        for v in vs:
            v.assign_add(x * tf.ones_like(v))  # TensorFlow's assign_add does not broadcast
        for _ in range(n):
            named["c"].assign(named["c"] * 2.0)
        return vs[0] + tf.reduce_sum(vs[1]) + named["c"]

    outs = [step([a, b], {"c": c}, tf.constant(1.0), 2), step([a, b], {"c": c}, 0.5, n=1)]
    return [*outs, a, b, c]


def p_the_same_variable_twice(tf):
    a = tf.Variable(1.0)

    @tf.function
    def f(x, y):
        x.assign_add(1.0)
        return y * 10.0

    return [f(a, a), a]


def p_two_variables_of_one_shape(tf):
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([5.0, 7.0])
    f = tf.function(lambda v: v.assign_sub(tf.ones_like(v)))
    return [f(a), f(b), f(a), a, b]


def p_slice_of_an_argument(tf):
    m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    @tf.function
    def f(v, row):
        v[row].assign(v[row] * 10.0)
        return tf.reduce_sum(v)

    return [f(m, 1), m]


def p_gradient_through_a_call_with_an_argument(tf):
    w = tf.Variable([1.0, -2.0])
    f = tf.function(lambda v, x: tf.reduce_sum((v * x) ** 2))
    with _tape(tf) as tape:
        loss = f(w, tf.constant(3.0))
    return [loss, tape.gradient(loss, w)]


def p_gradient_inside_a_function_taking_the_variable(tf):
    w = tf.Variable([1.0, -2.0])

    @tf.function
    def step(v, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum((v * x) ** 2)
        g = tape.gradient(loss, v)
        v.assign_sub(0.1 * g)
        return loss

    return [step(w, tf.constant(3.0)), step(w, tf.constant(3.0)), w]


def p_a_wrong_shape_changes_no_variable(tf):
    a, b = tf.Variable(1.0), tf.Variable(5.0)

    @tf.function
    def f(p, q):
        p.assign_add(1.0)
        q.assign(tf.zeros([3]))

    try:
        f(a, b)
    except ValueError:
        pass
    return [a, b]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_a_wrong_shape_raises_in_both():
    tf = pytest.importorskip("tensorflow")
    for module in (tf, gtf):
        q = module.Variable(5.0)
        with pytest.raises(ValueError):
            module.function(lambda q, zeros=module.zeros: q.assign(zeros([3])))(q)


def test_an_argument_also_closed_over_is_where_gradkit_departs_from_tensorflow():
    # TensorFlow traces h once for w and reuses the trace for a, a Variable of w's shape and
    # dtype: the read of w then reads a. gradkit traces each Variable apart, so w is read.
    tf = pytest.importorskip("tensorflow")

    def run(module):
        w, a = module.Variable(10.0), module.Variable(1.0)

        @module.function
        def h(x):
            x.assign_add(1.0)
            return w * 1.0

        return [float(h(w)), float(h(a)), float(w.numpy()), float(a.numpy())]

    got = {"tf": run(tf), "gk": run(gtf)}
    assert got["tf"] == [11.0, 2.0, 11.0, 2.0]
    assert got["gk"] == [11.0, 11.0, 11.0, 2.0]


def test_one_trace_per_variable():
    vs = [gtf.Variable(float(i)) for i in range(3)]
    f = gtf.function(lambda v: v.assign_add(1.0))
    for v in vs * 3:
        f(v)
    assert [float(v.numpy()) for v in vs] == [3.0, 4.0, 5.0]
    assert f.trace_count == 3  # TensorFlow: 1 (see the test above for why gradkit does not share)
