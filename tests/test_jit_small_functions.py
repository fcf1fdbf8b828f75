"""cr.jit on small functions' derivatives (issue 47): the rewrites that cut a replay's
NumPy calls and their cost, each checked bit for bit against the program without it.

A Hessian is jacfwd of jacrev: its forward pass pushes an identity of seeds through the
rules, so the program multiplies (n, n) arrays by vectors (a broadcast), reshapes,
broadcasts and makes the same call twice under two spellings (``-x`` and
``np.negative(x)``). ``broadcasts.py`` copies an operand that small arithmetic
broadcasts out to the result's shape once; ``simplify.py`` drops a reshape to an array's
own shape and a ``broadcast_to`` that arithmetic would do anyway, takes an operator for
the ufunc it calls and a constant for its bytes, and calls ``x.reshape`` for
``np.reshape(x)``. A gradient's rules write in place (the gradient of ``x[:19]`` is
added into zeros): ``writes.py`` drops the writes into arrays nobody reads afterwards
and the assignment of a slice to itself, turns a scatter through a permutation
(``np.roll``'s gradient) into a gather, and tells the rewrites above which slots a
write may change, so that they rewrite the rest. A NumPy scalar a ufunc makes and
ufuncs read goes into a 0-d buffer (``passes.zero_d``), and a NumPy scalar constant is
a 0-d array (``simplify.scalar_constants``): NumPy serves a 0-d array faster. Each is compared here with the program without it, and with the
eager run, on the workload's functions (w15: f1, a log density, Lorenz-96) and a few
more, to the bit: signed zeros and infinities included (``identical``, stricter than
``np.array_equal``, which takes -0.0 for 0.0).
"""

import numpy as np
import pytest

import chainrule as cr
import chainrule.numpy as cnp
from chainrule.jit import broadcasts, passes, simplify, writes
from chainrule.jit import program as program_module


@pytest.fixture(autouse=True)
def awkward_numbers_are_expected():
    with np.errstate(all="ignore"):
        yield


def identical(expected, got):
    """The same leaves, dtypes and shapes, every entry the same bits (NaN where NaN)."""
    expected, got = cr.tree_flatten(expected)[0], cr.tree_flatten(got)[0]
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        e, g = np.asarray(e), np.asarray(g)
        assert e.dtype == g.dtype and e.shape == g.shape, (e.dtype, g.dtype, e.shape)
        nan = np.isnan(e)
        assert np.array_equal(nan, np.isnan(g)), (e, g)
        assert np.array_equal(np.signbit(e[~nan]), np.signbit(g[~nan])) and \
            np.array_equal(e[~nan], g[~nan]), (e, g)


# ---------------------------------------------------------------------------------------
# The functions (benchmarks/w15_small_functions.py's, and a few more)
# ---------------------------------------------------------------------------------------

def f1(x):
    return cnp.sum(cnp.sin(x) * x + cnp.exp(-x * x) / (1 + x * x)) + \
        cnp.sum(cnp.tanh(x)) ** 2


_rng = np.random.default_rng(2)
_X = _rng.normal(size=(40, 19))
_Y = _X @ _rng.normal(size=19) * 0.5 + 0.3 * _rng.normal(size=40)


def log_density(theta):
    w, log_sigma = theta[:19], theta[19]
    r = _Y - _X @ w
    return -40 * log_sigma - 0.5 * cnp.exp(-2 * log_sigma) * cnp.sum(r * r) - \
        0.5 * cnp.sum(w * w)


def lorenz96(x):
    return (cnp.roll(x, -1) - cnp.roll(x, 2)) * cnp.roll(x, 1) - x + 8.0


def mixed(x):
    return cnp.sum(cnp.cos(x) * cnp.outer(x, x) / (2.0 + x)) - cnp.prod(x[:3]) + \
        cnp.sum(cnp.maximum(x, 0.25) ** 3)


def rolled(x):
    m = cnp.reshape(x, (2, 4))
    return cnp.sum(cnp.roll(m, 1, axis=1) * m, axis=0) + cnp.roll(m, -3)[1] * m[0]


def picked(x):  # a gradient that scatters with repeats (np.add.at adds twice)
    return cnp.sin(x[np.array([0, 0, 2, -1, 1])]) * x[np.array([3, 3, 1, 0, 2])]


def sliced(x):  # gradients added into slices of zeros, some of them read later
    return cnp.concatenate([x[:3] * x[1:4], x[3:] ** 2]) - cnp.sum(x[::2]) * x


def rows(x):
    m = cnp.reshape(x, (2, -1))
    return cnp.sum(cnp.tanh(m) * cnp.sum(m, axis=0) - m / (1.5 + m * m), axis=1)


# (name, transform, function, argument)
CASES = [
    ("f1 hessian", cr.hessian, f1, np.random.default_rng(1).uniform(-1.5, 1.5, 10)),
    ("f1 grad", cr.grad, f1, np.random.default_rng(1).uniform(-1.5, 1.5, 10)),
    ("f1 hessian, awkward", cr.hessian, f1,
     np.array([0.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -3.0, 40.0, -40.0])),
    ("log density hessian", cr.hessian, log_density, _rng.normal(size=20) * 0.3),
    ("log density grad", cr.grad, log_density, _rng.normal(size=20) * 0.3),
    ("lorenz96 jacrev", cr.jacrev, lorenz96, _rng.normal(size=6)),
    ("lorenz96 jacfwd", cr.jacfwd, lorenz96, _rng.normal(size=6)),
    ("lorenz96 jacrev, zeros", cr.jacrev, lorenz96, np.array([0.0, -0.0, 1, -0.0, 0, 2])),
    ("mixed hessian", cr.hessian, mixed, _rng.uniform(0.1, 2.0, 6)),
    ("rows jacfwd", cr.jacfwd, rows, _rng.normal(size=8)),
    ("rows jacrev float32", cr.jacrev, rows, _rng.normal(size=8).astype(np.float32)),
    ("log density hessian, awkward", cr.hessian, log_density,
     np.concatenate([[0.0, -0.0, np.inf, np.nan, -1e300], _rng.normal(size=14), [-0.0]])),
    ("log density jacrev of grad", lambda f: cr.jacrev(cr.grad(f)), log_density,
     _rng.normal(size=20)),
    ("lorenz96 jacrev, awkward", cr.jacrev, lorenz96,
     np.array([np.inf, -0.0, np.nan, 0.0, -np.inf, 1e308])),
    ("rolled jacrev", cr.jacrev, rolled, _rng.normal(size=8)),
    ("rolled hessian of a sum", cr.hessian, lambda x: cnp.sum(rolled(x)),
     np.array([0.0, -0.0, 1.0, -2.0, np.inf, 3.0, -0.0, 0.5])),
    ("picked jacrev", cr.jacrev, picked, _rng.normal(size=4)),
    ("sliced jacrev", cr.jacrev, sliced, np.array([0.0, -0.0, 2.0, -1.0, np.nan, 3.0])),
    ("sliced hessian of a sum", cr.hessian, lambda x: cnp.sum(sliced(x)),
     np.array([-0.0, -0.0, 2.0, -1.0, 0.0, 3.0])),
]
IDS = [case[0] for case in CASES]


def _no(name):
    return lambda *args, **kwargs: None


# each rewrite, and how to turn it off
OFF = {
    "broadcast copies": (broadcasts, "copy_broadcast_operands", lambda ops, values: ops),
    "own shape": (simplify, "own_shape", _no("own_shape")),
    "broadcast for arithmetic": (simplify, "broadcast_for_arithmetic", _no("bfa")),
    "operators as ufuncs": (simplify, "_ndarray_operator", lambda op, values: False),
    "constants by bytes": (simplify, "_BY_BYTES", -1),
    "as method": (simplify, "as_method", lambda op, values: op),
    "0-d buffers": (passes, "zero_d", lambda *args: False),
    "scalar constants": (simplify, "scalar_constants", lambda op, values: op),
    "dead writes": (writes, "private_arrays", lambda ops, values: {}),
    "self assignments": (writes, "self_assignments", lambda ops, values: ops),
    "permuted scatters": (writes, "permuted_scatters", lambda ops, values: ops),
    "rewrites beside writes": (writes, "written_memory", lambda ops, values: None if any(
        op.writes for op in ops) else set()),
    "every rewrite": (program_module.simplify, "simplify",
                      lambda ops, values, protected: ops),
}


def run(transform, f, x, times=3):
    """The jitted derivative's result at x, replayed (the kept buffers of one run are
    reused by the next, at other numbers: x scaled between)."""
    jitted = cr.jit(transform(f))
    for k in range(times):
        jitted(x * (1 + k))
    return jitted, jitted(x)


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("rewrite", list(OFF))
def test_each_rewrite_keeps_every_bit(case, rewrite, monkeypatch):
    _, transform, f, x = case
    eager = transform(f)(x)
    _, on = run(transform, f, x)
    with monkeypatch.context() as patch:
        module, name, replacement = OFF[rewrite]
        patch.setattr(module, name, replacement)
        if rewrite == "broadcast copies":
            patch.setattr(program_module.broadcasts, name, replacement)
        _, off = run(transform, f, x)
    identical(off, on)
    identical(eager, on)


def source(jitted, x):
    jitted(x)
    return jitted._fast.source


def test_a_hessian_broadcasts_nothing_in_its_arithmetic():
    x = CASES[0][3]
    program = cr.make_program(cr.hessian(f1))(x)
    shapes = program.values
    for op in program.ops:
        fn = simplify.ufunc_of(op)
        if fn in simplify.ARITHMETIC and type(op.outs) is int:
            for a in op.args:
                value = shapes[a.n] if type(a) is simplify.Slot else a
                if isinstance(value, np.ndarray) and value.ndim:
                    assert value.shape == shapes[op.outs].shape, program
    text = source(cr.jit(cr.hessian(f1)), x)
    assert "broadcast_to" not in text and "np.reshape" not in text
    assert "np.transpose" not in text and ".transpose(" in text


def test_a_hessian_makes_each_call_once(monkeypatch):
    x = CASES[0][3]
    calls = len(cr.make_program(cr.hessian(f1))(x))
    with monkeypatch.context() as patch:
        patch.setattr(simplify, "_ndarray_operator", lambda op, values: False)
        patch.setattr(simplify, "_BY_BYTES", -1)
        patch.setattr(simplify, "own_shape", _no("own_shape"))
        patch.setattr(simplify, "broadcast_for_arithmetic", _no("bfa"))
        more = len(cr.make_program(cr.hessian(f1))(x))
    assert calls <= more - 8


def test_an_operator_and_its_ufunc_are_one_call():
    def f(x):
        return cnp.exp(-x) * (1 / (1 + x)) + cnp.exp(cnp.negative(x)) * \
            cnp.divide(1, 1 + x)
    x = np.array([0.5, -0.0, np.inf, np.nan])
    program = cr.make_program(f)(x)
    assert sum(simplify.ufunc_of(op) is np.exp for op in program.ops) == 1, program
    identical(f(x), cr.jit(f)(x))


def test_equal_constants_made_apart_are_one():
    a, b = np.eye(3), np.eye(3)

    def f(x):
        return cnp.sum(a * x) + cnp.sum(b * x) + cnp.sum(-b * x)
    x = np.array([1.0, -0.0, 2.0])
    program = cr.make_program(f)(x)
    assert sum(simplify.ufunc_of(op) is np.multiply for op in program.ops) == 2, program
    identical(f(x), cr.jit(f)(x))


def test_a_reshape_to_its_own_shape_is_dropped_but_not_from_under_a_view():
    def f(x):
        y = cnp.reshape(x * 2.0, (3, 2))
        z = cnp.reshape(y, (3, 2))
        return cnp.transpose(cnp.reshape(z, (3, 2)))[0] + 1.0, z * 3.0
    x = np.arange(6.0) - 2.5
    jitted = cr.jit(f)
    for k in range(3):
        identical(f(x * k), jitted(x * k))
    assert sum(getattr(op.fn, "__name__", "") == "reshape"
               for op in cr.make_program(f)(x).ops) == 1


def test_broadcast_to_is_kept_for_what_is_not_arithmetic():
    def f(x):
        b = cnp.broadcast_to(cnp.reshape(x, (3, 1)), (3, 3))
        return cnp.sin(b) + b * x
    x = np.array([0.5, -0.0, 3.0])
    program = cr.make_program(f)(x)
    assert any(op.fn is np.broadcast_to for op in program.ops)
    identical(f(x), cr.jit(f)(x))


def test_large_arrays_are_broadcast_by_numpy():
    def f(m, v):
        return m * v + m * v[:, None]
    n = int(np.sqrt(broadcasts.SMALL)) + 1
    m, v = np.ones((n, n)), np.arange(n * 1.0)
    program = cr.make_program(f)(m, v)
    assert not any(op.fn is broadcasts.broadcast_copy for op in program.ops)
    identical(f(m, v), cr.jit(f)(m, v))
    small = cr.make_program(f)(m[:4, :4], v[:4])
    assert sum(op.fn is broadcasts.broadcast_copy for op in small.ops) == 2


def test_a_copied_operand_follows_its_array_from_call_to_call():
    def f(x, y):
        return (x * y[:, None]) / (x + y) - y
    jitted = cr.jit(f)
    rng = np.random.default_rng(5)
    for _ in range(4):
        x, y = rng.normal(size=(4, 4)), rng.normal(size=4)
        identical(f(x, y), jitted(x, y))
    assert "[...] = " in jitted._fast.source


def _names(program):
    return [getattr(op.fn, "__name__", type(op.fn).__name__) for op in program.ops]


def test_a_hessian_drops_the_gradient_it_does_not_return(monkeypatch):
    x = CASES[3][3]
    program = cr.make_program(cr.hessian(log_density))(x)
    with monkeypatch.context() as patch:
        patch.setattr(writes, "private_arrays", lambda ops, values: {})
        patch.setattr(writes, "self_assignments", lambda ops, values: ops)
        patch.setattr(writes, "written_memory", lambda ops, values: None)
        plain = cr.make_program(cr.hessian(log_density))(x)
    assert len(program) <= len(plain) - 25, (program, plain)
    assert _names(program).count("setitem") == 0 and _names(program).count("array") == 2


def test_a_write_read_later_is_kept():
    def f(x):
        y = x * 0.0
        y[:2] = x[:2] * 2.0
        z = y + 1.0  # reads y between two writes
        y[1:] += x[1:]
        w = y[::2]
        w *= 3.0  # through a view
        return z, y * y
    jitted = cr.jit(f)
    for x in (np.array([1.0, -0.0, 2.0, np.nan]), np.array([0.0, 3.0, -0.0, -1.0])):
        identical(f(x), jitted(x))


def test_a_write_into_an_input_or_an_output_is_kept():
    def f(x):
        y = x * 2.0
        y[0] = 7.0
        x[1] += 1.0
        return y
    jitted = cr.jit(f)
    for k in range(3):
        a, b = np.array([1.0, 2.0, 3.0]) * k, np.array([1.0, 2.0, 3.0]) * k
        identical(f(a), jitted(b))
        identical(a, b)


def test_a_roll_gradient_is_a_gather():
    x = CASES[5][3]
    program = cr.make_program(cr.jacrev(lorenz96))(x)
    assert "at" not in _names(program) and _names(program).count("take") == 3, program
    picked_program = cr.make_program(cr.jacrev(picked))(CASES[-3][3])
    assert "at" in _names(picked_program)  # repeats: each adds, in order


def test_a_slice_assigned_to_itself_is_dropped():
    def f(x):
        y = x.copy()
        v = y[1:3]
        v += x[:2]
        y[1:3] = v
        return y * 1.5
    program = cr.make_program(f)(np.arange(4.0))
    assert "setitem" not in _names(program), program
    x = np.array([-0.0, np.inf, 1.0, np.nan])
    identical(f(x), cr.jit(f)(x))


# ufuncs whose loops the rewrites might feed a different memory layout (a size-one
# operand in place of its broadcast, ``simplify.size_one_broadcast``)
_TRANSCENDENTAL = [np.sin, np.cos, np.tan, np.exp, np.expm1, np.log, np.log1p, np.tanh,
                   np.sinh, np.cosh, np.arctan, np.arcsin, np.arctanh, np.sqrt, np.cbrt,
                   np.exp2, np.log2, np.log10, np.arcsinh, np.power, np.arctan2,
                   np.hypot, np.logaddexp]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_size_one_operand_gives_its_broadcasts_bits(dtype):
    """``size_one_broadcast`` lets any elementwise ufunc read a size-one array where it
    read its broadcast: every entry must be the bits of the broadcast's."""
    rng = np.random.default_rng(7)
    for fn in _TRANSCENDENTAL:
        for trial in range(20):
            a = np.asarray(rng.normal(scale=(0.1, 1.0, 10.0)[trial % 3], size=1), dtype)
            a = np.abs(a) if trial % 2 else a
            for n in (1, 2, 3, 4, 7, 8, 9, 16, 17, 32, 64):
                wide = np.broadcast_to(a, (n,))
                if fn.nin == 1:
                    pairs = [(fn(np.ascontiguousarray(wide)), fn(a)),
                             (fn(wide), fn(a.reshape(())))]
                else:
                    y = np.asarray(rng.normal(size=n), dtype)
                    pairs = [(fn(wide, y), fn(a, y)), (fn(y, wide), fn(y, a.reshape(())))]
                for full, one in pairs:
                    identical(full, np.broadcast_to(one, full.shape).copy())


def test_scalars_go_into_0d_buffers_where_ufuncs_alone_read_them():
    x = CASES[3][3]
    text = source(cr.jit(cr.hessian(log_density)), x)
    assert "np.add.reduce(t11, None, None, c" in text, text
    program = cr.make_program(lambda x: cnp.sum(x * x) * x)(x)
    assert any(passes.zero_d(op, program.values[op.outs], [program.ops[-1]], [])
               for op in program.ops[:-1] if type(op.outs) is int)

    def f(x):  # a scalar returned, and one read by a reshape: NumPy scalars still
        s = cnp.sum(x * x)
        return s, cnp.reshape(cnp.exp(s), (1,)) * x
    jitted = cr.jit(f)
    for k in range(3):
        got = jitted(x * k)
        identical(f(x * k), got)
        assert type(got[0]) is type(f(x)[0])
