"""A recurrent layer given a sequence of no timesteps raises InvalidArgumentError, as Keras on
TensorFlow does (compared where it is installed)."""

import numpy as np
import pytest

import gradkit.tf as gtf


@pytest.mark.parametrize("name", ["LSTM", "GRU", "SimpleRNN"])
def test_no_timesteps_is_refused(name):
    with pytest.raises(gtf.errors.InvalidArgumentError, match="no timesteps"):
        getattr(gtf.keras.layers, name)(3)(np.zeros((2, 0, 4), np.float32))
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError):
        getattr(tf.keras.layers, name)(3)(np.zeros((2, 0, 4), np.float32))
