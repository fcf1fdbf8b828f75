"""autograd.misc: functional optimizers on parameter trees, flattening a tree, and fixed
points differentiated implicitly."""

from . import fixed_points, flatten, optimizers  # noqa: F401

__all__ = ["fixed_points", "flatten", "optimizers"]
