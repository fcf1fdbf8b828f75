"""L-BFGS, as PyTorch's ``torch.optim.LBFGS``: the same iterations, line search and
stopping tests, so the same numbers.

Unlike the other optimizers, L-BFGS sees all the parameters as one flat vector (their
gradients concatenated in order; a complex number as two real ones, as PyTorch's) and
evaluates the loss several times per ``step``: ``step(closure)`` needs a closure that
zeroes the gradients, computes the loss, calls ``backward()`` and returns the loss.
"""

from typing import Any, Callable

import numpy as np

from ... import arrays as xp
from ...modes import enable_grad, no_grad
from ...scalar.value import Value
from ..hyperparameters import require_nonnegative, require_positive_int
from .optimizer import Optimizer, Params, _copy, _read, _write

__all__ = ["LBFGS"]

# The flat vectors of the state (PyTorch's names): saved and resumed as they are.
_VECTORS = ("d", "prev_flat_grad")


class LBFGS(Optimizer):
    """L-BFGS (Nocedal's limited-memory BFGS), as PyTorch computes it.

    Each ``step(closure)`` runs up to ``max_iter`` iterations. An iteration's direction
    is the two-loop recursion over the last ``history_size`` pairs of position and
    gradient changes (``old_stps``, ``old_dirs``); its step length is ``lr`` (the very
    first one ``min(1, 1/|g|_1) * lr``), or, with ``line_search_fn="strong_wolfe"``,
    what a line search satisfying the strong Wolfe conditions finds (cubic
    interpolation, as minFunc's and PyTorch's). It stops early when the gradient's
    largest entry is at most ``tolerance_grad``, when the step or the loss changes by
    less than ``tolerance_change``, or after ``max_eval`` evaluations of the closure
    (``max_iter * 5 // 4`` by default). The history carries over from one ``step`` to
    the next.

    One parameter group only, as in PyTorch; the state (PyTorch's names: ``d``, ``t``,
    ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``,
    ``al``, ``n_iter``, ``func_evals``) is kept with the first parameter. Its loops
    choose on the loss's values, so a step cannot run under cr.jit.

    >>> x = cr.tensor([1.5, -0.5], requires_grad=True)
    >>> opt = cr.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - cr.tensor([1.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure); np.round(x.data, 6).tolist()   # a quadratic: solved
    [1.0, 2.0]
    """

    def __init__(self, params: Params, lr: float = 1, *, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if max_eval is None and isinstance(max_iter, int):
            max_eval = max_iter * 5 // 4  # PyTorch's default
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS: takes one parameter group (its parameters are one "
                             "vector), got a second; put all the parameters in one")
        super().add_param_group(group)

    def _check(self, group):
        # PyTorch refuses only lr < 0 (at once) and another line search (at the first
        # step); the rest would fail later, or loop without an iteration, there.
        super()._check(group)
        for name in ("max_iter", "max_eval", "history_size"):
            require_positive_int("LBFGS", name, group[name])
        require_nonnegative("LBFGS", "tolerance_grad", group["tolerance_grad"])
        require_nonnegative("LBFGS", "tolerance_change", group["tolerance_change"])
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{group['line_search_fn']!r}")

    # --- the parameters as one vector ---------------------------------------------

    def _flat_grad(self):
        parts = []
        for p in self._params:
            data, grad = _read(p)
            if grad is None:  # no gradient: zeros, as PyTorch
                grad = np.zeros_like(np.asarray(p.data if data is None else data))
            parts.append(_real_view(np.reshape(grad, -1)))
        return np.concatenate(parts)

    def _add(self, t, d):
        """Move the parameters by ``t * d`` (a complex parameter takes two entries of
        ``d`` per number, its real and imaginary parts, as PyTorch's view_as_real)."""
        offset = 0
        for p in self._params:
            data = np.asarray(p.data)
            n = data.size * (2 if np.iscomplexobj(data) else 1)
            piece = d[offset:offset + n]
            if np.iscomplexobj(data):
                piece = np.ascontiguousarray(piece).view(
                    np.result_type(piece.dtype, np.complex64))
            _write(p, data + t * piece.reshape(data.shape))
            offset += n

    def _positions(self):
        return [np.array(p.data, copy=True) for p in self._params]

    def _restore(self, positions):
        for p, data in zip(self._params, positions):
            _write(p, data)

    def _evaluate(self, closure):
        with enable_grad():
            loss = closure()
        return loss, float(loss.data if isinstance(loss, Value) else loss)

    def _evaluate_along(self, closure, x, t, d):
        """The loss and gradient at ``x + t * d``; the parameters are put back at x."""
        self._add(t, d)
        _, loss = self._evaluate(closure)
        g = self._flat_grad()
        self._restore(x)
        return loss, g

    # --- the step -------------------------------------------------------------------

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # closure's result
        """Up to ``max_iter`` iterations; ``closure()`` recomputes the loss and the
        gradients (zero them, compute, ``backward()``, return the loss). Returns the
        loss at the start."""
        if closure is None:
            raise TypeError("LBFGS.step needs a closure that recomputes the loss and its "
                            "gradients: opt.step(closure)")
        if xp.recorder() is not None:
            raise TypeError("LBFGS: cannot run under cr.jit: its iterations and line "
                            "search choose on the loss's values; call step() eagerly")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        first_loss, loss = self._evaluate(closure)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if np.abs(g).max() <= tol_grad:  # already optimal
            return first_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_g, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -g, [], [], [], 1
            else:
                y, s = g - prev_g, d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    keep = len(old_dirs) < history_size
                    old_dirs = (old_dirs if keep else old_dirs[1:]) + [y]
                    old_stps = (old_stps if keep else old_stps[1:]) + [s]
                    ro = (ro if keep else ro[1:]) + [1.0 / ys]
                    h_diag = ys / y.dot(y)
                d, al = _two_loop(-g, old_dirs, old_stps, ro, h_diag,
                                  state.get("al") or [None] * history_size)
                state["al"] = al
            prev_g, prev_loss = g.copy(), loss
            # the first step is at most lr long in l1 (the scale is not known yet)
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = g.dot(d)
            if gtd > -tol_change:  # not a descent direction (to tolerance)
                break

            if group["line_search_fn"] is not None:
                x = self._positions()
                loss, g, t, ls_evals = _strong_wolfe(
                    lambda x, t, d: self._evaluate_along(closure, x, t, d),
                    x, t, d, loss, g, gtd, tolerance_change=tol_change,
                    max_ls=max_eval - evals)
                self._add(t, d)
                optimal = np.abs(g).max() <= tol_grad
            else:
                self._add(t, d)
                ls_evals, optimal = 0, False
                if n_iter != max_iter:  # (the last iteration's loss is not needed)
                    _, loss = self._evaluate(closure)
                    g = self._flat_grad()
                    optimal = np.abs(g).max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if (n_iter == max_iter or evals >= max_eval or optimal
                    or np.abs(d * t).max() <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return first_loss

    # --- saving and resuming ------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        saved = super().state_dict()
        for entries in saved["state"].values():  # the history's lists, copied too
            for name, value in entries.items():
                if isinstance(value, list):
                    entries[name] = [_copy(v) for v in value]
        return saved

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from ``state_dict()``. The state's vectors are flat (all the
        parameters' entries), so they are checked against the parameters' total size
        rather than the first parameter's shape."""
        try:
            saved = dict(state_dict["state"])
        except (KeyError, TypeError):
            raise ValueError("LBFGS.load_state_dict: expected a dict with 'state' and "
                             "'param_groups', as state_dict() returns") from None
        super().load_state_dict({**state_dict, "state": {}})  # the group's settings
        size = sum(np.size(p.data) for p in self._params)
        entries = {int(k): v for k, v in saved.items()}
        if set(entries) - {0}:
            raise ValueError(f"LBFGS.load_state_dict: the state belongs to parameter 0, "
                             f"got state for {sorted(entries)}")
        for name in _VECTORS:
            v = entries.get(0, {}).get(name)
            if v is not None and np.size(v) != size:
                raise ValueError(f"LBFGS.load_state_dict: {name!r} has {np.size(v)} "
                                 f"entries, the parameters {size}")
        if 0 in entries:
            self.state = {self._params[0]: {
                k: [_copy(x) for x in v] if isinstance(v, list) else _copy(v)
                for k, v in entries[0].items()}}


def _real_view(flat):
    """A flat gradient as real numbers: a complex one as its real and imaginary parts,
    interleaved (L-BFGS runs on the real vector space, as PyTorch's)."""
    if np.iscomplexobj(flat):
        return np.ascontiguousarray(flat).view(flat.real.dtype)
    return flat


def _two_loop(q, old_dirs, old_stps, ro, h_diag, al):
    """L-BFGS's direction: the inverse Hessian's estimate (the history's pairs over a
    diagonal ``h_diag``) times ``q``, by Nocedal's two loops. Returns it and the first
    loop's coefficients ``al`` (kept in the state, as PyTorch keeps them)."""
    al = list(al)
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        q = q - al[i] * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        r = r + (al[i] - be_i) * old_stps[i]
    return r, al


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimum of the cubic through two points with their values and slopes,
    clamped to ``bounds`` (the points' interval by default); the middle of the
    interval where the cubic has none."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(at, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length along ``d`` from ``x`` (loss ``f``, gradient ``g``, slope ``gtd``)
    meeting the strong Wolfe conditions: enough decrease (``c1``) and a slope flattened
    enough (``c2``). First a bracket is found, growing ``t`` by cubic extrapolation,
    then narrowed by cubic interpolation (kept off the bracket's ends), as minFunc and
    PyTorch do. Returns ``(loss, gradient, t, evaluations)``."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # 1. bracketing: grow t until the decrease fails or the slope turns
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate, between 1.01 t (from t_prev) and 10 t
        low, high = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(low, high))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations: between 0 and the last t
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # 2. zoom: shrink the bracket until a point satisfies both conditions
    insufficient = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too near an end (within a tenth of the bracket) makes little
        # progress: taken once, then moved a tenth inside the bracket
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not enough decrease: t is the bracket's new high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # the slope points back: the old low end becomes the high end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evals
