"""The scalar engine's arithmetic. Float functions with clear errors: a ValueError naming
the operation and the value outside its domain (as Python's ``math`` does, but saying
which operation), and inf rather than OverflowError for results too large for a float.
And the same functions of floats and Values alike, which the derivative table is
written with.
"""

import math
from numbers import Real

from ..primitive import Box

__all__ = ["d_power_base", "d_power_exponent", "step", "sign", "value_of", "as_float", "float_exp", "float_log", "float_sqrt", "float_sin", "float_cos",
           "float_pow", "float_sigmoid", "exp", "log", "sqrt", "sin", "cos", "tanh",
           "sigmoid", "relu", "absolute", "power"]


def _domain(function, x, name, valid):
    """function(x) of ``math``, or a ValueError naming the operation, the value and
    where the function is defined (``valid``)."""
    try:
        return function(x)
    except ValueError:
        raise ValueError(f"{name}: {x!r} is outside the domain of {name} ({valid})") from None


def as_float(x):
    if isinstance(x, Real):
        return float(x)
    raise TypeError(f"Value: expected a real number (int or float), got "
                    f"{type(x).__name__} {x!r}")


def float_log(x): return _domain(math.log, x, "log", "x > 0")
def float_sqrt(x): return _domain(math.sqrt, x, "sqrt", "x >= 0")
def float_sin(x): return _domain(math.sin, x, "sin", "finite numbers")
def float_cos(x): return _domain(math.cos, x, "cos", "finite numbers")


def float_exp(x):
    try:
        return math.exp(x)
    except OverflowError:  # inf, not OverflowError, for huge inputs
        return math.inf


def float_pow(a, b):
    if a == 0 and b < 0:
        raise ValueError(f"**: {a!r} ** {b!r} is undefined (0 to a negative power "
                         f"divides by zero)")
    if a < 0 and not float(b).is_integer():
        raise ValueError(f"**: {a!r} ** {b!r} is not a real number (a negative base "
                         f"needs an integer exponent)")
    try:
        return float(a) ** b
    except OverflowError:
        odd = float(b).is_integer() and int(b) % 2 == 1
        return -math.inf if (a < 0 and odd) else math.inf


def float_sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = float_exp(x)  # x < 0: e**x cannot overflow, and 1 + e**-x might
    return e / (1.0 + e)


# ---------------------------------------------------------------------------------------
# Functions of plain numbers and Values alike: the scalar engine's table is written with
# these, so one rule computes a float in an ordinary backward pass and a Value (any box:
# each has these methods) with create_graph.
# ---------------------------------------------------------------------------------------

def exp(x): return x.exp() if isinstance(x, Box) else float_exp(x)
def log(x): return x.log() if isinstance(x, Box) else float_log(x)
def sqrt(x): return x.sqrt() if isinstance(x, Box) else float_sqrt(x)
def sin(x): return x.sin() if isinstance(x, Box) else float_sin(x)
def cos(x): return x.cos() if isinstance(x, Box) else float_cos(x)
def tanh(x): return x.tanh() if isinstance(x, Box) else math.tanh(x)
def sigmoid(x): return x.sigmoid() if isinstance(x, Box) else float_sigmoid(x)
def relu(x): return x.relu() if isinstance(x, Box) else (0.0 if x < 0 else float(x))
def absolute(x): return x.abs() if isinstance(x, Box) else abs(float(x))


def power(a, b):  # ValueError where a ** b is not a real number (0 ** -1, (-8) ** 0.5)
    if isinstance(a, Box) or isinstance(b, Box):
        return a ** b if isinstance(a, Box) else b.__rpow__(a)
    return float_pow(a, b)


# The derivative table's edge cases: a power at 0, and the kinks of relu and abs, where
# the derivative is 0 (PyTorch and JAX agree).

def d_power_base(a, b):
    """d/da a**b = b * a**(b-1); 0 at a = b = 0 (a**0 = 1 whatever a is). Elsewhere the
    formula stands, even at b = 0, so that its derivative in b is right (1/a)."""
    if value_of(b) == 0 and value_of(a) == 0:
        return 0.0
    return b * power(a, b - 1)


def d_power_exponent(ans, a, b):
    """d/db a**b = a**b * ln(a); 0 at a = 0, since 0**b = 0 for every b > 0."""
    if value_of(a) == 0:
        return 0.0
    if value_of(a) < 0:
        raise ValueError(f"**: the derivative in the exponent b of a**b is not real for a "
                         f"negative base a = {value_of(a)!r}; write a constant b as a number")
    return ans * log(a)


def step(x): return 1.0 if value_of(x) > 0 else 0.0    # relu's derivative (a constant)
def sign(x): return (value_of(x) > 0) - (value_of(x) < 0) + 0.0  # abs's: -1, 0 or 1
def value_of(x): return x.data if isinstance(x, Box) else x      # the number inside
