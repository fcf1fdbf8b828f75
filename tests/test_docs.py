"""Every code block in README.md and docs/*.md runs, and shows what it says it shows.

The convention, for every page: its ```python blocks run in order, in one namespace (the
README's each in a fresh one: a reader copies one block of it, and that block must run
alone), in an empty temporary directory, and a line ``print(...)  # text`` promises that this print
shows ``text`` and the block prints nothing else (a ```text block right after a python
block is instead its whole output; ```python skip is shown, not run: say why). In ```sh
and ```console blocks (``$ `` marks a command in console, and the lines under it, if
any, are its whole output), each ``chainrule ...`` command must exit 0, and any other
command must be listed in NOT_RUN.
"""

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages whose python blocks each run alone: the README's tour is copied a block at a
# time; the docs pages (the tutorial above all) build on their earlier blocks.
SELF_CONTAINED = (ROOT / "README.md",)

# Commands shown to readers that cannot run inside the test suite, and why.
NOT_RUN = (
    "make demo",    # builds a venv and trains for a minute
    "make test",    # would run this very suite
    "make bench",   # minutes of benchmarks, in their own venv
    "pip install",  # needs the network; the test extra is installed already
    "git clone",    # needs the network
    "chainrule data fetch",         # downloads full MNIST (the network)
    "chainrule train mnist --data-dir ~/mnist",   # needs that download
)

# Rendering a picture needs Graphviz's `dot`, which users may not have (it is optional):
# where it is missing, a command that renders still runs (it writes the DOT source and
# warns, exit 0) and the script that renders skips, with the reason, unless
# CHAINRULE_REQUIRE_DOT=1 (CI installs `dot` and sets it: there the picture must be made).
NEEDS_DOT = ("-o graph.svg", "-o graph.png", "-o graph.pdf")
DOT_MISSING = shutil.which("dot") is None and os.environ.get("CHAINRULE_REQUIRE_DOT") != "1"
DOT_REASON = "Graphviz's `dot` is not installed (CI installs it: CHAINRULE_REQUIRE_DOT=1)"

FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)


def code_blocks(text):
    """(language, info after the language, code, line of the code's first line, and the
    ```text block that directly follows, or None)."""
    matches = list(FENCE.finditer(text))
    for match, after in zip(matches, matches[1:] + [None]):
        line = text.count("\n", 0, match.start(3)) + 1
        follows = after and after[1] == "text" and not text[match.end():after.start()].strip()
        yield match[1], match[2].strip(), match[3], line, after[3] if follows else None


def expected_output(code, text_after):
    if text_after is not None:
        return [line.rstrip() for line in text_after.splitlines()]
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.lstrip().startswith("print(") and "#" in line]


def shell_commands(language, code):
    """(words of a command, the output lines shown under it: console blocks only)."""
    commands = []
    for line in code.splitlines():
        if language == "console" and not line.startswith("$ "):
            if commands:
                commands[-1][1].append(line.rstrip())  # the output of the command above
            continue
        words = shlex.split(line[2:] if language == "console" else line, comments=True)
        if words:
            commands.append((words, []))
    return commands


def run_python(code, page, line, namespace):
    """Run a block; its tracebacks name the page and its real line numbers."""
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile("\n" * (line - 1) + code, str(page), "exec"), namespace)
    return [text.rstrip() for text in stdout.getvalue().splitlines()]


def run_shell(words, shown):
    """Run a chainrule command; the output a console block shows must be its output."""
    text = " ".join(words).replace(".venv/bin/chainrule", "chainrule")
    if text.startswith(NOT_RUN):
        return
    assert Path(words[0]).name == "chainrule", (
        f"`{text}` is not a chainrule command; run it, or add it to NOT_RUN with a reason")
    done = subprocess.run([sys.executable, "-m", "chainrule", *words[1:]],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"`{text}` exited {done.returncode}:\n{done.stderr[-2000:]}"
    if not DOT_MISSING and any(flag in text for flag in NEEDS_DOT):
        assert "warning" not in done.stderr, f"`{text}` drew no picture: {done.stderr}"
    if shown:
        assert [line.rstrip() for line in done.stdout.splitlines()] == shown, text


# README's shell blocks train on the moons and MNIST: a slow end-to-end run
RUN_PAGES = [pytest.param(page, marks=pytest.mark.slow) for page in PAGES]


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_code_block_runs_and_shows_what_it_promises(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    blocks = code_blocks(page.read_text())
    for number, (language, info, code, line, text_after) in enumerate(blocks, 1):
        where = f"{page.relative_to(ROOT)}, block {number} ({language}, line {line})"
        try:
            if language == "python" and info != "skip":
                if page in SELF_CONTAINED:
                    namespace = {"__name__": "__main__"}
                shown = run_python(code, page, line, namespace)
                assert shown == expected_output(code, text_after)
            elif language in ("sh", "console"):
                for words, shown in shell_commands(language, code):
                    run_shell(words, shown)
        except Exception as err:
            raise AssertionError(f"{where}: {type(err).__name__}: {err}") from err


def test_each_readme_block_runs_alone(tmp_path, monkeypatch):
    """Quick, for the developer's loop: every python block of the README in a fresh
    namespace (the slow test above also checks their output)."""
    monkeypatch.chdir(tmp_path)
    page = ROOT / "README.md"
    for number, (language, info, code, line, _) in enumerate(
            code_blocks(page.read_text()), 1):
        if language == "python" and info != "skip":
            try:
                run_python(code, page, line, {"__name__": "__main__"})
            except Exception as err:
                raise AssertionError(f"README.md, block {number} (line {line}) does not "
                                     f"run alone: {type(err).__name__}: {err}") from err


def test_readme_starts_with_the_two_commands():
    first_block = (ROOT / "README.md").read_text().split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.splitlines()[0].startswith("make demo")
    assert first_block.splitlines()[1].startswith("make test")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_pictures_a_page_shows_exist(page):
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text()):
        assert (page.parent / image).is_file(), f"{page.name} shows {image}, which is missing"


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
@pytest.mark.skipif(DOT_MISSING, reason=DOT_REASON)
def test_the_doc_pictures_script_makes_every_picture(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_doc_images.py"),
                           "--quick", str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    made = {path.name for path in tmp_path.iterdir()}
    # every picture in docs/images comes from the script: none is made by hand
    assert made == {path.name for path in (ROOT / "docs" / "images").iterdir()}
    for path in tmp_path.iterdir():
        assert 1_000 < path.stat().st_size < 150_000, (path.name, path.stat().st_size)
