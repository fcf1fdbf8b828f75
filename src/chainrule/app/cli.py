"""The ``chainrule`` command: train and evaluate networks, fetch data, draw graphs.

    chainrule train moons --out out/moons          micrograd's demo, on the scalar engine
    chainrule train mnist --out out/mnist          the 5,000-digit subset, tensor engine
    chainrule eval out/mnist/model.safetensors --data mnist
    chainrule data fetch mnist --to ~/mnist        the full set, where a network is
    chainrule graph "x*y + tanh(x)" --at x=2,y=3 -o graph.svg
    chainrule graph "x*y + x" --at x=2,y=3 --explain   each chain-rule step, printed

This module reads the command line (cli_parser.py), hands it to the command's module
(cli_train.py, cli_eval.py, cli_data.py, cli_graph.py) and turns how the command ended
into the exit status. These modules know every other; the engines know nothing of them.

Exit statuses: 0 done (warnings, such as a picture that could not be drawn, are lines
on stderr); 1 a run failed (training diverged; out of memory); 2 a bad argument or
input, said in one line before any work where it can be; 128 + the signal's number when
stopped by a signal: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP; 141 stdout closed by
its reader.
"""

import contextlib
import errno
import os
import signal
import sys
import threading

from . import cli_data, cli_eval, cli_graph, cli_train
from .cli_parser import build_parser

__all__ = ["main"]


def _protect_expression(argv):
    """``graph "-x*y"``: argparse would take an expression that starts with a minus
    for an option. A leading space makes it a positional argument (the expression
    parser skips spaces); option values and everything after ``--`` stay as they are."""
    argv = list(argv)
    command = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if command is None or argv[command] != "graph":
        return argv
    takes_value = {"--at", "-o", "--output"}
    i = command + 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            break
        if arg in takes_value:
            i += 2
            continue
        if (arg.startswith("-") and not arg.startswith("--") and arg != "-h"
                and not arg.startswith("-o")):
            argv[i] = " " + arg
        i += 1
    return argv


def _quiet_stdout():
    """Point stdout at the null device: its reader is gone (``| head``), and Python
    would otherwise fail again flushing it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


_STOPPING = ("SIGTERM", "SIGHUP")  # SIGINT raises KeyboardInterrupt already; no SIGHUP on Windows


class _Stopped(BaseException):
    """SIGTERM or SIGHUP outside a training run: raised like KeyboardInterrupt, so
    cleanups run (a download's partial file, a checkpoint's temporary) and the command
    ends in one line, where Python's default would end the process on the spot."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_raise():
    """While a command runs, SIGTERM and SIGHUP raise _Stopped (training catches them
    first, and stops at the end of its step). An ignored signal stays ignored (nohup)."""
    def handler(signum, frame):
        raise _Stopped(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # where handlers can be set
        for signum in (getattr(signal, n) for n in _STOPPING if hasattr(signal, n)):
            if signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def main(argv=None):
    """Run the command line; returns the exit status: 0, 1 (a run failed), 2 (a bad
    argument or input), 128 + a signal's number (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP),
    141 (stdout closed by its reader).
    """
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(_protect_expression(argv))
    if args.command == "graph":
        args.expression = args.expression.strip()
    # looked up as the command runs, so a test can stand in for one
    commands = {"train": cli_train, "eval": cli_eval, "data": cli_data, "graph": cli_graph}
    name = "data fetch" if args.command == "data" else args.command
    try:
        with _signals_raise():
            status = commands[args.command].run(args)
            sys.stdout.flush()  # here, where a closed pipe can still be answered
        return status
    except KeyboardInterrupt:
        print(f"chainrule {name}: interrupted", file=sys.stderr)
        return 130
    except _Stopped as stopped:
        print(f"chainrule {name}: interrupted by {signal.Signals(stopped.signum).name}",
              file=sys.stderr)
        return 128 + stopped.signum
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except MemoryError:
        print(f"chainrule {name}: error: out of memory", file=sys.stderr)
        return 1
    except OSError as err:  # a path the system refuses (too long, not a folder...)
        print(f"chainrule {name}: error: {_os_error(err)}", file=sys.stderr)
        return 2 if err.errno in _BAD_PATHS else 1


# a path given on the command line that cannot be used: a bad argument (exit 2)
_BAD_PATHS = {errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EROFS,
              errno.ENOENT, errno.EEXIST}


def _os_error(err):
    """One line for an OSError: what went wrong and the path, shortened if long."""
    what = err.strerror or str(err)
    path = err.filename
    if path is None:
        return what
    path = str(path)
    return f"{what}: {path if len(path) <= 80 else path[:38] + '...' + path[-38:]}"


if __name__ == "__main__":
    sys.exit(main())
