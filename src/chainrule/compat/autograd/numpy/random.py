"""autograd.numpy.random: NumPy's random module (random draws are not differentiated)."""

from numpy.random import *  # noqa: F401,F403
