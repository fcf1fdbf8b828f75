"""odeint's gradients on neural ODEs (few states, hundreds of parameters) against the
forward sensitivities solved by SciPy's DOP853 at rtol=atol=1e-13: the adjoint's
backward solve keeps every entry of [y, a, args_bar] within the tolerances, so that the
parameters' many integrals do not hide the error of the state and adjoint. On a ReLU
network the adjoint's right-hand side jumps wherever a pre-activation changes sign:
the solver finds those jumps (a third-order estimate, first order in the step across a
jump, brackets each and bisects to it), and the gradient follows the tolerance as on a
smooth network. That reference is itself checked against the sensitivities solved
piece by piece between the kinks, each located as an event."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.scipy.integrate import odeint

scipy_integrate = pytest.importorskip("scipy.integrate")


class NeuralODE:
    """dy/dt = W2 act(W1 y + b1) + b2, the parameters one flat vector."""

    def __init__(self, rng, n, hidden, act, scales, y0, times, g):
        self.n, self.hidden, self.act = n, hidden, act
        self.shapes = [(hidden, n), (hidden,), (n, hidden), (n,)]
        self.p = np.concatenate([rng.normal(size=s).ravel() * c
                                 for s, c in zip(self.shapes, scales)])
        self.y0, self.times, self.g = y0, times, g

    def unpack(self, p):
        out, i = [], 0
        for shape in self.shapes:
            k = int(np.prod(shape))
            out.append(p[i:i + k].reshape(shape))
            i += k
        return out

    def f(self, y, t, p):
        w1, b1, w2, b2 = self.unpack(p)
        z = w1 @ y + b1
        return w2 @ (cr.tanh(z) if self.act == "tanh" else cr.maximum(z, 0.0)) + b2

    def loss(self, y0, p, tol):
        return cr.sum(odeint(self.f, y0, self.times, p, rtol=tol, atol=tol) * self.g)

    def reference(self):
        """d loss / d[y0, p] from the sensitivities S = dy/d[y0, p]."""
        n, m = self.n, self.n + self.p.size
        w1, b1, w2, _ = self.unpack(self.p)

        def rhs(t, state):
            y, s = state[:n], state[n:].reshape(n, m)
            z = w1 @ y + b1
            h = np.tanh(z) if self.act == "tanh" else np.maximum(z, 0.0)
            dh = 1.0 - h ** 2 if self.act == "tanh" else (z > 0).astype(float)
            jp = np.concatenate([  # df/dW1, df/db1, df/dW2, df/db2
                np.einsum("ij,j,k->ijk", w2, dh, y).reshape(n, -1), w2 * dh,
                np.einsum("ab,j->abj", np.eye(n), h).reshape(n, -1), np.eye(n)], axis=1)
            ds = (w2 * dh) @ w1 @ s
            ds[:, n:] += jp
            return np.concatenate([w2 @ h + self.unpack(self.p)[3], ds.ravel()])

        start = np.concatenate([self.y0, np.eye(n, m).ravel()])
        sol = scipy_integrate.solve_ivp(rhs, (self.times[0], self.times[-1]), start,
                                        method="DOP853", rtol=1e-13, atol=1e-13,
                                        t_eval=self.times)
        return sum(self.g[i] @ sol.y[n:, i].reshape(n, m) for i in range(len(self.times)))

    def reference_between_kinks(self):
        """The same sensitivities for a ReLU network, solved between its kinks: on each
        piece the activation pattern is fixed (the system is linear there), and the
        piece ends where a pre-activation reaches 0 (an event, located by SciPy)."""
        n, m = self.n, self.n + self.p.size
        w1, b1, w2, b2 = self.unpack(self.p)

        def rhs(t, state, on):
            y, s = state[:n], state[n:].reshape(n, m)
            h = on * (w1 @ y + b1)
            jp = np.concatenate([
                np.einsum("ij,j,k->ijk", w2, on, y).reshape(n, -1), w2 * on,
                np.einsum("ab,j->abj", np.eye(n), h).reshape(n, -1), np.eye(n)], axis=1)
            ds = (w2 * on) @ w1 @ s
            ds[:, n:] += jp
            return np.concatenate([w2 @ h + b2, ds.ravel()])

        def pattern(y):  # a unit at its kink is on if its pre-activation is rising
            z = w1 @ y + b1
            rising = w1 @ (w2 @ np.maximum(z, 0.0) + b2) > 0
            return np.where(np.abs(z) < 1e-9 * (1 + np.abs(b1)), rising, z > 0).astype(float)

        def leaving(j, side):  # unit j's pre-activation reaching 0 from its side
            event = lambda t, state, on: side * (w1[j] @ state[:n] + b1[j])
            event.terminal, event.direction = True, -1
            return event

        state, t = np.concatenate([self.y0, np.eye(n, m).ravel()]), self.times[0]
        found = {0: state[n:].reshape(n, m)}
        while t < self.times[-1]:
            on = pattern(state[:n])
            events = [leaving(j, 2 * on[j] - 1) for j in range(self.hidden)]
            sol = scipy_integrate.solve_ivp(rhs, (t, self.times[-1]), state, method="DOP853",
                                            rtol=1e-13, atol=1e-13, events=events, args=(on,),
                                            dense_output=True)
            for i, ti in enumerate(self.times):
                if t < ti <= sol.t[-1]:
                    found[i] = sol.sol(ti)[n:].reshape(n, m)
            state, t = sol.y[:, -1], sol.t[-1]
        return sum(self.g[i] @ found[i] for i in range(len(self.times)))

    def reverse_error(self, tol, reference):
        gy, gp = cr.grad(self.loss, argnums=(0, 1))(self.y0, self.p, tol)
        ours = np.concatenate([np.asarray(gy), np.asarray(gp)])
        return np.linalg.norm(ours - reference) / np.linalg.norm(reference)

    def forward_error(self, tol, reference, direction):
        _, ours = cr.jvp(lambda y0, p: self.loss(y0, p, tol), (self.y0, self.p),
                         (direction[:self.n], direction[self.n:]))
        return abs(float(ours) - reference @ direction) / abs(reference @ direction)


def smooth_problem(seed):
    """4 states, a 4-64-4 tanh network (580 parameters), over t in [0, 2]."""
    rng = np.random.default_rng(seed)
    return NeuralODE(rng, 4, 64, "tanh", (1.0, 0.5, 1.5 / 8, 0.1),
                     rng.normal(size=4), np.array([0.0, 2.0]), rng.normal(size=(2, 4)))


def ode_net_problem(seed):
    """autograd's examples/ode_net.py: 2 states, a 2-150-2 ReLU network of weights
    N(0, 0.1^2) (752 parameters), y0 = (2, 0), 30 times over [0, 1.5], an L1 loss's
    weights (+-1 / 60)."""
    rng = np.random.default_rng(seed)
    times = np.linspace(0.0, 1.5, 30)
    return NeuralODE(rng, 2, 150, "relu", (0.1,) * 4, np.array([2.0, 0.0]), times,
                     rng.choice([-1.0, 1.0], size=(30, 2)) / 60)


@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_the_reverse_gradient_of_a_smooth_neural_ode_is_within_10x_of_rtol(tol):
    problem = smooth_problem(1)
    assert problem.reverse_error(tol, problem.reference()) < 10 * tol


@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_the_forward_tangent_of_a_smooth_neural_ode_is_within_10x_of_rtol(tol):
    problem = smooth_problem(2)
    direction = np.random.default_rng(3).normal(size=problem.n + problem.p.size)
    assert problem.forward_error(tol, problem.reference(), direction) < 10 * tol


def test_the_reference_on_a_relu_network_agrees_with_the_one_solved_between_kinks():
    problem = ode_net_problem(4)
    between = problem.reference_between_kinks()
    assert np.linalg.norm(problem.reference() - between) < 1e-9 * np.linalg.norm(between)


@pytest.mark.parametrize("tol", [1e-6, 1e-8, 1e-10])
def test_the_reverse_gradient_of_a_relu_neural_ode_is_within_10x_of_rtol(tol):
    """The kinks make the adjoint's right-hand side jump (with the pair's error estimate
    alone setting the steps, the gradient is off by 1.2e-5 at rtol=1e-8)."""
    problem = ode_net_problem(5)
    assert problem.reverse_error(tol, problem.reference()) < 10 * tol


@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_the_forward_tangent_of_a_relu_neural_ode_is_within_10x_of_rtol(tol):
    problem = ode_net_problem(6)
    direction = np.random.default_rng(7).normal(size=problem.n + problem.p.size)
    assert problem.forward_error(tol, problem.reference(), direction) < 10 * tol


@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_the_solution_of_a_relu_neural_ode_is_within_10x_of_rtol(tol):
    problem = ode_net_problem(8)
    w1, b1, w2, b2 = problem.unpack(problem.p)
    exact = scipy_integrate.solve_ivp(
        lambda t, y: w2 @ np.maximum(w1 @ y + b1, 0.0) + b2, problem.times[[0, -1]],
        problem.y0, method="DOP853", rtol=1e-13, atol=1e-13, t_eval=problem.times).y.T
    ours = odeint(problem.f, problem.y0, problem.times, problem.p, rtol=tol, atol=tol)
    assert np.max(np.abs(np.asarray(ours) - exact)) < 10 * tol * np.max(np.abs(exact))
