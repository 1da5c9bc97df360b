"""``tf.errors`` against real TensorFlow 2.21: the same names, codes, class hierarchy and
constructor, and gradkit's refusals of bad eager inputs caught by ``except
tf.errors.InvalidArgumentError:`` where TensorFlow raises that class."""

import pickle

import pytest

import gradkit.tf as gtf
from gradkit import _errors

CLASSES = [n for n in vars(gtf.errors) if not n.startswith("_") and isinstance(getattr(gtf.errors, n), type)]
CODES = [n for n in vars(gtf.errors) if n.isupper()]


def test_the_same_names_as_tensorflow():
    tf = pytest.importorskip("tensorflow")
    ours = {n for n in vars(gtf.errors) if not n.startswith("_")}
    assert ours == {n for n in dir(tf.errors) if not n.startswith("_")}


@pytest.mark.parametrize("name", CODES)
def test_codes(name):
    tf = pytest.importorskip("tensorflow")
    assert getattr(gtf.errors, name) == getattr(tf.errors, name)


@pytest.mark.parametrize("name", CLASSES)
def test_hierarchy(name):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = getattr(gtf.errors, name), getattr(tf.errors, name)
    for other in CLASSES:
        assert issubclass(ours, getattr(gtf.errors, other)) == issubclass(theirs, getattr(tf.errors, other)), other
    builtins = [c for c in theirs.__mro__ if c.__module__ == "builtins"]
    assert [c for c in ours.__mro__ if c.__module__ == "builtins"] == builtins


@pytest.mark.parametrize("name", [n for n in CLASSES if n not in ("OpError", "OperatorNotAllowedInGraphError")])
def test_constructor_and_properties(name):
    tf = pytest.importorskip("tensorflow")
    made = [getattr(module.errors, name)(None, None, "went wrong") for module in (tf, gtf)]
    for error in made:
        assert (error.message, error.op, error.node_def, str(error)) == ("went wrong", None, None, "went wrong")
        assert error.experimental_payloads == {}
    assert made[0].error_code == made[1].error_code
    with_payload = gtf.errors.OpError(None, None, "m", gtf.errors.ABORTED, {"k": b"v"})
    assert with_payload.error_code == gtf.errors.ABORTED and with_payload.experimental_payloads == {"k": b"v"}
    copy = pickle.loads(pickle.dumps(made[1]))
    assert type(copy) is type(made[1]) and copy.message == "went wrong" and copy.error_code == made[1].error_code


def test_gradkit_errors_of_the_invalid_argument_kind_keep_their_message():
    error = _errors.GradkitInvalidArgumentError("x is bad.")
    assert isinstance(error, gtf.errors.InvalidArgumentError) and not isinstance(error, ValueError)
    assert error.message == str(error) == "[gradkit] x is bad." and error.error_code == gtf.errors.INVALID_ARGUMENT
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and copy.message == error.message
    for kind in (_errors.OpInputError, _errors.OpInputIndexError, _errors.GradkitIndexError):
        error = kind("an input does not fit.")
        assert isinstance(error, (gtf.errors.InvalidArgumentError, ValueError))
        assert error.message == "[gradkit] an input does not fit." and error.op is None
        assert pickle.loads(pickle.dumps(error)).message == error.message


def _caught(program):
    def caught(tf):
        try:
            program(tf)
        except tf.errors.InvalidArgumentError:
            return "InvalidArgumentError"
        return "no error"

    return caught


def p_shapes_that_do_not_broadcast(tf):
    return tf.add(tf.ones([3]), tf.ones([2]))


def p_matmul_inner_dimensions(tf):
    return tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


def p_gather_out_of_range(tf):
    return tf.gather(tf.constant([1.0, 2.0]), 5)


def p_tensor_index_out_of_range(tf):
    return tf.constant([1.0, 2.0])[3]


def p_tile_multiples(tf):
    return tf.tile(tf.ones([2]), [2, 2])


def p_slice_past_the_end(tf):
    return tf.slice(tf.ones([2]), [1], [5])


def p_pad_one_row_for_two_axes(tf):
    return tf.pad(tf.ones([2, 2]), [[1, 1]])


def p_split_sizes(tf):
    return tf.split(tf.ones([5]), [2, 2])


def p_unstack_num(tf):
    return tf.unstack(tf.ones([3]), num=2)


def p_integer_sine(tf):
    return tf.sin(tf.constant([1]))


def p_integer_matrix_inverse(tf):
    return tf.linalg.inv(tf.ones([2, 2], tf.int32))


def p_non_square_inverse(tf):
    return tf.linalg.inv(tf.ones([2, 3]))


def p_solve_rows(tf):
    return tf.linalg.solve(tf.eye(2), tf.ones([3, 1]))


def p_bias_of_another_length(tf):
    return tf.nn.bias_add(tf.ones([2, 3]), tf.ones([2]))


def p_label_out_of_range(tf):
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([3]), logits=tf.constant([[0.5, 0.5]]))


def p_keras_label_out_of_range(tf):
    return tf.keras.losses.sparse_categorical_crossentropy(tf.constant([3]), tf.constant([[0.5, 0.5]]))


def p_tensor_array_dtype(tf):
    return tf.TensorArray(tf.float32, size=1).write(0, tf.constant(1, tf.int32)).stack()


def p_cotangent_dtype(tf):
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    return tape.gradient(y, x, output_gradients=tf.constant(1.0, tf.float16))


def p_concrete_function_dtype(tf):
    f = tf.function(lambda x: x * 2).get_concrete_function(tf.TensorSpec([2], tf.float32))
    return f(tf.constant([1, 2]))


def p_slice_assign_of_another_shape(tf):
    x = tf.Variable(tf.zeros([3, 3]))
    return x[:2, :2].assign(tf.ones([3, 3]))


def p_row_assign_of_another_length(tf):
    x = tf.Variable(tf.zeros([3, 3]))
    return x[0].assign(tf.ones([4]))


def p_elu_of_ints(tf):
    return tf.nn.elu(tf.constant([1, -2]))


def p_selu_of_ints(tf):
    return tf.nn.selu(tf.constant([1, -2]))


def p_l2_loss_of_ints(tf):
    return tf.nn.l2_loss(tf.constant([1, -2]))


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_caught_as_invalid_argument_where_tensorflow_raises_it(program):
    tf = pytest.importorskip("tensorflow")
    assert _caught(program)(tf) == "InvalidArgumentError"
    assert _caught(program)(gtf) == "InvalidArgumentError"


def test_python_control_flow_on_a_traced_tensor_is_an_operator_not_allowed_in_graph():
    # TensorFlow raises OperatorNotAllowedInGraphError there without autograph; gradkit has none.
    tf = pytest.importorskip("tensorflow")

    def branch(x):
        if x > 0:
            return x
        return -x

    for module, options in ((tf, {"autograph": False}), (gtf, {})):
        with pytest.raises(module.errors.OperatorNotAllowedInGraphError):
            module.function(branch, **options)(module.constant(1.0))


def test_a_traced_slice_bound_says_what_takes_a_fixed_length_instead():
    x = gtf.constant([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(gtf.errors.OperatorNotAllowedInGraphError, match=r"^\[gradkit\] .* traced bound .*tf\.slice"):
        gtf.function(lambda i: x[i : i + 2])(gtf.constant(1))
    # The two it offers, checked by hand: x[1:3].
    for fixed in (lambda i: gtf.slice(x, [i], [2]), lambda i: gtf.gather(x, i + gtf.range(2))):
        assert gtf.function(fixed)(gtf.constant(1)).numpy().tolist() == [2.0, 3.0]


def test_gelu_of_ints_is_a_value_error_as_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf.nn.gelu(tf.constant([1, 2]))
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.nn.gelu takes a floating-point tensor"):
        gtf.nn.gelu(gtf.constant([1, 2]))


def test_a_tensor_array_returned_from_a_tf_function_says_to_stack_it():
    v = gtf.Variable(1.0)

    @gtf.function
    def grow(x):
        v.assign_add(1.0)
        return gtf.TensorArray(gtf.float32, size=2).write(0, x).write(1, x * 2)

    with pytest.raises(TypeError, match=r"^\[gradkit\] a tf.function returned a TensorArray .*ta\.stack\(\)"):
        grow(gtf.constant(1.0))
    assert float(v.numpy()) == 1.0  # the failed call assigned nothing
