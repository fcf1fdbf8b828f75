"""odeint's gradients on neural ODEs (few states, hundreds of parameters) against the
forward sensitivities solved by SciPy's DOP853 at rtol=atol=1e-13: the adjoint's
backward solve keeps every entry of [y, a, args_bar] within the tolerances, so that the
parameters' many integrals do not hide the error of the state and adjoint."""

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


def test_the_relu_networks_gradient_improves_with_the_tolerance():
    """A ReLU's kinks make each weight's integrand jump: each entry of args_bar is held
    to the tolerance (a root mean square over the 756 entries of [y, a, args_bar] gives
    1e-4 at rtol=1e-8, this 3e-6 to 1e-5)."""
    problem = ode_net_problem(0)
    reference = problem.reference()
    coarse, fine = problem.reverse_error(1e-6, reference), problem.reverse_error(1e-8,
                                                                                reference)
    assert fine < 2e-5
    assert fine < coarse / 10
