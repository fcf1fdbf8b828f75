"""``chainrule train``: the command line's flags made into a run's Config, the run, and
its report (a line for the run, one for the trained model, a few epochs in a table).
What the run leaves in ``--out`` is cli_outputs.py's."""

import contextlib
import signal
import sys
import warnings

from .cli_messages import count, print_error, print_warning
from .cli_outputs import check_out, write_outputs

__all__ = ["run"]


def _flag_message(err):
    """A ConfigError in the command line's words: the flag, not the Config field."""
    value, expected = err.value, err.expected
    if err.name == "hidden" and isinstance(value, list):
        value = ",".join(map(str, value))
        expected = expected.replace("[16, 16]", "128,64")
    return f"--{err.name.replace('_', '-')} must be {expected}, got {value}"


def _config(args):
    """The data set's defaults on the chosen engine, with what the command line sets.
    Raises ValueError (one line) for values a run cannot take, and for options that
    would do nothing in it: a flag that is silently dropped is a run the user did not
    ask for."""
    from .training import CNN_DEFAULTS, DEFAULT_ENGINE, DEFAULTS, Config
    engine = args.engine or DEFAULT_ENGINE[args.task]
    values = dict(DEFAULTS[(args.task, engine)], engine=engine)
    model = getattr(args, "model", None) or "mlp"
    if model == "cnn":
        if args.task not in CNN_DEFAULTS or engine != "tensor":
            raise ValueError(f"--model cnn is for digits and mnist on the tensor engine; "
                             f"this run is {args.task} on the {engine} engine")
        if args.hidden is not None:
            raise ValueError("--hidden sizes the MLP's layers; --model cnn has its own "
                             "(drop --hidden)")
        values.update(CNN_DEFAULTS[args.task], model="cnn")
    for key in ("epochs", "batch_size", "lr", "optimizer", "momentum"):
        if getattr(args, key) is not None:
            values[key] = getattr(args, key)
    if args.hidden is not None:
        values["hidden"] = _hidden_sizes(args.hidden)
    if args.data_dir is not None and args.task != "mnist":
        raise ValueError(f"--data-dir is for mnist's full set; {args.task} is "
                         f"{'built in' if args.task == 'digits' else 'generated'}, "
                         f"drop --data-dir")
    if not args.jit and engine != "tensor":
        raise ValueError(f"--no-jit is for the tensor engine; the {engine} engine never "
                         f"traces its steps, drop --no-jit (or add --engine tensor)")
    if args.momentum is not None and values["optimizer"] != "sgd":
        raise ValueError(f"--momentum is SGD's; this run's optimizer is "
                         f"{values['optimizer']} (add --optimizer sgd)")
    return Config(dataset=args.task, seed=args.seed, data_dir=args.data_dir or "",
                  jit=args.jit, **values)


def _hidden_sizes(text):
    """--hidden 128,64 -> [128, 64]; an empty text or an empty item is refused, never
    read as the default network or skipped."""
    items = text.split(",")
    if any(not item.strip() for item in items):
        why = "no sizes" if not text.strip() else "an empty size between commas"
        raise ValueError(f"--hidden must be sizes like 128,64, got {text!r} ({why})")
    try:
        return [int(item) for item in items]
    except ValueError:
        raise ValueError(f"--hidden must be sizes like 128,64, got {text!r}") from None


# Matrix products smaller than this many multiply-adds run fastest on one thread: more
# threads spend longer waiting for each other than computing (MNIST's 784-256-10 MLP in
# batches of 64: two epochs in 0.9-1.2 s on one thread, 4.5-11.8 s with OpenBLAS's
# default threads on a busy two-core machine).
_SMALL_PRODUCT = 2 ** 26


def _threads_for(asked, config, data):
    """The BLAS threads for this run: ``--threads``, else one where the largest matrix
    product of a step is small, else None (BLAS's own choice)."""
    if asked is not None:
        return asked
    widths = [data["X_train"].shape[1], *config.hidden, data.get("n_classes") or 1]
    batch = config.batch_size or len(data["X_train"])
    largest = batch * max(a * b for a, b in zip(widths, widths[1:]))
    return 1 if config.engine == "scalar" or largest < _SMALL_PRODUCT else None


def _blas_threads(threads, asked):
    """A context that runs NumPy's BLAS on ``threads`` threads (None: as it is). Without
    threadpoolctl, a number the user ``asked`` for is an error; the default is let go."""
    if threads is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        if not asked:
            return contextlib.nullcontext()
        raise ImportError("--threads needs threadpoolctl: pip install "
                          "'chainrule[cli]' (or pip install threadpoolctl)") from None
    return threadpool_limits(limits=threads, user_api="blas")


def run(args):
    """Run ``chainrule train``; returns the exit status."""
    import numpy as np

    from . import training
    try:
        config = _config(args)
        if args.out is not None:
            check_out(args.out, args.force)
        data = training.load_dataset(args.task, config.seed, config.data_dir)
        # Overflow on the way to a diverging loss is reported once, as TrainingDiverged
        # or a TrainingWarning, not as NumPy's warnings with source lines.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), \
                _training_warnings_as_lines(), \
                _blas_threads(_threads_for(args.threads, config, data),
                              asked=args.threads is not None):
            model, metrics = training.train(config, data, show_progress=not args.quiet,
                                            stop_on_interrupt=True)
    except training.ConfigError as err:
        return print_error("train", _flag_message(err))
    except (ImportError, OSError, ValueError) as err:
        return print_error("train", err)
    except training.TrainingDiverged as err:
        return _diverged(args, config, data, err)
    result = (model, data, metrics)
    interrupted = metrics.get("interrupted", False)
    if not interrupted:
        _report(args.task, config, result)
    written = []
    if args.out is not None:
        try:
            written = write_outputs(args.task, config, result, args.out,
                                    pictures=not interrupted)
        except OSError as err:
            return print_error("train", f"--out {args.out}: cannot write the results: "
                                        f"{err.strerror or err}")
    if interrupted:
        done = count(metrics["epochs_completed"], "epoch")
        print(f"chainrule train: interrupted by {metrics['signal']} after {done} of "
              f"{config.epochs:,} ({count(metrics['steps'], 'step')}); {_saved(written)}",
              file=sys.stderr)
        return 128 + signal.Signals[metrics["signal"]].value
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _diverged(args, config, data, err):
    """A run whose loss stopped being finite: its last finite model and the metrics so
    far are saved (marked "diverged"), exit 1."""
    written = []
    if args.out is not None and err.model is not None:
        try:
            written = write_outputs(args.task, config, (err.model, data, err.metrics),
                                    args.out, pictures=False)
        except OSError as write_error:
            return print_error("train", f"{err}; --out {args.out}: cannot write the "
                                        f"results: {write_error.strerror or write_error}")
    epochs = err.metrics["epochs_completed"]
    which = (f"the model after epoch {epochs} (the last finite one)" if epochs else
             "the initial model (no epoch finished)")
    saved = f"saved {which}: {' and '.join(map(str, written))}" if written else _saved([])
    print(f"chainrule train: error: {err}; {saved}", file=sys.stderr)
    return 1


def _saved(written):
    return ("saved " + " and ".join(str(p) for p in written) if written
            else "nothing saved (no --out)")


@contextlib.contextmanager
def _training_warnings_as_lines():
    """A TrainingWarning as the command's one-line warning, when it happens; other
    warnings as Python shows them."""
    from .training import TrainingWarning
    with warnings.catch_warnings():
        warnings.simplefilter("always", TrainingWarning)
        show = warnings.showwarning

        def showwarning(message, category, *args, **kwargs):
            if issubclass(category, TrainingWarning):
                print_warning("train", message)
            else:
                show(message, category, *args, **kwargs)

        warnings.showwarning = showwarning
        yield


def _report(task, config, result):
    """The run in a line, the trained model's accuracies in another, then a few epochs.

    Two accuracies on the training set exist in a run, and both are labelled: the
    table's, a running mean over each epoch's steps while the model learns (free to
    record, as a PyTorch loop's), and the trained model's, measured after training."""
    metrics = result[2]
    rate = metrics.get("samples_per_second")
    time_text = f"{metrics['wall_time_s']:.1f} s" + (f" ({rate:,.0f} samples/s)" if rate
                                                      else "")
    if task == "toy":
        print(f"toy ({config.engine} engine): {count(config.epochs, 'step')}, mean squared "
              f"error {metrics['mse']:.5f}, {time_text}")
        return
    model = ", cnn" if config.model == "cnn" else ""
    print(f"{task} ({config.engine} engine{model}): {count(config.epochs, 'epoch')}, last "
          f"epoch's loss {_loss_text(metrics['loss'])}, {time_text}")
    line = f"after training: train accuracy {metrics['train_accuracy']:.1%}"
    if "test_accuracy" in metrics:
        line += f", test accuracy {metrics['test_accuracy']:.1%}"
    print(line)
    if "history" in metrics and metrics["history"].get("train_accuracy"):
        _print_table(metrics["history"])


def _print_table(history, rows=8):
    """A few epochs of the run: loss and running training accuracy (during the epoch),
    test accuracy (after it)."""
    train = dict(history["train_accuracy"])
    test = dict(history.get("test_accuracy") or [])
    epochs = sorted(train)
    k = min(rows, len(epochs))  # k epochs spread evenly, first and last included
    shown = sorted({epochs[round(i * (len(epochs) - 1) / max(k - 1, 1))] for i in range(k)})
    print(f"{'':>7} {'during the epoch':>18} {'after':>8}")
    print(f"{'epoch':>7} {'loss':>9} {'train':>8} {'test':>8}")
    for epoch in shown:
        test_text = f"{test[epoch]:8.1%}" if epoch in test else f"{'':>8}"
        print(f"{epoch:>7} {_loss_text(history['loss'][epoch - 1]):>9} {train[epoch]:8.1%} "
              f"{test_text}".rstrip())


def _loss_text(loss):
    """Four decimals, or four digits where a diverging run's loss would be 27 wide."""
    return f"{loss:.4f}" if abs(loss) < 1e4 else f"{loss:.3e}"
