"""``micrograd.engine``: the Value class."""

from ..value import Value

__all__ = ["Value"]
