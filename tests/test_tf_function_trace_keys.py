"""``tf.function`` keys a trace on an object of the user's class by identity, as TensorFlow
does (an equal instance with other attributes does not reuse a trace that baked in the first
one's), and on Python values by ==; ``pretty_printed_signature`` gives TensorFlow's layout.
Oracles: hand derivations and TensorFlow where installed."""

import dataclasses

import pytest

import gradkit.tf as gtf


class Scaled:
    """Equal by name, as some user classes are; carries a scale the function reads."""

    def __init__(self, name, scale):
        self.name, self.scale = name, scale

    def __eq__(self, other):
        return isinstance(other, Scaled) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@dataclasses.dataclass(frozen=True)
class Frozen:
    k: int


def _program(tf):
    @tf.function
    def f(x, obj):
        return x * obj.scale

    @tf.function
    def g(x, c):
        return x * c.k

    @tf.function
    def h(x, n):
        return x * n

    x = tf.constant(1.0)
    values = [float(f(x, Scaled("a", 2.0))), float(f(x, Scaled("a", 5.0)))]
    g(x, Frozen(2))
    g(x, Frozen(2))
    h(x, 3)
    h(x, 3)
    counts = [
        f.experimental_get_tracing_count(),
        g.experimental_get_tracing_count(),
        h.experimental_get_tracing_count(),
    ]
    return values, counts


def test_objects_of_user_classes_are_keyed_by_identity():
    values, counts = _program(gtf)
    assert values == [2.0, 5.0]
    assert counts == [2, 2, 1]  # two objects, two objects, one int value


def test_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _program(gtf) == _program(rtf)


def _signature_text(tf):
    @tf.function
    def f(x, y=2.0, *, k=None):
        return {"a": x * y, "b": (x, x)}

    c = f.get_concrete_function(tf.TensorSpec([None], tf.float32, name="x"))
    return c.pretty_printed_signature(), c.pretty_printed_signature(verbose=False)


def test_pretty_printed_signature():
    verbose, short = _signature_text(gtf)
    spec = "TensorSpec(shape=(None,), dtype=tf.float32, name='x')"
    assert verbose.splitlines()[:4] == [
        "Input Parameters:",
        f"  x (POSITIONAL_OR_KEYWORD): {spec}",
        "  y (POSITIONAL_OR_KEYWORD): Literal[2.0]",
        "  k (KEYWORD_ONLY): Literal[None]",
    ]
    assert short.startswith(f"(x: {spec}, y: Literal[2.0], *, k: Literal[None]) -> Dict[['a', TensorSpec(")


def test_pretty_printed_signature_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    ours, theirs = _signature_text(gtf), _signature_text(rtf)
    assert ours[0].splitlines()[:4] == theirs[0].splitlines()[:4]
    assert ours[1].split(" -> ")[0] == theirs[1].split(" -> ")[0]


def _defaults_program(tf):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x, s=2.0):
        return x * s

    out = [f(tf.ones([2]), 2.0).numpy().tolist(), f(tf.ones([2]), s=2.0).numpy().tolist()]
    with pytest.raises(TypeError):
        f(tf.ones([2]), 3.0)  # a value other than the default has no TensorSpec
    return out


def test_an_argument_past_the_input_signature_may_pass_its_default():
    assert _defaults_program(gtf) == [[2.0, 2.0], [2.0, 2.0]]


def test_an_argument_past_the_input_signature_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _defaults_program(gtf) == _defaults_program(rtf)


def _concrete_listing(tf):
    @tf.function
    def f(x, scale=2, training=False):
        return x * scale

    f(tf.ones(2))
    f(tf.ones([2, 3]), scale=3)
    f(tf.ones(2), training=True)

    @tf.function(input_signature=[(tf.TensorSpec([2]), tf.TensorSpec([2], name="second"))])
    def g(xs):
        return xs[0] + xs[1]

    return (
        f.pretty_printed_concrete_signatures(),
        f.pretty_printed_concrete_signatures(verbose=False),
        (g.pretty_printed_concrete_signatures(verbose=False)),
    )


def test_pretty_printed_concrete_signatures_lists_each_traced_type():
    verbose, short, with_signature = _concrete_listing(gtf)
    # By hand: three function types traced (the second by its scale, the third by training), each
    # spec unnamed as the call's tensors are; with an input_signature, its one type and its names.
    spec = "TensorSpec(shape=({}), dtype=tf.float32, name=None)"
    assert short.splitlines() == [
        f"(x: {spec.format('2,')}, scale: Literal[2], training: Literal[False]) -> {spec.format('2,')}",
        f"(x: {spec.format('2, 3')}, scale: Literal[3], training: Literal[False]) -> {spec.format('2, 3')}",
        f"(x: {spec.format('2,')}, scale: Literal[2], training: Literal[True]) -> {spec.format('2,')}",
    ]
    assert verbose.count("Input Parameters:") == 3 and "\n\nInput Parameters:" in verbose
    second = "TensorSpec(shape=(2,), dtype=tf.float32, name='second')"
    assert with_signature == f"(xs: Tuple[{spec.format('2,')}, {second}]) -> {spec.format('2,')}"


def test_pretty_printed_concrete_signatures_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    assert _concrete_listing(gtf) == _concrete_listing(rtf)


@pytest.mark.parametrize("given", [list, tuple])
def test_a_list_binds_only_to_a_list_of_the_input_signature(given):
    def run(tf):
        @tf.function(input_signature=[[tf.TensorSpec([2]), tf.TensorSpec([2])]])
        def f(xs):
            return xs[0] + xs[1]

        return f(given([tf.ones(2), tf.ones(2)]))

    if given is list:
        assert run(gtf).numpy().tolist() == [2.0, 2.0]  # by hand
    else:
        with pytest.raises(
            TypeError,
            match=r"\[gradkit\] .*f was called with arguments of structure \(\(\*, \*\),\) "
            r"where its input_signature has \(\[\*, \*\],\)",
        ):
            run(gtf)
    rtf = pytest.importorskip("tensorflow")
    if given is list:
        assert run(rtf).numpy().tolist() == [2.0, 2.0]
    else:
        with pytest.raises(TypeError):
            run(rtf)
