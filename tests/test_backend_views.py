"""Writes through views, on another library's arrays.

NumPy's ``x.reshape(-1)``, ``x.T`` and ``x[1:]`` are views: a rule may write into one
to change x. torch may have copied (a reshape of a non-contiguous tensor) and Dask
always does, so the same write would leave x unchanged without a word. chainrule
marks such results; a write into one makes the array it views stale, and reading a
stale array raises. The idioms that stay right everywhere keep working.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch backend needs torch")
da = pytest.importorskip("dask.array", reason="the Dask backend needs dask[array]")

from chainrule.backends import library_of  # noqa: E402

MAKERS = {"torch": lambda: torch.ones((2, 3), dtype=torch.float64),
          "dask": lambda: da.ones((2, 3), chunks=(1, 3))}


def wrapped(name):
    array = MAKERS[name]()
    return library_of(array).adopt(array)


WRITES_THROUGH_A_VIEW = {
    "x.reshape(-1)[0] = 5": lambda x: x.reshape(-1).__setitem__(0, 5.0),
    "x.T[0] = 5": lambda x: x.T.__setitem__(0, 5.0),
    "np.add.at(x.ravel(), [0, 4], 1)": lambda x: np.add.at(np.ravel(x), np.array([0, 4]),
                                                            1.0),
    "v = x.reshape(6); v *= 2": lambda x: x.reshape(6).__imul__(2.0),
    "x[1:][0] = 5 (a view of a view)": lambda x: x[1:].__setitem__(0, 5.0),
    "v = x[0]; v += 1": lambda x: x[0].__iadd__(1.0),
    "x[1:][0] += 1 (x[1:] may be a copy)": lambda x: _augmented_item(x[1:], 0, 1.0),
}


def _augmented_item(x, index, value):
    """``x[index] += value``, as Python runs it."""
    item = x[index]
    item += value
    x[index] = item


@pytest.mark.parametrize("name", list(MAKERS))
@pytest.mark.parametrize("write", list(WRITES_THROUGH_A_VIEW))
def test_reading_an_array_written_through_a_view_raises(write, name):
    x = wrapped(name)
    WRITES_THROUGH_A_VIEW[write](x)
    with pytest.raises(TypeError, match=f"an array of {name} was written through the "
                                        f"result of .* and then read"):
        np.sum(x)


@pytest.mark.parametrize("name", list(MAKERS))
def test_the_idioms_that_are_right_everywhere_keep_working(name):
    x = wrapped(name)
    x[0] += 1.0  # Python writes the sum back into x itself
    d = x.copy().reshape(-1)  # a fresh array, reshaped, then updated: nothing reads
    d *= 2.0                  # the array it views again
    x[1, 2] = 7.0
    total = float(np.asarray(_computed(np.sum(x) + np.sum(d))))
    assert total == (2.0 * 3 + 1.0 * 2 + 7.0) + 2 * (2.0 * 3 + 1.0 * 3)


def _computed(result):
    value = result._value
    return value.compute() if hasattr(value, "compute") else value.numpy()
