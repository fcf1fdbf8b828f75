"""The command line: `chainrule train` and `chainrule graph`, as a user runs them.

Most tests run the console script itself, `.venv/bin/chainrule`, in a subprocess: exit
statuses, one-line errors and real signals are what a user (or `timeout`, a container,
a batch scheduler) sees.
"""

import json
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from chainrule import checkpoint
from chainrule.app.cli import main
from chainrule.app.cli_outputs import PICTURES

# The command line, end to end (most tests run it in a subprocess): in make test, not in
# the developer's fast loop.
pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[1] / "src"
CHAINRULE = Path(sys.executable).with_name("chainrule")  # the console script


def environment(path_first=None, **changes):
    """This checkout's code first on the import path (after ``path_first``, if given)."""
    path = os.pathsep.join(str(p) for p in (path_first, SRC) if p)
    return {**os.environ, "PYTHONPATH": path, **changes}


# A command as a terminal starts it: the stop signals at their defaults, whatever the
# test run inherited (a suite started in the background by a script ignores SIGINT, one
# under nohup SIGHUP, and chainrule keeps a signal ignored that it was started with),
# except those listed to ignore (as nohup does). Reset in a small process that then
# execs the command: a preexec_fn would run Python in a forked child of a process that
# holds JAX's threads.
SIGNALS_AS_A_TERMINAL = """\
import os, signal, sys
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(signum, signal.SIG_DFL)
for name in filter(None, sys.argv[1].split(",")):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def as_from_a_terminal(command, ignore=()):
    return [sys.executable, "-c", SIGNALS_AS_A_TERMINAL, ",".join(ignore), *map(str, command)]


def cli(*args, path_first=None, timeout=120, env=None, **kwargs):
    """`chainrule ARGS` through the console script, in a subprocess."""
    return subprocess.run([str(CHAINRULE), *map(str, args)], capture_output=True, text=True,
                          env=env or environment(path_first), timeout=timeout, **kwargs)


def start(*args, ignore=(), **kwargs):
    """`chainrule ARGS` running in the background, stdout and stderr piped (so progress
    is a plain line an epoch on stderr), its signals as from a terminal."""
    return subprocess.Popen(as_from_a_terminal([CHAINRULE, *args], ignore),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment(), **kwargs)


def one_line_error(result, code=2):
    """The run failed with ``code`` and said why in one line, without a traceback."""
    err = result.stderr.strip()
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in err and "\n" not in err, err
    return err


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


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
def test_a_run_that_overflows_says_so_in_one_line(engine):
    err = one_line_error(cli("train", "moons", "--engine", engine, "--lr", "1e300",
                             "--quiet"), code=1)
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
    assert main(["eval", str(out / "model.safetensors"), "--data", "mnist"]) == 0
    printed = capsys.readouterr().out
    assert f"test accuracy {metrics['test_accuracy']:.2%}" in printed
    assert "confusion matrix" in printed


def test_eval_refuses_a_model_trained_on_another_data_set(tmp_path, capsys):
    assert main(["train", "digits", "--quiet", "--epochs", "1", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "model.safetensors"), "--data", "mnist"]) == 2
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
    assert main(["eval", str(tmp_path / "model.safetensors"), "--data", "moons"]) == 0
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
    architecture = checkpoint.load_header(out / "model.safetensors")["architecture"]
    assert architecture["type"] == "ScalarMLP" and architecture["nouts"] == [4, 3, 1]
    capsys.readouterr()
    assert main(["eval", str(out / "model.safetensors"), "--data", "moons", "--seed", "3"]) == 0
    assert f"train accuracy {metrics['train_accuracy']:.2%}" in capsys.readouterr().out


# --- the CLI never loses work and never shows a traceback ------------------------------

@pytest.mark.parametrize("option, message", [
    (["--batch-size", "-1"], "argument --batch-size: expected a number of samples >= 1 "
                             "or 'all', got '-1'"),
    (["--batch-size", "0"], "argument --batch-size: expected a number of samples >= 1 "
                            "or 'all', got '0'"),
    (["--hidden", "16,0"], "--hidden must be positive layer sizes, like 128,64, got 16,0"),
    (["--hidden", "a,b"], "--hidden must be sizes like 128,64, got 'a,b'"),
    (["--epochs", "0"], "--epochs must be an integer >= 1, got 0"),
    (["--steps", "-3"], "--epochs must be an integer >= 1, got -3"),
    (["--lr", "-1"], "--lr must be a finite number > 0, got -1.0"),
    (["--lr", "0"], "--lr must be a finite number > 0, got 0.0"),
    (["--lr", "nan"], "--lr must be a finite number > 0, got nan"),
    (["--lr", "inf"], "--lr must be a finite number > 0, got inf"),
    (["--momentum", "1"], "--momentum must be a number in [0, 1), got 1.0"),
    (["--seed", "-1"], "argument --seed: expected an integer >= 0, got '-1'"),
    (["--engine", "tensor", "--lr", "-1"], "--lr must be a finite number > 0, got -1.0"),
    (["--hidden", "100000000"], "--hidden must be sizes whose network fits in 2 GiB"),
    (["--hidden", "100000000", "--engine", "tensor"],
     "--hidden must be sizes whose network fits in 2 GiB"),
    # never the default network, never a size dropped
    (["--hidden", ""], "--hidden must be sizes like 128,64, got '' (no sizes)"),
    (["--hidden", "10,,10"], "--hidden must be sizes like 128,64, got '10,,10' (an empty "
                             "size between commas)"),
    (["--hidden", "10,"], "(an empty size between commas)"),
    # never the current folder
    (["--out", ""], "argument --out: expected a path, got ''"),
    # options that would do nothing in this run
    (["--data-dir", "/tmp/mnist"], "--data-dir is for mnist's full set; moons is generated, "
                                   "drop --data-dir"),
    (["--no-jit"], "--no-jit is for the tensor engine; the scalar engine never traces its "
                   "steps"),
    (["--engine", "tensor", "--momentum", "0.5"], "--momentum is SGD's; this run's "
                                                  "optimizer is adam (add --optimizer sgd)"),
])
def test_bad_training_options_are_refused_in_one_line_before_any_work(option, message,
                                                                      tmp_path):
    """Through the command itself: exit 2, one line naming the flag, the value and what
    it must be; nothing trained, nothing written (the huge network is never built)."""
    result = cli("train", "moons", "--out", tmp_path / "out", *option, timeout=30)
    err = one_line_error(result)
    assert err.startswith("chainrule train: error:") and message in err
    assert result.stdout == "" and not (tmp_path / "out" / "model.safetensors").exists()


def test_version_and_a_leading_minus_in_an_expression(tmp_path):
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == "chainrule 0.1.0"
    result = cli("graph", "-x*y", "--at", "x=2,y=3", "-o", tmp_path / "g.dot")
    assert result.returncode == 0, result.stderr
    assert "value = -6.0" in result.stdout and "d/dx = -3.0" in result.stdout


def test_graph_into_a_missing_folder_is_one_line(tmp_path):
    err = one_line_error(cli("graph", "x", "--at", "x=1", "-o", tmp_path / "no" / "g.dot"))
    assert err.startswith("chainrule graph: error: -o ") and "does not exist" in err


def test_an_unwritable_out_is_refused_before_training(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for out in (blocker, blocker / "out"):
        result = cli("train", "moons", "--epochs", "50", "--out", out)
        err = one_line_error(result)
        assert f"--out {out}" in err and result.stdout == ""  # no report: no training


@pytest.fixture(scope="module")
def toy_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy")
    assert main(["train", "toy", "--quiet", "--epochs", "3", "--out", str(out)]) == 0
    return out / "model.safetensors"


def test_eval_of_a_regression_reports_its_error(toy_model):
    for extra in ([], ["--data", "toy"]):
        result = cli("eval", toy_model, *extra)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert result.stdout.startswith("toy: train mean squared error ")


def test_eval_on_the_stored_split_and_warnings_off_it(tmp_path):
    """The checkpoint records the data set and its split; eval uses them by default and
    warns (one line) when told to use another split, or another set of that width."""
    out = tmp_path / "digits"
    assert main(["train", "digits", "--quiet", "--epochs", "1", "--seed", "3",
                 "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    split = checkpoint.load_header(out / "model.safetensors")["metadata"]["data"]
    assert split == {"name": "digits", "seed": 3, "data_dir": "", "n_train": 1438,
                     "n_test": 359, "n_features": 64}
    result = cli("eval", out / "model.safetensors")
    assert result.returncode == 0 and result.stderr == ""
    assert f"digits: test accuracy {metrics['test_accuracy']:.2%}" in result.stdout
    result = cli("eval", out / "model.safetensors", "--seed", "1")
    assert result.returncode == 0
    assert "warning" in one_line_error(result, code=0) and "overlaps" in result.stderr

    moons = tmp_path / "moons"
    assert main(["train", "moons", "--quiet", "--engine", "tensor", "--epochs", "1",
                 "--out", str(moons)]) == 0
    result = cli("eval", moons / "model.safetensors", "--data", "circles")
    warning = one_line_error(result, code=0)
    assert "trained on moons, not circles" in warning
    assert result.stdout.startswith("circles: train accuracy")


@pytest.mark.parametrize("metadata", [None, {"data": {"name": "moons", "seed": "x"}},
                                      {"data": ["moons"]}])
def test_eval_of_a_checkpoint_without_a_data_set_needs_data(metadata, tmp_path):
    """An older checkpoint, or one whose record of its data is not one."""
    path = tmp_path / "model.safetensors"
    from chainrule.nn import MLP
    checkpoint.save(MLP([2, 3, 2], rng=0), path, metadata=metadata)
    assert "--data is needed" in one_line_error(cli("eval", path))
    assert cli("eval", path, "--data", "moons").returncode == 0


@pytest.mark.parametrize("architecture, message", [
    ([2, 3, 2], "no architecture this command can rebuild"),
    ({"type": "MLP", "sizes": [10**9, 10**9]}, "architecture has 1,000,000,001,000,000,000 "
                                               "parameters but the file holds 2 numbers"),
    ({"type": "MLP", "sizes": "2,3"}, "'sizes' should list at least two positive"),
    ({"type": "ScalarMLP", "nin": 10**9, "nouts": [10**9]}, "parameters but the file"),
    ({"type": "ScalarMLP", "nin": 2, "nouts": None}, "'nouts' a list of them"),
])
def test_a_checkpoint_with_a_damaged_architecture_is_one_line(architecture, message,
                                                               tmp_path):
    """Checked against the file's own arrays before anything is allocated."""
    path = tmp_path / "model.safetensors"
    checkpoint.save({"w": np.ones(2)}, path, architecture=architecture)
    err = one_line_error(cli("eval", path, "--data", "moons", timeout=30))
    assert err.startswith("chainrule eval: error:") and message in err


def test_eval_into_a_closed_pipe_is_quiet(toy_model, tmp_path):
    """`chainrule eval ... | head -1`: the reader is gone; no BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    digits = tmp_path / "digits"
    assert main(["train", "digits", "--quiet", "--epochs", "1", "--out", str(digits)]) == 0
    process = subprocess.Popen([sys.executable, "-m", "chainrule", "eval",
                                str(digits / "model.safetensors")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    process.stdout.close()  # as `head` does once it has its line
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert err == ""


def test_the_model_and_metrics_come_first_and_a_failing_picture_is_a_warning(tmp_path):
    """matplotlib that fails to draw: the run succeeds, each picture a one-line warning."""
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("def use(backend):\n    pass\n")
    (fake / "matplotlib" / "pyplot.py").write_text(
        "def __getattr__(name):\n    raise RuntimeError('the display is on fire')\n")
    out = tmp_path / "out"
    result = cli("train", "moons", "--epochs", "2", "--quiet", "--out", out,
                 path_first=fake)
    assert result.returncode == 0, result.stderr
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 2 and "Traceback" not in result.stderr
    assert all(w.startswith("chainrule train: warning: could not draw ") and
               "the display is on fire" in w for w in warnings)
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "metrics.json"}
    assert checkpoint.load(out / "model.safetensors")


def test_without_matplotlib_the_run_saves_and_warns_once(tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'matplotlib'\")\n")
    out = tmp_path / "out"
    result = cli("train", "moons", "--epochs", "2", "--quiet", "--out", out,
                 path_first=fake)
    warning = one_line_error(result, code=0)
    assert warning.startswith("chainrule train: warning: no pictures: plots need matplotlib")
    assert {p.name for p in out.iterdir()} == {"model.safetensors", "metrics.json"}


def test_a_reused_out_loses_the_earlier_runs_pictures_only(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("fit.png", "confusion.png", "misclassified.png", "notes.png"):
        (out / name).write_bytes(b"old")
    result = cli("train", "moons", "--quiet", "--epochs", "2", "--out", out)
    assert result.returncode == 0 and result.stderr == ""
    names = {p.name for p in out.iterdir()}
    assert names == {"model.safetensors", "metrics.json", "curves.png", "decision_boundary.png",
                     "notes.png"}
    assert set(PICTURES) >= names - {"model.safetensors", "metrics.json", "notes.png"}


@pytest.mark.parametrize("name, engine", [("SIGINT", "scalar"), ("SIGINT", "tensor"),
                                          ("SIGTERM", "tensor"), ("SIGHUP", "scalar")])
def test_a_stop_signal_saves_the_run_so_far_and_exits_128_plus_the_signal(name, engine,
                                                                         tmp_path):
    """Ctrl-C (SIGINT), and SIGTERM (what `timeout`, `kill`, containers and batch
    schedulers send) and SIGHUP (a closed terminal) alike: a real signal, sent once the
    first epoch is reported; the step ends, the model and the metrics so far are saved
    (marked interrupted), one line, exit 128 + the signal: 130, 143, 129."""
    signum = getattr(signal, name)
    out = tmp_path / "out"
    process = start("train", "moons", "--engine", engine, "--hidden", "4",
                    "--epochs", "100000", "--batch-size", "10", "--out", out)
    first = process.stderr.readline()  # stderr is a pipe: a plain line an epoch
    assert first.startswith("moons: 1/100000 loss ")
    process.send_signal(signum)
    out_text, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum == {"SIGINT": 130, "SIGTERM": 143,
                                                  "SIGHUP": 129}[name], err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    assert last.startswith(f"chainrule train: interrupted by {name} after ")
    assert "of 100,000" in last
    assert f"saved {out / 'model.safetensors'} and {out / 'metrics.json'}" in last
    assert out_text == ""
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["interrupted"] is True and metrics["signal"] == name
    assert metrics["epochs_completed"] >= 1
    assert len(metrics["history"]["loss"]) == metrics["epochs_completed"]
    assert len(metrics["loss_history"]) == metrics["steps"] >= 10
    assert checkpoint.load_header(out / "model.safetensors")["metadata"]["data"]["name"] == "moons"
    result = cli("eval", out / "model.safetensors")
    assert result.returncode == 0 and "moons: train accuracy" in result.stdout


def test_under_timeout_the_finished_epochs_are_kept(tmp_path):
    """`timeout 5 chainrule train ...`: timeout's SIGTERM ends the run, which saves."""
    out = tmp_path / "out"
    result = subprocess.run(as_from_a_terminal(["timeout", "5", CHAINRULE, "train", "moons",
                                                "--engine", "tensor", "--epochs", "10000000",
                                                "--quiet", "--out", out]),
                            capture_output=True, text=True, env=environment(), timeout=60)
    assert result.returncode == 124, result.stderr  # timeout's own status when it kills
    assert result.stderr.startswith("chainrule train: interrupted by SIGTERM after ")
    assert json.loads((out / "metrics.json").read_text())["epochs_completed"] >= 1


def test_nohup_keeps_a_run_going_through_sighup_and_sigterm_still_stops_it(tmp_path):
    """Under nohup SIGHUP is ignored, and stays so: the run goes on."""
    out = tmp_path / "out"

    process = start("train", "moons", "--engine", "tensor", "--hidden", "4", "--epochs",
                    "100000", "--out", out, ignore=["SIGHUP"])  # what `nohup` does
    assert process.stderr.readline().startswith("moons: 1/100000 ")
    process.send_signal(signal.SIGHUP)
    before = process.stderr.readline()  # an epoch reported after the SIGHUP
    assert before.startswith("moons: ") and process.poll() is None
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1].startswith("chainrule train: interrupted by SIGTERM")


def test_sigterm_outside_training_is_one_line_and_leaves_no_partial_file(tmp_path):
    """SIGTERM during a download (a server that accepts and never answers): Python's
    default would end the process on the spot; the command cleans up and says so."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(30)
    folder = tmp_path / "mnist"
    process = start("data", "fetch", "mnist", "--to", folder,
                    "--base-url", f"http://127.0.0.1:{server.getsockname()[1]}/")
    try:
        connection, _ = server.accept()  # the download has started
        time.sleep(0.2)  # and is waiting for an answer
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        connection.close()
    finally:
        server.close()
    assert process.returncode == 143
    assert err == "chainrule data fetch: interrupted by SIGTERM\n"
    assert list(folder.iterdir()) == []  # the partial download removed


def test_progress_into_a_pipe_is_a_plain_line_an_epoch(tmp_path):
    result = cli("train", "moons", "--engine", "tensor", "--epochs", "3")
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert "\r" not in result.stderr and len(lines) == 3
    assert [line.split(" loss")[0] for line in lines] == [f"moons: {k}/3" for k in (1, 2, 3)]


def test_one_epoch_is_singular():
    out = cli("train", "moons", "--quiet", "--engine", "tensor", "--epochs", "1").stdout
    assert "1 epoch," in out and "1 epochs" not in out
    out = cli("train", "toy", "--quiet", "--steps", "1").stdout
    assert "1 step," in out and "1 steps" not in out


@pytest.mark.parametrize("engine, parameters", [("scalar", 2 * 4 + 4 + 4 + 1),
                                                ("tensor", 2 * 4 + 4 + (4 + 1) * 2)])
def test_metrics_count_parameters_as_scalars_on_both_engines(engine, parameters, tmp_path):
    result = cli("train", "moons", "--quiet", "--engine", engine, "--hidden", "4",
                 "--epochs", "1", "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "metrics.json").read_text())["parameters"] == parameters


@pytest.mark.parametrize("raised, code, message", [
    (KeyboardInterrupt, 130, "chainrule eval: interrupted"),
    (MemoryError, 1, "chainrule eval: error: out of memory"),
])
def test_an_interrupt_or_exhausted_memory_outside_training_is_one_line(
        raised, code, message, monkeypatch, capsys):
    from chainrule.app import cli_eval

    def fail(args):
        raise raised()

    monkeypatch.setattr(cli_eval, "run", fail)
    assert main(["eval", "model.safetensors"]) == code
    assert capsys.readouterr().err == message + "\n"


# --- results that look fine and are not -------------------------------------------------

def test_eval_refuses_a_checkpoint_with_a_nan_weight(tmp_path):
    """8 bytes of the payload overwritten with a NaN: not "train accuracy 50.00%", exit 0."""
    out = tmp_path / "run"
    assert cli("train", "moons", "--engine", "tensor", "--hidden", "4", "--epochs", "1",
               "--quiet", "--out", out).returncode == 0
    path = out / "model.safetensors"
    raw = bytearray(path.read_bytes())
    payload = 8 + struct.unpack("<Q", raw[:8])[0]  # safetensors: length, header, arrays
    raw[payload:payload + 8] = struct.pack("<d", math.nan)  # the weights are float64
    path.write_bytes(bytes(raw))
    result = cli("eval", path)
    err = one_line_error(result)
    assert err.startswith(f"chainrule eval: error: {path}: the parameter layers.")
    assert "holds 1 NaN or infinite number (of " in err and "diverged" in err
    assert result.stdout == ""


def test_a_loss_that_grows_by_orders_of_magnitude_is_a_warning(tmp_path):
    """--lr 1e10 keeps the loss finite (1e20 and more): the run ends, and says so."""
    result = cli("train", "moons", "--engine", "tensor", "--lr", "1e10", "--epochs", "5",
                 "--quiet", "--out", tmp_path / "run")
    warning = one_line_error(result, code=0)
    assert warning.startswith("chainrule train: warning: moons: the loss grew from ")
    assert "the learning rate 1e+10 is probably too large" in warning
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["warnings"] == [warning.removeprefix("chainrule train: warning: ")]


@pytest.mark.parametrize("engine", ["scalar", "tensor"])
def test_a_loss_that_becomes_nan_stops_the_run_and_keeps_the_last_finite_model(engine,
                                                                              tmp_path):
    out = tmp_path / "run"
    result = cli("train", "moons", "--engine", engine, "--lr", "1e300", "--hidden", "4",
                 "--quiet", "--out", out)
    err = one_line_error(result, code=1)
    # full batch: step 1 is epoch 1, whose update sends the weights near 1e300
    assert err.startswith("chainrule train: error: moons: the loss became ")
    assert "at step 2 (epoch 2); training diverged, try a smaller learning rate" in err
    assert err.endswith(f"; saved the model after epoch 1 (the last finite one): "
                        f"{out / 'model.safetensors'} and {out / 'metrics.json'}")
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["diverged"] in err and metrics["epochs_completed"] == 1
    assert cli("eval", out / "model.safetensors").returncode == 0  # every number finite


def test_a_diverged_run_without_out_says_nothing_was_saved():
    err = one_line_error(cli("train", "moons", "--lr", "1e300", "--quiet"), code=1)
    assert err.endswith("; nothing saved (no --out)")


def test_the_two_train_accuracies_of_a_run_are_labelled():
    """One epoch of micrograd's demo: 50% over the epoch's own step (the model before
    its update), 75% for the model after it. Both shown, each said for what."""
    lines = cli("train", "moons", "--epochs", "1", "--quiet").stdout.splitlines()
    assert lines[1] == "after training: train accuracy 75.0%"
    assert lines[2].split() == ["during", "the", "epoch", "after"]
    assert lines[3].split() == ["epoch", "loss", "train", "test"]
    assert lines[4].split()[::2] == ["1", "50.0%"]
    assert len(lines) == 5


def test_graph_says_which_variables_the_expression_does_not_use(tmp_path):
    result = cli("graph", "x*y", "--at", "x=2,y=3,z=4", "-o", tmp_path / "g.dot")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[1:4] == [
        "d/dx = 3.0", "d/dy = 2.0", "d/dz = 0.0   (z is not in the expression)"]


@pytest.mark.parametrize("args, message", [
    (["10**400"], "cannot evaluate (at column 1: `10**400`): the result is inf, too large "
                  "for a float"),
    (["1e400"], "the number is too large for a float (at column 1: `1e400`)"),
    (["exp(x)", "--at", "x=1000"], "cannot evaluate (at column 1: `exp(x)`): the result "
                                   "is inf, too large for a float"),
    (["x", "--at", "x=inf"], "x=inf: the value must be a finite number"),
    (["1/x", "--at", "x=1e-200"], "d/dx is -inf: the gradient at x=1e-200 is too large "
                                  "for a float"),
])
def test_graph_refuses_an_infinite_result_as_it_refuses_an_infinite_value(args, message,
                                                                           tmp_path):
    result = cli("graph", *args, "-o", tmp_path / "g.dot")
    assert one_line_error(result) == f"chainrule graph: error: {message}"
    assert not (tmp_path / "g.dot").exists()


# --- paths and pictures --------------------------------------------------------------

def test_out_never_replaces_an_earlier_run_without_force(tmp_path):
    """`chainrule train moons --out out/moons` twice: the second refuses, before any
    training, and names --force; with --force it replaces the run."""
    out = tmp_path / "moons"
    args = ("train", "moons", "--engine", "tensor", "--epochs", "2", "--quiet", "--out", out)
    assert cli(*args).returncode == 0
    before = (out / "model.safetensors").read_bytes()
    result = cli(*args[:-3], "--epochs", "3", "--quiet", "--out", out)
    err = one_line_error(result)
    assert err == (f"chainrule train: error: --out {out}: already holds a run "
                   f"(model.safetensors, metrics.json); add --force to replace it, or "
                   f"choose another folder")
    assert result.stdout == "" and (out / "model.safetensors").read_bytes() == before
    result = cli(*args[:-3], "--epochs", "3", "--quiet", "--out", out, "--force")
    assert result.returncode == 0, result.stderr
    assert json.loads((out / "metrics.json").read_text())["config"]["epochs"] == 3


@pytest.mark.parametrize("output, message", [
    ("folder", "is a folder; expected a file to write, such as {folder}/graph.svg"),
    ("g.jpeg", "cannot tell the picture's format from its suffix '.jpeg'; use .svg, .png, "
               ".pdf, .dot/.gv for the Graphviz source, or .txt for text"),
    ("g", "cannot tell the picture's format without a suffix; use .svg, .png, .pdf, "
          ".dot/.gv for the Graphviz source, or .txt for text"),
])
def test_graph_output_that_cannot_be_a_picture_is_one_line(output, message, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    path = tmp_path / output
    err = one_line_error(cli("graph", "x", "--at", "x=1", "-o", path))
    assert err == f"chainrule graph: error: -o {path}: " + message.format(folder=folder)
    assert "render_graph" not in err and list(tmp_path.iterdir()) == [folder]


def test_data_fetch_into_a_file_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    err = one_line_error(cli("data", "fetch", "mnist", "--to", blocker, timeout=30))
    assert err == f"chainrule data fetch: error: --to {blocker}: is a file, expected a folder"


def test_graph_without_dot_prints_the_graph_as_text_and_warns_as_train_does(tmp_path):
    """One policy for pictures: what cannot be drawn is a warning once the results are
    out (the gradients printed, the text and the DOT source written), exit 0. The graph
    is printed as text, so it can be seen without installing anything."""
    empty = tmp_path / "bin"  # a PATH with no `dot` on it
    empty.mkdir()
    result = cli("graph", "x*y", "--at", "x=2,y=3", "-o", tmp_path / "g.svg",
                 env=environment(PATH=str(empty)))
    warning = one_line_error(result, code=0)
    assert warning.startswith(f"chainrule graph: warning: cannot render {tmp_path / 'g.svg'}: "
                              f"Graphviz's `dot` program was not found. The graph was "
                              f"written as text to {tmp_path / 'g.txt'}, and the DOT source "
                              f"to {tmp_path / 'g.dot'}")
    assert result.stdout.splitlines() == [
        "value = 6.0", "d/dx = 3.0", "d/dy = 2.0",
        "f = x * y   data 6.0000   grad 1.0000",
        "x           data 2.0000   grad 3.0000",
        "y           data 3.0000   grad 2.0000",
        f"wrote {tmp_path / 'g.txt'}", f"wrote {tmp_path / 'g.dot'}"]
    assert "digraph" in (tmp_path / "g.dot").read_text()
    assert (tmp_path / "g.txt").read_text().startswith("f = x * y")


def test_graph_without_the_graphviz_package_prints_the_text_and_warns(tmp_path):
    fake = tmp_path / "fake"
    (fake / "graphviz").mkdir(parents=True)
    (fake / "graphviz" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'graphviz'\")\n")
    result = cli("graph", "x*y", "--at", "x=2,y=3", "-o", tmp_path / "g.svg",
                 path_first=fake)
    warning = one_line_error(result, code=0)
    assert warning == (f"chainrule graph: warning: cannot write {tmp_path / 'g.svg'}: "
                       f"drawing with Graphviz needs the graphviz Python package (pip "
                       f"install 'chainrule[viz]'). The graph was written as text to "
                       f"{tmp_path / 'g.txt'}")
    assert "d/dx = 3.0" in result.stdout and "f = x * y   data 6.0000" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake", "g.txt"]


def test_graph_to_a_txt_file_needs_nothing_and_names_nodes_as_explain_does(tmp_path, capsys):
    out_file = tmp_path / "g.txt"
    assert main(["graph", "x*y + x - 1", "--at", "x=2,y=3", "--explain",
                 "-o", str(out_file)]) == 0
    out = capsys.readouterr().out
    picture = out_file.read_text().splitlines()
    assert [line.split("   ")[0].strip() for line in picture] == [
        "f = v2 + v3", "v3", "v2 = v1 + x", "x", "v1 = x * y", "y"]
    for line in ("f = v2 + v3", "v2 = v1 + x", "v1 = x * y", "v3 = -1.0"):
        assert line in out  # explain defines the same names, the constant too
    assert out.splitlines()[-1] == f"wrote {out_file}"
    assert [p.name for p in tmp_path.iterdir()] == ["g.txt"]


def test_graph_names_the_output_apart_from_the_variables(tmp_path, capsys):
    assert main(["graph", "f * 2", "--at", "f=1", "--explain",
                 "-o", str(tmp_path / "g.txt")]) == 0
    assert capsys.readouterr().out.startswith("g.grad = 1.0   (the start: dg/dg = 1)\n"
                                              "g = f * v1")



def test_the_text_picture_docs_cli_shows_is_the_one_written(tmp_path, capsys):
    """docs/cli.md shows the file `-o graph.txt` writes; test_docs runs the command, and
    this checks the file."""
    page = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    after = page.split('$ chainrule graph "x*y + x - 1" --at x=2,y=3 -o graph.txt\n')[1]
    shown = after.split("```text\n")[1].split("```")[0]
    assert main(["graph", "x*y + x - 1", "--at", "x=2,y=3", "-o",
                 str(tmp_path / "graph.txt")]) == 0
    assert (tmp_path / "graph.txt").read_text() == shown


@pytest.mark.parametrize("argv", [
    ["graph", "x*y", "--at", "x=1,y=2", "-o", "{long}.png"],
    ["data", "fetch", "mnist", "--to", "{long}", "--base-url", "http://127.0.0.1:9"],
])
def test_a_path_too_long_for_the_system_is_one_line_and_exit_2(argv, tmp_path, capsys):
    long = str(tmp_path / ("a" * 300))
    assert main([a.format(long=long) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "File name too long" in err[0], err


# ---------------------------------------------------------------------------------------
# On any machine: threads, progress, help, files only where asked
# ---------------------------------------------------------------------------------------

def test_graph_without_o_prints_the_graph_and_writes_no_file(tmp_path):
    result = cli("graph", "x*y + x", "--at", "x=2,y=3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "d/dx = 4.0" in result.stdout and "v1 = x * y" in result.stdout
    assert list(tmp_path.iterdir()) == []


def test_train_help_opens_with_a_short_description_and_ends_with_the_defaults():
    text = cli("train", "--help").stdout
    description = text.split("\n\n")[1]
    assert len(description.splitlines()) <= 5 and "Defaults" not in description
    table = text[text.index("data sets, and their defaults"):]
    for name in ("toy", "moons", "circles", "spirals", "digits", "mnist"):
        assert f"\n  {name} " in table
    assert max(len(line) for line in text.splitlines()) <= 80


def test_small_products_run_on_one_blas_thread_unless_told():
    from chainrule.app.cli_train import _threads_for
    from chainrule.app.training import Config
    mnist = {"X_train": np.zeros((4000, 784)), "n_classes": 10}
    assert _threads_for(None, Config("mnist", hidden=[256], batch_size=64), mnist) == 1
    assert _threads_for(3, Config("mnist", hidden=[256], batch_size=64), mnist) == 3
    big = Config("mnist", hidden=[4096, 4096], batch_size=1024)
    assert _threads_for(None, big, mnist) is None  # BLAS's own choice


def test_threads_are_a_positive_number():
    err = one_line_error(cli("train", "moons", "--threads", "0"))
    assert err == ("chainrule train: error: argument --threads: expected a number of "
                   "threads >= 1, got '0' (see chainrule train --help)")
    result = cli("train", "moons", "--engine", "tensor", "--epochs", "1", "--threads", "2",
                 "--quiet")
    assert result.returncode == 0, result.stderr


def test_without_threadpoolctl_the_default_runs_and_an_asked_number_says_what_to_install(
        monkeypatch):
    from chainrule.app.cli_train import _blas_threads
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    with _blas_threads(1, asked=False):
        pass
    with pytest.raises(ImportError, match=r"--threads needs threadpoolctl: pip install "
                                          r"'chainrule\[cli\]'"):
        _blas_threads(2, asked=True)
