"""Training progress: a bar that moves at every step on a terminal (tqdm's, or plain
lines every tenth of the way without the optional tqdm), a line an epoch into a file
or a pipe (a log gets no carriage-return redraws), nothing for a quiet run. Each shows
the time left."""

import sys
import time

__all__ = ["progress"]


class _Steps:
    """tqdm's bar over every step of the run, the status after the counts."""

    def __init__(self, bar, epochs):
        self.bar, self.epochs = bar, epochs

    def step(self, status):
        self.bar.set_postfix_str(status, refresh=False)
        self.bar.update()

    def epoch(self, epoch, status):
        self.bar.set_postfix_str(f"epoch {epoch}/{self.epochs} {status}")

    def close(self):
        self.bar.close()


class _Lines:
    """Plain lines: every ``every`` steps (a tenth of the run on a terminal), or at the
    end of each epoch (``every=None``, into a file or pipe), each with the time left;
    with ``file=None``, nothing at all."""

    def __init__(self, epochs, steps, desc, file, every):
        self.epochs, self.total, self.desc, self.file = epochs, epochs * steps, desc, file
        self.every, self.done, self.start = every, 0, time.perf_counter()

    def _left(self):
        elapsed = time.perf_counter() - self.start
        seconds = elapsed * (self.total - self.done) / self.done if self.done else 0.0
        return f"{seconds:.0f}s left" if seconds < 120 else f"{seconds / 60:.0f}min left"

    def step(self, status):
        self.done += 1
        if self.file is not None and self.every and (self.done % self.every == 0
                                                     or self.done == self.total):
            print(f"{self.desc}: step {self.done}/{self.total} {status}, {self._left()}",
                  file=self.file, flush=True)

    def epoch(self, epoch, status):
        if self.file is not None and self.every is None:
            print(f"{self.desc}: {epoch}/{self.epochs} {status}, {self._left()}",
                  file=self.file, flush=True)

    def close(self):
        pass


def _is_terminal(file):
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def progress(epochs, steps, desc, enabled=True, file=None):
    """The progress of ``epochs`` of ``steps`` steps each: an object with
    ``step(status)`` (after each step), ``epoch(epoch, status)`` (after each epoch) and
    ``close()``."""
    file = file or sys.stderr
    if not enabled:
        return _Lines(epochs, steps, desc, None, None)
    if not _is_terminal(file):
        return _Lines(epochs, steps, desc, file, None)
    try:
        from tqdm import tqdm
    except ImportError:
        return _Lines(epochs, steps, desc, file, max(1, epochs * steps // 10))
    return _Steps(tqdm(total=epochs * steps, desc=desc, unit="step", file=file,
                       leave=True, dynamic_ncols=True), epochs)
