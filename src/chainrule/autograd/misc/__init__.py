"""autograd.misc: functional optimizers on parameter trees, and flattening a tree."""

from . import flatten, optimizers  # noqa: F401
from .flatten import flatten as flatten_tree  # noqa: F401

__all__ = ["flatten", "optimizers"]
