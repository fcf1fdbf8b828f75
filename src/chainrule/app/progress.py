"""A progress bar for training: tqdm on a terminal, plain lines otherwise."""

import sys

__all__ = ["progress"]


class _PlainProgress:
    """What tqdm would show, as plain lines: every tenth of the way on a terminal without
    tqdm (an optional extra), every update when the output is a file or a pipe (a log
    gets one line per epoch, not tqdm's carriage-return redraws); with ``file=None``,
    nothing at all (a quiet run)."""

    def __init__(self, total, desc, file, every=None):
        self.total, self.desc, self.file = total, desc, file
        self.n, self.postfix = 0, ""
        self._every = every or max(1, total // 10)

    def set_postfix_str(self, text):
        self.postfix = text

    def update(self, n=1):
        self.n += n
        if self.file is not None and (self.n % self._every == 0 or self.n == self.total):
            print(f"{self.desc}: {self.n}/{self.total} {self.postfix}", file=self.file,
                  flush=True)

    def close(self):
        pass


def _is_terminal(file):
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False


def progress(total, desc, enabled=True, file=None):
    """An object with ``update()``, ``set_postfix_str()`` and ``close()``."""
    file = file or sys.stderr
    if not enabled:
        return _PlainProgress(total, desc, None)
    if not _is_terminal(file):
        return _PlainProgress(total, desc, file, every=1)
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainProgress(total, desc, file)
    return tqdm(total=total, desc=desc, file=file, leave=True, dynamic_ncols=True)
