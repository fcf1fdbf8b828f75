"""The README's Python examples run, and print what their comments say.

A line ``print(...)  # text`` in a README code block promises that the print shows
``text``; the blocks run in order, in one namespace, as a reader would paste them.
"""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def promised_output(block):
    return [line.split("#", 1)[1].strip() for line in block.splitlines()
            if line.lstrip().startswith("print(") and "#" in line]


def test_every_python_block_runs_and_prints_what_it_promises():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 3
    namespace = {}
    for block in blocks:
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(compile(block, str(README), "exec"), namespace)
        assert stdout.getvalue().splitlines() == promised_output(block), block


def test_readme_starts_with_the_two_commands():
    first_block = README.read_text().split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.splitlines()[0].startswith("make demo")
    assert first_block.splitlines()[1].startswith("make test")


def test_the_pictures_the_readme_shows_exist():
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README.read_text()):
        assert (README.parent / image).is_file(), image
