"""ruff over the whole repository (the package, tests, scripts, benchmarks, examples and
notebooks), with pyproject.toml's [tool.ruff] rules: clean, so that any finding is new
and in the change that made it."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    from ruff.__main__ import find_ruff_bin
    result = subprocess.run([find_ruff_bin(), "check", "--no-cache", "--output-format",
                             "concise", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
