"""What ``tf.saved_model.load`` gives for a saved function: ``loaded.signatures[key]`` with
``structured_input_signature``/``structured_outputs``/``output_shapes``/``output_dtypes``, and
``loaded.f`` with ``input_signature``, ``concrete_functions`` and ``get_concrete_function``;
a signature returning anything but a tensor, a sequence of tensors or a dict of them is refused.
Each program runs on gradkit and, where it is installed, on TensorFlow, and the two are compared."""

import numpy as np
import pytest
from _two_sides import both

import gradkit.tf as gtf

_both = both


def _spec(s):
    """A TensorSpec (or a graph tensor TensorFlow gives in a restored function's outputs) as text."""
    shape = (
        None if s.shape.rank is None else tuple(s.shape.as_list()) if hasattr(s.shape, "as_list") else tuple(s.shape)
    )
    return shape, np.dtype(getattr(s.dtype, "as_numpy_dtype", s.dtype)).name


def _described(tree, named=True):
    if isinstance(tree, dict):
        return {k: _described(v, named) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_described(v, named) for v in tree)
    if hasattr(tree, "dtype"):
        return (*_spec(tree), getattr(tree, "name", None) if named else None)
    return tree


def _module(tf):
    class M(tf.Module):
        def __init__(self):
            self.v = tf.Variable([[1.0, 2.0, 3.0]])

        @tf.function(
            input_signature=[
                tf.TensorSpec([None, 3], tf.float32, name="inp"),
                (tf.TensorSpec([], tf.float32), tf.TensorSpec([2], tf.int32)),
            ]
        )
        def f(self, x, pair):
            return {"a": x * self.v, "b": pair[0] * 2.0, "c": pair[1]}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def g(self, x):
            return x * 2.0, tf.reduce_sum(x)

        @tf.function
        def h(self, x):
            return x + 1

    m = M()
    m.h(tf.constant(1.0))
    m.h(tf.constant([1, 2]))
    return m


def test_signature_functions_describe_their_inputs_and_outputs(tmp_path):
    def program(tf, path):
        m = _module(tf)
        tf.saved_model.save(m, str(path), signatures={"s1": m.f, "s2": m.g})
        loaded = tf.saved_model.load(str(path))
        out = {}
        for key in ("s1", "s2"):
            s = loaded.signatures[key]
            args, kwargs = s.structured_input_signature
            out[key] = (
                args,
                _described(kwargs),
                _described(s.structured_outputs),
                {k: tuple(v.as_list()) for k, v in s.output_shapes.items()},
                {k: np.dtype(getattr(v, "as_numpy_dtype", v)).name for k, v in s.output_dtypes.items()},
            )
        out["call"] = {k: v.numpy().tolist() for k, v in loaded.signatures["s2"](x=tf.constant([1.0, 2.0])).items()}
        return out

    got, want = _both(program, tmp_path)
    assert got["s1"][1] == {
        "inp": ((None, 3), "float32", "inp"),
        "pair": ((), "float32", "pair"),
        "pair_1": ((2,), "int32", "pair_1"),
    }
    assert got["s2"][2] == {"output_0": ((None,), "float32", "output_0"), "output_1": ((), "float32", "output_1")}
    assert got["call"] == {"output_0": [2.0, 4.0], "output_1": 3.0}
    if want is not None:
        assert got == want


def test_loaded_functions_have_input_signature_and_concrete_functions(tmp_path):
    def program(tf, path):
        m = _module(tf)
        tf.saved_model.save(m, str(path))
        loaded = tf.saved_model.load(str(path))
        out = {
            "f.input_signature": _described(loaded.f.input_signature),
            "h.input_signature": loaded.h.input_signature,
            "h.count": len(loaded.h.concrete_functions),
        }
        f = loaded.f.get_concrete_function()
        out["f.args"] = _described(f.structured_input_signature)
        out["f.outputs"] = _described(f.structured_outputs, named=False)
        g = loaded.g.get_concrete_function()
        out["g.outputs"] = _described(g.structured_outputs, named=False)
        out["g.call"] = [t.numpy().tolist() for t in g(tf.constant([1.0, 2.0, 3.0]))]
        h = loaded.h.get_concrete_function(tf.TensorSpec([], tf.float32))
        out["h.args"] = _described(h.structured_input_signature)
        out["h.call"] = float(h(tf.constant(2.0)))
        hi = loaded.h.get_concrete_function(tf.constant([5, 6]))
        out["hi.call"] = hi(tf.constant([5, 6])).numpy().tolist()
        with pytest.raises(ValueError, match="Could not find matching concrete function"):
            loaded.h.get_concrete_function(tf.TensorSpec([3], tf.float64))
        return out

    got, want = _both(program, tmp_path)
    assert got["f.input_signature"] == (((None, 3), "float32", "inp"), (((), "float32", None), ((2,), "int32", None)))
    assert got["f.args"] == (
        (((None, 3), "float32", "inp"), (((), "float32", "pair_0"), ((2,), "int32", "pair_1"))),
        {},
    )
    assert got["g.outputs"] == (((None,), "float32", None), ((), "float32", None))
    assert got["g.call"] == [[2.0, 4.0, 6.0], 6.0]
    assert got["h.input_signature"] is None and got["h.count"] == 2
    assert got["h.call"] == 3.0 and got["hi.call"] == [6, 7]
    if want is not None:
        assert got == want


def test_a_loaded_function_keeps_its_gradient(tmp_path):
    m = _module(gtf)
    gtf.saved_model.save(m, str(tmp_path))
    loaded = gtf.saved_model.load(str(tmp_path))
    x = gtf.constant([[1.0, 1.0, 1.0]])
    with gtf.GradientTape() as tape:
        out = loaded.f.get_concrete_function()(x, (gtf.constant(1.0), gtf.constant([1, 2])))
        loss = gtf.reduce_sum(out["a"] ** 2)
    # d/dv sum((x v)^2) = 2 x^2 v, by hand
    np.testing.assert_allclose(tape.gradient(loss, loaded.v).numpy(), [[2.0, 4.0, 6.0]])


@pytest.mark.parametrize("kind", ["nested_dict", "none", "nested_tuple"])
def test_a_signature_returning_a_nested_structure_is_refused(tmp_path, kind):
    def program(tf, path):
        class M(tf.Module):
            @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
            def f(self, x):
                if kind == "nested_dict":
                    return {"a": x, "b": (x, x)}
                if kind == "none":
                    return None
                return (x, (x, x))

        m = M()
        with pytest.raises(ValueError, match="must be a single Tensor, a sequence of Tensors, or a dictionary"):
            tf.saved_model.save(m, str(path), signatures=m.f)
        return not path.exists() or not any(path.iterdir())

    got, want = _both(program, tmp_path)
    assert got is True


def test_a_loaded_concrete_function_takes_its_tensors_alone(tmp_path):
    def program(tf, path):
        class M(tf.Module):
            @tf.function
            def h(self, z, scale=2.0, flag=True):
                return z * scale if flag else z

        m = M()
        m.h(tf.ones(2))
        tf.saved_model.save(m, str(path))
        loaded = tf.saved_model.load(str(path))
        cf = loaded.h.get_concrete_function(tf.TensorSpec([2], tf.float32))
        return cf(tf.constant([1.0, 3.0])).numpy().tolist(), cf(z=tf.constant([2.0, 2.0])).numpy().tolist()

    got, want = _both(program, tmp_path)
    assert got == ([2.0, 6.0], [4.0, 4.0])  # z * the saved scale, 2.0
    if want is not None:
        assert got == want
