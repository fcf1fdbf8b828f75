"""The solution of an ordinary differential equation at given times, differentiable by
the adjoint method: ``odeint(func, y0, t, *args)``, with JAX's signature.

    >>> decay = lambda y, t, k: -k * y                       # y' = -k y, y = exp(-k t)
    >>> ys = odeint(decay, 1.0, np.array([0.0, 1.0, 2.0]), 0.5)
    >>> np.round(ys, 6).tolist()
    [1.0, 0.606531, 0.367879]

The forward pass is an adaptive Dormand-Prince 5(4) method, its step chosen so that
the local error estimate stays within ``atol + rtol * |y|`` (in root mean square over
the state); it lands on every time of ``t`` exactly. The gradient is not taken through
its steps (the tape holds one node for the whole solve, whatever the number of steps):
the backward pass solves the adjoint equations backwards in time,

    da/dt = -a . df/dy,    d(args_bar)/dt = -a . df/dargs,

together with the state itself (solved backwards from each stored y(t_i)), with the
same method and tolerances, but with every entry of the local error estimate within
its tolerance: a root mean square over [y, a, args_bar] would let the many entries of
args_bar (a neural network's weights) hide the error of the few of y and a, and of any
single entry of args_bar. a . df/dy and a . df/dargs are ``cr.vjp`` of ``func`` at
each evaluation. Forward mode (``cr.jvp``, ``cr.jacfwd``) solves the sensitivity
equations du/dt = df/dy u + df/dargs v alongside the state (``cr.jvp`` of ``func``).

A right-hand side that is not smooth in t along the solution (a ReLU network, whose
Jacobian jumps where a pre-activation changes sign, so that the adjoint's right-hand
side jumps there; a piecewise func) defeats the pair's error estimate: it sees 0.001 to
0.003 of (jump x step) for a jump in the first 80% of a step, where the error is up to
0.26 of it. Each step also forms a third-order solution from the same stages, whose
difference from the fifth-order one sees at least 0.305 of it anywhere in the step,
and is O(h^4) where the solution is smooth. A step whose third-order estimate exceeds
the tolerance and 10 times its value scaled from the last two accepted steps is taken
to go across a jump (or kink): rejected, it brackets the jump, the steps that follow
bisect the bracket until one across it is short enough for the third-order estimate
to be within the tolerance, and the step size of before resumes (see _solve). On
ReLU networks the solution, the gradient and the tangent then stay within a few times
rtol from 1e-6 to 1e-10 (tests/test_odeint_adjoint_accuracy.py), each kink costing
some ten extra steps. What this rests on is a heuristic: a jump too small to push the
third-order estimate past 10 times its smooth value is not bracketed, and its error is
bounded only by that estimate (up to about 10 times what the smooth parts' would be);
a func that is discontinuous in y itself (a jump of the solution's slope is the case
above; a jump of the solution is not an ODE) is outside what the adjoint method
differentiates.

Each derivative is accurate to the tolerances. A derivative of a derivative (a Hessian,
forward over reverse, a gradient's own graph) differentiates those solves: where the
values a rule receives carry derivatives themselves, the rule writes its adjoint (or
sensitivity) solve as ``odeint`` of the augmented system, whose own rules then apply, to
any order (as JAX's odeint does).
"""

from typing import Any, Callable

import numpy as np

from .. import arrays as xp, rules as ops
from ..primitive import Box, Primitive, raw, shape_of
from ..tensor import Tensor
from ..transforms.functional import jvp, vjp
from ..transforms.pytrees import tree_flatten, tree_unflatten

__all__ = ["odeint"]


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """The solution of dy/dt = func(y, t, *args), y(t[0]) = y0, at each time of ``t``
    (increasing, 1-d), stacked on a leading axis: for a pytree ``y0``, a pytree of the
    same structure whose leaves have that axis in front. Differentiable in ``y0``, in
    every time of ``t`` and in every float array of ``args`` (which may be pytrees),
    by reverse mode (the adjoint method) and by forward mode, to any order.

    ``rtol`` and ``atol`` bound each step's local error estimate; ``mxstep`` is the most
    steps (accepted or not) between two consecutive times, ``hmax`` the longest step.
    A solve that needs more steps than ``mxstep``, or a step too small to advance t,
    raises. ``func`` must depend on what is differentiated only through its arguments:
    a variable it closes over is passed in ``args`` instead.

    >>> rotate = lambda y, t: {"x": -y["v"], "v": y["x"]}     # x = cos t, v = sin t
    >>> ys = odeint(rotate, {"x": 1.0, "v": 0.0}, np.array([0.0, 1.0]))
    >>> np.round(ys["x"], 6).tolist(), np.round(ys["v"], 6).tolist()
    ([1.0, 0.540302], [0.0, 0.841471])
    >>> final = lambda k: odeint(lambda y, t, k: -k * y, 1.0, np.array([0.0, 2.0]), k)[1]
    >>> round(float(cr.grad(final)(0.5)), 6)                  # d/dk exp(-2k) = -2 exp(-2k)
    -0.735759
    >>> round(float(cr.jvp(final, (0.5,), (1.0,))[1]), 6)
    -0.735759
    >>> round(float(cr.grad(cr.grad(final))(0.5)), 5)        # 4 exp(-2k)
    1.47152
    """
    return _odeint(func, y0, t, args, dict(rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax))


def _odeint(func, y0, t, args, solve, largest=False):
    """odeint, its error measured by its largest entry with ``largest`` (see _norm)."""
    times = _checked_times(t)
    system = _System(func, y0, times, args)
    flat = _operation(system, solve, largest)(system.pack(y0, t, args))
    return system.unpack_states(flat)


def _checked_times(t):
    times = raw(t)
    if _traced(times):  # cr.jit's: its values are checked at each run (_times_in)
        if len(times.shape) != 1 or not times.shape[0] or times.dtype.kind not in "iuf":
            raise ValueError(f"odeint: t must be a 1-d array of real times with at least "
                             f"one entry, got shape {times.shape} {times.dtype}")
        return times
    times = np.asarray(times)
    if times.ndim != 1 or times.size == 0:
        raise ValueError(f"odeint: t must be a 1-d array of times with at least one entry, "
                         f"got shape {times.shape}")
    if times.dtype.kind not in "iuf":
        raise ValueError(f"odeint: t must hold real numbers, got dtype {times.dtype}")
    times = times.astype(np.float64)
    if not np.all(np.isfinite(times)):
        raise ValueError(f"odeint: t must be finite, got {times.tolist()!r:.200}")
    steps = np.diff(times)
    if np.any(steps < 0):
        i = int(np.argmax(steps < 0))
        later, earlier = float(times[i + 1]), float(times[i])
        raise ValueError(f"odeint: t must be increasing, but t[{i + 1}]={later!r} comes "
                         f"after t[{i}]={earlier!r}")
    return times


def _traced(x):
    """Whether x is a value of a cr.jit trace (its numbers known only at each run)."""
    return type(x) is not np.ndarray and type(x) in xp.ARRAYS and not hasattr(x, "_lib")


def _times_in(system, z):
    """The times packed in the operation's input: a run's own, checked."""
    return _checked_times(system.split(np.asarray(z, dtype=np.float64))[1])


class _System:
    """``func`` on flat vectors: the state's leaves raveled into one vector, and the
    differentiable leaves of ``args`` (float arrays, traced values) into another. The
    operation's single input is [y0, t, those args]: one input, so one adjoint solve
    gives every gradient at once. Leaves of other kinds (ints, flags) pass unchanged."""

    def __init__(self, func, y0, times, args):
        self.func = func
        y_leaves, self.y_def = tree_flatten(y0)
        self.y_shapes = [shape_of(leaf) for leaf in y_leaves]
        self.y_bounds = _bounds(self.y_shapes)
        self.n = self.y_bounds[-1]
        self.arg_leaves, self.arg_def = tree_flatten(args)
        self.differentiable = [_is_float(leaf) for leaf in self.arg_leaves]
        self.p_shapes = [shape_of(leaf) for leaf, d in zip(self.arg_leaves, self.differentiable)
                         if d]
        self.p_bounds = _bounds(self.p_shapes)
        self.count = len(times)

    def pack(self, y0, t, args):
        y_leaves = tree_flatten(y0)[0]
        p_leaves = [leaf for leaf, d in zip(tree_flatten(args)[0], self.differentiable) if d]
        return ops.concatenate([_flat(leaf) for leaf in y_leaves + [t] + p_leaves])

    def split(self, z):
        """(y0, t, args) of the operation's input vector, or of its gradient."""
        n, m = self.n, self.n + self.count
        return z[..., :n], z[..., n:m], z[..., m:]

    def unpack_states(self, flat):
        """The operation's (times, n) result as the state's tree, the times axis first."""
        return tree_unflatten(self.y_def, [
            ops.reshape(flat[:, start:stop], (self.count,) + shape)
            for shape, start, stop in zip(self.y_shapes, self.y_bounds, self.y_bounds[1:])])

    def f(self, y, t, p):
        """func on the flat state y and flat arguments p, raveled; y and p may be traced."""
        state = tree_unflatten(self.y_def, _pieces(y, self.y_shapes, self.y_bounds))
        pieces = iter(_pieces(p, self.p_shapes, self.p_bounds))
        leaves = [next(pieces) if d else leaf
                  for leaf, d in zip(self.arg_leaves, self.differentiable)]
        out = self.func(state, t, *tree_unflatten(self.arg_def, leaves))
        out_leaves = tree_flatten(out)[0] if out is not None else [None]
        shapes = [shape_of(leaf) for leaf in out_leaves]
        if any(leaf is None for leaf in out_leaves) or \
                [int(np.prod(s)) for s in shapes] != [int(np.prod(s)) for s in self.y_shapes]:
            raise ValueError(f"odeint: func must return dy/dt shaped like y, with leaves of "
                             f"shapes {self.y_shapes}, got {type(out).__name__} with "
                             f"shapes {shapes}")
        return ops.concatenate([_flat(leaf) for leaf in out_leaves])

    def plain_f(self, y, t, p):
        """f on plain numbers, as the solver takes it."""
        out = self.f(y, t, p)
        if isinstance(out, Box) and not (isinstance(out, Tensor) and not out.requires_grad):
            raise TypeError("odeint: func's result depends on a value being differentiated "
                            "that is not among y, t and args (a variable it closes over?); "
                            "pass that value to odeint in args, and to func as an argument")
        return np.asarray(raw(out), dtype=np.float64)


def _is_float(leaf):
    return isinstance(leaf, Box) or np.result_type(leaf).kind == "f"


def _flat(leaf):
    if not isinstance(leaf, Box):  # (a traced value stays one: xp.as_array)
        leaf = xp.as_array(leaf, np.float64)
    return ops.reshape(leaf, (-1,))


def _bounds(shapes):
    return [0] + np.cumsum([int(np.prod(s)) for s in shapes], dtype=int).tolist()


def _pieces(vector, shapes, bounds):
    return [ops.reshape(vector[start:stop], shape)
            for shape, start, stop in zip(shapes, bounds, bounds[1:])]


def _carry_derivatives(*values):
    """Whether a rule's inputs carry derivatives of their own (a second derivative is
    being taken): then the rule is written with odeint itself, differentiable."""
    return any(isinstance(value, Box) for value in values)


def _operation(system, solve, largest):
    """The primitive of the packed input [y0, t, args] for this func, with its rules."""
    n = system.n

    def states(z):
        times = _times_in(system, z)
        y0, _, p = system.split(np.asarray(z, dtype=np.float64))
        found = np.empty((len(times), n))

        def arrive(i, y):
            found[i] = y
            return y
        found[0] = y0
        _solve(lambda y, t: system.plain_f(y, t, p), y0, times, arrive, **solve,
               largest=largest)
        return found

    def adjoint(g, ans, z):
        return _adjoint(system, _times_in(system, z), np.asarray(g, dtype=np.float64),
                        ans, z, solve)

    def tangent(dz, ans, z):
        return _tangent(system, _times_in(system, z), np.asarray(dz, dtype=np.float64),
                        ans, z, solve)

    # the solves run on numbers: xp.call hands them NumPy arrays (under cr.jit, each
    # solve is one call of the program, run again at every call)
    states.__name__ = adjoint.__name__ = tangent.__name__ = "odeint's integration"

    def forward(z):
        return xp.call(states, z)

    def reverse(g, ans, z):
        if _carry_derivatives(g, ans, z):
            return _adjoint_differentiable(system, g, ans, z, solve)
        return xp.call(adjoint, g, ans, z)

    def forward_mode(dz, ans, z):
        if _carry_derivatives(dz, ans, z):
            return _tangent_differentiable(system, dz, ans, z, solve)
        return xp.call(tangent, dz, ans, z)

    op = Primitive(forward, "odeint")
    op.defvjp(reverse)
    op.defjvp(forward_mode)
    return op


def _adjoint(system, times, g, ys, z, solve):
    """The gradient of sum(g * ys) in z = [y0, t, args], from the adjoint a(t) = dL/dy(t)
    solved backwards, in s = -t (so that the solver's times increase), with the state
    (from each stored ys[i]) and the running integral of a . df/dargs."""
    _, _, p = system.split(z)
    n, count = system.n, len(times)
    slopes = np.array([system.plain_f(ys[i], times[i], p) for i in range(count)])
    t_bar = np.einsum("ij,ij->i", g, slopes)  # moving t_i moves y(t_i) by f(y_i, t_i) dt_i

    def dynamics(state, s):
        out, pullback = vjp(lambda y, p: system.f(y, -s, p), state[:n], p)
        a_fy, a_fp = pullback(state[n:2 * n])
        return np.concatenate([-np.asarray(out), np.asarray(a_fy), np.asarray(a_fp)])

    def arrive(j, state):
        i = count - 1 - j
        a = state[n:2 * n]
        if i == 0:  # moving t_0 shifts the start: y(t) moves by -Phi(t, t_0) f(y0, t_0) dt_0
            t_bar[0] = -a @ slopes[0]
        return np.concatenate([ys[i], a + g[i], state[2 * n:]])

    start = np.concatenate([ys[-1], g[-1], np.zeros(len(p))])
    if count == 1:
        t_bar[0] = 0.0  # y(t_0) is y0 wherever t_0 is
        return np.concatenate([g[0], t_bar, np.zeros(len(p))])
    end = _solve(dynamics, start, -times[::-1], arrive, **solve, backwards=True,
                 largest=True)
    return np.concatenate([end[n:2 * n], t_bar, end[2 * n:]])


def _tangent(system, times, dz, ys, z, solve):
    """The tangent of ys along dz = [dy0, dt, dargs]: u(t) = dy(t) solved forwards with
    the state, du/dt = df/dy u + df/dargs dargs, from u(t_0) = dy0 - f(y0, t_0) dt_0;
    then y(t_i) moves by u(t_i) + f(y_i, t_i) dt_i."""
    _, _, p = system.split(z)
    dy0, dt, dp = system.split(dz)
    n, count = system.n, len(times)
    slopes = np.array([system.plain_f(ys[i], times[i], p) for i in range(count)])
    tangents = np.empty((count, n))
    tangents[0] = dy0 - slopes[0] * dt[0]

    def dynamics(state, t):
        out, du = jvp(lambda y, p: system.f(y, t, p), (state[:n], p), (state[n:], dp))
        return np.concatenate([np.asarray(out), np.asarray(du)])

    def arrive(i, state):
        tangents[i] = state[n:]
        return np.concatenate([ys[i], state[n:]])

    if count > 1 and (np.any(tangents[0]) or np.any(dp)):
        _solve(dynamics, np.concatenate([ys[0], tangents[0]]), times, arrive, **solve)
    else:  # no tangent enters the solution: it stays 0
        tangents[1:] = 0.0
    return tangents + slopes * dt[:, None]


def _adjoint_differentiable(system, g, ys, z, solve):
    """``_adjoint``'s gradient written with the table's operations and odeint itself, one
    backward solve of the augmented state [y, a, args_bar] per interval between two
    times (in s = -t), so that its own derivatives are odeint's rules again."""
    _, times, p = system.split(z)
    n, count = system.n, system.count
    slopes = [system.f(ys[i], times[i], p) for i in range(count)]
    t_bars = [ops.sum(g[i] * slopes[i]) for i in range(count)]
    a, p_bar = g[count - 1], p * 0.0
    if count == 1:
        return ops.concatenate([g[0], times * 0.0, p_bar])

    def augmented(state, s, p):
        out, pullback = vjp(lambda y, p: system.f(y, -s, p), state[:n], p)
        a_fy, a_fp = pullback(state[n:2 * n])
        return ops.concatenate([-out, a_fy, a_fp])

    for i in range(count - 1, 0, -1):
        interval = ops.stack([-times[i], -times[i - 1]])
        end = _odeint(augmented, ops.concatenate([ys[i], a, p_bar]), interval, (p,),
                      solve, largest=True)[1]
        a, p_bar = end[n:2 * n], end[2 * n:]
        if i == 1:  # moving t_0 shifts the start (see _adjoint)
            t_bars[0] = -ops.sum(a * slopes[0])
        a = a + g[i - 1]
    return ops.concatenate([a, ops.stack(t_bars), p_bar])


def _tangent_differentiable(system, dz, ys, z, solve):
    """``_tangent`` written with odeint itself: the state and its tangent solved together
    forwards, differentiable by odeint's own rules."""
    y0, times, p = system.split(z)
    dy0, dt, dp = system.split(dz)
    n, count = system.n, system.count
    slopes = ops.stack([system.f(ys[i], times[i], p) for i in range(count)])
    start = dy0 - slopes[0] * dt[0]

    def augmented(state, t, p, dp):
        out, du = jvp(lambda y, p: system.f(y, t, p), (state[:n], p), (state[n:], dp))
        return ops.concatenate([out, du])

    if count == 1:
        tangents = ops.reshape(start, (1, n))
    else:
        tangents = odeint(augmented, ops.concatenate([ys[0], start]), times, p, dp,
                          **solve)[:, n:]
    return tangents + slopes * ops.reshape(dt, (count, 1))


# Dormand and Prince's 5(4) pair: the stages' times and weights, the fifth-order
# solution's weights (whose last stage is the derivative at the step's end, reused by
# the next step), and the difference from the embedded fourth-order one (the error).
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = [np.array(row) for row in (
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])]
_B = np.append(_A[6], 0.0)
_ERROR = _B - np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200,
                        187 / 2100, 1 / 40])


def _third_order_weights():
    """Weights of a third-order solution on the pair's stages (sum b = 1, b.c = 1/2,
    b.c^2 = 1/3, b.A c = 1/6), with b[1] = 0, b[4] = 1, b[5] = -1: the choice whose
    difference from the fifth-order solution sees a jump of the right-hand side anywhere
    in a step with at least 0.305 of the jump times h (the fifth-order solution is off
    by at most 0.26 of it), where the pair's own estimate sees 0.001 to 0.003 of it for
    a jump in the first 80% of the step."""
    a = np.zeros((7, 7))
    for i, row in enumerate(_A):
        a[i, :i] = row
    conditions = np.array([np.ones(7), _C, _C ** 2, a @ _C])
    b = np.zeros(7)
    b[4], b[5] = 1.0, -1.0
    free = [0, 2, 3, 6]
    b[free] = np.linalg.solve(conditions[:, free],
                              np.array([1.0, 1 / 2, 1 / 3, 1 / 6]) - conditions @ b)
    return b


# each step's two estimates at once: the pair's error, and the jump detector's
_ESTIMATES = np.array([_ERROR, _B - _third_order_weights()])


def _norm(x, scale, largest=False):
    """x in units of scale: its root mean square, or with ``largest`` its largest entry
    (the adjoint's solve, where a mean over its many parameter integrals would hide the
    error of the few entries of the state and adjoint, and of any single integral)."""
    if not x.size:
        return 0.0
    ratio = np.abs(x / scale)
    return float(np.max(ratio)) if largest else float(np.sqrt(np.mean(ratio ** 2)))


def _dopri_step(rhs, y, slope, t, h, rtol, atol, largest=False):
    """One step: the new state, its slope, and two estimates in units of the tolerance:
    the pair's error (at most 1: accept) and the third-order one (see _judge)."""
    k = np.empty((7, y.size))
    k[0] = slope
    for i in range(1, 7):
        k[i] = rhs(y + h * (_A[i] @ k[:i]), t + _C[i] * h)
        if i == 5:
            new = y + h * (_A[6][:6] @ k[:6])
            k[6] = rhs(new, t + h)
            break
    error, jump = h * (_ESTIMATES @ k)
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(new))
    return new, k[6], _norm(error, scale, largest), _norm(jump, scale, largest)


def _judge(error, jump, h, last):
    """The step's error ratio (at most 1: accept), and whether the right-hand side seems
    to jump or kink within it. On a smooth solution the third-order estimate ``jump``
    is O(h^4), and the pair's estimate sets the step; a jump makes it O(h), far above
    its value scaled from the last accepted steps, ``last`` = [(jump, h)]: then it is
    the one held to the tolerance, bounding the fifth-order solution's error, which
    the pair's own estimate does not see."""
    if jump <= 1.0:
        return error, False
    # scaled from each of the last two accepted steps, the smaller: one that went
    # across an unseen jump would raise the expectation past the next jump. (The first
    # step, with nothing to scale from, is held to both estimates.)
    expected = min((jump_then * (h / h_then) ** 4 for jump_then, h_then in last),
                   default=0.0)
    if jump > 10.0 * expected:
        return max(error, jump), True
    return error, False


def _first_step(rhs, y, slope, t, rtol, atol, largest=False):
    """A first step whose error should be near the tolerance (Hairer, Norsett and
    Wanner's estimate from the first two derivatives)."""
    scale = atol + rtol * np.abs(y)
    d0, d1 = _norm(y, scale, largest), _norm(slope, scale, largest)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    d2 = _norm(rhs(y + h0 * slope, t + h0) - slope, scale, largest) / h0
    h1 = max(1e-6, h0 * 1e-3) if max(d1, d2) <= 1e-15 else (0.01 / max(d1, d2)) ** 0.2
    return min(100 * h0, h1)


def _solve(rhs, state, times, arrive, rtol, atol, mxstep, hmax, backwards=False,
           largest=False):
    """Solve d state/dt = rhs(state, t) from ``state`` at times[0] through the
    increasing ``times``, landing on each. ``arrive(i, state)`` takes the state reached
    at times[i] and gives the one to go on from (a jump, or the same). Returns the last
    state reached. ``backwards``: the times are -t (the adjoint's), for the errors.
    ``largest``: each step's error is its largest entry's, not the root mean square.

    A step rejected as rough (see _judge) brackets a jump of the right-hand side
    between t and its end: the steps that follow bisect that interval until one across
    the jump is short enough to be accurate (the third-order estimate, first order in
    the step across a jump, says how short), then go on with the step size of before."""
    sign, what = (-1.0, " (solving the adjoint backwards)") if backwards else (1.0, "")
    t = float(times[0])
    slope, h, accepted, bracket = rhs(state, t), None, [], None
    for i in range(1, len(times)):
        begin, end, steps = t, float(times[i]), 0
        while t < end:
            if steps >= mxstep:
                raise ValueError(f"odeint: more than mxstep={mxstep} steps from "
                                 f"t={sign * begin!r} to t={sign * end!r}{what}; the equation "
                                 f"may be stiff or its solution blow up, or mxstep is too "
                                 f"small for the tolerances")
            steps += 1
            if h is None:
                h = _first_step(rhs, state, slope, t, rtol, atol, largest)
            length, across = _step_length(t, min(h, hmax), bracket)
            last = length >= end - t
            step = end - t if last else length
            across = across and step == length
            if t + step == t:
                raise ValueError(f"odeint: the step size fell to {step!r} at "
                                 f"t={sign * t!r}{what}, below what can advance t; the "
                                 f"equation may be stiff or its solution blow up (or "
                                 f"func returned NaN)")
            new, new_slope, error, jump = _dopri_step(rhs, state, slope, t, step, rtol,
                                                      atol, largest)
            ratio, rough = _judge(error, jump, step, accepted)
            if ratio <= 1.0:
                t = end if last else t + step
                state, slope = new, new_slope
                if not across:  # (one across a jump says nothing of the smooth parts)
                    accepted = accepted[-1:] + [(jump, step)]
                factor = 10.0 if ratio == 0.0 else min(10.0, 0.9 * ratio ** -0.2)
                # a step cut short to land on `end` says nothing against the longer one
                h = max(h, step * factor) if last else step * factor
                if bracket is not None and (across or last):
                    h, bracket = bracket[2], None
            elif rough:  # a jump lies before t + step; a step across it of error 1 is
                # step / ratio long, the error there being first order in the step
                smooth_h = h if bracket is None else bracket[2]
                bracket = (t + step, 0.9 * step / ratio, smooth_h)
            else:  # (NaN too: a step into a region where func is undefined)
                factor = 0.9 * ratio ** -0.2 if ratio == ratio else 0.2
                h = step * max(0.2, factor)
        jumped = arrive(i, state)
        if jumped is not state:
            state, slope = jumped, rhs(jumped, t)
    return state


def _step_length(t, h, bracket):
    """The next step's length from t: h, or with a jump bracketed in (t, end] (bracket
    = (end, length of an accurate step across it, step size of before)), the half of
    that interval, or all of it once it is short enough; and whether it goes across."""
    if bracket is None:
        return h, False
    end, accurate, _ = bracket
    if end - t <= accurate:
        return min(end - t, h), end - t <= h
    return min((end - t) / 2, h), False
