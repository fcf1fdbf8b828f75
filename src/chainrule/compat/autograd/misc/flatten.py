"""autograd.misc.flatten: a tree of arrays and numbers as one vector, and back."""

from ....transforms.pytrees import ravel_pytree

__all__ = ["flatten", "flatten_func"]


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


def flatten_func(func, example):
    """``(flattened_func, unflatten, flat_example)``: ``func`` of a tree (shaped like
    ``example``) as a function of one vector, as autograd's: ``flattened_func(v, *args)``
    is ``func(unflatten(v), *args)``.

    >>> from chainrule.autograd.misc.flatten import flatten_func
    >>> norm2 = lambda tree: tree["w"].sum() ** 2 + tree["b"]
    >>> flat_norm2, unflatten, v = flatten_func(norm2, {"w": np.ones(2), "b": 1.0})
    >>> v.tolist(), float(flat_norm2(v))
    ([1.0, 1.0, 1.0], 5.0)
    """
    flat_example, unflatten = flatten(example)

    def flattened_func(flat, *args, **kwargs):
        return func(unflatten(flat), *args, **kwargs)
    return flattened_func, unflatten, flat_example
