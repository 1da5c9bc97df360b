"""``gradkit.tf.image`` lists only names TensorFlow 2.21's ``tf.image`` has, each function with
TensorFlow's argument names and defaults, and ``ResizeMethod`` with its values."""

import inspect

import pytest

import gradkit.tf as gtf

NAMES = [n for n in vars(gtf.image) if not n.startswith("_")]


def test_every_name_is_one_tensorflow_has():
    tf = pytest.importorskip("tensorflow")
    assert not set(NAMES) - set(dir(tf.image)), sorted(set(NAMES) - set(dir(tf.image)))


@pytest.mark.parametrize("name", sorted(n for n in NAMES if n != "ResizeMethod"))
def test_argument_names_and_defaults_are_tensorflows(name):
    tf = pytest.importorskip("tensorflow")

    def parameters(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]

    assert parameters(getattr(gtf.image, name)) == parameters(getattr(tf.image, name))


def test_resize_method_has_tensorflows_values():
    tf = pytest.importorskip("tensorflow")
    names = [n for n in vars(tf.image.ResizeMethod) if n.isupper()]
    assert names and all(getattr(gtf.image.ResizeMethod, n) == getattr(tf.image.ResizeMethod, n) for n in names)
    assert sorted(n for n in vars(gtf.image.ResizeMethod) if n.isupper()) == sorted(names)


def test_a_missing_name_points_elsewhere():
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit\.tf\.image has no 'decode_png'"):
        gtf.image.decode_png  # noqa: B018
