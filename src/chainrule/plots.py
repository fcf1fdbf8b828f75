"""Plots of training results (matplotlib, the optional `viz` extra), written to files."""

import numpy as np

__all__ = ["plot_decision_boundary", "plot_toy_fit"]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'chainrule[viz]'") from None
    matplotlib.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt
    return plt


def _grid(X, steps):
    X = np.asarray(X, dtype=float)
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    xs, ys = np.linspace(lo[0], hi[0], steps), np.linspace(lo[1], hi[1], steps)
    return np.meshgrid(xs, ys)


def _predict(model, points):
    return np.array([model(list(p)).data for p in points])


def plot_decision_boundary(model, X, y, path, title="", steps=60):
    """The model's score sign over the plane, with the training points on top."""
    plt = _pyplot()
    xx, yy = _grid(X, steps)
    zz = _predict(model, np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.contourf(xx, yy, zz > 0, cmap="Spectral", alpha=0.6)
    ax.scatter(X[:, 0], X[:, 1], c=y, s=30, cmap="Spectral", edgecolors="k")
    ax.set_title(title or "decision boundary")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_toy_fit(model, X, y, target, path, steps=40):
    """Three panels: the target function, the model's fit, and the training points."""
    plt = _pyplot()
    xx, yy = _grid(X, steps)
    grid = np.c_[xx.ravel(), yy.ravel()]
    truth = target(grid).reshape(xx.shape)
    fit = _predict(model, grid).reshape(xx.shape)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    levels = np.linspace(min(truth.min(), fit.min()), max(truth.max(), fit.max()), 15)
    for ax, zz, name in zip(axes, (truth, fit), ("target", "model")):
        contour = ax.contourf(xx, yy, zz, levels=levels, cmap="viridis")
        ax.scatter(np.asarray(X)[:, 0], np.asarray(X)[:, 1], c="w", s=8, edgecolors="k")
        ax.set_title(name)
    fig.colorbar(contour, ax=axes)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
