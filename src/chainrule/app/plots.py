"""Plots of training results (matplotlib, the optional `viz` extra), written to files."""

import math

import numpy as np

__all__ = ["plot_decision_boundary", "plot_toy_fit", "plot_history", "plot_confusion",
           "plot_misclassified"]


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


# Two classes, each in one hue: a light shade for its region, a dark one for its points
_REGIONS = ("#f6c8a8", "#b8d8ea")
_POINTS = ("#c2410c", "#1d5f8a")


def plot_decision_boundary(model, X, y, path, title="", steps=60, predict=None):
    """The model's decision over the plane (each class's region in the light shade of
    its points' colour, the boundary a line where the score is 0), the training points
    on top, with the axes and a legend of the classes.

    ``predict(points)`` gives a score per point whose sign is the class (default: a
    scalar model's single output). The boundary is drawn from the scores themselves,
    between grid points, so it is smooth even on a coarse grid."""
    plt = _pyplot()
    xx, yy = _grid(X, steps)
    predict = predict or (lambda points: _predict(model, points))
    zz = np.asarray(predict(np.c_[xx.ravel(), yy.ravel()]), dtype=float).reshape(xx.shape)
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    classes = np.unique(y)  # (-1, 1) for a hinge loss, (0, 1) otherwise: the second is > 0
    fig, ax = plt.subplots(figsize=(5.5, 4.8))
    edge = max(float(np.abs(zz).max()), 1.0) + 1.0
    ax.contourf(xx, yy, zz, levels=[-edge, 0.0, edge], colors=_REGIONS)
    if zz.min() < 0 < zz.max():
        ax.contour(xx, yy, zz, levels=[0.0], colors="0.25", linewidths=1.0)
    handles = []
    for k, label in enumerate(classes[:2]):
        mine = y == label
        ax.scatter(X[mine, 0], X[mine, 1], s=28, color=_POINTS[k], edgecolors="white",
                   linewidths=0.6)
        handles.append(plt.Line2D([], [], marker="o", linestyle="", color=_POINTS[k],
                              markeredgecolor="white",
                              label=f"class {label} ({int(mine.sum())} points)"))
    handles.append(plt.Line2D([], [], color="0.25", label="decision boundary"))
    ax.legend(handles=handles, loc="best", fontsize=8, framealpha=0.85)
    ax.set_xlabel("x[0]")
    ax.set_ylabel("x[1]")
    ax.set_title(title or "decision boundary")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_toy_fit(model, X, y, target, path, steps=40, predict=None):
    """Two panels, the target function and the model's fit, with the training points.

    ``predict(points)`` gives the model's value per point (default: a scalar model)."""
    plt = _pyplot()
    xx, yy = _grid(X, steps)
    grid = np.c_[xx.ravel(), yy.ravel()]
    truth = target(grid).reshape(xx.shape)
    predict = predict or (lambda points: _predict(model, points))
    fit = np.asarray(predict(grid)).reshape(xx.shape)
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


def plot_history(history, path, title=""):
    """Loss per epoch (left) and accuracy (right: training, and test when there is one).
    The loss and the training accuracy are running means over each epoch's steps, taken
    while the model learns; the test accuracy is measured after the epoch: the legend
    says so, as the command's table does."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(range(1, len(history["loss"]) + 1), history["loss"])
    left.set_xlabel("epoch")
    left.set_ylabel("loss (mean during the epoch)")
    left.set_yscale("log")
    for key, label in (("train_accuracy", "train (during the epoch)"),
                       ("test_accuracy", "test (after the epoch)")):
        points = history.get(key) or []
        if points:
            epochs, values = zip(*points)
            right.plot(epochs, values, marker="o", markersize=3, label=label)
    right.set_xlabel("epoch")
    right.set_ylabel("accuracy")
    if right.get_lines():
        right.legend()
    else:  # a regression: no accuracy to show
        right.set_axis_off()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_confusion(matrix, path, title="confusion matrix"):
    """Counts of (true class, predicted class), with the numbers written in."""
    plt = _pyplot()
    matrix = np.asarray(matrix)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.imshow(matrix, cmap="Blues")
    n = len(matrix)
    for i in range(n):
        for j in range(n):
            ax.text(j, i, str(matrix[i, j]), ha="center", va="center", fontsize=7,
                    color="white" if matrix[i, j] > matrix.max() / 2 else "black")
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_misclassified(X, y, predicted, side, path, limit=25):
    """A grid of the first ``limit`` test images the model got wrong, each captioned
    with its true and predicted class; the title says how many are shown of how many."""
    plt = _pyplot()
    y, predicted = np.asarray(y), np.asarray(predicted)
    every = np.flatnonzero(y != predicted)
    wrong = every[:limit]
    cols = 5
    rows = max(1, math.ceil(len(wrong) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 1.5, rows * 1.7 + 0.5))
    for ax in np.ravel(axes):
        ax.axis("off")
    for ax, i in zip(np.ravel(axes), wrong):
        ax.imshow(np.asarray(X[i]).reshape(side, side), cmap="gray_r")
        ax.set_title(f"true {y[i]}, said {predicted[i]}", fontsize=7)
    shown = (f"all {len(every)}" if len(wrong) == len(every)
             else f"the first {len(wrong)} of {len(every)}")
    fig.suptitle(f"misclassified test images: {shown}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
