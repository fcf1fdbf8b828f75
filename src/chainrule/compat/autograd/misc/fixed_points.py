"""autograd.misc.fixed_points: ``fixed_point(f, a, x0, distance, tol)``, chainrule's
``cr.fixed_point``, differentiated in ``a`` by the implicit function theorem."""

from ....transforms.fixed_point import fixed_point

__all__ = ["fixed_point"]
