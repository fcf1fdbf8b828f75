"""autograd.numpy.linalg: numpy.linalg's names, chainrule's functions where it has them
(``chainrule.numpy.linalg``)."""

from ....api import numpy as _chainrule_numpy


def __getattr__(name):
    return getattr(_chainrule_numpy.linalg, name)
