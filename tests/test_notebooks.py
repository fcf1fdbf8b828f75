"""The notebooks in notebooks/ run from top to bottom and show what their text says.

Each is executed in a fresh Jupyter kernel (nbclient, from the test extra); the numbers
a reader is told to look at are checked here. The notebooks are kept in git without
outputs, so a diff shows only what changed in the code and the text.
"""

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks need nbformat (test extra)")
nbclient = pytest.importorskip("nbclient", reason="the notebooks need nbclient (test extra)")
pytest.importorskip("ipykernel", reason="the notebooks need a Python kernel (ipykernel)")

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def executed(path):
    """The notebook run in a fresh kernel; (the notebook, all it printed, as text)."""
    book = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(book, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    printed = []
    for cell in book.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                printed.append(output["text"])
            elif "data" in output:
                printed.append(output["data"].get("text/plain", ""))
    return book, "".join(printed)


def test_there_are_the_three_notebooks():
    assert [path.stem for path in NOTEBOOKS] == ["backprop_first_steps", "micrograd_demo",
                                                 "scientist"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_a_notebook_is_kept_without_outputs(path):
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


@pytest.mark.slow
def test_micrograd_demo_learns_the_moons_and_explains_a_neuron():
    _, printed = executed(NOTEBOOKS[1])
    accuracy = int(re.findall(r"step 40 loss [\d.]+, accuracy (\d+)%", printed)[0])
    assert accuracy >= 90
    assert "x1.grad = -1.5  w1.grad = 1.0" in printed  # the lecture's numbers
    assert "w1.grad += x1.data * v1.grad = 2.0 * 0.5" in printed


@pytest.mark.slow
def test_first_steps_reach_the_six_line_backward():
    _, printed = executed(NOTEBOOKS[0])
    assert "3.0 2.0" in printed and "4.0 4.0" in printed and "4.0 2.0" in printed


@pytest.mark.slow
def test_the_scientists_notebook_checks_each_result_a_second_way():
    _, printed = executed(NOTEBOOKS[2])
    difference = float(re.findall(r"from the closed form: (\S+)", printed)[0])
    assert difference < 1e-10
    assert "5996 entries of 4000000" in printed
    assert "equal to the dense Jacobian: True" in printed
    sensitivity, refit = re.findall(r"\] \[([^\]]+)\] \[([^\]]+)\]", printed)[0]
    assert [float(v) for v in sensitivity.split()] == pytest.approx(
        [float(v) for v in refit.split()], abs=2e-5)
