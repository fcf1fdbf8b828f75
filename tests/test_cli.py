"""The command line: `chainrule train` and `chainrule graph`, as a user runs them."""

import json
import subprocess
import sys

import pytest

from chainrule import checkpoint
from chainrule.cli import main


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "train" in out and "graph" in out


def test_train_help_documents_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for option in ("--seed", "--steps", "--lr", "--out", "moons", "toy"):
        assert option in out


def test_python_dash_m_and_the_console_script_both_run():
    for command in ([sys.executable, "-m", "chainrule", "--help"],
                    [str(__import__("pathlib").Path(sys.executable).with_name("chainrule")),
                     "--help"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "usage: chainrule" in result.stdout


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_train_moons_reaches_100_percent_and_writes_its_outputs(tmp_path, capsys):
    """micrograd's demo, from the command line: 100% training accuracy, metrics and a picture."""
    assert main(["train", "moons", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "train accuracy 100.0%" in out
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["train_accuracy"] == 1.0
    assert metrics["steps"] == 100 and metrics["parameters"] == 337
    assert metrics["loss"] < 0.05 and metrics["wall_time_s"] > 0
    assert len(metrics["loss_history"]) == 100
    assert metrics["loss_history"][-1] < metrics["loss_history"][0]
    png = (tmp_path / "decision_boundary.png").read_bytes()
    assert png.startswith(b"\x89PNG")


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_train_is_reproducible_from_its_seed(tmp_path):
    for run in ("a", "b"):
        assert main(["train", "moons", "--quiet", "--steps", "5", "--seed", "3",
                     "--out", str(tmp_path / run)]) == 0
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert a["loss_history"] == b["loss_history"]


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_train_toy_fits_the_bump(tmp_path, capsys):
    """microcrad's toy regression: the error falls well below the target's variance (0.047)."""
    assert main(["train", "toy", "--quiet", "--out", str(tmp_path)]) == 0
    assert "mean squared error" in capsys.readouterr().out
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["mse"] < 0.01
    assert (tmp_path / "fit.png").read_bytes().startswith(b"\x89PNG")


def test_a_diverging_run_stops_with_a_clear_error(capsys):
    assert main(["train", "toy", "--quiet", "--lr", "50", "--steps", "200"]) == 1
    err = capsys.readouterr().err
    assert "diverged" in err and "smaller learning rate" in err


def test_graph_prints_gradients_and_renders(tmp_path, capsys):
    out_file = tmp_path / "g.dot"
    assert main(["graph", "x*y + x", "--at", "x=2,y=3", "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "value = 8.0" in out
    assert "d/dx = 4.0" in out and "d/dy = 2.0" in out
    assert "digraph" in out_file.read_text()


def test_graph_refuses_code_and_runs_none_of_it(tmp_path, capsys):
    marker = tmp_path / "pwned"
    code = f"__import__('os').system('touch {marker}')"
    assert main(["graph", code, "-o", str(tmp_path / "g.svg")]) == 2
    assert "not an allowed function" in capsys.readouterr().err
    assert not marker.exists()
    assert not (tmp_path / "g.svg").exists()


def test_graph_reports_unknown_variables_and_domain_errors(tmp_path, capsys):
    assert main(["graph", "x + z", "--at", "x=1", "-o", str(tmp_path / "g.dot")]) == 2
    assert "z" in capsys.readouterr().err
    assert main(["graph", "log(x)", "--at", "x=0", "-o", str(tmp_path / "g.dot")]) == 2
    assert "log" in capsys.readouterr().err


# --- the data sets, eval, data fetch -------------------------------------------------

@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_train_mnist_writes_metrics_checkpoint_and_pictures(tmp_path, capsys):
    out = tmp_path / "mnist"
    assert main(["train", "mnist", "--quiet", "--epochs", "3", "--out", str(out)]) == 0
    assert "test accuracy" in capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["config"]["dataset"] == "mnist" and metrics["config"]["epochs"] == 3
    assert len(metrics["confusion_matrix"]) == 10
    # per-epoch loss and accuracy, the test accuracy of the last epoch reported as such
    history = metrics["history"]
    assert len(history["loss"]) == len(history["train_accuracy"]) == 3
    assert [epoch for epoch, _ in history["test_accuracy"]] == [1, 2, 3]
    assert history["test_accuracy"][-1][1] == metrics["test_accuracy"]
    for picture in ("curves.png", "confusion.png", "misclassified.png"):
        assert (out / picture).read_bytes().startswith(b"\x89PNG")
    # the checkpoint evaluates to the same accuracy
    assert main(["eval", str(out / "model.npz"), "--data", "mnist"]) == 0
    printed = capsys.readouterr().out
    assert f"test accuracy {metrics['test_accuracy']:.2%}" in printed
    assert "confusion matrix" in printed


def test_eval_refuses_a_model_trained_on_another_data_set(tmp_path, capsys):
    assert main(["train", "digits", "--quiet", "--epochs", "1", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "model.npz"), "--data", "mnist"]) == 2
    assert "64 inputs" in capsys.readouterr().err


def test_train_on_a_2d_set_draws_the_decision_boundary(tmp_path, capsys):
    assert main(["train", "circles", "--quiet", "--out", str(tmp_path)]) == 0
    assert "train accuracy 100.0%" in capsys.readouterr().out
    assert (tmp_path / "decision_boundary.png").read_bytes().startswith(b"\x89PNG")


def test_unknown_data_set_lists_the_known_ones(capsys):
    with pytest.raises(SystemExit):
        main(["train", "cifar"])
    err = capsys.readouterr().err
    assert "mnist" in err and "moons" in err


def test_a_data_dir_without_the_idx_files_says_what_is_missing_and_how_to_fetch(tmp_path,
                                                                                capsys):
    assert main(["train", "mnist", "--quiet", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "train-images-idx3-ubyte" in err and "chainrule data fetch mnist" in err


def test_data_fetch_reports_a_failed_download_in_one_line(tmp_path, capsys):
    """No server answers on this port: a clear error, and no files left behind."""
    assert main(["data", "fetch", "mnist", "--to", str(tmp_path / "m"),
                 "--base-url", "http://127.0.0.1:9/"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chainrule data fetch: error:") and "\n" not in err
    assert not list((tmp_path / "m").glob("*.gz"))


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_the_moons_demo_checkpoint_evaluates_to_its_accuracy(tmp_path, capsys):
    """The scalar model saved by `train moons` rebuilds from its own architecture()."""
    assert main(["train", "moons", "--quiet", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "model.npz"), "--data", "moons"]) == 0
    assert "moons: train accuracy 100.00%" in capsys.readouterr().out


def test_train_on_the_scalar_engine_honours_every_option(tmp_path, capsys):
    """--hidden, --optimizer, --batch-size, --lr, --epochs and --seed shape the scalar
    run, and metrics.json and the checkpoint record what ran."""
    out = tmp_path / "moons"
    assert main(["train", "moons", "--engine", "scalar", "--quiet", "--hidden", "4,3",
                 "--optimizer", "adam", "--lr", "0.05", "--batch-size", "25",
                 "--epochs", "2", "--seed", "3", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    config = metrics["config"]
    assert (config["engine"], config["hidden"], config["optimizer"], config["lr"],
            config["batch_size"], config["epochs"], config["seed"]) == (
        "scalar", [4, 3], "adam", 0.05, 25, 2, 3)
    assert metrics["optimizer"]["name"] == "Adam" and metrics["optimizer"]["lr"] == 0.05
    assert metrics["steps"] == 8  # 100 points in batches of 25, for two epochs
    assert metrics["parameters"] == (2 * 4 + 4) + (4 * 3 + 3) + (3 + 1)
    architecture = checkpoint.load_header(out / "model.npz")["architecture"]
    assert architecture["type"] == "ScalarMLP" and architecture["nouts"] == [4, 3, 1]
    capsys.readouterr()
    assert main(["eval", str(out / "model.npz"), "--data", "moons", "--seed", "3"]) == 0
    assert f"train accuracy {metrics['train_accuracy']:.2%}" in capsys.readouterr().out


@pytest.mark.parametrize("option, message", [
    (["--batch-size", "-1"], "batch_size must be an int of at least 0, got -1"),
    (["--hidden", "16,0"], "hidden must list positive layer sizes"),
    (["--hidden", "a,b"], "--hidden must be sizes like 128,64"),
    (["--epochs", "0"], "epochs must be an int of at least 1, got 0"),
])
def test_bad_training_options_are_refused_in_one_line(option, message, capsys):
    assert main(["train", "moons", "--quiet"] + option) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("chainrule train: error:") and message in err and "\n" not in err
