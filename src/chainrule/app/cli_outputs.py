"""What a run of ``chainrule train`` leaves in ``--out``: the folder checked before the
run, then the checkpoint and metrics.json, then the pictures (each a warning at worst)."""

import json
import os
import tempfile
from pathlib import Path

from .cli_messages import print_warning

__all__ = ["PICTURES", "check_out", "write_outputs"]

# The pictures `chainrule train --out` draws; a new run removes these (and only these)
# from a reused folder, so no picture of an earlier run stays beside the new model.
PICTURES = ("curves.png", "fit.png", "decision_boundary.png", "confusion.png",
            "misclassified.png")


def check_out(out, force=False):
    """--out is (or can become) a folder this process can write in, and does not hold
    an earlier run unless --force; checked before a run, so no training is lost to a
    typo in a path and no run is lost to the next one."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file, expected a folder")
    held = [name for name in ("model.safetensors", "metrics.json") if (out / name).exists()]
    if held and not force:
        raise ValueError(f"--out {out}: already holds a run ({', '.join(held)}); add "
                         f"--force to replace it, or choose another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write there: {err.strerror or err}") from None


def _split(task, config, data):
    """What `chainrule eval` needs to find the test split the model was trained beside."""
    return {"name": task, "seed": config.seed,
            "data_dir": os.path.abspath(config.data_dir) if config.data_dir else "",
            "n_train": len(data["X_train"]),
            "n_test": 0 if data["X_test"] is None else len(data["X_test"]),
            "n_features": int(data["X_train"].shape[1])}


def write_outputs(task, config, result, out, pictures=True):
    """The checkpoint and metrics.json first (the run's results), then the pictures,
    each of which may fail with a warning only. Returns the files written."""
    from ..nn import checkpoint
    from . import training
    model, data, metrics = result
    evaluation = None
    if pictures and data["image"] is not None:
        evaluation = training.evaluate(model, data, config.engine)
        metrics["confusion_matrix"] = evaluation[1].tolist()
    architecture = {**model.architecture(), "engine": config.engine}
    checkpoint.save(model, out / "model.safetensors", architecture=architecture,
                    metadata={"data": _split(task, config, data)})
    _write_json(out / "metrics.json", metrics)
    written = [out / "model.safetensors", out / "metrics.json"]
    for name in PICTURES:
        try:
            (out / name).unlink()
        except FileNotFoundError:
            pass
    if pictures:
        written += _draw_pictures(task, config, result, out, evaluation)
    return written


def _draw_pictures(task, config, result, out, evaluation=None):
    """The run's pictures; a picture that cannot be drawn is a warning, never an error.
    ``evaluation``: what ``training.evaluate`` gave for an image set."""
    from . import plots
    from . import training
    try:
        plots._pyplot()
    except ImportError as err:
        print_warning("train", f"no pictures: {err}")
        return []
    model, data, metrics = result

    def score(points):  # one output: its sign; two: the margin of class 1
        s = training.scores(model, points, config.engine)
        return s[:, 0] if s.shape[1] == 1 else s[:, 1] - s[:, 0]

    drawings = [("curves.png", lambda path: plots.plot_history(
        metrics["history"], path, title=f"{task} ({config.engine})"))]
    if data.get("regression"):
        from ..data.synthetic import toy_target
        drawings.append(("fit.png", lambda path: plots.plot_toy_fit(
            model, data["X_train"], data["y_train"], toy_target, path, predict=score)))
    elif data["image"] is None:
        drawings.append(("decision_boundary.png", lambda path: plots.plot_decision_boundary(
            model, data["X_train"], data["y_train"], path,
            title=f"{task}: train accuracy {metrics['train_accuracy']:.0%}", predict=score,
            # a finer grid where scoring is one array operation (the scalar engine
            # scores point by point)
            steps=200 if config.engine == "tensor" else 60)))
    else:
        _, matrix, predicted = evaluation or training.evaluate(model, data, config.engine)
        drawings.append(("confusion.png", lambda path: plots.plot_confusion(
            matrix, path, title=f"{task}: test accuracy {metrics['test_accuracy']:.1%}")))
        drawings.append(("misclassified.png", lambda path: plots.plot_misclassified(
            data["X_test"], data["y_test"], predicted, data["image"], path)))
    written = []
    for name, draw in drawings:
        try:
            path = draw(out / name)
        except Exception as err:  # noqa: BLE001 - a picture must never cost the run
            print_warning("train", f"could not draw {out / name}: "
                                   f"{type(err).__name__}: {err}")
            continue
        if path:
            written.append(Path(path))
    return written


def _write_json(path, data):
    """Write to a temporary file, then rename: a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
