"""Differentiable simulation: aim a ball through air by differentiating its flight.

A ball leaves the origin with speed v0 at angle theta above the horizontal. Gravity
pulls it down and air drag, proportional to the square of its speed, slows it:

    d/dt [x, y, vx, vy] = [vx, vy, -k |v| vx, -g - k |v| vy],   |v| = sqrt(vx^2 + vy^2)

There is no closed-form solution with drag, so we integrate numerically: the classic
fourth-order Runge-Kutta method (RK4), fixed step, fixed number of steps. Every step is
made of chainrule operations, so ``cr.grad`` differentiates the whole simulation: how
the ball's final position changes with theta and v0.

The task: a target will be at the point (30 m, 5 m) exactly T = 2 s after launch. Which
angle and speed put the ball there at that moment? We minimize the squared miss
distance by plain gradient descent, after checking the gradient against central finite
differences. (A fixed flight time keeps the objective smooth; "where the ball lands"
would need the landing time, which jumps from step to step of the integrator.)

Run it with:  python examples/projectile.py
"""

import numpy as np

import chainrule as cr

G = 9.81            # gravity, m/s^2
DRAG = 0.02         # k, in 1/m: drag deceleration is k |v|^2 (a light ball)
T = 2.0             # flight time, s
STEPS = 100         # RK4 steps of T / STEPS = 0.02 s
TARGET = np.array([30.0, 5.0])
SPEED_SCALE = 20.0  # m/s, see speed() below


def rate(state):
    """The right-hand side of the equations of motion, for state [x, y, vx, vy]."""
    vx, vy = state[2], state[3]
    speed = cr.sqrt(vx ** 2 + vy ** 2)
    return cr.stack([vx, vy, -DRAG * speed * vx, -G - DRAG * speed * vy])


def simulate(theta, v0):
    """The state [x, y, vx, vy] at time T, by RK4."""
    state = cr.stack([0.0, 0.0, v0 * cr.cos(theta), v0 * cr.sin(theta)])
    h = T / STEPS
    for _ in range(STEPS):
        k1 = rate(state)
        k2 = rate(state + h / 2 * k1)
        k3 = rate(state + h / 2 * k2)
        k4 = rate(state + h * k3)
        state = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return state


def speed(params):
    # We optimize log(v0 / 20 m/s) rather than v0 itself. One unit of either parameter
    # (a radian of angle, or a factor e in speed) then moves the ball by tens of metres,
    # so the loss is about equally curved in both directions and a single learning rate
    # suits both. (In m/s, v0 would be ~20x less sensitive than theta and gradient
    # descent would crawl along it.) It also keeps the speed positive.
    return SPEED_SCALE * cr.exp(params[1])


def miss_squared(params):
    """The squared distance between the ball and the target at time T."""
    state = simulate(params[0], speed(params))
    return cr.sum((state[:2] - TARGET) ** 2)


def central_differences(f, params, eps=1e-6):
    return np.array([(f(params + eps * e) - f(params - eps * e)) / (2 * eps)
                     for e in np.eye(len(params))])


def gradient_descent(params, learning_rate=4e-4, tol=1e-8, max_iter=500):
    """Step against the gradient until the miss is below tol metres.
    Returns the parameters and the number of steps taken."""
    # Near the answer the Hessian of the loss has eigenvalues of about 1500 and 2600;
    # gradient descent is stable for steps below 2 / 2600, and 4e-4 shrinks the error
    # by a factor of at least 0.4 per step.
    value_and_grad = cr.value_and_grad(miss_squared)
    steps = 0
    while steps < max_iter:
        loss, g = value_and_grad(params)
        if np.sqrt(loss) < tol:
            break
        params = params - learning_rate * g
        steps += 1
    return params, steps


def main():
    start = np.array([np.radians(30.0), 0.0])  # 30 degrees, 20 m/s
    autodiff = cr.grad(miss_squared)(start)
    numeric = central_differences(miss_squared, start)
    relative = np.max(np.abs(autodiff - numeric)) / np.max(np.abs(numeric))
    print(f"start: theta = 30 deg, v0 = 20 m/s, misses by "
          f"{np.sqrt(miss_squared(start)):.3f} m")
    print(f"gradient of miss^2 through {STEPS} RK4 steps, w.r.t. (theta, log v0):")
    print(f"  cr.grad:             {autodiff}")
    print(f"  central differences: {numeric}")
    print(f"  relative difference: {relative:.1e}")

    params, iterations = gradient_descent(start)
    theta, v0 = float(params[0]), float(speed(params))
    x, y, vx, vy = simulate(theta, v0)
    miss = float(np.hypot(x - TARGET[0], y - TARGET[1]))
    print(f"\ngradient descent, {iterations} iterations:")
    print(f"  theta = {np.degrees(theta):.6f} deg, v0 = {v0:.6f} m/s")
    print(f"  at t = {T} s the ball is at ({x:.9f}, {y:.9f}) m, target ({TARGET[0]:g}, {TARGET[1]:g}):"
          f" miss {miss:.1e} m")

    # For contrast, without drag the answer has a closed form: x = vx0 T and
    # y = vy0 T - g T^2 / 2 give the launch velocity directly.
    vx0, vy0 = TARGET[0] / T, (TARGET[1] + G * T ** 2 / 2) / T
    print(f"  (without drag it would be theta = {np.degrees(np.arctan2(vy0, vx0)):.2f} deg,"
          f" v0 = {np.hypot(vx0, vy0):.2f} m/s)")
    return {"start": start, "grad": autodiff, "grad_fd": numeric,
            "grad_relative_error": relative, "theta": theta, "v0": v0,
            "iterations": iterations, "final_position": np.array([x, y]), "miss": miss}


if __name__ == "__main__":
    main()
