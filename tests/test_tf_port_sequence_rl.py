"""TensorFlow's sequence and reinforcement-learning tutorials, ported unchanged to gradkit.tf and
run against real TensorFlow 2.21 / Keras 3: the actor-critic tutorial (CartPole replaced by a
tiny deterministic environment), an RNN text-generation model, and Keras' "Writing a training
loop from scratch" guide; plus focused parity tests for what they needed (tf.TensorArray,
tf.numpy_function/py_function, set_shape, SimpleRNN/GRU/LSTM, add_loss/losses).

Each program takes the module ``tf``; weights are made equal by ``set_weights``, and losses,
gradients and weights after a few optimizer steps are compared with ``run_both``.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from _oracles import count_compiles  # noqa: E402
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

EPS = np.finfo(np.float32).eps.item()
_rs = np.random.RandomState(0)
_SEQ = _rs.randn(2, 3, 4).astype(np.float32)  # batch 2, time 3, features 4
_H0 = _rs.randn(2, 5).astype(np.float32)
_C0 = _rs.randn(2, 5).astype(np.float32)


def _same_weights(model, seed=0, scale=0.5):
    rng = np.random.default_rng(seed)
    model.set_weights([scale * rng.standard_normal(tuple(v.shape)).astype(np.float32) for v in model.weights])


# -- 1. The actor-critic tutorial ---------------------------------------------------------------


class _ToyCartPole:
    """CartPole's interface without gym: a 4-vector state, reward 1 per step, done once the
    position leaves [-0.5, 0.5]."""

    def reset(self):
        self.state = np.array([0.05, -0.02, 0.03, 0.01], np.float32)
        return self.state

    def step(self, action):
        push = 0.3 if int(action) == 1 else -0.3
        x, v, a, w = self.state
        self.state = np.array([x + v, v + push, a + w, w - 0.1 * a], np.float32)
        return self.state, 1.0, bool(abs(self.state[0]) > 0.5), False, {}


def _actor_critic(tf):
    class ActorCritic(tf.keras.Model):  # the tutorial's, unchanged
        def __init__(self, num_actions, num_hidden_units):
            super().__init__()
            self.common = tf.keras.layers.Dense(num_hidden_units, activation="relu")
            self.actor = tf.keras.layers.Dense(num_actions)
            self.critic = tf.keras.layers.Dense(1)

        def call(self, inputs):
            x = self.common(inputs)
            return self.actor(x), self.critic(x)

    model = ActorCritic(2, 8)
    model(tf.zeros([1, 4]))
    _same_weights(model)
    return model


def _tutorial_functions(tf, env_step_fn, choose_action, stop_when_done=True):
    """run_episode, get_expected_return and compute_loss as the tutorial writes them; the
    sampled action is ``choose_action(logits)`` (argmax for a deterministic comparison)."""

    def run_episode(initial_state, model, max_steps):
        action_probs = tf.TensorArray(dtype=tf.float32, size=0, dynamic_size=True)
        values = tf.TensorArray(dtype=tf.float32, size=0, dynamic_size=True)
        rewards = tf.TensorArray(dtype=tf.int32, size=0, dynamic_size=True)
        initial_state_shape = initial_state.shape
        state = initial_state
        for t in tf.range(max_steps):
            state = tf.expand_dims(state, 0)
            action_logits_t, value = model(state)
            action = choose_action(action_logits_t)
            action_probs_t = tf.nn.softmax(action_logits_t)
            values = values.write(t, tf.squeeze(value))
            action_probs = action_probs.write(t, action_probs_t[0, action])
            state, reward, done = env_step_fn(state[0], action)
            state.set_shape(initial_state_shape)
            rewards = rewards.write(t, reward)
            if stop_when_done and tf.cast(done, tf.bool):
                break
        return action_probs.stack(), values.stack(), rewards.stack()

    def get_expected_return(rewards, gamma, standardize=True):
        n = tf.shape(rewards)[0]
        returns = tf.TensorArray(dtype=tf.float32, size=n)
        rewards = tf.cast(rewards[::-1], dtype=tf.float32)
        discounted_sum = tf.constant(0.0)
        discounted_sum_shape = discounted_sum.shape
        for i in tf.range(n):
            reward = rewards[i]
            discounted_sum = reward + gamma * discounted_sum
            discounted_sum.set_shape(discounted_sum_shape)
            returns = returns.write(i, discounted_sum)
        returns = returns.stack()[::-1]
        if standardize:
            returns = (returns - tf.math.reduce_mean(returns)) / (tf.math.reduce_std(returns) + EPS)
        return returns

    huber_loss = tf.keras.losses.Huber(reduction="sum")

    def compute_loss(action_probs, values, returns):
        advantage = returns - values
        action_log_probs = tf.math.log(action_probs)
        actor_loss = -tf.math.reduce_sum(action_log_probs * advantage)
        critic_loss = huber_loss(values, returns)
        return actor_loss + critic_loss

    def train_step(initial_state, model, optimizer, gamma, max_steps_per_episode):
        with tf.GradientTape() as tape:
            action_probs, values, rewards = run_episode(initial_state, model, max_steps_per_episode)
            returns = get_expected_return(rewards, gamma)
            action_probs, values, returns = [tf.expand_dims(x, 1) for x in [action_probs, values, returns]]
            loss = compute_loss(action_probs, values, returns)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return tf.math.reduce_sum(rewards), loss, grads

    return train_step


def _greedy(tf):
    return lambda logits: tf.argmax(logits, 1)[0]


def test_the_actor_critic_tutorial_with_a_numpy_environment_matches_tensorflow():
    def program(tf):
        env = _ToyCartPole()

        def env_step(action):  # the tutorial's wrapper of env.step
            state, reward, done, truncated, info = env.step(action)
            return (state.astype(np.float32), np.array(reward, np.int32), np.array(done, np.int32))

        def tf_env_step(state, action):
            return tf.numpy_function(env_step, [action], [tf.float32, tf.int32, tf.int32])

        model = _actor_critic(tf)
        train_step = _tutorial_functions(tf, tf_env_step, _greedy(tf))
        optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)
        out = []
        for _ in range(3):
            initial_state = tf.constant(env.reset(), dtype=tf.float32)
            out.append(train_step(initial_state, model, optimizer, 0.99, 6))
        return [out, model.get_weights()]

    episodes = run_both(program)[0]
    assert [int(r) for r, _, _ in episodes] == [3, 3, 3]  # the episodes end on `done`, before 6 steps


def _tf_environment(tf):
    """The toy environment in tf ops (what runs inside tf.function): state, reward, done."""

    def env_step(state, action):
        push = tf.where(tf.equal(action, 1), 0.3, -0.3)
        x, v, a, w = tf.unstack(state)
        new = tf.stack([x + v, v + push, a + w, w - 0.1 * a])
        return new, tf.constant(1, tf.int32), tf.cast(tf.abs(new[0]) > 0.5, tf.int32)

    return env_step


def _compiled_actor_critic(tf, traces):
    train_step = _tutorial_functions(tf, _tf_environment(tf), _greedy(tf), stop_when_done=False)

    @tf.function
    def step(initial_state, model, optimizer, gamma, max_steps):
        traces.append(1)
        return train_step(initial_state, model, optimizer, gamma, max_steps)

    return step


def test_the_compiled_actor_critic_step_matches_tensorflow():
    def program(tf):
        model, optimizer = _actor_critic(tf), tf.keras.optimizers.Adam(learning_rate=0.01)
        step = _compiled_actor_critic(tf, [])
        state = tf.constant(_ToyCartPole().reset())
        out = [step(state, model, optimizer, 0.99, 4) for _ in range(3)]
        return [out, model.get_weights()]

    run_both(program)


def test_the_compiled_actor_critic_step_compiles_once():
    traces = []
    model, optimizer = _actor_critic(gtf), gtf.keras.optimizers.Adam(learning_rate=0.01)
    step = _compiled_actor_critic(gtf, traces)
    state = gtf.constant(_ToyCartPole().reset())
    step(state, model, optimizer, 0.99, 4)[1].numpy()
    first = len(traces)
    assert count_compiles(lambda: [step(state, model, optimizer, 0.99, 4)[1].numpy() for _ in range(3)]) == 0
    assert len(traces) == first


def test_categorical_actions_in_the_episode_are_drawn_afresh_at_each_compiled_call():
    model = _actor_critic(gtf)
    model.set_weights([np.zeros(tuple(v.shape), np.float32) for v in model.weights])  # a uniform policy
    env_step = _tf_environment(gtf)

    def episode(tf):  # run_episode's loop with the tutorial's sampling; the actions show in the states
        state, actions = tf.constant(_ToyCartPole().reset()), tf.TensorArray(tf.int64, size=8)
        for t in range(8):
            logits, _ = model(tf.expand_dims(state, 0))
            action = tf.random.categorical(logits, 1)[0, 0]
            state, _, _ = env_step(state, action)
            actions = actions.write(t, action)
        return actions.stack()

    sample = gtf.function(lambda: episode(gtf))
    gtf.random.set_seed(0)
    runs = [tuple(sample().numpy()) for _ in range(4)]
    assert len(set(runs)) > 1, runs  # a draw baked in at trace time would repeat one episode
    assert set(np.concatenate(runs)) == {0, 1}
    assert sample.trace_count <= 2
    assert episode(gtf).shape == (8,)  # eagerly too


# -- tf.TensorArray, tf.numpy_function / py_function, set_shape ----------------------------------


def test_tensor_array_reads_and_writes_and_their_gradients_match_tensorflow():
    def program(tf):
        x = tf.Variable(_SEQ[0])  # (3, 4)
        with tf.GradientTape() as tape:
            ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(x * x)
            grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for t in range(3):
                grown = grown.write(t, ta.read(t) * float(t + 1))
            scattered = tf.TensorArray(tf.float32, size=3).scatter([2, 0], tf.sin(x[:2]))
            pieces = tf.TensorArray(tf.float32, size=2).split(tf.reshape(x, [12]), [5, 7])
            parts = [grown.stack(), ta.gather([2, 0]), ta.concat(), scattered.stack(), pieces.read(1)]
            loss = tf.add_n([tf.reduce_sum(p * p) for p in parts])
        return [parts, tape.gradient(loss, x), int(grown.size()), grown.element_shape.as_list()]

    run_both(program)


@pytest.mark.parametrize(
    "case",
    ["read_twice", "write_past_size", "wrong_dtype", "wrong_shape", "unstack_too_many"],
)
def test_tensor_array_errors_match_tensorflow(case):
    def program(tf):
        ta = tf.TensorArray(tf.float32, size=2)
        if case == "read_twice":
            ta = ta.write(0, 1.0)
            ta.read(0)
            return ta.read(0)
        if case == "write_past_size":
            return ta.write(2, 1.0).stack()
        if case == "wrong_dtype":
            return ta.write(0, tf.constant(1, tf.int32)).stack()
        if case == "wrong_shape":
            return ta.write(0, [1.0, 2.0]).write(1, [1.0]).stack()
        return ta.unstack(tf.ones([3, 2])).stack()

    assert isinstance(run_both(program), Exception)  # both raise, gradkit an error of TF's builtin class


def test_tensor_array_errors_are_gradkit_errors():
    ta = gtf.TensorArray(gtf.float32, size=2).write(0, 1.0)
    ta.read(0)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\].*clear_after_read=False"):
        ta.read(0)
    with pytest.raises(gtf.errors.OutOfRangeError, match=r"^\[gradkit\].*dynamic_size=True"):
        gtf.TensorArray(gtf.float32, size=2).write(2, 1.0)
    with pytest.raises(TypeError, match=r"^\[gradkit\].*tf.cast"):
        gtf.TensorArray(gtf.float32, size=2).write(0, gtf.constant(1, gtf.int32))


def test_unwritten_elements_read_as_zeros_of_the_element_shape_as_in_tensorflow():
    def program(tf):
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2])
        ta = ta.write(1, [1.0, 2.0])
        empty = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[2])
        return [ta.stack(), empty.stack(), ta.element_shape.as_list()]

    run_both(program)


def test_a_tensor_array_in_a_compiled_python_loop_compiles_once_and_matches_tensorflow():
    def program(tf):
        w = tf.Variable(_H0[0])

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
                h = x
                for t in tf.range(3):
                    h = tf.tanh(h * w + tf.cast(t, tf.float32))
                    ta = ta.write(t, h)
                loss = tf.reduce_sum(ta.stack() ** 2)
            return loss, tape.gradient(loss, w)

        return [step(tf.constant(_C0[0])), step(tf.constant(_C0[1])), step]

    out = run_both(lambda tf: program(tf)[:2])
    assert out is not None
    step = program(gtf)[2]
    assert count_compiles(lambda: step(gtf.constant(_H0[1]))[0].numpy()) == 0


def test_a_tensor_array_as_a_traced_while_loop_variable_raises_a_clear_error():
    @gtf.function
    def f(x, n):
        ta = gtf.TensorArray(gtf.float32, size=3)
        _, ta = gtf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, x)), [gtf.constant(0), ta])
        return ta.stack()

    with pytest.raises(TypeError, match=r"^\[gradkit\].*TensorArray.*Loop in Python"):
        f(gtf.constant(1.0), gtf.constant(3))


def test_numpy_function_and_py_function_match_tensorflow():
    def program(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        with tf.GradientTape(persistent=True) as tape:
            a = tf.numpy_function(lambda v: (v * 2).astype(np.float32), [x], tf.float32)
            b, c = tf.py_function(lambda v, k: [tf.sin(v) * k, tf.cast(k, tf.int32)], [x, 3.0], [tf.float32, tf.int32])
            loss_a, loss_b = tf.reduce_sum(a * x), tf.reduce_sum(b)
        return [a, b, c, tape.gradient(loss_a, x), tape.gradient(loss_b, x)]

    run_both(program)


def test_numpy_function_results_keep_their_values_as_in_eager_tensorflow():
    def program(tf):
        out = tf.numpy_function(lambda v: (v.astype(np.float64) / 3, 2), [tf.constant([1.0])], [tf.float32, tf.int32])
        return [out, tf.numpy_function(lambda: np.ones(2, np.float32), [], tf.float32)]

    run_both(program)


def test_numpy_function_inside_a_compiled_function_raises_a_clear_error():
    @gtf.function
    def f(x):
        return gtf.numpy_function(lambda v: v * 2, [x], gtf.float32)

    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.numpy_function.*inside tf.function.*eagerly"):
        f(gtf.constant([1.0]))


def test_set_shape_checks_as_tensorflow_does():
    def program(tf):
        x = tf.constant(_H0)
        x.set_shape([None, 5])
        x.set_shape([2, 5])
        x.set_shape([3, 5])
        return x

    assert isinstance(run_both(program), ValueError)


# -- 2. Recurrent layers and the text-generation model ---------------------------------------------

_RNN_CONFIGS = [
    ("SimpleRNN", {"return_sequences": True, "return_state": True, "activation": "relu"}),
    ("SimpleRNN", {"go_backwards": True, "return_sequences": True, "use_bias": False}),
    ("GRU", {"return_sequences": True, "return_state": True}),
    ("GRU", {"reset_after": False, "go_backwards": True, "return_sequences": True}),
    ("GRU", {"use_bias": False, "recurrent_activation": "hard_sigmoid"}),
    ("LSTM", {"return_sequences": True, "return_state": True}),
    ("LSTM", {"go_backwards": True, "unit_forget_bias": False, "use_bias": False}),
]


def _rnn_program(name, options, initial_state=False):
    def program(tf):
        layer = getattr(tf.keras.layers, name)(5, **options)
        x = tf.Variable(_SEQ)
        layer(x)
        _same_weights(layer, seed=1)
        states = [tf.Variable(_H0), tf.Variable(_C0)][: 2 if name == "LSTM" else 1] if initial_state else []
        with tf.GradientTape() as tape:
            out = layer(x, initial_state=states) if initial_state else layer(x)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            loss = tf.add_n([tf.reduce_sum(o * o) for o in outs])
        return [outs, tape.gradient(loss, [x, *states, *layer.trainable_variables]), isinstance(out, tuple)]

    return program


@pytest.mark.parametrize("name,options", _RNN_CONFIGS)
def test_recurrent_layers_outputs_states_and_gradients_match_keras(name, options):
    run_both(_rnn_program(name, options))


@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "LSTM"])
def test_recurrent_layers_initial_state_and_weight_layout_match_keras(name):
    run_both(_rnn_program(name, {"return_state": True}, initial_state=True))

    def layout(tf):
        layer = getattr(tf.keras.layers, name)(5)
        layer(tf.constant(_SEQ))
        weights = layer.get_weights()
        # Keras' initializers: glorot_uniform kernel, orthogonal recurrent kernel, zero bias (LSTM:
        # the forget gate's at 1). The random ones differ in values, not in their properties.
        recurrent = weights[1].reshape(5, -1, 5).transpose(1, 0, 2)
        orthogonal = [np.allclose(block.T @ block, np.eye(5), atol=1e-5) for block in recurrent]
        return [[w.shape for w in weights], weights[2], orthogonal]

    tf_shapes, gk_shapes = layout(tf_real), layout(gtf)
    assert [tuple(s) for s in tf_shapes[0]] == [tuple(s) for s in gk_shapes[0]]
    np.testing.assert_array_equal(tf_shapes[1], gk_shapes[1])
    assert gk_shapes[2] == tf_shapes[2]


def test_a_stateful_rnn_of_a_cell_without_a_batch_size_is_refused():
    with pytest.raises(ValueError, match=r"^\[gradkit\].*stateful.*static batch size"):
        gtf.keras.Sequential(
            [gtf.keras.Input((3, 4)), gtf.keras.layers.RNN(gtf.keras.layers.GRUCell(5), stateful=True)]
        )


def test_a_recurrent_layer_refuses_a_mask_of_another_shape():
    layer = gtf.keras.layers.LSTM(5)
    with pytest.raises(ValueError, match=r"^\[gradkit\].*mask of shape \(2, 2\)"):
        layer(gtf.constant(_SEQ), mask=gtf.constant(np.ones((2, 2), bool)))


def _text_model(tf, vocab_size=7):
    class MyModel(tf.keras.Model):  # the text-generation tutorial's, with Keras 3's get_initial_state
        def __init__(self, vocab_size, embedding_dim, rnn_units):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
            self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True, return_state=True)
            self.dense = tf.keras.layers.Dense(vocab_size)

        def call(self, inputs, states=None, return_state=False, training=False):
            x = inputs
            x = self.embedding(x, training=training)
            if states is None:
                states = self.gru.get_initial_state(tf.shape(x)[0])
            x, states = self.gru(x, initial_state=states, training=training)
            x = self.dense(x, training=training)
            if return_state:
                return x, states
            return x

    model = MyModel(vocab_size, 4, 5)
    model(tf.constant([[0, 1, 2]]))
    _same_weights(model, seed=2)
    return model


_TOKENS = np.array([[1, 4, 2, 6], [3, 0, 5, 1]], np.int32)


def _text_train_step(tf, model, optimizer, traces):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(inputs, labels):
        traces.append(1)
        with tf.GradientTape() as tape:
            predictions = model(inputs, training=True)
            loss = loss_fn(labels, predictions)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return lambda: train_step(tf.constant(_TOKENS[:, :-1]), tf.constant(_TOKENS[:, 1:]))


def test_the_text_generation_model_trains_as_in_tensorflow():
    def program(tf):
        model = _text_model(tf)
        step = _text_train_step(tf, model, tf.keras.optimizers.Adam(0.01), [])
        losses = [step() for _ in range(3)]
        logits, states = model(tf.constant(_TOKENS[:, :2]), return_state=True)
        return [losses, logits, states, model.get_weights()]

    run_both(program)


def test_the_text_generation_training_step_compiles_once():
    traces = []
    step = _text_train_step(gtf, _text_model(gtf), gtf.keras.optimizers.Adam(0.01), traces)
    step().numpy()
    first = len(traces)
    assert count_compiles(lambda: [step().numpy() for _ in range(3)]) == 0
    assert len(traces) == first


# -- 3. Keras' "Writing a training loop from scratch" guide -----------------------------------------

_X_TRAIN = _rs.randn(12, 6).astype(np.float32)
_Y_TRAIN = _rs.randint(0, 4, 12).astype(np.int32)
_X_VAL = _rs.randn(4, 6).astype(np.float32)
_Y_VAL = _rs.randint(0, 4, 4).astype(np.int32)


def _guide_model(tf):
    class ActivityRegularizationLayer(tf.keras.layers.Layer):  # the guide's
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    class MLP(tf.keras.Model):  # the guide's functional model, written as a subclass
        def __init__(self):
            super().__init__()
            self.dense1 = tf.keras.layers.Dense(8, activation="relu")
            self.regularization = ActivityRegularizationLayer()
            self.dense2 = tf.keras.layers.Dense(8, activation="relu")
            self.outputs = tf.keras.layers.Dense(4)

        def call(self, x):
            return self.outputs(self.dense2(self.regularization(self.dense1(x))))

    model = MLP()
    model(tf.zeros([1, 6]))
    _same_weights(model, seed=4)
    return model


def _guide_loop(tf, model, traces):
    optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        traces.append(1)
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    def run(epochs=2, batch_size=4):
        history = []
        for _ in range(epochs):
            losses = [
                train_step(tf.constant(_X_TRAIN[i : i + batch_size]), tf.constant(_Y_TRAIN[i : i + batch_size]))
                for i in range(0, len(_X_TRAIN), batch_size)
            ]
            train_acc = train_acc_metric.result()
            train_acc_metric.reset_state()
            test_step(tf.constant(_X_VAL), tf.constant(_Y_VAL))
            val_acc = val_acc_metric.result()
            val_acc_metric.reset_state()
            history.append([losses, train_acc, val_acc])
        return history

    return run, train_step


def test_the_training_loop_from_scratch_guide_matches_tensorflow():
    def program(tf):
        model = _guide_model(tf)
        run, _ = _guide_loop(tf, model, [])
        history = run()
        model(tf.constant(_X_VAL))
        return [history, model.get_weights(), model.losses, len(model.losses)]

    run_both(program)


def test_the_guide_training_step_compiles_once():
    traces = []
    run, train_step = _guide_loop(gtf, _guide_model(gtf), traces)
    run(epochs=1)
    first = len(traces)
    assert count_compiles(lambda: run(epochs=1)) == 0
    assert len(traces) == first


def test_add_loss_is_collected_per_outermost_call_and_differentiable_as_in_keras():
    def program(tf):
        model = _guide_model(tf)
        x = tf.Variable(_X_VAL)
        model(x)
        with tf.GradientTape() as tape:
            model(x)  # the second call replaces the first call's losses
            direct = model.regularization(x)  # a direct call of the layer clears its own
            loss = sum(model.losses)
        return [model.losses, model.regularization.losses, direct, tape.gradient(loss, x)]

    run_both(program)


def test_add_loss_refuses_a_python_number():
    class Bad(gtf.keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(0.5)
            return inputs

    with pytest.raises(ValueError, match=r"^\[gradkit\].*add_loss takes tensors"):
        Bad()(gtf.ones([2]))


def test_tf_datas_file_readers_point_at_from_generator():
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit.tf.data has no 'TFRecordDataset'.*from_generator"):
        gtf.data.TFRecordDataset  # noqa: B018
