"""``chainrule eval``: a model saved by ``chainrule train --out``, rebuilt from its
checkpoint and measured on the test split it was trained beside, which the checkpoint
records; a warning where the split asked for is not that one."""

from .cli_messages import print_error, print_warning

__all__ = ["run"]


def run(args):
    """Run ``chainrule eval``; returns the exit status."""
    from ..nn import checkpoint
    from . import training
    try:
        header = checkpoint.load_header(args.model)
        state = checkpoint.load(args.model)
        architecture = header["architecture"]
        if isinstance(architecture, dict) and architecture.get("type") == "DigitsCNN":
            model, engine, sizes = _rebuild_cnn(architecture, args.model, state)
        else:
            model, engine, sizes = checkpoint.rebuild_model(architecture, args.model, state)
        checkpoint.refuse_non_finite(state, args.model)
        split = _stored_split(header)
        name = args.data or split.get("name")
        if name is None:
            return print_error("eval", f"--data is needed: {args.model} does not "
                                       f"record the data set it was trained on")
        if args.data_dir and name != "mnist":
            return print_error("eval", f"--data-dir is for mnist's full set, not "
                                       f"{name}; drop --data-dir")
        same = name == split.get("name")
        seed = args.seed if args.seed is not None else (split.get("seed", 0) if same else 0)
        data_dir = args.data_dir if args.data_dir is not None else (
            split.get("data_dir", "") if same else "")
        model.load_state_dict(state)
        data = training.load_dataset(name, seed, data_dir)
        inputs, expected = data["X_train"].shape[1], sizes[0]
        if inputs != expected:
            return print_error("eval", f"the model takes {expected} inputs but {name} "
                                       f"has {inputs} features; was it trained on "
                                       f"another data set?")
    except (checkpoint.CheckpointError, OSError, ImportError, ValueError) as err:
        return print_error("eval", err)
    _warn_about_the_split(split, name, seed, data)
    which = "test" if data["X_test"] is not None else "train"
    samples = len(data[f"y_{which}"])
    if data.get("regression"):
        error = training.mean_squared_error(model, data, engine)
        print(f"{name}: {which} mean squared error {error:.5f} ({samples} samples)")
        return 0
    acc, matrix, _ = training.evaluate(model, data, engine)
    print(f"{name}: {which} accuracy {acc:.2%} ({samples} samples)")
    print("confusion matrix (rows: true class, columns: predicted):")
    width = max(3, len(str(matrix.max())) + 1)
    print("    " + "".join(f"{j:>{width}}" for j in range(len(matrix))))
    for i, row in enumerate(matrix):
        print(f"{i:>3} " + "".join(f"{v:>{width}}" for v in row))
    return 0


def _rebuild_cnn(architecture, path, state):
    """(the CNN of ``--model cnn`` a checkpoint describes, "tensor", [its inputs]); its
    size checked against the file's arrays first, as ``checkpoint.rebuild_model`` does."""
    from .training_engines import DigitsCNN
    side, classes = architecture.get("side"), architecture.get("n_classes")
    channels = architecture.get("channels")
    numbers = [side, classes] + (channels if isinstance(channels, list) else [None])
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in numbers):
        raise ValueError(f"{path}: corrupted architecture: a DigitsCNN needs positive "
                         f"integers side, n_classes and channels, got {architecture!r:.120}")
    described, previous, size = 0, 1, side
    for c in channels:
        described, previous, size = described + (9 * previous + 1) * c, c, size // 2
    described += (previous * size * size + 1) * classes
    held = sum(int(a.size) for a in state.values())
    if described != held:
        raise ValueError(f"{path}: corrupted checkpoint: its architecture has "
                         f"{described:,} parameters but the file holds {held:,} numbers")
    return DigitsCNN(side, classes, channels), "tensor", [side * side]


def _stored_split(header):
    """The data set and split a checkpoint of `chainrule train` records; {} if none,
    or if what it records is not one (a file from elsewhere)."""
    from .training import DATASETS
    metadata = header.get("metadata")
    split = metadata.get("data") if isinstance(metadata, dict) else None
    if not (isinstance(split, dict) and split.get("name") in DATASETS
            and isinstance(split.get("seed"), int) and split["seed"] >= 0
            and isinstance(split.get("data_dir", ""), str)):
        return {}
    return split


def _warn_about_the_split(split, name, seed, data):
    if not split:
        return
    if name != split.get("name"):
        print_warning("eval", f"the model was trained on {split.get('name')}, not "
                              f"{name}: its accuracy here says little")
    elif seed != split.get("seed"):
        print_warning("eval", f"the model was trained on the split of --seed "
                              f"{split.get('seed')}; the test split of --seed "
                              f"{seed} overlaps its training data, so the accuracy "
                              f"is too high")
    elif (split.get("n_train"), split.get("n_test")) != (
            len(data["X_train"]), 0 if data["X_test"] is None else len(data["X_test"])):
        print_warning("eval", f"{name} is not the set the model was trained on: it "
                              f"had {split.get('n_train')} training and "
                              f"{split.get('n_test')} test samples (is --data-dir "
                              f"another copy?)")
