"""Stochastic weight averaging, as PyTorch's ``torch.optim.swa_utils``: AveragedModel and
the averaging functions (``averaging.py``), ``update_bn``, and the SWALR schedule
(``swalr.py``).

>>> model = cr.nn.Linear(2, 1, rng=0)
>>> opt = cr.optim.SGD(model.parameters(), lr=0.1)
>>> swa_model = cr.optim.swa_utils.AveragedModel(model)
>>> sched = cr.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=1)
>>> swa_model.update_parameters(model); sched.step(); opt.param_groups[0]["lr"]
0.05
"""

from .averaging import (AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn,
                        get_swa_multi_avg_fn, update_bn)
from .swalr import SWALR

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]
