"""The progress of `chainrule train`: tqdm's bar, moving at every step, on a terminal;
plain lines every tenth of the way on a terminal without tqdm; a line an epoch into a
file or a pipe; nothing at all when the run is quiet. Each line says the time left."""

import builtins
import io
import re
import sys

import pytest

from chainrule.app.progress import progress


def run(bar, epochs, steps):
    """What training tells the bar: each step's numbers, then each epoch's."""
    for epoch in range(1, epochs + 1):
        for step in range(1, steps + 1):
            bar.step(f"epoch {epoch}/{epochs} loss {step / 10:.1f} test 75.0%")
        bar.epoch(epoch, f"loss 0.{epoch} test 80.0%")
    bar.close()


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_quiet_bar_prints_nothing_and_opens_no_file(monkeypatch):
    opened = []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a))
    out = Terminal()
    run(progress(2, 5, "quiet", enabled=False, file=out), 2, 5)
    assert opened == [] and out.getvalue() == ""


def test_without_tqdm_a_plain_line_every_tenth_of_the_steps(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the import fails
    out = Terminal()
    run(progress(2, 10, "moons", file=out), 2, 10)
    lines = out.getvalue().splitlines()
    assert len(lines) == 10
    assert re.fullmatch(r"moons: step 2/20 epoch 1/2 loss 0\.2 test 75\.0%, \d+s left",
                        lines[0]), lines[0]
    assert lines[-1].startswith("moons: step 20/20 epoch 2/2 loss 1.0 test 75.0%, ")


def test_with_tqdm_the_bar_on_a_terminal_is_tqdms_and_counts_steps():
    tqdm = pytest.importorskip("tqdm").tqdm
    out = Terminal()
    bar = progress(2, 3, "digits", file=out)
    assert isinstance(bar.bar, tqdm)
    run(bar, 2, 3)
    assert "6/6" in out.getvalue() and "epoch 2/2 loss 0.2 test 80.0%" in out.getvalue()


def test_into_a_file_or_pipe_one_plain_line_an_epoch():
    """A log file gets one line an epoch, no carriage returns."""
    out = io.StringIO()  # not a terminal
    run(progress(3, 4, "digits", file=out), 3, 4)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 3
    assert [line.split(", ")[0] for line in lines] == [
        f"digits: {k}/3 loss 0.{k} test 80.0%" for k in (1, 2, 3)]
    assert all(line.endswith(" left") for line in lines)
