"""The worked examples in examples/ run, and their results are right.

Each example is imported from its file and its ``main()`` run once (it returns its key
results and prints them); the checks below recompute what they can independently:
the Jacobian from its formula, the Rosenbrock derivatives from SciPy's hand-written
ones, the projectile's flight with SciPy's ODE solver.
"""

import contextlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import rosen_der

import chainrule as cr

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["jacobian", "newton_rosenbrock", "trust_ncg", "projectile"]


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_runs = {}


def run(name):
    """(module, main()'s result, what main() printed), computed once per example."""
    if name not in _runs:
        module = load(name)
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            result = module.main()
        _runs[name] = (module, result, stdout.getvalue())
    return _runs[name]


@pytest.mark.parametrize("name", NAMES)
def test_example_is_a_documented_script(name):
    module = load(name)
    assert f"python examples/{name}.py" in module.__doc__
    assert 'if __name__ == "__main__":\n    main()' in (EXAMPLES / f"{name}.py").read_text()


@pytest.mark.parametrize("name", ["jacobian", "newton_rosenbrock"])
def test_example_runs_from_the_command_line(name):
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


# --- jacobian.py ------------------------------------------------------------------------

def test_jacobian_both_modes_equal_the_formula():
    _, result, printed = run("jacobian")
    x = result["x"]
    formula = np.array([[1.0, 4.0, 0.0],
                        [0.0, 20.0 * x[1], np.cos(x[2])]])
    for method in ("jacrev", "jacfwd"):
        J = result[method]
        assert isinstance(J, np.ndarray) and J.shape == (2, 3)
        np.testing.assert_allclose(J, formula, rtol=0, atol=1e-12)
        assert method in printed
    np.testing.assert_allclose(result["by_hand"], formula, rtol=0, atol=0)
    assert "largest difference from the formula: jacrev 0.0e+00, jacfwd 0.0e+00" in printed


# --- newton_rosenbrock.py ---------------------------------------------------------------

@pytest.mark.parametrize("dimension", ["2-D", "5-D"])
def test_newton_reaches_the_minimum(dimension):
    _, result, printed = run("newton_rosenbrock")
    r = result[dimension]
    x = r["x"]
    assert x.shape == r["start"].shape == ((2,) if dimension == "2-D" else (5,))
    np.testing.assert_allclose(x, np.ones_like(x), rtol=0, atol=1e-8)
    assert np.linalg.norm(rosen_der(x)) < 1e-8   # SciPy's gradient, not ours
    assert r["grad_norm"] < 1e-8
    assert 0 < r["iterations"] < 100             # converged, not out of iterations
    assert r["f"] < 1e-16
    assert f"{dimension}: from" in printed and f"in {r['iterations']} Newton" in printed


# --- trust_ncg.py -----------------------------------------------------------------------

def test_trust_ncg_derivatives_agree_with_scipy():
    _, result, printed = run("trust_ncg")
    assert result["grad_error"] < 1e-10
    assert result["hessp_error"] < 1e-10
    assert "rosen_der" in printed and "rosen_hess_prod" in printed


def test_trust_ncg_converges_like_scipy():
    _, result, printed = run("trust_ncg")
    ours, scipys = result["ours"], result["scipy"]
    assert ours.success and scipys.success
    np.testing.assert_allclose(ours.x, np.ones(6), rtol=0, atol=1e-8)
    assert np.linalg.norm(rosen_der(ours.x)) < 1e-8
    np.testing.assert_allclose(ours.x, scipys.x, rtol=0, atol=1e-10)
    assert result["difference"] == np.max(np.abs(ours.x - scipys.x))
    assert ours.nhev > 0                        # the optimizer really used cr.hvp
    assert "chainrule derivatives" in printed and "SciPy derivatives" in printed


# --- projectile.py ----------------------------------------------------------------------

@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_projectile_gradient_matches_finite_differences():
    module, result, printed = run("projectile")
    g, fd = result["grad"], result["grad_fd"]
    assert np.all(np.abs(g - fd) <= 1e-5 * np.abs(fd))
    assert result["grad_relative_error"] < 1e-5
    # our own central differences, with another step
    start, eps = result["start"], 1e-5
    ours = [(module.miss_squared(start + eps * e) - module.miss_squared(start - eps * e))
            / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g, ours, rtol=1e-5)
    np.testing.assert_allclose(cr.grad(module.miss_squared)(start), g, rtol=1e-14)
    assert "central differences" in printed


@pytest.mark.slow  # an end-to-end run: `make test-fast` leaves it out
def test_projectile_hits_the_target():
    module, result, printed = run("projectile")
    assert result["miss"] < 1e-6
    assert result["iterations"] < 500
    np.testing.assert_allclose(result["final_position"], module.TARGET, rtol=0, atol=1e-6)
    assert 0 < result["theta"] < np.pi / 2 and result["v0"] > 0
    # The same flight by SciPy's adaptive high-order solver, at the parameters found:
    # the RK4 integration is accurate, so the ball really gets there.
    theta, v0 = result["theta"], result["v0"]

    def motion(t, s):
        speed = np.hypot(s[2], s[3])
        return [s[2], s[3], -module.DRAG * speed * s[2], -module.G - module.DRAG * speed * s[3]]

    flight = solve_ivp(motion, (0.0, module.T), [0.0, 0.0, v0 * np.cos(theta),
                                                 v0 * np.sin(theta)],
                       method="DOP853", rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(flight.y[:2, -1], module.TARGET, rtol=0, atol=1e-6)
    assert f"theta = {np.degrees(theta):.6f} deg" in printed
