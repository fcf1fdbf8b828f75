"""A progress bar for training: tqdm when it is installed, a plain line otherwise."""

import sys

__all__ = ["progress"]


class _PlainProgress:
    """What tqdm would show, printed every tenth of the way (tqdm is an optional extra);
    with ``file=None``, nothing at all (a quiet run)."""

    def __init__(self, total, desc, file):
        self.total, self.desc, self.file = total, desc, file
        self.n, self.postfix = 0, ""
        self._every = max(1, total // 10)

    def set_postfix_str(self, text):
        self.postfix = text

    def update(self, n=1):
        self.n += n
        if self.file is not None and (self.n % self._every == 0 or self.n == self.total):
            print(f"{self.desc}: {self.n}/{self.total} {self.postfix}", file=self.file)

    def close(self):
        pass


def progress(total, desc, enabled=True, file=None):
    """An object with ``update()``, ``set_postfix_str()`` and ``close()``."""
    file = file or sys.stderr
    if not enabled:
        return _PlainProgress(total, desc, None)
    try:
        from tqdm import tqdm
    except ImportError:
        return _PlainProgress(total, desc, file)
    return tqdm(total=total, desc=desc, file=file, leave=True, dynamic_ncols=True)

