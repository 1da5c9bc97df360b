"""The order of ``grad_fn``'s ``variables=`` list in ``tf.custom_gradient``, against real
TensorFlow: a ``grad_fn`` that returns its Variables' gradients in a fixed order (a layer's
kernel, then its bias) must have them reach those Variables, whatever order ``f`` reads them in."""

import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402


def _layer_in_a_custom_gradient(tf, compiled):
    layer = tf.keras.layers.Dense(2)
    layer.build((None, 2))
    layer.kernel.assign([[0.5, -1.0], [2.0, 0.25]])
    layer.bias.assign([0.1, -0.3])
    names = []

    @tf.custom_gradient
    def f(x):
        y = layer(x)

        def grad(dy, variables=None):
            names.append([v.name for v in variables])
            kernel_grad = tf.matmul(x, dy, transpose_a=True) * 3.0
            bias_grad = tf.reduce_sum(dy, axis=0) * 5.0
            if compiled:  # by name there, the bias first: each gradient matched to its Variable
                variable_grads = [kernel_grad if "kernel" in v.name else bias_grad for v in variables]
            else:  # eagerly in creation order: the kernel, then the bias
                variable_grads = [kernel_grad, bias_grad]
            return tf.matmul(dy, layer.kernel, transpose_b=True), variable_grads

        return y, grad

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(f(x) ** 2)
        return tape.gradient(loss, [x, layer.kernel, layer.bias])

    x = tf.constant([[1.0, -2.0], [0.5, 3.0]])
    grads = (tf.function(step) if compiled else step)(x)
    return [grads, [name.split("/")[-1] for name in names[-1]]]


def p_layer_weights_eagerly(tf):
    return _layer_in_a_custom_gradient(tf, compiled=False)


def p_layer_weights_in_a_function(tf):
    return _layer_in_a_custom_gradient(tf, compiled=True)


def _read_in_reverse(tf, compiled):
    first = tf.Variable(2.0, name="zz")
    second = tf.Variable(3.0, name="aa")
    third = tf.Variable(5.0, name="zz")

    @tf.custom_gradient
    def f(x):
        out = x * third * second * first  # read in the reverse of creation order

        def grad(dy, variables=None):
            return dy, [dy * 10.0, dy * 20.0, dy * 30.0]

        return out, grad

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, [first, second, third])

    return (tf.function(step) if compiled else step)(tf.constant(1.0))


def p_created_order_eagerly(tf):
    # TensorFlow's eager list is a set of Variable references: creation order for Variables
    # created one after another, as here.
    return _read_in_reverse(tf, compiled=False)


def p_name_order_in_a_function(tf):
    # Inside tf.function: by name, Variables of one name in creation order.
    return _read_in_reverse(tf, compiled=True)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    out = run_both_ok(program)
    if program is p_layer_weights_eagerly:  # the kernel first, as the layer made it
        assert list(out[1]) == ["kernel:0", "bias:0"]
    if program is p_layer_weights_in_a_function:  # by name
        assert list(out[1]) == ["bias:0", "kernel:0"]
