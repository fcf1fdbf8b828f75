"""Training on the data sets (what `chainrule train` runs): defaults that reach their
targets, both engines, the metrics a run reports."""

import numpy as np
import pytest

from chainrule import training
from chainrule.training import DEFAULT_ENGINE, DEFAULTS, Config, load_dataset, train


def config(name, engine=None, **changes):
    engine = engine or DEFAULT_ENGINE[name]
    return Config(dataset=name, **{**DEFAULTS[(name, engine)], "engine": engine, **changes})


def test_every_data_set_has_defaults_for_both_engines():
    for name in training.DATASETS:
        assert (name, "scalar") in DEFAULTS and (name, "tensor") in DEFAULTS
        assert DEFAULT_ENGINE[name] in ("scalar", "tensor")


def test_mnist_subset_reaches_92_percent_on_the_test_set():
    """The issue's target: >= 92% test accuracy (the run takes ~10 s; not timed here)."""
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
def test_two_dimensional_sets_reach_100_percent_train_accuracy(name, engine):
    model, metrics = train(config(name, engine), load_dataset(name, seed=0),
                           show_progress=False)
    assert metrics["train_accuracy"] == 1.0
    assert "test_accuracy" not in metrics  # 2-D sets report training accuracy


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
            pytest.raises(training.TrainingDiverged, match="smaller learning rate"):
        train(config("toy", "tensor", lr=1e6, epochs=50), load_dataset("toy"),
              show_progress=False)


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
