"""Optimizers and learning-rate schedules, with PyTorch's semantics, for both engines.

An optimizer holds parameters (Values or Tensors) and moves them against their
gradients at each ``step()``:

    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        loss(model(x), y).backward()
        opt.step()

Schedules change ``lr`` in the optimizer's groups: after ``k`` calls of
``scheduler.step()`` the learning rate is what PyTorch's scheduler of the same name
gives after ``k`` calls. Call it once per epoch (or per step), after ``opt.step()``.

Every hyperparameter after ``lr`` is keyword-only: a call written for PyTorch's
positional order (``SGD(p, 0.1, 0.9, 0, 1e-4)``, weight decay 1e-4 there) raises
TypeError instead of setting some other hyperparameter.

This package is laid out as ``torch.optim``: one module per optimizer (``sgd.py``,
``adam.py``, ...) on the base class in ``optimizer.py``, the schedules in
``lr_scheduler.py``; the arithmetic the updates share with JAX's and autograd's
optimizers is ``nn/updates.py``.

>>> w = cr.tensor([1.0, -2.0], requires_grad=True)
>>> opt = cr.optim.SGD([w], lr=0.1)
>>> for step in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()        # the gradient is 2w
...     opt.step()                      # w -= 0.1 * 2w: w shrinks by 0.8 a step
>>> np.round(w.data, 6).tolist()
[0.64, -1.28]
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .lr_scheduler import *  # noqa: F403 (the schedules are optim's too, as in torch.optim)
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "Rprop", "ASGD", "Adafactor", "LBFGS", "lr_scheduler",
           "swa_utils", *lr_scheduler.__all__]
