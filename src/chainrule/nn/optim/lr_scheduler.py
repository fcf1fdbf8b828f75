"""Learning-rate schedules, with PyTorch's semantics: each changes ``lr`` in an
optimizer's groups, so that after ``k`` calls of ``scheduler.step()`` the learning rate
is what PyTorch's scheduler of the same name gives after ``k`` calls. Call it once per
epoch (or per step, for the cyclic ones), after ``opt.step()``.

As PyTorch's, a step scales the rate the group has (its chainable form): a rate changed
by hand, or by another schedule on the same optimizer, is carried on, and two schedules
multiply (a warm-up and a decay). ``lr_at(base_lr, k)`` gives the closed form, the rate
after k steps of this schedule alone; LambdaLR (and a schedule that defines only
``lr_at``) sets the rate outright from it, as PyTorch's LambdaLR.

This module gathers them, as ``torch.optim.lr_scheduler``: the base class is in
``scheduler.py``; the schedules with a closed form in ``decays.py``; the cyclic ones
(CyclicLR, OneCycleLR, CosineAnnealingWarmRestarts) in ``cycles.py``; SequentialLR and
ChainedScheduler in ``combinators.py``; ReduceLROnPlateau in ``plateau.py``.

>>> opt = cr.optim.SGD([cr.Value(0.0)], lr=1.0)
>>> sched = cr.optim.StepLR(opt, step_size=1, gamma=0.5)
>>> opt.step(); sched.step(); opt.param_groups[0]["lr"]
0.5
"""

from .combinators import ChainedScheduler, SequentialLR
from .cycles import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .decays import (ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR,
                     LinearWarmup, MultiplicativeLR, MultiStepLR, PolynomialLR,
                     StepLR)
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ConstantLR", "ExponentialLR",
           "PolynomialLR", "CosineAnnealingLR", "LinearLR", "LinearWarmup", "LambdaLR",
           "MultiplicativeLR", "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR",
           "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau"]
