"""Shared steps of the optimizer parity tests that train Keras Variables of given values."""

import warnings

import numpy as np


def train_keras_variables(tf, opt, values: dict, loss_term, compiled=False, steps=4, at_step_2=None):
    """Steps of ``opt`` on ``tf.keras.Variable``s made from ``values`` (name -> array), the loss
    summing ``loss_term(tf, name, w, i)``; ``at_step_2()`` runs before the third step (a rate
    change). The trace of losses and values after each step."""
    ws = [tf.keras.Variable(value, name=name) for name, value in values.items()]

    def step(i):
        with tf.GradientTape() as tape:
            loss = sum(loss_term(tf, name, w, i) for name, w in zip(values, ws))
        opt.apply_gradients(zip(tape.gradient(loss, ws), ws))
        return loss

    if compiled:
        step = tf.function(step)
    trace = []
    for k in range(steps):
        if k == 2 and at_step_2 is not None:
            at_step_2()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = step(tf.constant(float(k)))
        trace.append([loss] + [np.asarray(w.numpy()) for w in ws])
    return trace
