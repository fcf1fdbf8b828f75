"""The progress bar of `chainrule train`: tqdm when installed, a plain line otherwise,
nothing at all when the run is quiet."""

import builtins
import io

from chainrule.app.progress import progress


def test_a_quiet_bar_prints_nothing_and_opens_no_file(monkeypatch):
    opened = []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a))
    bar = progress(5, "quiet", enabled=False)
    for _ in range(5):
        bar.set_postfix_str("loss 1.0")
        bar.update()
    bar.close()
    assert opened == []


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_without_tqdm_a_plain_line_every_tenth(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)  # import fails
    out = Terminal()
    bar = progress(20, "moons", file=out)
    for k in range(20):
        bar.set_postfix_str(f"loss {k}")
        bar.update()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0] == "moons: 2/20 loss 1" and lines[-1] == "moons: 20/20 loss 19"


def test_with_tqdm_the_bar_on_a_terminal_is_tqdms():
    from tqdm import tqdm
    bar = progress(3, "digits", file=Terminal())
    assert isinstance(bar, tqdm)
    bar.close()


def test_into_a_file_or_pipe_one_plain_line_per_update():
    """A log file gets one line an epoch, no carriage returns."""
    out = io.StringIO()  # not a terminal
    bar = progress(3, "digits", file=out)
    for k in range(3):
        bar.set_postfix_str(f"loss {k}")
        bar.update()
    bar.close()
    assert out.getvalue() == "digits: 1/3 loss 0\ndigits: 2/3 loss 1\ndigits: 3/3 loss 2\n"
