"""Random PyTorch training programs, ported to chainrule by changing the imports, give
torch's numbers after every step.

Each feature of ``chainrule.nn`` and ``chainrule.optim`` is checked against torch on its
own elsewhere (tests/test_nn_torch_parity.py, tests/test_optim.py,
tests/test_optimizers_against_torch.py, tests/test_schedules_against_torch.py,
tests/test_float32_models.py). Here they meet: a program is drawn at random (a model, a
loss, an optimizer with its parameter groups, a schedule, and a loop with its habits),
written once as plain data (:func:`draw_program`), and run step by step in torch
(float64, its default dtype float64 too) and in chainrule (float64) from the same
weights and on the same batches (:func:`run_program`). After every step the two must
agree on

* each micro-batch's loss,
* every parameter's ``.grad`` after the backward passes, None where torch has None (a
  frozen parameter, a parameter after ``zero_grad(set_to_none=True)``) and zeros where
  torch has zeros (``set_to_none=False``), and again after gradient clipping, and the
  total norm ``clip_grad_norm_`` returns,
* every parameter and buffer after the update (``state_dict``: BatchNorm's running
  statistics and its count too), and those of the running average,
* the optimizer's ``state_dict()``: each parameter's state (momentum buffers, moments,
  step counts, amsgrad's maximum, RMSprop's averages, Adagrad's sums, NAdam's
  mu_product, LBFGS's history item by item and its counters) and each group's
  hyperparameters (lr, momentum and betas as a schedule cycles them, OneCycleLR's
  initial_lr, max_lr and min_lr),
* the learning rate of each group, and each schedule's ``get_last_lr()``,
* the outputs of a ``no_grad()`` evaluation between steps, which record no graph,

and chainrule's arrays must stay float64. Each array agrees with torch's in norm, to
1e-10 of its size (and 1e-12 an entry, for arrays near 0): the two libraries round
differently inside a matrix product or a reduction (a last bit of each), and a batch
norm over a batch of 3 to 6 rows, then up to seven optimizer steps, grow those
differences by their conditioning (up to 1e4 times the rounding, measured). An entry
that is small because its sum cancels keeps the absolute error of the whole array, so
the comparison is of the whole array, not entry by entry. A gradient
that is 0 only up to rounding (a bias a train-mode batch norm subtracts again) is the
exception: Adam (and every optimizer that divides by a running size of each gradient
entry: RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam) divides it by its own size and
steps lr along its sign, which the rounding decides. The draw leaves such models out
(see :func:`draw_model`). Adam also divides a gradient entry close to its ``eps`` by
about ``eps``, multiplying that entry's rounding by ``lr / eps``: in the worst program
measured (about one in ten thousand; Adam, eps 1e-8, two batch norms) such a
difference grows smoothly, from 1e-12 at the first step to 1e-10 by the eighth, with
no step where the two libraries part.

LBFGS programs are compared to 1e-6 of each array's size (1e-8 an entry), and LBFGS's
state to 1e-4 (its counters exactly). Its history holds differences of nearly equal
gradients, y = g_k+1 - g_k, their products and inverses (ro = 1/(y.s)), and each of its
iterations solves with them: the two libraries' last-bit differences in the gradients
grow by orders of magnitude at each step() call (tests/test_optimizers_against_torch.py
allows 1e-7 after eight calls on Rosenbrock's function, and 1e-4 on the state). Over 2
or 3 step() calls of 2 to 5 iterations, in about 500 LBFGS programs, the largest
difference measured was 1.1e-7 of an array's size (a gradient after the second call,
growing smoothly, the same iterations and evaluations in both) and 1.5e-7 in the
state (``al``, ``t``): the tolerances leave a factor of 10 and of 600, and an
iteration or a line-search step taken differently (a change of order 1) still fails.

What a program draws from (whatever chainrule offers with PyTorch's names):

* models: ``nn.Sequential`` of Linear (with or without bias), ReLU, Tanh, Sigmoid, GELU
  (both forms), LeakyReLU, Softplus, ELU, SiLU, Identity, LayerNorm (affine or not, with
  or without bias), BatchNorm1d and BatchNorm2d (momentum or a cumulative average,
  affine or not, tracking running statistics or not; trained in train mode and in eval
  mode), Dropout (p = 0 in train mode, any p where the program only runs in eval mode),
  an Embedding front end (with or without padding_idx; indices as an int array or as
  ``cr.tensor``), Conv1d and Conv2d front ends with AvgPool2d, one Linear used at two
  places (tied weights), frozen parameters (``p.requires_grad_(False)``, switched back
  on or off mid-run), a layer frozen whole with ``Module.requires_grad_(False)`` (and
  switched back on, or off again, mid-run), LogSoftmax and Sigmoid heads;
* losses: MSELoss, L1Loss, SmoothL1Loss, HuberLoss, CrossEntropyLoss (class weights,
  label_smoothing, ignore_index, labels as an array or a tensor, class-probability
  targets, (N, C, d) scores: the model's outputs reshaped, with (N, d) labels), NLLLoss
  (class weights, ignore_index, (N, C, d) log-probabilities), BCEWithLogitsLoss
  (weight, pos_weight), BCELoss (weight), each with reduction mean, sum or none (then
  averaged);
* optimizers: SGD (momentum, dampening, nesterov), Adam and AdamW (betas, eps, amsgrad),
  RMSprop (alpha, eps, momentum, centered), Adagrad (lr_decay,
  initial_accumulator_value, eps), Adadelta (rho, eps), Adamax (betas, eps), NAdam
  (betas, eps, momentum_decay, decoupled_weight_decay), RAdam (betas rectified from
  the first steps, from the sixth, or never; eps, decoupled_weight_decay), each with
  weight_decay and maximize, some hyperparameters left to each library's default, with
  one to three parameter groups of their own lr, weight_decay and one of the
  optimizer's own hyperparameters, and a group added later with ``add_param_group``;
  and, as programs of their own, LBFGS (one group, max_iter, history_size, with
  ``line_search_fn="strong_wolfe"`` or without), every step an ``opt.step(closure)``
  whose closure zeroes the gradients, computes the loss and backpropagates;
* schedules: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR,
  LinearWarmup (torch's LinearLR up to 1), LambdaLR, ConstantLR, PolynomialLR,
  CosineAnnealingWarmRestarts, CyclicLR (triangular, triangular2, exp_range; the
  momentum or Adam's betas[0] cycled too where the optimizer has one), OneCycleLR (cos
  or linear, two or three phases, the momentum cycled too), SequentialLR and
  ChainedScheduler of two or three of those, and ReduceLROnPlateau stepped with the
  step's ``loss.item()``; one or two on the optimizer, each stepped after every
  optimizer step or once an epoch; chainrule's taken from
  ``chainrule.optim.lr_scheduler`` (a port's ``torch.optim.lr_scheduler``) or
  ``chainrule.optim``;
* the loop: ``zero_grad`` of the optimizer or of the model, ``set_to_none`` either way,
  or no zero_grad at all (gradients pile up across steps), gradient accumulation over 1
  to 3 micro-batches, ``nn.utils.clip_grad_norm_`` (norm 2, 1 or inf;
  ``error_if_nonfinite``) and ``nn.utils.clip_grad_value_``, train/eval switches,
  ``no_grad()`` evaluations (in train mode too: a batch norm's running statistics
  move), ``backward(retain_graph=True)`` then a second backward, ``opt.step(closure)``,
  a learning rate set by hand in ``param_groups``, the weights changed in place under
  ``no_grad()`` (``p.mul_``, ``p.add_(..., alpha=)``, ``p.clamp_(-c, c)``,
  ``p.addcmul_``, ``p.addcdiv_``), and a checkpoint mid-run: model, optimizer and
  schedule saved with their ``state_dict()`` (kept in memory, or written with
  ``torch.save`` / ``cr.save`` and read back), loaded into freshly built ones (the
  schedule built before the optimizer loads, or after), and the run continued with
  those; a running average of the weights (a ``copy.deepcopy`` of the model frozen
  with ``requires_grad_(False)``, updated after each step with ``lerp_`` or with
  ``mul_`` and ``add_``).

Left out of the draw: what chainrule refuses where torch does not (listed in REFUSED
and checked to stay a clear one-line error; and ignore_index with class-probability
targets, which torch ignores and chainrule refuses), and a ChainedScheduler inside a
SequentialLR (deliberately not torch's at the first milestone:
tests/test_schedules_against_torch.py).

``CHAINRULE_TRAINING_FUZZ_N`` sets how many programs run (300 by default). A program that
disagrees (or raises in either library) fails with its recipe printed as a call of
:func:`run_program`, which runs it again on its own. The tests at the end hold, each at
its smallest, the cases where torch's schedules and optimizer state are easiest to get
wrong: a state with nothing in it, two schedules on one optimizer, a learning rate set
by hand under a schedule, a schedule built after its optimizer loads a checkpoint; and
what the draw has found different from torch (BCELoss's gradient at a probability of
0 or 1 and within 1e-12 of them, MultiStepLR inside SequentialLR through cr.save).
"""

import copy
import math
import os
import pprint
import tempfile

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import nn, optim
from seeds_and_tolerances import per_test_generator

RNG = per_test_generator(5150)
N_PROGRAMS = int(os.environ.get("CHAINRULE_TRAINING_FUZZ_N", "300"))
RTOL, ATOL = 1e-10, 1e-12
# LBFGS: see the module's docstring
LBFGS_SHARE = 0.06
LBFGS_RTOL, LBFGS_ATOL = 1e-6, 1e-8
LBFGS_STATE_RTOL = 1e-4
F64 = np.dtype(np.float64)


# =======================================================================================
# Drawing a program: plain data, so that a failing one prints as its own reproducer
# =======================================================================================

ACTIVATIONS = [("relu",), ("tanh",), ("sigmoid",), ("gelu", "none"), ("gelu", "tanh"),
               ("leaky_relu", 0.1), ("softplus", 2.0, 3.0), ("elu", 0.7), ("silu",),
               ("identity",)]

# Activations that are linear over a range (Softplus past its threshold)
PIECEWISE_LINEAR = ("relu", "leaky_relu", "elu", "softplus", "identity")


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def draw_batch_norm(rng, name, n):
    """A batch norm: momentum (None: a cumulative average), affine, track_running_stats."""
    return (name, n, _pick(rng, [0.1, 0.3, None]), bool(rng.random() < 0.8),
            bool(rng.random() < 0.8))


def draw_front(rng, width, regularised):
    """The layers that take the input to ``(N, width)`` features, and the input's kind."""
    kind = _pick(rng, ["dense", "dense", "dense", "embedding", "conv1d", "conv2d"])
    if kind == "dense":
        features = int(rng.integers(2, 6))
        return {"kind": "dense", "features": features}, [("linear", features, width,
                                                          bool(rng.random() < 0.8), None)]
    if kind == "embedding":
        vocab, dim, tokens = int(rng.integers(4, 9)), int(rng.integers(2, 4)), 3
        padding = _pick(rng, [None, 0, vocab - 1])
        return ({"kind": "embedding", "vocab": vocab, "tokens": tokens,
                 "as_tensor": bool(rng.random() < 0.5)},
                [("embedding", vocab, dim, padding), ("flatten",),
                 ("linear", tokens * dim, width, True, None)])
    channels, out = int(rng.integers(1, 3)), int(rng.integers(2, 4))
    norm = regularised and rng.random() < 0.4  # (a conv before a batch norm has no bias)
    if kind == "conv1d":
        length, kernel, padding = int(rng.integers(4, 7)), int(rng.integers(2, 4)), \
            int(rng.integers(0, 2))
        length_out = length + 2 * padding - kernel + 1
        layers = [("conv1d", channels, out, kernel, padding, not norm)]
        layers += [draw_batch_norm(rng, "batchnorm1d", out)] if norm else []
        layers += [_pick(rng, ACTIVATIONS), ("flatten",),
                   ("linear", out * length_out, width, True, None)]
        return {"kind": "conv1d", "channels": channels, "length": length}, layers
    side, kernel = int(rng.integers(4, 6)), 2
    layers = [("conv2d", channels, out, kernel, 1, not norm)]
    layers += [draw_batch_norm(rng, "batchnorm2d", out)] if norm else []
    layers += [_pick(rng, ACTIVATIONS), ("avgpool2d", 2), ("flatten",)]
    pooled = (side + 2 - kernel + 1) // 2
    layers += [("linear", out * pooled * pooled, width, True, None)]
    return {"kind": "conv2d", "channels": channels, "side": side}, layers


def _weights(rng, n):
    return np.round(rng.uniform(0.2, 2.0, n), 3).tolist()


def draw_loss(rng):
    kind = _pick(rng, ["mse", "l1", "smooth_l1", "huber", "ce", "ce", "nll", "bce_logits",
                       "bce_logits", "bce"])
    loss = {"kind": kind, "reduction": _pick(rng, ["mean", "mean", "sum", "none"])}
    if kind == "smooth_l1":
        loss["beta"] = _pick(rng, [1.0, 0.5])
    if kind == "huber":
        loss["delta"] = _pick(rng, [1.0, 0.3])
    if kind in ("ce", "nll"):
        loss["classes"] = int(rng.integers(2, 5))
        loss["ignore_index"] = _pick(rng, [-100, -100, 0])
        loss["ignored_rows"] = bool(rng.random() < 0.5)
        # (N, C, d) scores: the model's (N, C * d) outputs reshaped, labels (N, d)
        loss["extra_dim"] = _pick(rng, [None, None, None, 2, 3])
        loss["weight"] = _weights(rng, loss["classes"]) if rng.random() < 0.4 else None
    if kind == "ce":
        loss["label_smoothing"] = _pick(rng, [0.0, 0.0, 0.1, 0.3])
        loss["labels_as_tensor"] = bool(rng.random() < 0.5)
        # class probabilities as targets (ignore_index, which torch ignores then, is left
        # at its default: chainrule refuses another in one line)
        loss["probabilities"] = bool(rng.random() < 0.25)
        if loss["probabilities"]:
            loss["ignore_index"], loss["ignored_rows"] = -100, False
    if kind not in ("ce", "nll"):
        loss["outputs"] = int(rng.integers(1, 4))
    if kind in ("bce_logits", "bce"):
        loss["weight"] = _weights(rng, loss["outputs"]) if rng.random() < 0.4 else None
    if kind == "bce_logits":
        loss["pos_weight"] = _weights(rng, loss["outputs"]) if rng.random() < 0.4 else None
    return loss


def draw_model(rng, loss, eval_only, regularised, adam):
    """The layers of the model, as (name, *arguments) tuples; a Linear's last argument
    is a tie: Linears with the same tie are one module, used at each place."""
    width = int(rng.integers(3, 6))
    front, layers = draw_front(rng, width, regularised)
    blocks = int(rng.integers(0, 4))
    tied = set()
    if blocks >= 2 and rng.random() < 0.4:  # one Linear at two places
        tied = set(rng.choice(blocks, size=2, replace=False).tolist())
    shared_bias = bool(rng.random() < 0.5)
    norms = [_pick(rng, [None, None, "layernorm", "batchnorm1d"]) if regularised else None
             for _ in range(blocks)]
    # A bias that reaches a batch norm in train mode through linear maps only gets a
    # gradient of 0 up to rounding (the batch norm subtracts it again), and Adam turns
    # that rounding into steps of size lr, a different one in each library. So, as one
    # writes it, a Linear right before a batch norm has no bias; and where Adam trains a
    # batch norm, the activations are the smooth ones: a ReLU (a leaky one, an ELU, a
    # Softplus past its threshold, the Identity) whose unit is on for every row of the
    # batch is linear there too.
    layers.append(_pick(rng, ACTIVATIONS))
    for block, norm in enumerate(norms):
        if block in tied:
            layers.append(("linear", width, width, shared_bias
                           and all(norms[b] != "batchnorm1d" for b in tied), "shared"))
        else:
            layers.append(("linear", width, width, norm != "batchnorm1d", None))
        if norm == "layernorm":
            affine = bool(rng.random() < 0.7)
            layers.append(("layernorm", width, affine, affine and rng.random() < 0.8))
        elif norm == "batchnorm1d":
            layers.append(draw_batch_norm(rng, "batchnorm1d", width))
        layers.append(_pick(rng, ACTIVATIONS))
        if rng.random() < 0.3:
            layers.append(("dropout", _pick(rng, [0.2, 0.5]) if eval_only else 0.0))
    if adam and any("batchnorm" in layer[0] for layer in layers):
        smooth = [a for a in ACTIVATIONS if a[0] not in PIECEWISE_LINEAR]
        layers = [_pick(rng, smooth) if layer[0] in PIECEWISE_LINEAR else layer
                  for layer in layers]
    outputs = loss.get("classes", loss.get("outputs")) * (loss.get("extra_dim") or 1)
    # The last bias's gradient under L1Loss (SmoothL1Loss, HuberLoss where they are
    # linear) is a sum of +-1/N, 0 up to the order of the sum where the signs balance:
    # Adam would make steps of size lr of that rounding, so Adam trains no such bias.
    sign_sums = adam and loss["kind"] in ("l1", "smooth_l1", "huber")
    layers.append(("linear", width, outputs, not sign_sums and bool(rng.random() < 0.8),
                   None))
    if loss["kind"] == "nll" and not loss["extra_dim"]:  # (else after the reshape)
        layers.append(("log_softmax",))
    if loss["kind"] == "bce":
        layers.append(("sigmoid",))
    return front, layers


BETAS = [(0.9, 0.999), (0.8, 0.9), (0.5, 0.8)]
FLAG = [False, True]
# each optimizer's hyperparameters (besides lr, weight_decay and maximize) and values
HYPERPARAMETERS = {
    "RMSprop": {"alpha": [0.99, 0.9], "eps": [1e-8, 1e-6], "momentum": [0.0, 0.5, 0.9],
                "centered": FLAG},
    "Adagrad": {"lr_decay": [0.0, 0.01], "initial_accumulator_value": [0.0, 0.1],
                "eps": [1e-10, 1e-6]},
    "Adadelta": {"rho": [0.9, 0.5], "eps": [1e-6, 1e-4]},
    "Adamax": {"betas": BETAS, "eps": [1e-8, 1e-6]},
    "NAdam": {"betas": BETAS, "eps": [1e-8, 1e-6], "momentum_decay": [4e-3, 0.1],
              "decoupled_weight_decay": FLAG},
    # beta2 0.8: rectified from the 6th step on; 0.6: never rectified
    "RAdam": {"betas": [(0.9, 0.999), (0.9, 0.8), (0.5, 0.6)], "eps": [1e-8, 1e-6],
              "decoupled_weight_decay": FLAG},
}
LEARNING_RATES = {"SGD": [0.01, 0.05, 0.1], "Adadelta": [1.0, 0.5], "Adagrad": [0.01, 0.1],
                  "RMSprop": [1e-3, 1e-2], "Adamax": [2e-3, 2e-2]}
# what a group may set of its own besides lr and weight_decay (not Adagrad's
# initial_accumulator_value: torch fills every group's sum with the constructor's)
GROUP_OWN = {"RMSprop": ["alpha", "momentum", "centered"], "Adagrad": ["lr_decay"],
             "Adadelta": ["rho"], "Adamax": ["betas"], "NAdam": ["betas", "momentum_decay"],
             "RAdam": ["betas"], "Adam": ["betas", "amsgrad"], "AdamW": ["betas", "amsgrad"],
             "SGD": []}


def draw_lbfgs(rng):
    """LBFGS: one group, a few iterations a step(), with or without the line search
    (without it, lr below 1: a full quasi-Newton step leaves the data's range)."""
    wolfe = bool(rng.random() < 0.5)
    defaults = {"lr": _pick(rng, [1.0, 0.5] if wolfe else [0.1, 0.3]),
                "max_iter": int(rng.integers(2, 6)), "history_size": _pick(rng, [100, 2]),
                "line_search_fn": "strong_wolfe" if wolfe else None}
    if rng.random() < 0.3:
        del defaults["history_size"]  # (torch's default, 100)
    return {"kind": "LBFGS", "defaults": defaults, "groups": [{"params": None}]}


def draw_optimizer(rng, kind, n_params):
    if kind == "LBFGS":
        spec = draw_lbfgs(rng)
        spec["groups"][0]["params"] = list(range(n_params))
        return spec
    if kind == "SGD":
        momentum = _pick(rng, [0.0, 0.5, 0.9])
        nesterov = bool(momentum and rng.random() < 0.4)
        defaults = {"lr": _pick(rng, [0.01, 0.05, 0.1]), "momentum": momentum,
                    "dampening": 0.0 if nesterov else _pick(rng, [0.0, 0.0, 0.3]),
                    "nesterov": nesterov, "weight_decay": _pick(rng, [0.0, 0.0, 0.01]),
                    "maximize": bool(rng.random() < 0.15)}
    elif kind in ("Adam", "AdamW"):
        defaults = {"lr": _pick(rng, [1e-3, 1e-2, 5e-2]),
                    "betas": _pick(rng, BETAS),
                    "eps": _pick(rng, [1e-8, 1e-6]),
                    "weight_decay": _pick(rng, [0.0, 0.01, 0.1]),
                    "amsgrad": bool(rng.random() < 0.3),
                    "maximize": bool(rng.random() < 0.15)}
    else:
        defaults = {"lr": _pick(rng, LEARNING_RATES.get(kind, [1e-3, 1e-2, 5e-2])),
                    **{k: _pick(rng, v) for k, v in HYPERPARAMETERS[kind].items()},
                    "weight_decay": _pick(rng, [0.0, 0.01, 0.1]),
                    "maximize": bool(rng.random() < 0.15)}
    # A hyperparameter left out takes each library's default (nesterov's momentum stays)
    keep = {"lr", "momentum", "dampening"} if defaults.get("nesterov") else {"lr"}
    defaults = {k: v for k, v in defaults.items() if k in keep or rng.random() < 0.7}
    order = list(range(n_params))
    cuts = sorted(rng.choice(np.arange(1, n_params), size=min(n_params - 1,
                                                              int(rng.integers(0, 3))),
                             replace=False).tolist()) if n_params > 1 else []
    groups = []
    for part in np.split(np.array(order), cuts):
        group = {"params": part.tolist()}
        if groups and rng.random() < 0.7:
            group["lr"] = defaults["lr"] * _pick(rng, [0.1, 0.5, 2.0])
        if groups and rng.random() < 0.4:
            group["weight_decay"] = _pick(rng, [0.0, 0.05])
        if groups and GROUP_OWN[kind] and rng.random() < 0.4:
            key = _pick(rng, GROUP_OWN[kind])
            group[key] = _pick(rng, HYPERPARAMETERS.get(kind, {}).get(
                key, {"betas": BETAS, "amsgrad": FLAG}.get(key)))
        groups.append(group)
    return {"kind": kind, "defaults": defaults, "groups": groups}


SIMPLE_SCHEDULES = ["StepLR", "CosineAnnealingLR", "LinearLR", "LinearWarmup", "LambdaLR",
                    "ExponentialLR", "MultiStepLR", "ConstantLR", "PolynomialLR",
                    "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"]
# the optimizers whose momentum (or betas[0]) CyclicLR and OneCycleLR may cycle
CYCLED_MOMENTUM = ("SGD", "Adam", "AdamW", "RMSprop", "Adamax", "NAdam", "RAdam")


def draw_schedule_args(rng, kind, optimizer, n_steps):
    """The arguments of one schedule that takes no other schedule."""
    cycle = optimizer in CYCLED_MOMENTUM and rng.random() < 0.7
    if kind == "CyclicLR":
        mode = _pick(rng, ["triangular", "triangular2", "exp_range"])
        args = {"base_lr": _pick(rng, [1e-4, 1e-3]), "max_lr": _pick(rng, [1e-2, 5e-2]),
                "step_size_up": int(rng.integers(1, 4)), "mode": mode,
                "cycle_momentum": cycle}
        if rng.random() < 0.4:
            args["step_size_down"] = int(rng.integers(1, 4))
        if mode == "exp_range":
            args["gamma"] = _pick(rng, [0.9, 0.99])
        if cycle and rng.random() < 0.4:
            args.update(base_momentum=0.85, max_momentum=0.95)
        return args
    if kind == "OneCycleLR":
        args = {"max_lr": _pick(rng, [1e-2, 5e-2]),
                "total_steps": max(n_steps, 4) + int(rng.integers(0, 3)),
                "pct_start": _pick(rng, [0.3, 0.5]),
                "anneal_strategy": _pick(rng, ["cos", "linear"]),
                "three_phase": bool(rng.random() < 0.3),
                "div_factor": _pick(rng, [25.0, 10.0]),
                "final_div_factor": _pick(rng, [1e4, 100.0]), "cycle_momentum": cycle}
        if cycle and rng.random() < 0.4:
            args.update(base_momentum=0.8, max_momentum=0.9)
        return args
    return {"StepLR": lambda: {"step_size": int(rng.integers(1, 4)),
                               "gamma": _pick(rng, [0.1, 0.5, 0.9])},
            "CosineAnnealingLR": lambda: {"T_max": int(rng.integers(2, 8)),
                                          "eta_min": _pick(rng, [0.0, 1e-4])},
            "LinearLR": lambda: {"start_factor": _pick(rng, [1 / 3, 0.5, 1.0]),
                                 "end_factor": _pick(rng, [1.0, 0.2]),
                                 "total_iters": int(rng.integers(1, 6))},
            "LinearWarmup": lambda: {"warmup_steps": int(rng.integers(1, 5)),
                                     "start_factor": _pick(rng, [0.1, 0.25])},
            "LambdaLR": lambda: {"lambda": _pick(rng, [("power", 0.8),
                                                       ("warmup_cosine", 2, 8)])},
            "ExponentialLR": lambda: {"gamma": _pick(rng, [0.7, 0.95])},
            "MultiStepLR": lambda: {"milestones": sorted({int(rng.integers(1, 6)),
                                                          int(rng.integers(1, 6))}),
                                    "gamma": _pick(rng, [0.1, 0.5])},
            "ConstantLR": lambda: {"factor": _pick(rng, [1 / 3, 0.5]),
                                   "total_iters": int(rng.integers(1, 5))},
            "PolynomialLR": lambda: {"total_iters": int(rng.integers(2, 8)),
                                     "power": _pick(rng, [0.5, 1.0, 2.0])},
            "CosineAnnealingWarmRestarts": lambda: {"T_0": int(rng.integers(1, 4)),
                                                    "T_mult": _pick(rng, [1, 2]),
                                                    "eta_min": _pick(rng, [0.0, 1e-4])},
            }[kind]()


def draw_scheduler(rng, optimizer, n_steps):
    """One schedule or none, on an optimizer of the kind ``optimizer``: a schedule of its
    own, or SequentialLR or ChainedScheduler of two or three (each of its own), or
    ReduceLROnPlateau stepped with the loss. A ChainedScheduler is not drawn inside a
    SequentialLR: there torch's first milestone is deliberately not followed
    (tests/test_schedules_against_torch.py,
    test_a_chain_inside_sequential_starts_as_the_chain_alone_not_as_torch)."""
    kind = _pick(rng, [None, None, None] + SIMPLE_SCHEDULES
                 + ["SequentialLR", "ChainedScheduler", "ReduceLROnPlateau"])
    if kind is None:
        return None
    if kind in ("SequentialLR", "ChainedScheduler"):
        parts = [_pick(rng, SIMPLE_SCHEDULES) for _ in range(_pick(rng, [2, 2, 3]))]
        args = {"schedules": [{"kind": part, "args": draw_schedule_args(rng, part, optimizer,
                                                                         n_steps)}
                              for part in parts]}
        if kind == "SequentialLR":
            args["milestones"] = sorted(rng.choice(np.arange(1, 7), size=len(parts) - 1,
                                                   replace=False).tolist())
        else:
            args["pass_optimizer"] = bool(rng.random() < 0.5)
    elif kind == "ReduceLROnPlateau":
        args = {"mode": _pick(rng, ["min", "min", "min", "max"]),
                "factor": _pick(rng, [0.5, 0.1]), "patience": int(rng.integers(0, 3)),
                "threshold": _pick(rng, [1e-4, 1e-2]),
                "threshold_mode": _pick(rng, ["rel", "abs"]),
                "cooldown": int(rng.integers(0, 2)), "min_lr": _pick(rng, [0.0, 1e-4])}
    else:
        args = draw_schedule_args(rng, kind, optimizer, n_steps)
    # chainrule's schedules as a port imports them: torch.optim.lr_scheduler.X becomes
    # chainrule.optim.lr_scheduler.X (or cr.optim.X)
    return {"kind": kind, "args": args, "every": _pick(rng, ["step", "step", "epoch"]),
            "module": _pick(rng, ["chainrule.optim.lr_scheduler", "chainrule.optim"])}


def draw_steps(rng, n, eval_only, frozen, n_params):
    steps = []
    frozen, unfreeze = set(frozen), int(rng.integers(1, n + 2)) if frozen else None
    for k in range(n):
        # requires_grad_ switched: the frozen ones back on, or one more off (its .grad
        # stays, as in torch, until a zero_grad clears it)
        toggle = set(frozen) if k == unfreeze else set()
        if rng.random() < 0.08 and len(frozen) + 1 < n_params:
            toggle.add(int(rng.integers(n_params)))
        frozen ^= toggle
        zero = _pick(rng, ["optimizer", "optimizer", "model", None]) if k else "optimizer"
        # (max_norm, norm_type, error_if_nonfinite: the gradients are finite)
        clip = _pick(rng, [None, None, ("norm", _pick(rng, [0.1, 1.0, 10.0]), 2.0,
                                        bool(rng.random() < 0.3)),
                           ("norm", 0.5, _pick(rng, ["inf", 1.0]), False),
                           ("value", _pick(rng, [0.05, 0.5]))])
        steps.append({"mode": "eval" if eval_only or rng.random() < 0.2 else "train",
                      "zero_grad": zero, "set_to_none": bool(rng.random() < 0.6),
                      "micro": _pick(rng, [1, 1, 2, 3]),
                      "retain_twice": bool(rng.random() < 0.15), "clip": clip,
                      # (an evaluation in train mode would run a Dropout of p > 0)
                      "no_grad_eval": _pick(rng, [None, None, None, "eval"] if eval_only
                                            else [None, None, None, "train", "eval"]),
                      "checkpoint": _pick(rng, [None] * 16 + ["memory", "file"]) if k
                      else None,
                      # the schedule built after the optimizer loads its state (torch's
                      # LinearLR and LambdaLR then set lr again from their step 0:
                      # test_a_schedule_built_after_the_optimizer_loads_gives_torchs_lr)
                      "schedule_built_last": bool(rng.random() < 0.5),
                      # opt.step(closure): the closure zeroes, computes and backpropagates
                      "closure": bool(rng.random() < 0.1),
                      # lr set by hand (a schedule goes on from it:
                      # test_a_learning_rate_set_by_hand_is_kept_by_the_schedule)
                      "lr_scale": None if rng.random() < 0.85 else _pick(rng, [0.5, 2.0]),
                      "requires_grad_toggled": sorted(toggle),
                      # the weights changed in place under no_grad(): p.mul_(c),
                      # p.add_(noise, alpha=c), clamped (p.clamp_(-c, c), as a WGAN's
                      # critic), p.addcmul_(noise, noise, value=c),
                      # p.addcdiv_(noise, 1 + noise * noise, value=c)
                      "weights_in_place": _pick(rng, [None] * 12 + [
                          ("mul_", 0.98), ("add_", 0.01), ("clamp_", _pick(rng, [0.3, 1.0])),
                          ("addcmul_", 0.01), ("addcdiv_", -0.02)])})
    return steps


def count_parameters(layers):
    """How many parameters ``model.parameters()`` lists (a tied Linear's once)."""
    count, ties = 0, set()
    for name, *args in layers:
        if name == "linear" and args[3] is not None:
            if args[3] in ties:
                continue
            ties.add(args[3])
        count += {"linear": lambda: 1 + args[2], "embedding": lambda: 1,
                  "conv1d": lambda: 1 + args[4], "conv2d": lambda: 1 + args[4],
                  "layernorm": lambda: args[1] + args[2], "batchnorm1d": lambda: 2 * args[2],
                  "batchnorm2d": lambda: 2 * args[2]}.get(name, lambda: 0)()
    return count


def parameters_of(layers, j):
    """The numbers in ``model.parameters()`` of the layer ``layers[j]``."""
    first = count_parameters(layers[:j])
    return set(range(first, count_parameters(layers[:j + 1])))


def keep_something_trained(layers, frozen, frozen_module, steps):
    """With a layer frozen as a whole too, the steps' requires_grad_ switches could
    freeze every parameter (a backward without a graph, refused by both libraries):
    a step's switches that would are dropped, and the layer is not frozen if that alone
    freezes everything. Returns the layer frozen (or None)."""
    if frozen_module is None:
        return None
    n, module = count_parameters(layers), parameters_of(layers, frozen_module)
    if not module or set(frozen) | module >= set(range(n)):
        for step in steps:
            step.pop("module_requires_grad", None)
        return None
    trained, switched = set(range(n)) - set(frozen) - module, set(frozen)
    for step in steps:
        after, now_switched = set(trained), set(switched)
        for i in step["requires_grad_toggled"]:
            (after.add if i in now_switched else after.discard)(i)
            now_switched ^= {i}
        if step.get("module_requires_grad") is not None:
            after = after | module if step["module_requires_grad"] else after - module
        if not after:  # (the step's switches dropped)
            step["requires_grad_toggled"] = []
            step.pop("module_requires_grad", None)
        else:
            trained, switched = after, now_switched
    return frozen_module


def draw_program(rng):
    """A random training program as plain data (see :func:`run_program`)."""
    eval_only = bool(rng.random() < 0.1)
    regularised = bool(rng.random() < 0.7)
    kind = _pick(rng, ["SGD", "SGD", "Adam", "AdamW", *HYPERPARAMETERS]) \
        if rng.random() > LBFGS_SHARE else "LBFGS"
    loss = draw_loss(rng)
    # (adam: an optimizer that divides by a running size of each gradient entry)
    front, layers = draw_model(rng, loss, eval_only, regularised,
                               kind not in ("SGD", "LBFGS"))
    n_params = count_parameters(layers)
    optimizer = draw_optimizer(rng, kind, n_params)
    frozen = sorted(set(rng.choice(n_params, size=int(rng.integers(0, 2)) if n_params > 1
                                   else 0).tolist()))
    n_steps = int(rng.integers(3, 8)) if kind != "LBFGS" else int(rng.integers(2, 4))
    # none, one, or two schedules on the one optimizer (each scales the lr it finds)
    schedulers = [spec for spec in [draw_scheduler(rng, kind, n_steps)] if spec is not None] \
        if kind != "LBFGS" else []
    if schedulers and rng.random() < 0.25:
        schedulers += [spec for spec in [draw_scheduler(rng, kind, n_steps)]
                       if spec is not None]
    late = None
    if not schedulers and len(optimizer["groups"]) > 1 and rng.random() < 0.4:
        # (a schedule made before add_param_group knows nothing of the new group, in
        # torch as in chainrule: the two are not drawn together)
        late = {"at": int(rng.integers(1, 4)), "group": optimizer["groups"].pop()}
        if rng.random() < 0.5:
            late["group"]["lr"] = optimizer["defaults"]["lr"] * 3
    steps = draw_steps(rng, n_steps, eval_only, frozen, n_params)
    # a layer with weights frozen with Module.requires_grad_(False), switched back on
    # (or off again) at a step
    with_weights = [j for j, layer in enumerate(layers)
                    if layer[0] in ("linear", "conv1d", "conv2d", "embedding")]
    frozen_module = _pick(rng, with_weights) if rng.random() < 0.15 else None
    if frozen_module is not None and rng.random() < 0.6:
        steps[int(rng.integers(1, n_steps))]["module_requires_grad"] = \
            bool(rng.random() < 0.8)
    frozen_module = keep_something_trained(layers, frozen, frozen_module, steps)
    if kind == "LBFGS":  # every step a step(closure) that zeroes the gradients
        for step in steps:
            step.update(closure=True, micro=1, clip=None,
                        zero_grad=_pick(rng, ["optimizer", "model"]))
    return {"data_seed": int(rng.integers(2 ** 31)), "batch": int(rng.integers(3, 7)),
            "front": front, "layers": layers, "loss": loss, "optimizer": optimizer,
            "late_group": late, "frozen": frozen, "frozen_module": frozen_module,
            "schedulers": schedulers,
            "ema": _pick(rng, [None, None, None, (0.9, "lerp_"), (0.5, "lerp_"),
                               (0.9, "mul_add_")]),
            "steps_per_epoch": int(rng.integers(2, 4)),
            "steps": steps}


# =======================================================================================
# The same program in each library
# =======================================================================================

def build_model(lib, layers):
    """``lib.Sequential`` of the layers, ``lib`` torch.nn or chainrule.nn: the same names
    and arguments (chainrule's layers that draw numbers are given a seed; the weights
    are overwritten anyway)."""
    seed = {} if lib is torch.nn else {"rng": 0}
    simple = {"relu": lib.ReLU, "tanh": lib.Tanh, "sigmoid": lib.Sigmoid, "silu": lib.SiLU,
              "identity": lib.Identity, "flatten": lib.Flatten}
    made, ties = [], {}
    for name, *a in layers:
        if name == "linear":
            if a[3] in ties:
                made.append(ties[a[3]])
                continue
            module = lib.Linear(a[0], a[1], bias=a[2], **seed)
            if a[3] is not None:
                ties[a[3]] = module
        elif name in simple:
            module = simple[name]()
        elif name == "gelu":
            module = lib.GELU(approximate=a[0])
        elif name == "leaky_relu":
            module = lib.LeakyReLU(a[0])
        elif name == "softplus":
            module = lib.Softplus(beta=a[0], threshold=a[1])
        elif name == "elu":
            module = lib.ELU(alpha=a[0])
        elif name == "embedding":
            module = lib.Embedding(a[0], a[1], padding_idx=a[2], **seed)
        elif name == "conv1d":
            module = lib.Conv1d(a[0], a[1], a[2], padding=a[3], bias=a[4], **seed)
        elif name == "conv2d":
            module = lib.Conv2d(a[0], a[1], a[2], padding=a[3], bias=a[4], **seed)
        elif name in ("batchnorm1d", "batchnorm2d"):
            module = (lib.BatchNorm1d if name == "batchnorm1d" else lib.BatchNorm2d)(
                a[0], momentum=a[1], affine=a[2], track_running_stats=a[3])
        elif name == "layernorm":
            module = lib.LayerNorm(a[0], elementwise_affine=a[1], bias=a[2])
        elif name == "dropout":
            module = lib.Dropout(a[0], **seed)
        elif name == "avgpool2d":
            module = lib.AvgPool2d(a[0])
        elif name == "log_softmax":
            module = lib.LogSoftmax(dim=1)
        else:
            raise AssertionError(name)
        made.append(module)
    model = lib.Sequential(*made)
    return model.double() if lib is torch.nn else model


def draw_weights(rng, torch_model):
    """Random numbers for each entry of torch's state_dict, of a size that keeps the
    activations of order 1 (a norm's weights around 1, its running variance positive)."""
    weights = {}
    for name, value in torch_model.state_dict().items():
        shape = tuple(value.shape)
        if name.endswith("num_batches_tracked"):
            weights[name] = np.array(int(rng.integers(0, 4)))
        elif name.endswith("running_var"):
            weights[name] = rng.uniform(0.5, 2.0, shape)
        elif name.endswith("running_mean") or name.endswith("bias"):
            weights[name] = 0.3 * rng.standard_normal(shape)
        elif len(shape) == 1:  # a norm's weight
            weights[name] = 1.0 + 0.3 * rng.standard_normal(shape)
        else:
            weights[name] = rng.standard_normal(shape) / math.sqrt(np.prod(shape[1:]))
    for name, module in torch_model.named_modules():
        if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None:
            weights[f"{name}.weight"][module.padding_idx] = 0.0
    return weights


def build_loss(lib, spec):
    r = spec["reduction"]
    kind = spec["kind"]
    if kind == "mse":
        return lib.MSELoss(reduction=r)
    if kind == "l1":
        return lib.L1Loss(reduction=r)
    if kind == "smooth_l1":
        return lib.SmoothL1Loss(reduction=r, beta=spec["beta"])
    if kind == "huber":
        return lib.HuberLoss(reduction=r, delta=spec["delta"])
    def tensor(key):
        value = spec.get(key)
        if value is None:
            return None
        return torch.tensor(value, dtype=torch.float64) if lib is torch.nn else cr.tensor(value)
    if kind == "ce":
        return lib.CrossEntropyLoss(weight=tensor("weight"), reduction=r,
                                    label_smoothing=spec["label_smoothing"],
                                    ignore_index=spec["ignore_index"])
    if kind == "nll":
        return lib.NLLLoss(weight=tensor("weight"), ignore_index=spec["ignore_index"],
                           reduction=r)
    if kind == "bce_logits":
        return lib.BCEWithLogitsLoss(weight=tensor("weight"), reduction=r,
                                     pos_weight=tensor("pos_weight"))
    return lib.BCELoss(weight=tensor("weight"), reduction=r)


def draw_batch(rng, recipe):
    """One batch (inputs, targets) as NumPy arrays."""
    n, front, loss = recipe["batch"], recipe["front"], recipe["loss"]
    if front["kind"] == "dense":
        x = rng.standard_normal((n, front["features"]))
    elif front["kind"] == "embedding":
        x = rng.integers(0, front["vocab"], (n, front["tokens"]))
    elif front["kind"] == "conv1d":
        x = rng.standard_normal((n, front["channels"], front["length"]))
    else:
        x = rng.standard_normal((n, front["channels"], front["side"], front["side"]))
    if loss["kind"] in ("ce", "nll"):
        classes, ignore = loss["classes"], loss["ignore_index"]
        shape = (n,) if not loss["extra_dim"] else (n, loss["extra_dim"])
        if loss.get("probabilities"):  # each row's (each position's) probabilities
            scores = np.exp(2 * rng.standard_normal((n, classes) + shape[1:]))
            return x, scores / scores.sum(axis=1, keepdims=True)
        y = rng.integers(0, classes, shape)
        if loss["ignored_rows"]:
            y[rng.random(shape) < 0.3] = ignore
        first = (0,) * len(shape)
        if y[first] == ignore:  # at least one row counts (else torch's mean is 0/0)
            y[first] = (ignore + 1) % classes if ignore >= 0 else 0
    elif loss["kind"] in ("bce_logits", "bce"):
        y = rng.uniform(0.0, 1.0, (n, loss["outputs"]))
        y[rng.random(y.shape) < 0.3] = 1.0
    else:
        y = rng.standard_normal((n, loss["outputs"]))
    return x, y


def lr_lambda(spec):
    if spec[0] == "power":
        return lambda k: spec[1] ** k
    warm, total = spec[1], spec[2]
    return lambda k: min(1.0, (k + 1) / warm) * (1 + math.cos(math.pi * min(k, total)
                                                              / total)) / 2


def build_schedule(S, opt, spec):
    """The schedule of ``spec`` from the module ``S`` (torch.optim.lr_scheduler,
    chainrule.optim.lr_scheduler or chainrule.optim), on the optimizer ``opt``."""
    a, kind = spec["args"], spec["kind"]
    if kind == "LinearWarmup" and S is torch.optim.lr_scheduler:  # (chainrule's own)
        return S.LinearLR(opt, start_factor=a["start_factor"], end_factor=1.0,
                          total_iters=a["warmup_steps"])
    if kind == "LambdaLR":
        return S.LambdaLR(opt, lr_lambda(a["lambda"]))
    if kind == "SequentialLR":
        return S.SequentialLR(opt, [build_schedule(S, opt, part) for part in a["schedules"]],
                              milestones=a["milestones"])
    if kind == "ChainedScheduler":
        parts = [build_schedule(S, opt, part) for part in a["schedules"]]
        return S.ChainedScheduler(parts, opt) if a["pass_optimizer"] else \
            S.ChainedScheduler(parts)
    return getattr(S, kind)(opt, **a)


def listed(entry):
    """An optimizer's state for one parameter, LBFGS's lists (its history) as an entry
    for each of their items: ``old_dirs[0]``, ..."""
    flat = {}
    for key, value in entry.items():
        if isinstance(value, list):
            flat[f"{key} length"] = np.array(len(value))
            flat.update({f"{key}[{j}]": x for j, x in enumerate(value)})
        else:
            flat[key] = value
    return flat


class TorchSide:
    """The program in torch: what a PyTorch user writes."""

    nn, name = torch.nn, "torch"
    largest_grad = 0.0  # the norm of the largest gradient so far (see same_grads)

    def __init__(self, recipe, weights):
        self.recipe = recipe
        lbfgs = recipe["optimizer"]["kind"] == "LBFGS"
        self.tol = (LBFGS_RTOL, LBFGS_ATOL) if lbfgs else (RTOL, ATOL)
        self.state_tol = (LBFGS_STATE_RTOL, LBFGS_ATOL) if lbfgs else self.tol
        self.groups = [dict(g) for g in recipe["optimizer"]["groups"]]
        self.frozen = set(recipe["frozen"])
        self.module_frozen = recipe["frozen_module"] is not None
        self.build(weights)
        self.ema = None
        if recipe["ema"] is not None:  # a running average of the weights, in a copy
            self.ema = copy.deepcopy(self.model)
            self.ema.requires_grad_(False)

    def update_ema(self):
        decay, how = self.recipe["ema"]
        with self.no_grad():
            for average, p in zip(self.ema.parameters(), self.model.parameters()):
                if how == "lerp_":
                    average.lerp_(p.detach(), 1 - decay)
                else:
                    average.mul_(decay).add_(p.detach(), alpha=1 - decay)

    def build(self, weights, schedule=True):
        recipe = self.recipe
        self.model = build_model(self.nn, recipe["layers"])
        self.load_weights(weights)
        params = list(self.model.parameters())
        for i in self.frozen:
            params[i].requires_grad_(False)
        if recipe["frozen_module"] is not None:  # a layer frozen as a whole, or again on
            self.model[recipe["frozen_module"]].requires_grad_(not self.module_frozen)
        self.opt = self.make_optimizer(params)
        self.scheds = [self.make_scheduler(spec) for spec in recipe["schedulers"]] \
            if schedule else []
        self.loss_fn = build_loss(self.nn, recipe["loss"])

    def load_weights(self, weights):
        self.model.load_state_dict({k: torch.from_numpy(np.array(v))
                                    for k, v in weights.items()})

    def make_optimizer(self, params):
        spec = self.recipe["optimizer"]
        cls = getattr(torch.optim, spec["kind"])
        return cls([{**g, "params": [params[i] for i in g["params"]]} for g in self.groups],
                   **spec["defaults"])

    schedules = torch.optim.lr_scheduler

    def make_scheduler(self, spec):
        return build_schedule(self.schedules, self.opt, spec)

    def zero_grad(self, step):
        if step["zero_grad"] == "optimizer":
            self.opt.zero_grad(set_to_none=step["set_to_none"])
        elif step["zero_grad"] == "model":
            self.model.zero_grad(set_to_none=step["set_to_none"])

    def loss(self, x, y, step):
        """The micro-batch's loss, as the loop backpropagates it."""
        out, spec = self.model(self.inputs(x)), self.recipe["loss"]
        if spec.get("extra_dim"):  # (N, C * d) to (N, C, d)
            out = out.reshape(out.shape[0], spec["classes"], spec["extra_dim"])
            if spec["kind"] == "nll":
                out = self.nn.functional.log_softmax(out, dim=1)
        loss = self.loss_fn(out, self.targets(y))
        if self.recipe["loss"]["reduction"] == "none":
            loss = loss.mean()
        return loss / step["micro"] if step["micro"] > 1 else loss

    def inputs(self, x):
        return torch.from_numpy(x)

    def targets(self, y):
        return torch.from_numpy(y)

    def no_grad(self):
        return torch.no_grad()

    def value(self, t):
        return t.detach().numpy()

    def clip(self, clip):
        """torch.nn.utils.clip_grad_norm_ or clip_grad_value_ (chainrule.nn.utils's in a
        port): the total norm before clipping, None for clipping by value."""
        params = list(self.model.parameters())
        if clip[0] == "value":
            self.nn.utils.clip_grad_value_(params, clip[1])
            return None
        norm_type = float("inf") if clip[2] == "inf" else clip[2]
        total = self.nn.utils.clip_grad_norm_(params, clip[1], norm_type=norm_type,
                                              **({"error_if_nonfinite": True}
                                                 if clip[3] else {}))
        return self.value(total)

    def save(self):
        return (copy.deepcopy(self.model.state_dict()), copy.deepcopy(self.opt.state_dict()),
                [copy.deepcopy(sched.state_dict()) for sched in self.scheds])

    def through_file(self, saved, path):
        model, opt, sched = saved
        torch.save({"model": model, "optimizer": opt, "scheduler": sched}, path)
        loaded = torch.load(path)
        return loaded["model"], loaded["optimizer"], loaded["scheduler"]

    def restore(self, saved, fresh_weights, schedule_last):
        """Resume from a checkpoint, as a training script does after a restart: a model,
        an optimizer and a schedule built afresh, then each loads its state (the
        schedule built before the optimizer loads, or after), its parameters frozen as
        they were."""
        trained = [p.requires_grad for p in self.model.parameters()]
        self.build(fresh_weights, schedule=not schedule_last)
        for p, flag in zip(self.model.parameters(), trained, strict=True):
            p.requires_grad_(flag)
        model_state, opt_state, sched_state = saved
        self.model.load_state_dict(model_state)
        self.opt.load_state_dict(opt_state)
        if schedule_last:
            self.scheds = [self.make_scheduler(spec) for spec in self.recipe["schedulers"]]
        for sched, state in zip(self.scheds, sched_state, strict=True):
            sched.load_state_dict(state)

    def model_state(self, model=None):
        return {k: v.numpy() for k, v in (model or self.model).state_dict().items()}

    def optimizer_state(self):
        state = self.opt.state_dict()
        return ({i: {k: None if v is None else np.asarray(v)
                     for k, v in listed(entry).items()}
                 for i, entry in state["state"].items()}, state["param_groups"])

    def grads(self):
        return [None if p.grad is None else p.grad.numpy() for p in self.model.parameters()]


class ChainruleSide(TorchSide):
    """The same program ported to chainrule by changing the names."""

    nn, name = nn, "chainrule"

    def load_weights(self, weights):
        self.model.load_torch_state_dict(weights)

    def make_optimizer(self, params):
        spec = self.recipe["optimizer"]
        cls = getattr(optim, spec["kind"])
        return cls([{**g, "params": [params[i] for i in g["params"]]} for g in self.groups],
                   **spec["defaults"])

    def make_scheduler(self, spec):
        schedules = {"chainrule.optim.lr_scheduler": optim.lr_scheduler,
                     "chainrule.optim": optim}[spec["module"]]
        return build_schedule(schedules, self.opt, spec)

    def inputs(self, x):
        if x.dtype.kind == "i" and not self.recipe["front"]["as_tensor"]:
            return x  # indices as an int array
        return cr.tensor(x)

    def targets(self, y):
        if y.dtype.kind == "i" and not self.recipe["loss"].get("labels_as_tensor"):
            return y
        return cr.tensor(y)

    def no_grad(self):
        return cr.no_grad()

    def value(self, t):
        assert t.dtype == F64, f"chainrule's output is {t.dtype}"
        return np.asarray(t.data)

    def save(self):
        return (self.model.state_dict(), self.opt.state_dict(),
                [sched.state_dict() for sched in self.scheds])

    def through_file(self, saved, path):
        model, opt, sched = saved
        cr.save({"model": model, "optimizer": opt, "scheduler": sched}, path)
        loaded = cr.load(path)
        return loaded["model"], loaded["optimizer"], loaded["scheduler"]

    def model_state(self, model=None):
        return (model or self.model).torch_state_dict()

    def optimizer_state(self):
        state = self.opt.state_dict()
        return {i: listed(entry) for i, entry in state["state"].items()}, \
            state["param_groups"]

    def grads(self):
        grads = []
        for p in self.model.parameters():
            assert p.data.dtype == F64, f"a parameter drifted to {p.data.dtype}"
            if p.grad is not None:
                assert isinstance(p.grad, np.ndarray) and p.grad.dtype == F64, \
                    f"a gradient is {type(p.grad).__name__} of {p.grad.dtype}"
            grads.append(p.grad)
        return grads


# =======================================================================================
# Running a program in both, comparing after every step
# =======================================================================================

def same(what, ours, theirs, floor=0.0, tol=(RTOL, ATOL)):
    """ours (chainrule's, float64) equals theirs (torch's) to RTOL of its norm, plus ATOL
    an entry, plus ``floor`` (the rounding of the sums an array is made of)."""
    rtol, atol = tol
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, torch's {theirs.shape}"
    if theirs.dtype.kind in "iub":
        assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype}, torch's {theirs.dtype}"
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    assert ours.dtype == F64, f"{what}: dtype {ours.dtype}, expected float64"
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs)), f"{what}: {ours} {theirs}"
    error, size = np.linalg.norm(ours - theirs), np.linalg.norm(theirs)
    assert error <= rtol * size + atol * math.sqrt(theirs.size) + floor, (
        f"{what}: off by {error:.3g} in norm, {error / size:.3g} of torch's "
        f"(allowed {rtol:g}, {atol:g} an entry, and {floor:.3g})\n ours:  {ours!r}\n torch: {theirs!r}")


def same_grads(when, ours, theirs):
    """The same gradients, None where torch's is None. A gradient that is 0 but for
    rounding (a bias a train-mode batch norm subtracts again, under SGD) is as far
    from torch's as the rounding of the sums it comes from, which scale with the
    largest gradient: RTOL of that is allowed on every gradient. (The largest so far in
    the run: clipping shrinks the largest gradient and not the rounding, and a gradient
    not zeroed keeps its rounding.)"""
    grads = theirs.grads()
    theirs.largest_grad = largest = max(
        [theirs.largest_grad] + [np.linalg.norm(g) for g in grads if g is not None])
    for i, (a, b) in enumerate(zip(ours.grads(), grads, strict=True)):
        assert (a is None) == (b is None), \
            f"{when}: parameter {i}'s grad is {'None' if a is None else 'an array'}, " \
            f"torch's {'None' if b is None else 'an array'}"
        if b is not None:
            same(f"{when}: parameter {i}'s grad", a, b, floor=theirs.tol[0] * largest,
                 tol=theirs.tol)


def same_state(when, ours, theirs):
    for name, model in [("model", "model"), ("running average", "ema")]:
        if getattr(theirs, model, None) is None:
            continue
        a = ours.model_state(getattr(ours, model))
        b = theirs.model_state(getattr(theirs, model))
        assert list(a) == list(b), f"{when}: {name}'s keys {list(a)}, torch's {list(b)}"
        for key in b:
            same(f"{when}: {name}'s state {key!r}", a[key], b[key], tol=theirs.tol)
    (state_a, groups_a), (state_b, groups_b) = ours.optimizer_state(), theirs.optimizer_state()
    assert sorted(state_a) == sorted(state_b), \
        f"{when}: optimizer state for parameters {sorted(state_a)}, torch's {sorted(state_b)}"
    for i in state_b:
        assert set(state_a[i]) == set(state_b[i]), \
            f"{when}: parameter {i}'s state {sorted(state_a[i])}, torch's {sorted(state_b[i])}"
        for key in state_b[i]:
            value, expected = state_a[i][key], state_b[i][key]
            if key == "step":  # (torch's is a float tensor, chainrule's a count)
                assert float(value) == float(expected), f"{when}: step {value}"
            elif expected is None or value is None:  # (LBFGS's history before it fills)
                assert value is expected, f"{when}: parameter {i}'s {key!r} {value!r}"
            else:
                same(f"{when}: parameter {i}'s {key!r}", value, expected, tol=theirs.state_tol)
    assert len(groups_a) == len(groups_b), f"{when}: {len(groups_a)} groups"
    for g, (ga, gb) in enumerate(zip(groups_a, groups_b)):
        for key, value in ga.items():
            assert key in gb, f"{when}: group {g} has {key!r}, torch's has not"
            if isinstance(value, tuple) and len(value) == len(gb[key]):  # betas
                same(f"{when}: group {g}'s {key!r}", value, gb[key])
            elif key == "params" or isinstance(value, bool) or value is None \
                    or isinstance(value, str):
                assert value == gb[key], f"{when}: group {g}'s {key} {value!r}, {gb[key]!r}"
            else:
                same(f"{when}: group {g}'s {key!r}", float(value), float(gb[key]))
    for j, (a, b) in enumerate(zip(ours.scheds, theirs.scheds, strict=True)):
        same(f"{when}: schedule {j}'s get_last_lr()", a.get_last_lr(), b.get_last_lr())


def run_program(recipe):
    """Run a recipe of :func:`draw_program` in torch and in chainrule, step by step,
    asserting after each step that the two agree (see the module's docstring)."""
    dtype = torch.get_default_dtype()
    # a float64 PyTorch program (torch keeps NAdam's mu_product in the default dtype)
    torch.set_default_dtype(torch.float64)
    try:
        _run_program(recipe)
    finally:
        torch.set_default_dtype(dtype)


def _run_program(recipe):
    rng = np.random.default_rng(recipe["data_seed"])
    torch_model = build_model(torch.nn, recipe["layers"])
    weights = draw_weights(rng, torch_model)
    sides = ours, theirs = ChainruleSide(recipe, weights), TorchSide(recipe, weights)
    ours_params = ours.model._torch_layout()
    assert [id(ours_params[name][0]) for name, _ in theirs.model.named_parameters()] == \
        [id(p) for p in ours.model.parameters()], "parameters() in another order than torch's"
    same_state("at the start", ours, theirs)
    late = recipe["late_group"]
    with tempfile.TemporaryDirectory() as folder:
        for k, step in enumerate(recipe["steps"]):
            if step["checkpoint"]:
                fresh = draw_weights(rng, torch_model)
                for side in sides:
                    saved = side.save()
                    if step["checkpoint"] == "file":
                        saved = side.through_file(saved, os.path.join(folder, side.name))
                    side.restore(saved, fresh, step["schedule_built_last"])
                same_state(f"step {k}, resumed from a checkpoint", ours, theirs)
            run_step(recipe, k, step, sides, late, rng)


def run_step(recipe, k, step, sides, late, rng):
    ours, theirs = sides
    when = f"step {k}"
    for side in sides:
        params = list(side.model.parameters())
        if late is not None and late["at"] == k:
            group = late["group"]
            side.opt.add_param_group({**group, "params": [params[i] for i in group["params"]]})
            side.groups.append(dict(group))
        for i in step["requires_grad_toggled"]:
            params[i].requires_grad_(i in side.frozen)
            side.frozen ^= {i}
        if step.get("module_requires_grad") is not None:
            side.model[recipe["frozen_module"]].requires_grad_(step["module_requires_grad"])
            side.module_frozen = not step["module_requires_grad"]
        if step["lr_scale"] is not None:
            for group in side.opt.param_groups:
                group["lr"] = group["lr"] * step["lr_scale"]
        side.model.train(step["mode"] == "train")
    if step["weights_in_place"] is not None:
        method, c = step["weights_in_place"]
        noises = [rng.standard_normal(tuple(p.shape)) for p in theirs.model.parameters()]
        for side in sides:
            with side.no_grad():
                for p, noise in zip(side.model.parameters(), noises):
                    noise = side.inputs(noise)
                    if method == "mul_":
                        p.mul_(c)
                    elif method == "add_":
                        p.add_(noise, alpha=c)
                    elif method == "clamp_":
                        p.clamp_(-c, c)
                    elif method == "addcmul_":
                        p.addcmul_(noise, noise, value=c)
                    else:
                        p.addcdiv_(noise, 1 + noise * noise, value=c)
        same_state(f"{when}, after changing the weights in place", ours, theirs)
    batches = [draw_batch(rng, recipe) for _ in range(step["micro"])]
    if step["closure"]:
        x, y = batches[0]
        losses = []
        for side in sides:
            def closure(side=side):
                side.zero_grad(step)
                loss = side.loss(x, y, step)
                loss.backward()
                return loss
            side.last_loss = side.opt.step(closure)
            losses.append(side.value(side.last_loss))
        same(f"{when}: the loss opt.step(closure) returned", *losses, tol=theirs.tol)
        same_grads(f"{when}, after opt.step(closure)", ours, theirs)
    else:
        for side in sides:
            side.zero_grad(step)
        same_grads(f"{when}, after zero_grad", ours, theirs)
        for m, (x, y) in enumerate(batches):
            losses = []
            for side in sides:
                loss = side.loss(x, y, step)
                if step["retain_twice"]:
                    loss.backward(retain_graph=True)
                loss.backward()
                side.last_loss = loss
                losses.append(side.value(loss))
            same(f"{when}, micro-batch {m}: the loss", *losses, tol=theirs.tol)
        same_grads(f"{when}, after backward", ours, theirs)
        if step["clip"] is not None:
            norms = [side.clip(step["clip"]) for side in sides]
            if norms[1] is not None:
                same(f"{when}: the total norm clipped", *norms)
            same_grads(f"{when}, after clipping", ours, theirs)
        for side in sides:
            side.opt.step()
    if recipe["ema"] is not None:
        for side in sides:
            side.update_ema()
    same_state(f"{when}, after opt.step()", ours, theirs)
    for j, spec in enumerate(recipe["schedulers"]):
        if spec["every"] == "step" or (k + 1) % recipe["steps_per_epoch"] == 0:
            for side in sides:
                if spec["kind"] == "ReduceLROnPlateau":  # stepped with the step's loss
                    side.scheds[j].step(side.last_loss.item())
                else:
                    side.scheds[j].step()
            same_state(f"{when}, after schedule {j}'s step()", ours, theirs)
    if step["no_grad_eval"] is not None:
        x, _ = draw_batch(rng, recipe)
        outputs = []
        for side in sides:
            side.model.train(step["no_grad_eval"] == "train")
            with side.no_grad():
                out = side.model(side.inputs(x))
            assert not out.requires_grad, f"{side.name}: no_grad() recorded a graph"
            outputs.append(side.value(out))
            if side.ema is not None:
                with side.no_grad():
                    outputs.append(side.value(side.ema.eval()(side.inputs(x))))
        for i, name in enumerate(["the model", "the running average"][:len(outputs) // 2]):
            same(f"{when}: a no_grad() evaluation of {name}", outputs[i],
                 outputs[i + len(outputs) // 2], tol=theirs.tol)
        same_state(f"{when}, after the no_grad() evaluation", ours, theirs)


def reproducer(recipe):
    return "run_program(" + pprint.pformat(recipe, width=88, sort_dicts=False) + ")"


# =======================================================================================
# The draw
# =======================================================================================

@pytest.mark.parametrize("program", range(N_PROGRAMS))
def test_a_random_training_program_gives_torchs_numbers(program):
    recipe = draw_program(RNG)
    try:
        run_program(recipe)
    except Exception as error:  # (an error raised by one library only, too)
        raise AssertionError(f"{type(error).__name__}: {error}\n\nreproducer:\n"
                             f"{reproducer(recipe)}") from error


# =======================================================================================
# What chainrule refuses, clearly: left out of the draw
# =======================================================================================

def _one_parameter():
    return [cr.tensor(np.ones(2), requires_grad=True)]


REFUSED = [
    ("SGD(params, lr, momentum) positionally", lambda: optim.SGD(_one_parameter(), 0.1, 0.9),
     TypeError, "positional"),
]


@pytest.mark.parametrize("what, make, error, names", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_chainrule_lacks_is_refused_in_one_line_naming_it(what, make, error, names):
    with pytest.raises(error) as refused:
        make()
    message = str(refused.value)
    assert "\n" not in message and names in message, message


# =======================================================================================
# Schedules and optimizer state where a port goes wrong most easily, each at its smallest
# =======================================================================================

def _both_sgd(lr=1.0, **kwargs):
    """One parameter w = [1, 2] under SGD in each library."""
    theirs = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    ours = cr.tensor([1.0, 2.0], requires_grad=True)
    return (ours, optim.SGD([ours], lr=lr, **kwargs)), \
        (theirs, torch.optim.SGD([theirs], lr=lr, **kwargs))


def _learning_rates(ours, theirs):
    return ours.param_groups[0]["lr"], theirs.param_groups[0]["lr"]


def test_sgd_without_momentum_keeps_no_state_as_torch():
    """An SGD without momentum has nothing to remember: ``state_dict()["state"]`` is
    ``{}`` after a step, in both.

        w = cr.tensor([1.0, 2.0], requires_grad=True)
        opt = cr.optim.SGD([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        opt.state_dict()["state"]        # {}, as torch's
    """
    (w, ours), (t, theirs) = _both_sgd(lr=0.1)
    for p in (w, t):
        (p * p).sum().backward()
    ours.step()
    theirs.step()
    assert theirs.state_dict()["state"] == {}
    assert ours.state_dict()["state"] == {}


def test_two_schedules_on_one_optimizer_compose_as_in_torch():
    """A decay and another decay as two schedules on one optimizer (a PyTorch habit):
    each scales the lr the other left, so they multiply.

        opt = cr.optim.SGD([w], lr=1.0)
        a = cr.optim.StepLR(opt, step_size=1, gamma=0.5)
        b = cr.optim.ExponentialLR(opt, gamma=0.9)
        opt.step(); a.step(); b.step()
        opt.param_groups[0]["lr"]         # 0.45, as torch's
    """
    (w, ours), (t, theirs) = _both_sgd()
    S = torch.optim.lr_scheduler
    ours_schedules = [optim.StepLR(ours, step_size=1, gamma=0.5),
                      optim.ExponentialLR(ours, gamma=0.9)]
    theirs_schedules = [S.StepLR(theirs, step_size=1, gamma=0.5), S.ExponentialLR(theirs, 0.9)]
    ours.step()
    theirs.step()
    for schedule in ours_schedules + theirs_schedules:
        schedule.step()
    assert _learning_rates(ours, theirs)[1] == pytest.approx(0.45)
    same("lr", *_learning_rates(ours, theirs))


def test_a_learning_rate_set_by_hand_is_kept_by_the_schedule():
    """Halving ``param_groups[0]["lr"]`` by hand (on a plateau, say) while a StepLR runs:
    the schedule scales the lr it finds, so the halving stays.

        opt = cr.optim.SGD([w], lr=1.0)
        sched = cr.optim.StepLR(opt, step_size=2, gamma=0.5)
        opt.step(); sched.step()
        opt.param_groups[0]["lr"] *= 0.5   # 0.5
        opt.step(); sched.step()
        opt.param_groups[0]["lr"]          # 0.25, as torch's
    """
    (w, ours), (t, theirs) = _both_sgd()
    sched_ours = optim.StepLR(ours, step_size=2, gamma=0.5)
    sched_theirs = torch.optim.lr_scheduler.StepLR(theirs, step_size=2, gamma=0.5)
    for k in range(2):
        for opt, sched in ((ours, sched_ours), (theirs, sched_theirs)):
            opt.step()
            sched.step()
            if k == 0:
                opt.param_groups[0]["lr"] *= 0.5
    assert _learning_rates(ours, theirs)[1] == pytest.approx(0.25)
    same("lr", *_learning_rates(ours, theirs))


def test_a_schedule_built_after_the_optimizer_loads_gives_torchs_lr():
    """Resuming with the schedule built after ``optimizer.load_state_dict`` (torch's
    examples build it before): a LinearLR, at its step 0, multiplies the loaded lr by
    ``start_factor`` again, and its ``load_state_dict`` leaves the lr to the optimizer's,
    so the run goes on from the smaller lr, in both libraries.

        opt = cr.optim.SGD([w], lr=1.0)
        sched = cr.optim.LinearLR(opt, start_factor=0.5, total_iters=4)
        opt.step(); sched.step()                            # lr 0.625
        saved, saved_schedule = opt.state_dict(), sched.state_dict()
        opt = cr.optim.SGD([w], lr=1.0); opt.load_state_dict(saved)
        sched = cr.optim.LinearLR(opt, start_factor=0.5, total_iters=4)
        sched.load_state_dict(saved_schedule)
        opt.param_groups[0]["lr"]                           # 0.3125, as torch's
    """
    (w, ours), (t, theirs) = _both_sgd()
    S = torch.optim.lr_scheduler
    make_ours = lambda opt: optim.LinearLR(opt, start_factor=0.5, total_iters=4)
    make_theirs = lambda opt: S.LinearLR(opt, start_factor=0.5, total_iters=4)
    resumed = []
    for p, opt, make, cls in ((w, ours, make_ours, optim.SGD),
                              (t, theirs, make_theirs, torch.optim.SGD)):
        sched = make(opt)
        opt.step()
        sched.step()
        saved, saved_schedule = copy.deepcopy(opt.state_dict()), sched.state_dict()
        opt = cls([p], lr=1.0)
        opt.load_state_dict(saved)
        make(opt).load_state_dict(saved_schedule)
        resumed.append(opt)
    assert _learning_rates(*resumed)[1] == pytest.approx(0.3125)
    same("lr", *_learning_rates(*resumed))


# =======================================================================================
# What the draw found different from torch, each at its smallest
# =======================================================================================

def test_bce_loss_gradient_at_a_probability_of_0_or_1_is_torchs():
    """A Sigmoid that rounds to exactly 1.0 (past 37) or 0.0 (past -745) before
    BCELoss, as LBFGS's long steps make happen in a training program: torch clamps
    each log at -100 and divides the gradient by max(x (1 - x), 1e-12), so its loss and
    gradient are finite, and chainrule's are torch's.

        x = cr.tensor([40.0, -800.0], requires_grad=True)
        cr.nn.BCELoss()(cr.sigmoid(x), cr.tensor([0.5, 0.3])).backward()
        x.grad                                  # [0., -0.], as torch's
        p = cr.tensor([1.0, 0.0, 0.5], requires_grad=True)
        cr.nn.BCELoss()(p, cr.tensor([0.5, 0.3, 1.0])).backward()
        p.grad                                  # [1.667e11, -1e11, -0.667], as torch's
    """
    y = np.array([0.5, 0.3])
    x, t = cr.tensor([40.0, -800.0], requires_grad=True), \
        torch.tensor([40.0, -800.0], dtype=torch.float64, requires_grad=True)
    ours = nn.BCELoss()(cr.sigmoid(x), cr.tensor(y))
    theirs = torch.nn.BCELoss()(torch.sigmoid(t), torch.from_numpy(y))
    ours.backward()
    theirs.backward()
    same("the loss", np.asarray(ours.data), theirs.detach().numpy())
    same("the gradient", x.grad, t.grad.numpy())
    y = np.array([0.5, 0.3, 1.0])
    p, q = cr.tensor([1.0, 0.0, 0.5], requires_grad=True), \
        torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64, requires_grad=True)
    nn.BCELoss()(p, cr.tensor(y)).backward()
    torch.nn.BCELoss()(q, torch.from_numpy(y)).backward()
    same("the gradient at 1 and 0", p.grad, q.grad.numpy())


def test_bce_loss_gradient_near_a_probability_of_0_or_1_is_torchs():
    """torch's BCELoss divides its gradient by max(x (1 - x), 1e-12): for a probability
    within about 1e-12 of 0 or 1 its gradient is smaller than the exact one, and
    chainrule's is torch's. (An RMSprop program of the draw reached a Sigmoid of 2e-13
    at its third step.)

        p = cr.tensor([2e-13, 1 - 2e-13], requires_grad=True)
        cr.nn.BCELoss()(p, cr.tensor([0.5, 0.5])).backward()
        p.grad             # [-2.5e11, 2.5e11], as torch's (the exact: -+1.25e12)
    """
    y = np.array([0.5, 0.5])
    p, q = cr.tensor([2e-13, 1 - 2e-13], requires_grad=True), \
        torch.tensor([2e-13, 1 - 2e-13], dtype=torch.float64, requires_grad=True)
    ours, theirs = nn.BCELoss()(p, cr.tensor(y)), torch.nn.BCELoss()(q, torch.from_numpy(y))
    ours.backward()
    theirs.backward()
    same("the loss", np.asarray(ours.data), theirs.detach().numpy())
    same("the gradient", p.grad, q.grad.numpy(), tol=(1e-6, 0))


def test_multistep_lr_in_sequential_lr_through_cr_save_and_cr_load_is_torchs():
    """A SequentialLR of CosineAnnealingLR then MultiStepLR, saved after a step with
    cr.save, loaded with cr.load into a new one: at the milestone it goes on with
    MultiStepLR as torch's does (torch.save keeps MultiStepLR's milestones, a Counter;
    chainrule's load_state_dict takes them back as a Counter from the mapping cr.load
    gives).

        sched = cr.optim.lr_scheduler.SequentialLR(opt, [
            cr.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4),
            cr.optim.lr_scheduler.MultiStepLR(opt, milestones=[2], gamma=0.1)],
            milestones=[2])
        opt.step(); sched.step()
        cr.save(sched.state_dict(), path)
        ... a new opt and sched, sched.load_state_dict(cr.load(path))
        opt.step(); sched.step(); opt.step(); sched.step()   # torch's rates
    """
    rates = []
    with tempfile.TemporaryDirectory() as folder:
        for S, SGD, save, load, p in (
                (torch.optim.lr_scheduler, torch.optim.SGD, torch.save, torch.load,
                 torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)),
                (optim.lr_scheduler, optim.SGD, cr.save, cr.load,
                 cr.tensor([1.0, 2.0], requires_grad=True))):
            def make(opt, S=S):
                return S.SequentialLR(opt, [S.CosineAnnealingLR(opt, T_max=4),
                                            S.MultiStepLR(opt, milestones=[2], gamma=0.1)],
                                      milestones=[2])
            opt = SGD([p], lr=0.1)
            sched = make(opt)
            opt.step()
            sched.step()
            path = os.path.join(folder, S.__name__)
            save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, path)
            saved = load(path)
            opt = SGD([p], lr=0.1)
            opt.load_state_dict(saved["optimizer"])
            sched = make(opt)
            sched.load_state_dict(saved["scheduler"])
            for _ in range(3):
                opt.step()
                sched.step()
            rates.append(sched.get_last_lr())
    same("get_last_lr() after the milestone", rates[1], rates[0])
