"""TensorFlow's sequence and reinforcement-learning tutorials, ported unchanged to gradkit.tf and
run against real TensorFlow 2.21 / Keras 3: the actor-critic tutorial (CartPole replaced by a
tiny deterministic environment), an RNN text-generation model, and Keras' "Writing a training
loop from scratch" guide; plus focused parity tests for what they needed (tf.TensorArray,
tf.numpy_function/py_function, set_shape, SimpleRNN/GRU/LSTM, add_loss/losses).

Each program takes the module ``tf``; weights are made equal by ``set_weights``, and losses,
gradients and weights after a few optimizer steps are compared with ``run_both``.
"""

import jax
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


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    # Tutorial code broadcasts by rank as TensorFlow does (`returns - values`).
    with jax.numpy_rank_promotion("allow"):
        yield


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
    with pytest.raises(ValueError, match=r"^\[gradkit\].*clear_after_read=False"):
        ta.read(0)
    with pytest.raises(ValueError, match=r"^\[gradkit\].*dynamic_size=True"):
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
