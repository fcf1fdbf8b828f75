"""What pip installs: the wheel carries the license (as an SPDX expression and the file)
and the py.typed marker, so type checkers read chainrule's hints."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # (builds a wheel: a few seconds, and setuptools from the registry)
def test_the_wheel_carries_the_license_and_the_typed_marker(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True)
    wheel, = tmp_path.glob("chainrule-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "chainrule/py.typed" in names
    assert "chainrule/data/files/mnist_5k.csv.gz" in names  # the data sets ship inside
    assert "chainrule/data/files/digits.csv.gz" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert "License-Expression: MIT" in metadata


def test_the_license_file_is_mit():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
