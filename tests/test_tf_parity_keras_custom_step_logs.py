"""The logs ``fit`` and ``evaluate`` report for a custom ``train_step``/``test_step``, against
real Keras 3: where the step's logs have the metrics' names at their top level the epoch's
metric results are reported; otherwise (other names, or the compiled metrics' results nested
under their own ``compile_metrics`` key, as ``{m.name: m.result() for m in model.metrics}``
gives them) the step's own last logs are, as in Keras."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both  # noqa: E402

_rs = np.random.RandomState(1)
X = _rs.randn(20, 3).astype("float32")
Y = _rs.randn(20, 2).astype("float32")


def _model(tf, own_loss_tracker):
    K = tf.keras

    class StepModel(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(2, kernel_initializer="ones")
            if own_loss_tracker:
                self.loss_tracker = K.metrics.Mean(name="loss")

        def call(self, x):
            return self.dense(x)

        def _logs(self, y, y_pred, loss):
            if own_loss_tracker:  # the Keras guide's pattern: the logs are the metrics' results
                self.loss_tracker.update_state(loss)
                return {m.name: m.result() for m in self.metrics}
            for m in self.metrics:
                if m.name != "loss":
                    m.update_state(y, y_pred)
            return {"loss": loss, **{m.name: m.result() for m in self.metrics if m.name != "loss"}}

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x)
                loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return self._logs(y, y_pred, loss)

        def test_step(self, data):
            x, y = data
            y_pred = self(x)
            return self._logs(y, y_pred, self.compute_loss(x=x, y=y, y_pred=y_pred))

    model = StepModel()
    model(X[:1])
    model.compile(optimizer=K.optimizers.SGD(0.1), loss="mse", metrics=None if own_loss_tracker else ["mae"])
    return model


def _fit_and_evaluate(tf, own_loss_tracker):
    model = _model(tf, own_loss_tracker)
    history = model.fit(X, Y, batch_size=6, epochs=2, verbose=0, shuffle=False, validation_data=(X, Y))
    return [history.history, model.evaluate(X, Y, verbose=0, return_dict=True), model.get_weights()]


def test_a_step_returning_the_compiled_metrics_nested_reports_its_last_logs():
    # The loss returned by the step is the last batch's (Keras' loss tracker is never updated by
    # compute_loss here), and "mae" is the compiled metrics' running mean.
    outcome = run_both(lambda tf: _fit_and_evaluate(tf, own_loss_tracker=False))
    assert not isinstance(outcome, Exception)


def test_a_step_returning_its_metrics_results_reports_the_epochs_results():
    outcome = run_both(lambda tf: _fit_and_evaluate(tf, own_loss_tracker=True))
    assert not isinstance(outcome, Exception)
