"""autograd.scipy.linalg: ``chainrule.scipy.linalg``. autograd's module holds every
name of scipy.linalg (it differentiates sqrtm, solve_sylvester and solve_triangular);
the names here (lu_factor, lu_solve, expm, logm, solve_continuous_lyapunov too) are all
differentiable."""

from ....scipy.linalg import *  # noqa: F401,F403
from ....scipy.linalg import __all__  # noqa: F401
