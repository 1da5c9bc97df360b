"""``tf.name_scope`` against real TensorFlow 2.21: eager scopes, graph scopes in a tf.function, Variables' names."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def test_eager_scopes_nest_reset_and_name_variables():
    def program(tf):
        out = []
        with tf.name_scope("a") as a:
            out += [a, tf.Variable(1.0, name="v").name, tf.Variable(1.0).name]
            with tf.name_scope("b") as b:
                out += [b, tf.Variable(1.0, name="v").name]
            with tf.name_scope("b") as again:  # eagerly, names are not made unique
                out.append(again)
            with tf.name_scope("top/") as whole:  # a trailing '/' is a whole scope
                out += [whole, tf.Variable(1.0, name="w").name]
            with tf.name_scope("") as root:
                out += [root, tf.Variable(1.0, name="q").name]
            out.append(tf.Variable(1.0, name="abs/").name)
        out.append(tf.Variable(1.0, name="v").name)
        return out

    assert run_both(program)[:2] == ["a/", "a/v:0"]


def test_eager_scopes_take_any_string_and_refuse_other_types():
    # Eagerly TensorFlow checks only that the name is a string.
    def program(tf):
        out = []
        for name in ["bad name", "_x", "-x", "x:y"]:
            with tf.name_scope(name) as scope:
                out += [scope, tf.Variable(0.0, name="v").name]
        return out

    run_both(program)
    for bad in [None, 3]:
        run_both(lambda tf, bad=bad: tf.name_scope(bad))
        with pytest.raises(ValueError, match=r"\[gradkit\].*must be a string"):
            gtf.name_scope(bad)


def test_a_scope_is_left_on_an_exception_and_one_object_enters_again():
    def program(tf):
        try:
            with tf.name_scope("err"):
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        scope = tf.name_scope("re")
        with scope as first, scope as nested:
            pass
        with tf.name_scope("after") as after:
            pass
        return [first, nested, after, scope.name]

    assert run_both(program) == ["re/", "re/re/", "after/", "re"]


def test_inside_tf_function_scopes_are_graph_scopes():
    # In a tf.function: the scope starts at the root (not the caller's eager scope), a name
    # used again gets '_1', a Variable's name counts as used, and TensorFlow's pattern is checked.
    def program(tf):
        seen, made = [], []

        @tf.function
        def f(x):
            if not made:
                with tf.name_scope("inner") as s1, tf.name_scope("deep") as s2:
                    seen.extend([s1, s2])
                with tf.name_scope("inner") as s3:
                    made.append(tf.Variable(1.0, name="v"))
                seen.append(s3)
                made.append(tf.Variable(2.0, name="w"))
                with tf.name_scope("w") as s4:
                    seen.append(s4)
            return x * made[0]

        with tf.name_scope("outer"):
            y = f(tf.constant(3.0))
        return [y, seen, [v.name for v in made]]

    assert run_both(program)[1] == ["inner/", "inner/deep/", "inner_1/", "w_1/"]


@pytest.mark.parametrize("name", ["a b", "_x", "-x", "x:y"])
def test_inside_tf_function_an_invalid_name_raises_value_error(name):
    def program(tf):
        @tf.function
        def f(x):
            with tf.name_scope(name):
                return x + 1.0

        return f(tf.constant(1.0))

    run_both(program)
    with pytest.raises(ValueError, match=r"\[gradkit\].*not a valid root scope name"):
        program(gtf)


def test_a_nested_graph_scope_may_start_with_an_underscore():
    def program(tf):
        out = []

        @tf.function
        def f(x):
            with tf.name_scope("a"), tf.name_scope("_b") as scope:
                out.append(scope)
            return x

        f(tf.constant(1.0))
        return out

    assert run_both(program) == ["a/_b/"]


def test_modules_use_the_same_scopes():
    def program(tf):
        class Scale(tf.Module):
            def __init__(self):
                super().__init__(name="scale")
                self.w = tf.Variable(2.0, name="w")

            @tf.Module.with_name_scope
            def __call__(self, x):
                if not hasattr(self, "b"):
                    with tf.name_scope("bias"):
                        self.b = tf.Variable(1.0, name="b")
                return x * self.w + self.b

        with tf.name_scope("outer"):
            m = Scale()
        with m.name_scope as scope:
            extra = tf.Variable(0.0, name="extra")
        return [m(3.0), sorted(v.name for v in m.variables), m.name_scope.name, scope, extra.name]

    assert run_both(program)[2] == "outer/scale/"


def test_a_scoped_training_step_compiles_once_and_matches_tensorflow():
    x_np = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)

    def program(tf):
        w = tf.Variable([[0.5], [-0.25]], name="w")

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                with tf.name_scope("model"):
                    loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
            g = tape.gradient(loss, w)
            w.assign_sub(0.1 * g)
            return loss

        first = step(tf.constant(x_np))
        traces = getattr(step, "trace_count", None)
        later = [step(tf.constant(x_np)) for _ in range(3)]
        return [first, later, w], (traces, step)

    run_both(lambda tf: program(tf)[0])
    traces, step = program(gtf)[1]
    assert step.trace_count == traces  # the later calls trace nothing new
