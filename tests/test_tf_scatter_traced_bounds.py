"""Inside a compiled tf.function, a traced scatter index outside the tensor, a negative one
included, is skipped, as the README says (TensorFlow raises when the program runs; jax's .at[]
would count a negative index from the end and write there, silently). Oracle: by hand, the
tensor with only the in-range row written."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.float32([1.0, 2.0, 3.0, 4.0])
ONLY_ROW_1 = {"update": [1.0, 10.0, 3.0, 4.0], "max": [1.0, 10.0, 3.0, 4.0], "add": [1.0, 12.0, 3.0, 4.0]}


@pytest.mark.parametrize("bad", [-1, -3, 4], ids=lambda b: f"index{b}")
@pytest.mark.parametrize("how", sorted(ONLY_ROW_1))
def test_a_traced_out_of_range_scatter_index_is_skipped(how, bad):
    scatter = getattr(gtf, f"tensor_scatter_nd_{how}")
    run = gtf.function(lambda i: scatter(X, i, [10.0, 20.0]))
    np.testing.assert_array_equal(run(gtf.constant([[1], [bad]])).numpy(), ONLY_ROW_1[how])


def test_scatter_nd_and_a_variable_skip_it_too_and_the_skipped_update_has_no_gradient():
    indices = gtf.constant([[1], [-1]])
    np.testing.assert_array_equal(
        gtf.function(lambda i: gtf.scatter_nd(i, [1.0, 2.0], [4]))(indices).numpy(), [0.0, 1.0, 0.0, 0.0]
    )
    v = gtf.Variable(X)
    gtf.function(lambda i: v.scatter_nd_update(i, [10.0, 20.0]))(indices)
    np.testing.assert_array_equal(v.numpy(), ONLY_ROW_1["update"])

    @gtf.function
    def gradient(i, u):
        with gtf.GradientTape() as tape:
            tape.watch(u)
            loss = gtf.reduce_sum(gtf.tensor_scatter_nd_update(X, i, u) * [1.0, 2.0, 3.0, 4.0])
        return tape.gradient(loss, u)

    np.testing.assert_array_equal(gradient(indices, gtf.constant([10.0, 20.0])).numpy(), [2.0, 0.0])
