"""autograd.misc.flatten: a tree of arrays and numbers as one vector, and back."""

from ....transforms.pytrees import ravel_pytree

__all__ = ["flatten"]


def flatten(value):
    """``(vector, unflatten)``: the leaves of nested tuples, lists and dicts, raveled
    and joined into one float vector, and the function that rebuilds the tree from
    such a vector (differentiably).

    >>> from chainrule.autograd.misc.flatten import flatten
    >>> vector, unflatten = flatten({"w": np.ones((2, 2)), "b": 3.0})
    >>> vector.tolist()
    [3.0, 1.0, 1.0, 1.0, 1.0]
    >>> unflatten(vector * 2)["b"]              # a 0-d array, as autograd gives
    array(6.)
    """
    return ravel_pytree(value)
