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


@pytest.mark.slow  # (builds the source distribution)
def test_the_sdist_carries_what_the_tests_read(tmp_path):
    """Unpacked, the sdist holds every folder the suite runs or reads, so `make test`
    works from it as from a clone."""
    import tarfile
    subprocess.run([sys.executable, "-c", "import setuptools.build_meta as b; "
                    f"b.build_sdist({str(tmp_path)!r})"], check=True, cwd=ROOT,
                   capture_output=True)
    sdist, = tmp_path.glob("chainrule-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for needed in ("Makefile", "LICENSE", "README.md", "pyproject.toml",
                   "docs/tutorial.md", "scripts/make_api_docs.py", "mkdocs.yml",
                   "scripts/docs_site.py", "notebooks", "benchmarks/run.py",
                   "examples", "tests/test_docs.py", "tests/fuzz_programs.py",
                   "src/chainrule/data/files/mnist_5k.csv.gz"):
        assert needed in names, needed
    assert not any("__pycache__" in name for name in names)


@pytest.mark.slow  # (builds both distributions in isolated environments: ~20 s)
def test_the_distributions_pass_twine_check(tmp_path):
    """`python -m build` makes the sdist and, from it, the wheel; `twine check` reads
    them as a package index would, the README rendered as the project's page."""
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    assert len(list(tmp_path.glob("chainrule-*.tar.gz"))) == 1
    assert len(list(tmp_path.glob("chainrule-*-py3-none-any.whl"))) == 1
    result = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                             *map(str, tmp_path.iterdir())], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2
