"""Data sets: seeded synthetic sets made on the spot (no downloads)."""

from .synthetic import make_moons, make_toy_regression

__all__ = ["make_moons", "make_toy_regression"]
