"""Training on the data sets (what `chainrule train` runs): defaults that reach their
targets, both engines, the metrics a run reports."""

import numpy as np
import pytest

from chainrule.app import training
from chainrule.app.training import DEFAULT_ENGINE, DEFAULTS, Config, load_dataset, train


def config(name, engine=None, **changes):
    engine = engine or DEFAULT_ENGINE[name]
    return Config(dataset=name, **{**DEFAULTS[(name, engine)], "engine": engine, **changes})


def test_every_data_set_has_defaults_for_both_engines():
    for name in training.DATASETS:
        assert (name, "scalar") in DEFAULTS and (name, "tensor") in DEFAULTS
        assert DEFAULT_ENGINE[name] in ("scalar", "tensor")


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_mnist_subset_reaches_92_percent_on_the_test_set():
    """The MNIST subset trains to >= 92% test accuracy (the run takes ~10 s; not timed here)."""
    data = load_dataset("mnist", seed=0)
    model, metrics = train(config("mnist"), data, show_progress=False)
    assert metrics["test_accuracy"] >= 0.92
    assert len(metrics["history"]["loss"]) == 20
    assert metrics["history"]["loss"][-1] < metrics["history"]["loss"][0]


def test_digits_reach_95_percent():
    model, metrics = train(config("digits"), load_dataset("digits", seed=0), show_progress=False)
    assert metrics["test_accuracy"] >= 0.95


@pytest.mark.parametrize("name, engine", [("moons", "tensor"), ("circles", "tensor"),
                                          ("circles", "scalar")])
@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_two_dimensional_sets_reach_100_percent_train_accuracy(name, engine):
    model, metrics = train(config(name, engine), load_dataset(name, seed=0),
                           show_progress=False)
    assert metrics["train_accuracy"] == 1.0
    assert "test_accuracy" not in metrics  # 2-D sets report training accuracy


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_the_scalar_engine_trains_digits_for_real():
    """An MLP of Values on 8x8 digits: far above chance (10%) after one short epoch."""
    data = load_dataset("digits", seed=0)
    small = {k: v[:300] if isinstance(v, np.ndarray) else v for k, v in data.items()}
    model, metrics = train(config("digits", "scalar", epochs=2), small, show_progress=False)
    assert metrics["test_accuracy"] > 0.3  # chance is 0.1
    assert metrics["samples_per_second"] > 0
    assert metrics["config"]["engine"] == "scalar"


def test_the_toy_regression_on_the_tensor_engine_reports_its_error():
    model, metrics = train(config("toy", "tensor"), load_dataset("toy", seed=0),
                           show_progress=False)
    assert metrics["mse"] < 0.01 and "train_accuracy" not in metrics


def test_runs_are_reproducible_from_the_seed():
    a = train(config("circles", epochs=20), load_dataset("circles", seed=3),
              show_progress=False)[1]
    b = train(config("circles", epochs=20), load_dataset("circles", seed=3),
              show_progress=False)[1]
    assert a["history"]["loss"] == b["history"]["loss"]


def test_a_diverging_run_stops_with_a_clear_error():
    with np.errstate(over="ignore", invalid="ignore"), \
            pytest.warns(training.TrainingWarning, match="the loss grew"), \
            pytest.raises(training.TrainingDiverged, match="smaller learning rate"):
        train(config("toy", "tensor", lr=1e6, epochs=50), load_dataset("toy"),
              show_progress=False)


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
def test_a_diverged_run_hands_back_the_model_of_its_last_finished_epoch(engine):
    """The loss turns NaN in epoch 3: the exception carries the model as it was after
    epoch 2, every number finite and equal to a run stopped there, and its metrics."""
    data = load_dataset("moons")
    settings = dict(batch_size=25, lr=0.05, optimizer="adam", schedule="constant",
                    jit=False)
    stopped_at_2 = train(config("moons", engine, epochs=2, **settings), data,
                         show_progress=False)[0]
    real_step = training.optim.Adam.step
    steps = []

    def step(self, *args):  # the 9th step (epoch 3's first) sends a parameter to NaN
        real_step(self, *args)
        steps.append(1)
        if len(steps) == 9:
            for p in self.param_groups[0]["params"]:
                p.data = p.data * np.nan
    with pytest.MonkeyPatch.context() as patch, np.errstate(invalid="ignore"):
        patch.setattr(training.optim.Adam, "step", step)
        with pytest.raises(training.TrainingDiverged, match="epoch 3") as raised:
            train(config("moons", engine, epochs=5, **settings), data, show_progress=False)
    err = raised.value
    state = err.model.state_dict()
    assert all(np.isfinite(a).all() for a in state.values())
    for (name, a), b in zip(state.items(), stopped_at_2.state_dict().values()):
        assert np.array_equal(a, b), name
    metrics = err.metrics
    assert metrics["diverged"] == str(err) and metrics["epochs_completed"] == 2
    assert metrics["loss"] == metrics["history"]["loss"][-1]
    assert "train_accuracy" not in metrics  # not measured on a run that stopped early


def test_a_parameter_gone_inf_at_the_last_step_is_caught_at_the_epoch_end():
    """No loss is computed after the last step: the epoch's end checks the numbers."""
    real_step = training.optim.SGD.step

    def step(self, *args):
        real_step(self, *args)
        first = self.param_groups[0]["params"][0]
        first.data = first.data + np.inf

    message = r"the parameter layers\.0\.weight became inf in epoch 1"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training.optim.SGD, "step", step)
        with pytest.raises(training.TrainingDiverged, match=message) as raised:
            train(config("moons", "tensor", epochs=1, optimizer="sgd", jit=False),
                  load_dataset("moons"), show_progress=False)
    assert raised.value.metrics["epochs_completed"] == 0  # the initial model, kept


def test_a_loss_that_grows_a_hundredfold_warns_once_and_is_recorded():
    """--lr 1e10 keeps the loss finite (1e20 and more), so it is no error: a warning."""
    with np.errstate(over="ignore", invalid="ignore"), \
            pytest.warns(training.TrainingWarning) as caught:
        _, metrics = train(config("moons", "tensor", lr=1e10, epochs=10),
                           load_dataset("moons"), show_progress=False)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("moons: the loss grew from ") and "1e+10" in message
    assert metrics["warnings"] == [message]
    assert max(metrics["history"]["loss"]) > training.LOSS_GROWTH * metrics["loss_history"][0]


def test_a_healthy_run_gives_no_warning(recwarn):
    _, metrics = train(config("circles", epochs=20), load_dataset("circles"),
                       show_progress=False)
    assert "warnings" not in metrics
    assert not [w for w in recwarn if issubclass(w.category, training.TrainingWarning)]


def test_evaluate_gives_the_confusion_matrix():
    data = load_dataset("digits", seed=0)
    model, _ = train(config("digits", epochs=5), data, show_progress=False)
    acc, matrix, predicted = training.evaluate(model, data)
    assert matrix.shape == (10, 10) and matrix.sum() == len(data["y_test"])
    assert np.trace(matrix) / matrix.sum() == pytest.approx(acc)
    np.testing.assert_array_equal(np.bincount(data["y_test"], minlength=10), matrix.sum(1))


def test_unknown_data_sets_are_named():
    with pytest.raises(ValueError, match="known: toy, moons"):
        load_dataset("cifar")


# --- one loop for both engines: every setting of a config is used --------------------

def scalar_moons(**changes):
    """A short run of micrograd's demo on the scalar engine, with some settings changed."""
    return train(config("moons", "scalar", **{"epochs": 2, **changes}),
                 load_dataset("moons"), show_progress=False)


def test_scalar_runs_build_the_hidden_layers_asked_for():
    model, metrics = scalar_moons(hidden=[4, 3])
    assert model.architecture()["nouts"] == [4, 3, 1]  # one output: the hinge loss's sign
    assert metrics["parameters"] == (2 * 4 + 4) + (4 * 3 + 3) + (3 + 1)
    assert metrics["config"]["hidden"] == [4, 3]


def test_scalar_runs_step_with_the_optimizer_they_name():
    """Adam's first step moves each parameter by about lr (less only where the gradient
    is as small as Adam's eps) or not at all; SGD's by lr times the gradient, which
    varies."""
    moves = {}
    for name in ("adam", "sgd"):
        cfg = config("moons", "scalar", epochs=1, optimizer=name, lr=0.01)
        before = np.array([p.data for p in training.build_model(cfg, 2, 2).parameters()])
        model, metrics = train(cfg, load_dataset("moons"), show_progress=False)
        moves[metrics["optimizer"]["name"]] = np.abs(
            np.array([p.data for p in model.parameters()]) - before)
    adam, sgd = moves["Adam"], moves["SGD"]
    assert np.all((adam == 0) | ((adam > 0.009) & (adam < 0.01 + 1e-12)))
    assert adam.max() > 0
    assert sgd[sgd > 0].max() > 10 * sgd[sgd > 0].min()


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
@pytest.mark.parametrize("name", training.OPTIMIZERS)
def test_every_optimizer_of_the_cli_trains_on_both_engines(name, engine):
    """Each --optimizer builds chainrule.optim's class of that name with the run's lr
    and PyTorch's defaults for the rest, and lowers the loss of a short moons run."""
    lr = 1.0 if name == "adadelta" else 0.05  # (Adadelta's steps are lr times its own)
    cfg = config("moons", engine, epochs=20, batch_size=0, optimizer=name, lr=lr,
                 momentum=0.0)
    _, metrics = train(cfg, load_dataset("moons"), show_progress=False)
    described = metrics["optimizer"]
    assert described["name"] == training.OPTIMIZER_CLASSES[name].__name__
    assert described["lr"] == lr
    assert metrics["loss_history"][-1] < metrics["loss_history"][0]


def test_scalar_runs_take_one_step_per_mini_batch():
    _, full = scalar_moons()                    # 100 points at once: a step an epoch
    _, batched = scalar_moons(batch_size=30)    # 30, 30, 30 and 10: four steps an epoch
    assert full["steps"] == 2 and batched["steps"] == 8
    assert len(batched["loss_history"]) == 8 and len(batched["history"]["loss"]) == 2


def test_scalar_runs_use_their_learning_rate_momentum_epochs_and_seed():
    _, base = scalar_moons()
    _, faster = scalar_moons(lr=0.5)
    _, momentum = scalar_moons(momentum=0.9, epochs=3)
    _, longer = scalar_moons(epochs=3)
    _, reseeded = scalar_moons(seed=1)
    assert faster["optimizer"]["lr"] == 0.5
    assert faster["loss_history"][0] == base["loss_history"][0]  # the same start
    assert faster["loss_history"][1] != base["loss_history"][1]
    assert momentum["optimizer"]["momentum"] == 0.9
    assert momentum["loss_history"][2] != longer["loss_history"][2]  # the buffer counts
    assert len(longer["history"]["loss"]) == 3
    assert reseeded["loss_history"][0] != base["loss_history"][0]  # other initial weights


def test_the_moons_recipe_is_the_scalar_run_of_the_cli():
    from chainrule.app.recipes import train_moons
    _, _, _, recipe = train_moons(steps=3, show_progress=False)
    _, run = train(config("moons", "scalar", epochs=3), load_dataset("moons"),
                   show_progress=False)
    assert recipe["loss_history"] == run["loss_history"]
    assert recipe["config"] == run["config"]


def test_micrograd_demo_settings_train_the_tensor_engine_too():
    """The same config on the other engine: hinge loss, L2, SGD with lr 1.0 -> 0.1."""
    model, metrics = train(config("moons", "tensor", **DEFAULTS[("moons", "scalar")]),
                           load_dataset("moons"), show_progress=False)
    assert model.architecture()["sizes"] == [2, 16, 16, 1]
    assert metrics["train_accuracy"] == 1.0 and metrics["steps"] == 100


def test_a_loss_that_does_not_suit_the_data_set_is_named():
    with pytest.raises(ValueError, match="moons is a classification set"):
        scalar_moons(loss="mse")
    with pytest.raises(ValueError, match="toy is a regression set"):
        train(config("toy", "scalar", loss="hinge"), load_dataset("toy"), show_progress=False)
    with pytest.raises(ValueError, match="hinge loss needs two classes; digits has 10"):
        train(config("digits", loss="hinge"), load_dataset("digits"), show_progress=False)


@pytest.mark.parametrize("changes, message", [
    ({"hidden": [16, 0]}, r"hidden must be positive layer sizes"),
    ({"hidden": []}, r"hidden must be positive layer sizes"),
    ({"epochs": 0}, r"epochs must be an integer >= 1, got 0"),
    ({"batch_size": -1}, r"batch_size must be an integer >= 0, got -1"),
    ({"seed": -1}, r"seed must be an integer >= 0, got -1"),
    ({"lr": -0.1}, r"lr must be a finite number > 0, got -0.1"),
    ({"lr": 0.0}, r"lr must be a finite number > 0, got 0.0"),
    ({"lr": float("nan")}, r"lr must be a finite number > 0, got nan"),
    ({"lr": float("inf")}, r"lr must be a finite number > 0, got inf"),
    ({"momentum": 1.0}, r"momentum must be a number in \[0, 1\), got 1.0"),
    ({"momentum": -0.5}, r"momentum must be a number in \[0, 1\), got -0.5"),
    ({"l2": float("inf")}, r"l2 must be a finite number >= 0, got inf"),
    ({"optimizer": "lion"}, r"optimizer must be one of sgd, adam, adamw, .*, adafactor, "
                            r"got 'lion'"),
    ({"engine": "gpu"}, r"engine must be one of scalar, tensor, got 'gpu'"),
    ({"schedule": "cosine"}, r"schedule must be one of constant, linear, got 'cosine'"),
])
def test_bad_settings_are_refused_in_one_line(changes, message):
    with pytest.raises(ValueError, match=message) as error:
        Config(dataset="moons", **{**DEFAULTS[("moons", "scalar")], "engine": "scalar",
                                   **changes})
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
def test_a_network_too_big_to_train_is_refused_before_it_is_built(engine, monkeypatch):
    """The size is checked from the layer sizes alone: nothing is allocated."""
    monkeypatch.setattr(training, "build_model", lambda *a: pytest.fail("built the model"))
    with pytest.raises(training.ConfigError, match=r"hidden must be sizes whose network "
                                                   r"fits in 2 GiB .* parameters"):
        train(config("moons", engine, hidden=[10**8]), load_dataset("moons"),
              show_progress=False)


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
def test_parameters_counts_the_scalars_learned_on_both_engines(engine):
    _, metrics = train(config("moons", engine, hidden=[4], epochs=1), load_dataset("moons"),
                       show_progress=False)
    outputs = 1 if engine == "scalar" else 2  # the hinge loss's one score, or two classes
    assert metrics["parameters"] == (2 * 4 + 4) + (4 + 1) * outputs


@pytest.fixture
def ctrl_c():
    """Ctrl-C as a terminal gives it (KeyboardInterrupt), whatever the test run inherited:
    a suite started in the background by a script ignores SIGINT, and training keeps a
    signal ignored that it was started with."""
    import signal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupted_run_stops_after_its_step_and_keeps_what_it_learned(monkeypatch,
                                                                            ctrl_c):
    """SIGINT during a step: the step finishes, the loop stops, the metrics say so."""
    import os
    import signal
    steps = []
    real_step = training.optim.Adam.step

    def step(self, *args):
        steps.append(1)
        if len(steps) == 5:  # mid-epoch: epoch 2 of moons in batches of 25 (4 a epoch)
            os.kill(os.getpid(), signal.SIGINT)
        return real_step(self, *args)

    monkeypatch.setattr(training.optim.Adam, "step", step)
    before = signal.getsignal(signal.SIGINT)
    # (eager steps: under cr.jit, Adam.step runs in Python only while tracing)
    model, metrics = train(config("moons", "tensor", epochs=50, batch_size=25, jit=False),
                           load_dataset("moons"), show_progress=False,
                           stop_on_interrupt=True)
    assert signal.getsignal(signal.SIGINT) is before
    assert metrics["interrupted"] is True and metrics["steps"] == 5
    assert metrics["epochs_completed"] == 1 and len(metrics["history"]["loss"]) == 1
    assert metrics["loss"] == metrics["history"]["loss"][0]
    assert metrics["signal"] == "SIGINT" and model is not None
    # the accuracies of a run that stopped are its history's, none measured afterwards
    assert "train_accuracy" not in metrics and len(metrics["history"]["train_accuracy"]) == 1


def test_a_run_interrupted_in_its_first_epoch_reports_the_steps_it_took(monkeypatch, ctrl_c):
    import os
    import signal
    real_step = training.optim.Adam.step

    def step(self, *args):
        os.kill(os.getpid(), signal.SIGINT)  # during the first step
        return real_step(self, *args)

    monkeypatch.setattr(training.optim.Adam, "step", step)
    _, metrics = train(config("moons", "tensor", epochs=5, batch_size=25, jit=False),
                       load_dataset("moons"), show_progress=False, stop_on_interrupt=True)
    assert metrics["interrupted"] and metrics["steps"] == 1
    assert metrics["epochs_completed"] == 0 and metrics["history"]["loss"] == []
    assert metrics["loss"] == metrics["loss_history"][0]
    assert "train_accuracy" not in metrics and "test_accuracy" not in metrics


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_a_run_as_ctrl_c_does(name, monkeypatch):
    """What `timeout`, `kill`, containers and schedulers send (SIGTERM), and a closed
    terminal (SIGHUP): the step ends, the run so far comes back, marked with the signal."""
    import os
    import signal
    signum = getattr(signal, name)
    real_step = training.optim.Adam.step
    steps = []

    def step(self, *args):
        steps.append(1)
        if len(steps) == 6:
            os.kill(os.getpid(), signum)
        return real_step(self, *args)

    def guard(*args):  # if training did not catch it, fail here instead of dying
        raise AssertionError(f"{name} reached the handler that was there before training")

    monkeypatch.setattr(training.optim.Adam, "step", step)
    previous = signal.signal(signum, guard)
    try:
        model, metrics = train(config("moons", "tensor", epochs=50, batch_size=25, jit=False),
                               load_dataset("moons"), show_progress=False,
                               stop_on_interrupt=True)
        assert signal.getsignal(signum) is guard  # put back as it was
    finally:
        signal.signal(signum, previous)
    assert metrics["interrupted"] is True and metrics["signal"] == name
    assert metrics["steps"] == 6 and metrics["epochs_completed"] == 1


def test_an_ignored_signal_stays_ignored(monkeypatch):
    """`nohup` ignores SIGHUP: a closed terminal must not stop that run."""
    import os
    import signal
    real_step = training.optim.Adam.step

    def step(self, *args):
        os.kill(os.getpid(), signal.SIGHUP)
        return real_step(self, *args)

    monkeypatch.setattr(training.optim.Adam, "step", step)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        _, metrics = train(config("moons", "tensor", epochs=3, jit=False),
                           load_dataset("moons"), show_progress=False, stop_on_interrupt=True)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert "interrupted" not in metrics and metrics["epochs_completed"] == 3


def test_without_stop_on_interrupt_ctrl_c_raises_as_usual(monkeypatch, ctrl_c):
    import os
    import signal

    def step(self, *args):
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(training.optim.Adam, "step", step)
    with pytest.raises(KeyboardInterrupt):
        train(config("moons", "tensor", epochs=5), load_dataset("moons"), show_progress=False)


@pytest.mark.parametrize("optimizer", training.OPTIMIZERS)
def test_jitted_steps_train_to_the_same_numbers_as_eager_ones(optimizer):
    """chainrule train's default on the tensor engine (cr.jit) against --no-jit: the
    same loss at every step and the same weights, to the last bit, with a smaller last
    batch (a second program) and a learning-rate schedule (an input of the program)."""
    data = load_dataset("moons", seed=0)
    runs = []
    for jit in (True, False):
        config = Config("moons", engine="tensor", epochs=3, batch_size=30, lr=0.05,
                        optimizer=optimizer, schedule="linear", jit=jit)
        runs.append(train(config, data, show_progress=False))
    (jit_model, jit_metrics), (eager_model, eager_metrics) = runs
    assert jit_metrics["loss_history"] == eager_metrics["loss_history"]
    assert len(data["X_train"]) % 30  # (the last batch is smaller)
    for p, q in zip(jit_model.parameters(), eager_model.parameters()):
        assert np.array_equal(p.data, q.data)
