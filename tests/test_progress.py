"""The progress bar of `chainrule train`: tqdm when installed, a plain line otherwise,
nothing at all when the run is quiet."""

import builtins
import io

from chainrule.progress import progress


def test_a_quiet_bar_prints_nothing_and_opens_no_file(monkeypatch):
    opened = []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a))
    bar = progress(5, "quiet", enabled=False)
    for _ in range(5):
        bar.set_postfix_str("loss 1.0")
        bar.update()
    bar.close()
    assert opened == []


def test_without_tqdm_a_plain_line_every_tenth(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)  # import fails
    out = io.StringIO()
    bar = progress(20, "moons", file=out)
    for k in range(20):
        bar.set_postfix_str(f"loss {k}")
        bar.update()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0] == "moons: 2/20 loss 1" and lines[-1] == "moons: 20/20 loss 19"


def test_with_tqdm_the_bar_is_tqdms():
    from tqdm import tqdm
    bar = progress(3, "digits", file=io.StringIO())
    assert isinstance(bar, tqdm)
    bar.close()
