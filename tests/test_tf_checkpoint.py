"""``tf.train.Checkpoint``, ``CheckpointManager``, ``latest_checkpoint`` and the readers.

The oracle is real TensorFlow (skipped when it is not installed): the same training program,
saving with a CheckpointManager, restoring an earlier checkpoint and training on, must end
with TensorFlow's weights and optimizer state and leave the same file names and ``checkpoint``
file; the load status assertions must pass and raise where TensorFlow's do; errors are of
TensorFlow's types. The rest checks gradkit's own behaviour: deferred restoration into layers
built and optimizers stepped inside a ``tf.function``, the files, and the error paths.
"""

import json
import os

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 6, 3)).astype(np.float32)
Y = RNG.normal(size=(3, 6, 1)).astype(np.float32)


@pytest.fixture(scope="module")
def tf_real():
    return pytest.importorskip("tensorflow")


def _sequential(tf):
    model = tf.keras.Sequential(
        [
            tf.keras.Input((3,)),
            tf.keras.layers.Dense(4, activation="tanh"),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(1),
        ]
    )
    model.set_weights(  # the same weights in both libraries (a positive moving variance)
        [
            np.random.default_rng(10 + i).uniform(0.5, 1.5, size=w.shape).astype(np.float32)
            if i == 5
            else np.random.default_rng(10 + i).normal(scale=0.5, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    return model


def _train_step(tf, model, optimizer):
    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def _outcome(call, messages=None) -> str:
    try:
        call()
    except AssertionError as e:
        if messages is not None:
            messages.append(str(e))
        return "raises"
    return "passes"


def _state_lines(directory) -> list:
    with open(os.path.join(directory, "checkpoint")) as f:
        return [line for line in f.read().splitlines() if "timestamp" not in line]


# -- the oracle: TensorFlow's own checkpoints -----------------------------------------------------


def _resume_program(tf, directory):
    """Train, save after each epoch (max_to_keep=2), restore an earlier checkpoint, train on;
    then a fresh program restores the newest checkpoint before its optimizer is built."""
    model, optimizer = _sequential(tf), tf.keras.optimizers.Adam(0.05)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=2)
    step = _train_step(tf, model, optimizer)

    def epoch():
        for x, y in zip(X, Y):
            step(x, y)

    for _ in range(3):
        epoch()
        manager.save()
    out = {"listing_1": sorted(os.listdir(directory)), "kept_1": [os.path.basename(p) for p in manager.checkpoints]}
    checkpoint.restore(manager.checkpoints[0]).assert_consumed()
    epoch()
    manager.save()
    epoch()
    manager.save()
    out["listing_2"] = sorted(os.listdir(directory))
    out["state"] = _state_lines(directory)
    out["weights"] = [w.numpy() for w in model.weights]
    out["optimizer"] = [np.asarray(v.numpy()) for v in optimizer.variables]

    model_2, optimizer_2 = _sequential(tf), tf.keras.optimizers.Adam(0.05)
    status = tf.train.Checkpoint(model=model_2, optimizer=optimizer_2).restore(tf.train.latest_checkpoint(directory))
    out["consumed_before_build"] = _outcome(status.assert_consumed)
    out["existing_before_build"] = _outcome(status.assert_existing_objects_matched)
    optimizer_2.build(model_2.trainable_variables)
    out["consumed_after_build"] = _outcome(status.assert_consumed)
    out["restored_optimizer"] = [np.asarray(v.numpy()) for v in optimizer_2.variables]
    _train_step(tf, model_2, optimizer_2)(X[0], Y[0])
    out["stepped"] = [w.numpy() for w in model_2.weights]
    return out


def test_training_resumed_from_a_manager_checkpoint_matches_tensorflow(tf_real, tmp_path):
    want = _resume_program(tf_real, str(tmp_path / "tf"))
    got = _resume_program(gtf, str(tmp_path / "gradkit"))
    for key in ("listing_1", "kept_1", "listing_2", "state"):
        assert got[key] == want[key], key
    assert want["listing_1"] == [
        "checkpoint",
        "ckpt-2.data-00000-of-00001",
        "ckpt-2.index",
        "ckpt-3.data-00000-of-00001",
        "ckpt-3.index",
    ]
    assert want["state"][0] == 'model_checkpoint_path: "ckpt-4"'
    for key in ("consumed_before_build", "existing_before_build", "consumed_after_build"):
        assert got[key] == want[key], key
    assert want["consumed_before_build"] == "raises"  # the slots wait for the optimizer's build
    for key in ("weights", "optimizer", "restored_optimizer", "stepped"):
        assert len(got[key]) == len(want[key])
        for a, b in zip(got[key], want[key]):
            np.testing.assert_allclose(a, b.astype(a.dtype), rtol=2e-5, atol=2e-6, err_msg=key)


def _status_scenarios(tf, directory, messages=None):
    """The load status assertions after restores that match partly, as (scenario, outcomes)."""

    def model():
        return _sequential(tf)

    full = tf.train.Checkpoint(model=model(), optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.5))
    full.optimizer.build(full.model.trainable_variables)
    saved = full.save(os.path.join(directory, "full"))
    written = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(os.path.join(directory, "written"))
    cases = {
        "model_only": lambda: tf.train.Checkpoint(model=model()).restore(saved),
        "extra_variable": lambda: tf.train.Checkpoint(model=model(), extra=tf.Variable(1.0)).restore(saved),
        "unbuilt_optimizer": lambda: tf.train.Checkpoint(
            model=model(), optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.5)
        ).restore(saved),
        "nothing_matches": lambda: tf.train.Checkpoint(other=tf.Variable(1.0)).restore(saved),
        "restore_of_write": lambda: tf.train.Checkpoint(v=tf.Variable([0.0, 0.0])).restore(written),
        "read_of_save": lambda: tf.train.Checkpoint(model=model()).read(saved),
        "read_of_write": lambda: tf.train.Checkpoint(v=tf.Variable([0.0, 0.0])).read(written),
        "none": lambda: tf.train.Checkpoint(model=model()).restore(None),
    }
    out = {}
    for name, make in cases.items():
        status = make()
        out[name] = tuple(
            _outcome(getattr(status, method), messages)
            for method in ("assert_consumed", "assert_existing_objects_matched", "assert_nontrivial_match")
        )
        out[name + "/run_restore_ops"] = _outcome(status.run_restore_ops, messages)
        assert status.expect_partial() is status
    return out


def test_load_status_assertions_pass_and_raise_where_tensorflow_does(tf_real, tmp_path):
    want = _status_scenarios(tf_real, str(tmp_path / "tf"))
    messages = []
    got = _status_scenarios(gtf, str(tmp_path / "gradkit"), messages)
    assert got == want
    assert messages and all(m.startswith("[gradkit] ") for m in messages)
    assert want["none"] == ("raises", "raises", "raises")
    assert want["model_only"] == ("raises", "passes", "passes")


def test_restore_errors_are_tensorflow_s_types_and_change_nothing(tf_real, tmp_path):
    for tf, name in ((tf_real, "tf"), (gtf, "gradkit")):
        saved = tf.train.Checkpoint(a=tf.Variable([1.0, 2.0]), b=tf.Variable(np.ones((2, 3), np.float32))).write(
            str(tmp_path / name / "x")
        )
        a, b = tf.Variable([5.0, 6.0]), tf.Variable(np.zeros((3, 2), np.float32))
        with pytest.raises(ValueError, match="shape"):
            tf.train.Checkpoint(a=a, b=b).read(saved)
        if tf is gtf:
            np.testing.assert_array_equal(a.numpy(), [5.0, 6.0])  # checked before any was written
        c = tf.Variable([0, 0])  # int32 for float32 values
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.train.Checkpoint(a=c).read(saved)
        with pytest.raises(tf.errors.NotFoundError, match="-1"):
            tf.train.Checkpoint(a=a).restore(str(tmp_path / name / "missing"))
        with pytest.raises(tf.errors.NotFoundError):
            tf.train.load_variable(saved, "nope")
        with pytest.raises(ValueError, match="trackable"):
            tf.train.Checkpoint(v=3.0)
        with pytest.raises(ValueError, match="max_to_keep"):
            tf.train.CheckpointManager(tf.train.Checkpoint(a=a), str(tmp_path / name / "m"), max_to_keep=0)


def test_manager_bookkeeping_matches_tensorflow(tf_real, tmp_path):
    def run(tf, directory):
        step = tf.Variable(0)
        checkpoint = tf.train.Checkpoint(step=step)
        manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=3)
        out = [manager.latest_checkpoint, manager.restore_or_initialize()]
        for number in (None, None, 10, None, 10):
            step.assign_add(1)
            out.append(os.path.basename(manager.save(checkpoint_number=number)))
        again = tf.train.CheckpointManager(tf.train.Checkpoint(step=tf.Variable(0)), directory, max_to_keep=2)
        out += [[os.path.basename(p) for p in again.checkpoints], os.path.basename(again.latest_checkpoint)]
        out.append(os.path.basename(again.save()))
        out += [sorted(os.listdir(directory)), _state_lines(directory)]
        restored = tf.Variable(0)
        path = tf.train.CheckpointManager(tf.train.Checkpoint(step=restored), directory, 2).restore_or_initialize()
        out += [os.path.basename(path), int(restored.numpy())]
        state = tf.train.get_checkpoint_state(directory)
        out += [state.model_checkpoint_path, list(state.all_model_checkpoint_paths)]
        out += [
            tf.train.latest_checkpoint(os.path.join(directory, "nothing-here")),
            len(state.all_model_checkpoint_paths),
        ]
        return out

    want = run(tf_real, str(tmp_path / "tf"))
    got = run(gtf, str(tmp_path / "gradkit"))
    assert [str(x).replace(str(tmp_path / "gradkit"), "DIR") for x in got] == [
        str(x).replace(str(tmp_path / "tf"), "DIR") for x in want
    ]


def test_manager_checkpoint_interval_matches_tensorflow(tf_real, tmp_path):
    def run(tf, directory):
        counter = tf.Variable(0)
        manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(c=counter), directory, max_to_keep=None, step_counter=counter, checkpoint_interval=3
        )
        saved = []
        for _ in range(8):
            counter.assign_add(1)
            path = manager.save()
            saved.append(None if path is None else os.path.basename(path))
        saved.append(os.path.basename(manager.save(check_interval=False)))
        return saved, [os.path.basename(p) for p in manager.checkpoints]

    assert run(gtf, str(tmp_path / "gradkit")) == run(tf_real, str(tmp_path / "tf"))
    with pytest.raises(ValueError, match="step_counter"):
        gtf.train.CheckpointManager(gtf.train.Checkpoint(), str(tmp_path), 1, checkpoint_interval=2)


def test_a_tensorflow_checkpoint_is_refused_with_advice(tf_real, tmp_path):
    path = tf_real.train.Checkpoint(v=tf_real.Variable([1.0, 2.0])).save(str(tmp_path / "ckpt"))
    v = gtf.Variable([0.0, 0.0])
    assert gtf.train.latest_checkpoint(str(tmp_path)) == path  # the same file names
    with pytest.raises(ValueError, match=r"\[gradkit\].*not a checkpoint gradkit wrote.*set_weights") as info:
        gtf.train.Checkpoint(v=v).restore(path)
    assert isinstance(info.value, gtf.errors.DataLossError)
    with pytest.raises(ValueError, match="gradkit reads only"):
        gtf.train.list_variables(str(tmp_path))
    np.testing.assert_array_equal(v.numpy(), [0.0, 0.0])


def test_list_variables_names_tensorflow_keys(tf_real, tmp_path):
    def keys(tf, directory):
        model = _sequential(tf)
        module = tf.Module()
        module.scale = tf.Variable(2.0)
        module.parts = [tf.Variable([1.0]), {"b": tf.Variable(3.0)}]
        checkpoint = tf.train.Checkpoint(module=module, step=tf.Variable(1), model=model)
        checkpoint.save(os.path.join(directory, "ckpt"))
        return [k for k, _ in tf.train.list_variables(directory) if not k.startswith(("model/", "_CHECKPOINTABLE"))]

    assert keys(gtf, str(tmp_path / "gradkit")) == keys(tf_real, str(tmp_path / "tf"))


# -- gradkit's own behaviour ------------------------------------------------------------------------


class Block(gtf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.dense = gtf.keras.layers.Dense(4, activation="tanh")
        self.norm = gtf.keras.layers.BatchNormalization()

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(1, 4), initializer="ones", name="scale")

    def call(self, x, training=False):
        return self.norm(self.dense(x), training=training) * self.scale


class Net(gtf.keras.Model):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = gtf.keras.layers.Dense(1)

    def call(self, x, training=False):
        return self.head(self.block(x, training=training))


def test_restore_before_build_reaches_layers_and_slots_made_inside_a_function(tmp_path):
    """The Transformer tutorial's order: restore the latest checkpoint, then train with a
    tf.function whose first trace builds the model and the optimizer's slots."""
    gtf.keras.utils.set_random_seed(1)
    model, optimizer = Net(), gtf.keras.optimizers.Adam(0.05)
    step = _train_step(gtf, model, optimizer)
    for x, y in zip(X[:2], Y[:2]):
        step(x, y)
    path = gtf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    step(X[2], Y[2])  # the run that was not interrupted

    gtf.keras.utils.set_random_seed(2)  # other initial weights: the restore must replace them
    model_2, optimizer_2 = Net(), gtf.keras.optimizers.Adam(0.05)
    status = gtf.train.Checkpoint(model=model_2, optimizer=optimizer_2).restore(path)
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match=r"\[gradkit\] Unresolved"):
        status.assert_consumed()
    _train_step(gtf, model_2, optimizer_2)(X[2], Y[2])
    status.assert_consumed()
    for a, b in zip(model.weights + optimizer.variables, model_2.weights + optimizer_2.variables):
        np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-6, atol=1e-7)
    names = [k for k, _ in gtf.train.list_variables(path)]
    assert "model/block/scale/.ATTRIBUTES/VARIABLE_VALUE" in names
    assert "model/block/dense/kernel/.OPTIMIZER_SLOT/optimizer/slot_0/.ATTRIBUTES/VARIABLE_VALUE" in names
    assert "optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE" in names


def test_fit_resumes_with_every_kind_of_optimizer_state(tmp_path):
    """A compiled model's optimizer is saved with it (model/optimizer); restored into a fresh
    program before fit, its moments, moving averages, gradient sums and Nadam's product wait for
    the first step, which fit takes inside its compiled function."""

    def compiled():
        model = _sequential(gtf)
        optimizer = gtf.keras.optimizers.Nadam(0.01, use_ema=True, gradient_accumulation_steps=2)
        model.compile(optimizer=optimizer, loss="mse")
        return model

    x, y = X.reshape(-1, 3), Y.reshape(-1, 1)
    model = compiled()
    model.fit(x[:6], y[:6], batch_size=2, verbose=0, shuffle=False)
    path = gtf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    model.fit(x[6:], y[6:], batch_size=2, verbose=0, shuffle=False)

    resumed = compiled()
    status = gtf.train.Checkpoint(model=resumed).restore(path)
    status.assert_existing_objects_matched()
    resumed.fit(x[6:], y[6:], batch_size=2, verbose=0, shuffle=False)
    status.assert_consumed()
    assert len(resumed.optimizer.variables) == len(model.optimizer.variables)
    for a, b in zip(model.weights + model.optimizer.variables, resumed.weights + resumed.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))


def test_a_variable_a_module_creates_later_is_restored_when_set(tmp_path):
    class Lazy(gtf.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        def __call__(self, x):
            if self.w is None:
                self.w = gtf.Variable(gtf.zeros([2]))
            return x * self.w

    first = Lazy()
    first(gtf.ones([2]))
    first.w.assign([3.0, 4.0])
    path = gtf.train.Checkpoint(m=first).write(str(tmp_path / "lazy"))
    second = Lazy()
    status = gtf.train.Checkpoint(m=second).read(path)
    assert second(gtf.ones([2])).numpy().tolist() == [3.0, 4.0]
    status.assert_consumed()


def test_nested_structures_round_trip_and_files(tmp_path):
    module = gtf.Module()
    module.v = gtf.Variable([1.0, 2.0])
    module.sub = gtf.Module()
    module.sub.w = gtf.Variable([[1.0]])
    inner = gtf.train.Checkpoint(k=gtf.Variable(7))
    generator = gtf.random.Generator.from_seed(4)
    shared = gtf.Variable(5.0)
    checkpoint = gtf.train.Checkpoint(
        module=module, inner=inner, gen=generator, items=[shared, {"x": gtf.Variable(1.5)}], alias=shared
    )
    path = checkpoint.save(str(tmp_path / "ckpt"))
    checkpoint.save(str(tmp_path / "ckpt"))
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "ckpt-1.data-00000-of-00001",
        "ckpt-1.index",
        "ckpt-2.data-00000-of-00001",
        "ckpt-2.index",
    ]
    with open(tmp_path / "checkpoint") as f:  # Checkpoint.save records the newest only, as TensorFlow
        assert f.read() == 'model_checkpoint_path: "ckpt-2"\nall_model_checkpoint_paths: "ckpt-2"\n'
    with open(path + ".index") as f:
        index = json.load(f)  # a JSON index and a NumPy archive: readable without gradkit
    with np.load(path + ".data-00000-of-00001") as data:
        assert len(data.files) == len(index["entries"])
    keys = [k for k, _ in gtf.train.list_variables(path)]
    assert keys == [
        "alias/.ATTRIBUTES/VARIABLE_VALUE",  # the shared Variable under its shortest path, once
        "gen/_state_var/.ATTRIBUTES/VARIABLE_VALUE",
        "inner/k/.ATTRIBUTES/VARIABLE_VALUE",
        "items/1/x/.ATTRIBUTES/VARIABLE_VALUE",
        "module/sub/w/.ATTRIBUTES/VARIABLE_VALUE",
        "module/v/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    draw = gtf.random.Generator.from_seed(4).normal([3]).numpy()
    for v in (module.v, module.sub.w, shared):
        v.assign(v * 0)
    generator.normal([3])
    checkpoint.restore(path).assert_consumed()
    assert module.v.numpy().tolist() == [1.0, 2.0] and float(shared.numpy()) == 5.0
    np.testing.assert_array_equal(generator.normal([3]).numpy(), draw)  # the generator's state came back
    assert int(checkpoint.save_counter.numpy()) == 1
    assert gtf.train.load_variable(str(tmp_path), "inner/k/.ATTRIBUTES/VARIABLE_VALUE:0") == 7
    state = gtf.train.get_checkpoint_state(str(tmp_path))
    assert state.all_model_checkpoint_paths == [str(tmp_path / "ckpt-2")]
    reader = gtf.train.load_checkpoint(path)
    assert reader.has_tensor("module/v/.ATTRIBUTES/VARIABLE_VALUE")
    assert reader.get_variable_to_shape_map()["module/sub/w/.ATTRIBUTES/VARIABLE_VALUE"] == [1, 1]


def test_root_checkpoint_and_attribute_added_after_restore(tmp_path):
    model = gtf.Module()
    model.w = gtf.Variable([1.0, 2.0])
    path = gtf.train.Checkpoint(model, step=gtf.Variable(3)).save(str(tmp_path / "ckpt"))
    assert [k for k, _ in gtf.train.list_variables(path)] == [
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
        "step/.ATTRIBUTES/VARIABLE_VALUE",
        "w/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    checkpoint = gtf.train.Checkpoint(gtf.Module())
    status = checkpoint.restore(path)
    checkpoint.step = gtf.Variable(0)  # given after the restore: its value was waiting
    assert int(checkpoint.step.numpy()) == 3
    with pytest.raises(ValueError, match="root.w already exists"):
        gtf.train.Checkpoint(model, w=gtf.Variable([0.0, 0.0]))
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()  # the new root has no w


def test_saving_inside_a_function_is_refused(tmp_path):
    checkpoint = gtf.train.Checkpoint(v=gtf.Variable(1.0))

    @gtf.function
    def save():
        checkpoint.save(str(tmp_path / "ckpt"))
        return gtf.constant(0.0)

    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*outside the tf.function"):
        save()
    assert not os.path.exists(tmp_path / "checkpoint")


@pytest.mark.parametrize("method", ["restore", "read"])
def test_restoring_inside_a_function_is_refused(tmp_path, method):
    # Traced, a restore would run once, while tracing, and not at the calls after it.
    v = gtf.Variable(1.0)
    checkpoint = gtf.train.Checkpoint(v=v)
    path = checkpoint.write(str(tmp_path / "v"))
    v.assign(7.0)

    @gtf.function
    def restore_then_read():
        getattr(checkpoint, method)(path)
        return v * 1.0

    with pytest.raises(NotImplementedError, match=rf"\[gradkit\] Calling tf.train.Checkpoint.{method}\(\).*outside"):
        restore_then_read()
    assert float(v.numpy()) == 7.0


def test_readers_refuse_what_is_not_there(tmp_path):
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        gtf.train.list_variables(str(tmp_path))
    assert gtf.train.latest_checkpoint(str(tmp_path)) is None
    assert gtf.train.get_checkpoint_state(str(tmp_path)) is None
    with pytest.raises(FileNotFoundError, match=r"\[gradkit\].*is a directory"):
        gtf.train.Checkpoint(v=gtf.Variable(1.0)).restore(str(tmp_path))
    with pytest.raises(TypeError, match="manages a tf.train.Checkpoint"):
        gtf.train.CheckpointManager(gtf.Variable(1.0), str(tmp_path), 1)
    with pytest.raises(AttributeError, match=r"\[gradkit\] gradkit.tf.train has no 'Saver'"):
        gtf.train.Saver  # noqa: B018


def test_dtypes_round_trip(tmp_path):
    values = {
        "b": gtf.Variable(gtf.constant([1.5, 2.0], dtype=gtf.bfloat16)),
        "i": gtf.Variable(np.int8([1, -2])),
        "t": gtf.Variable([True, False]),
        "h": gtf.Variable(np.float16([0.5])),
        "c": gtf.Variable(np.complex64([1 + 2j])),
    }
    checkpoint = gtf.train.Checkpoint(**values)
    path = checkpoint.write(str(tmp_path / "x"))
    saved = {k: v.numpy().copy() for k, v in values.items()}
    for v in values.values():
        v.assign(gtf.zeros_like(v))
    checkpoint.read(path).assert_consumed()
    for key, v in values.items():
        assert v.dtype == saved[key].dtype
        np.testing.assert_array_equal(v.numpy(), saved[key])
    assert gtf.train.load_variable(path, "b/.ATTRIBUTES/VARIABLE_VALUE").dtype == saved["b"].dtype


def test_a_waiting_value_of_another_shape_is_refused_when_the_layer_builds(tmp_path):
    saved = gtf.keras.Sequential([gtf.keras.Input((3,)), gtf.keras.layers.Dense(4)])
    path = gtf.train.Checkpoint(model=saved).write(str(tmp_path / "x"))
    wider = gtf.keras.Sequential([gtf.keras.layers.Dense(5)])  # built at its first call
    gtf.train.Checkpoint(model=wider).read(path)
    with pytest.raises(ValueError, match=r"\[gradkit\].*shape \(3, 4\).*shape \(3, 5\)"):
        wider(gtf.ones([1, 3]))
