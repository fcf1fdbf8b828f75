"""``chainrule.nn`` without traps for PyTorch users, each checked against PyTorch in
float64 (or against an exact hand-computed value):

1. containers: ModuleList, ModuleDict, and plain lists and dicts of modules, found by
   parameters(), named_parameters() and state_dict(); sets refused;
2. named_modules, children, named_children, modules, apply, train/eval through them;
3. load_state_dict(strict=False) and its IncompatibleKeys; shape errors always;
4. ``reduction=`` on every loss, and cross_entropy's ``label_smoothing=``, against
   torch.nn.functional;
5. LayerNorm, Embedding, Softmax, LogSoftmax: forward and gradients of inputs and
   parameters, and second derivatives through cr.grad and cr.hessian;
6. PyTorch state_dicts in and out: the same model in both libraries computes the same
   outputs and gradients after the weights are copied either way.
"""

import re

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule as cr
from chainrule import nn
from chainrule.rules import fused
from chainrule.nn import functional as F

TOL = 1e-12


def close(actual, expected, tol=TOL):
    actual = np.asarray(getattr(actual, "data", actual), dtype=np.float64)
    if isinstance(expected, torch.Tensor):
        expected = expected.detach().numpy()
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def rng_normal(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# =======================================================================================
# 1. Containers
# =======================================================================================

class Heads(nn.Module):
    def __init__(self):
        self.body = nn.Linear(3, 4, rng=0)
        self.blocks = nn.ModuleList([nn.Linear(4, 4, rng=1), nn.Linear(4, 4, rng=2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 1, rng=3), "b": nn.Linear(4, 2, rng=4)})

    def forward(self, x):
        x = self.body(x)
        for block in self.blocks:
            x = cr.relu(block(x))
        return {key: head(x) for key, head in self.heads.items()}


class TestContainers:
    NAMES = ["body.weight", "body.bias", "blocks.0.weight", "blocks.0.bias",
             "blocks.1.weight", "blocks.1.bias", "heads.a.weight", "heads.a.bias",
             "heads.b.weight", "heads.b.bias"]

    def test_module_list_and_dict_are_registered_with_pytorchs_names(self):
        model = Heads()
        assert [n for n, _ in model.named_parameters()] == self.NAMES
        assert list(model.state_dict()) == self.NAMES
        assert len(model.parameters()) == 10

    def test_plain_list_and_dict_give_the_same_names(self):
        class Plain(nn.Module):
            def __init__(self):
                self.body = nn.Linear(3, 4, rng=0)
                self.blocks = [nn.Linear(4, 4, rng=1), nn.Linear(4, 4, rng=2)]
                self.heads = {"a": nn.Linear(4, 1, rng=3), "b": nn.Linear(4, 2, rng=4)}
        assert list(Plain().state_dict()) == self.NAMES
        Plain().load_state_dict(Heads().state_dict())          # interchangeable

    def test_gradients_reach_every_registered_parameter(self):
        model = Heads()
        out = model(cr.tensor(rng_normal(5, 3)))
        (out["a"].sum() + out["b"].sum()).backward()
        assert all(p.grad is not None for p in model.parameters())

    def test_nested_lists_and_parameters_in_dicts_are_registered(self):
        class Nested(nn.Module):
            def __init__(self):
                self.grid = [[nn.Linear(2, 2, rng=0)], (nn.Linear(2, 1, rng=0),)]
                self.scales = {"x": nn.Parameter([1.0])}
        assert list(Nested().state_dict()) == [
            "grid.0.0.weight", "grid.0.0.bias", "grid.1.0.weight", "grid.1.0.bias",
            "scales.x"]

    def test_a_set_of_modules_is_refused_with_the_fix(self):
        class Unordered(nn.Module):
            def __init__(self):
                self.layers = {nn.Linear(2, 2)}
        with pytest.raises(TypeError, match=r"Unordered\.layers: .*set.*ModuleList"):
            Unordered().parameters()

    @pytest.mark.parametrize("key", [1, "a.b", ""])
    def test_dict_keys_that_cannot_name_a_parameter_are_refused(self, key):
        class Keyed(nn.Module):
            def __init__(self):
                self.heads = {key: nn.Linear(2, 2)}
        with pytest.raises(TypeError, match=r"Keyed\.heads: .*string keys"):
            Keyed().state_dict()
        with pytest.raises(KeyError, match="ModuleDict"):
            nn.ModuleDict({key: nn.Linear(2, 2)})

    def test_a_dict_of_plain_numbers_is_just_an_attribute(self):
        class Configured(nn.Module):
            def __init__(self):
                self.config = {1: 2.0, "a.b": [3]}
                self.layer = nn.Linear(2, 2)
        assert list(Configured().state_dict()) == ["layer.weight", "layer.bias"]

    def test_module_list_is_a_list(self):
        a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Tanh()
        layers = nn.ModuleList([a])
        layers.append(b)
        layers += [c]
        assert len(layers) == 3 and layers[0] is a and layers[-1] is c
        assert list(layers) == [a, b, c]
        assert isinstance(layers[1:], nn.ModuleList) and list(layers[1:]) == [b, c]
        layers.insert(0, c)
        layers[1] = b
        del layers[0]
        assert list(layers) == [b, b, c]
        with pytest.raises(TypeError, match="ModuleList.append: expected a Module"):
            layers.append(lambda x: x)
        assert repr(nn.ModuleList([nn.ReLU()])) == "ModuleList(\n  (0): ReLU()\n)"

    def test_module_dict_is_a_dict(self):
        a, b = nn.Linear(2, 2), nn.ReLU()
        heads = nn.ModuleDict([("a", a)])
        heads["b"] = b
        assert list(heads) == ["a", "b"] and list(heads.values()) == [a, b]
        assert "a" in heads and heads["a"] is a and len(heads) == 2
        assert heads.pop("a") is a and list(heads.keys()) == ["b"]
        with pytest.raises(TypeError, match="ModuleDict: expected a Module for 'c'"):
            heads["c"] = 3

    def test_matches_torch_names(self):
        class TorchHeads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = torch.nn.Linear(3, 4)
                self.blocks = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])
                self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(4, 1),
                                                  "b": torch.nn.Linear(4, 2)})
        assert list(TorchHeads().state_dict()) == list(Heads().torch_state_dict())
        assert [n for n, _ in TorchHeads().named_modules()] == \
            [n for n, _ in Heads().named_modules()]


# =======================================================================================
# 2. The module tree
# =======================================================================================

class TestTree:
    def test_named_modules_children_and_modules(self):
        model = Heads()
        assert [n for n, _ in model.named_modules()] == [
            "", "body", "blocks", "blocks.0", "blocks.1", "heads", "heads.a", "heads.b"]
        assert [n for n, _ in model.named_children()] == ["body", "blocks", "heads"]
        assert list(model.children()) == [model.body, model.blocks, model.heads]
        assert list(model.modules())[0] is model and len(list(model.modules())) == 8
        assert [n for n, _ in model.named_modules(prefix="net")][:2] == ["net", "net.body"]

    def test_module_names_prefix_parameter_names(self):
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1)))
        modules = dict(model.named_modules())
        for name, p in model.named_parameters():
            owner, attr = name.rsplit(".", 1)
            assert getattr(modules[owner], attr) is p

    def test_shared_module_listed_once_unless_asked(self):
        shared = nn.Linear(2, 2)
        model = nn.Sequential(shared, nn.ReLU(), shared)
        assert [n for n, _ in model.named_modules()] == ["", "layers.0", "layers.1"]
        assert [n for n, _ in model.named_modules(remove_duplicate=False)] == \
            ["", "layers.0", "layers.1", "layers.2"]
        assert len(list(model.children())) == 2

    def test_a_module_holding_itself_terminates(self):
        model = nn.Sequential(nn.Linear(2, 2))
        model.layers.append(model)
        assert len(list(model.modules())) == 2 and len(model.parameters()) == 2

    def test_apply_visits_children_first_then_self_and_returns_self(self):
        model = Heads()
        seen = []
        assert model.apply(lambda m: seen.append(type(m).__name__)) is model
        assert seen == ["Linear", "Linear", "Linear", "ModuleList", "Linear", "Linear",
                        "ModuleDict", "Heads"]
        torch_seen = []
        torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()).apply(
            lambda m: torch_seen.append(type(m).__name__))
        chainrule_seen = []
        nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(
            lambda m: chainrule_seen.append(type(m).__name__))
        assert chainrule_seen == torch_seen

    def test_apply_initialises_weights(self):
        def init(m):
            if isinstance(m, nn.Linear):
                m.weight.data = np.full(m.weight.shape, 0.5)
        model = Heads().apply(init)
        assert all(np.all(m.weight.data == 0.5) for m in model.modules()
                   if isinstance(m, nn.Linear))

    def test_train_and_eval_reach_modules_in_containers(self):
        class Dropped(nn.Module):
            def __init__(self):
                self.drops = nn.ModuleList([nn.Dropout(0.5)])
                self.named = {"d": nn.Dropout(0.5)}
        model = Dropped().eval()
        assert not model.drops[0].training and not model.named["d"].training
        model.train()
        assert model.drops[0].training and model.named["d"].training


# =======================================================================================
# 3. load_state_dict(strict=...)
# =======================================================================================

class TestLoadStateDict:
    def test_strict_false_reports_missing_and_unexpected_as_pytorch(self):
        model = nn.Sequential(nn.Linear(3, 2, rng=0))
        source = nn.Sequential(nn.Linear(3, 2, rng=1)).state_dict()
        bias_before = model[0].bias.data.copy()
        state = {"layers.0.weight": source["layers.0.weight"], "extra": np.zeros(1)}
        result = model.load_state_dict(state, strict=False)
        assert isinstance(result, nn.IncompatibleKeys) and isinstance(result, tuple)
        assert result.missing_keys == ["layers.0.bias"]
        assert result.unexpected_keys == ["extra"]
        missing, unexpected = result
        assert (missing, unexpected) == (["layers.0.bias"], ["extra"])
        np.testing.assert_array_equal(model[0].weight.data, source["layers.0.weight"])
        np.testing.assert_array_equal(model[0].bias.data, bias_before)

        t = torch.nn.Sequential(torch.nn.Linear(3, 2))
        t_result = t.load_state_dict({"0.weight": torch.zeros(2, 3), "extra": torch.zeros(1)},
                                     strict=False)
        assert (t_result.missing_keys, t_result.unexpected_keys) == (["0.bias"], ["extra"])

    def test_all_matched(self):
        model = nn.Linear(2, 2)
        result = model.load_state_dict(nn.Linear(2, 2).state_dict(), strict=False)
        assert result == ([], []) and repr(result) == "<All keys matched successfully>"

    def test_strict_error_is_one_line_naming_the_keys(self):
        model = nn.Sequential(nn.Linear(3, 2))
        with pytest.raises(ValueError) as info:
            model.load_state_dict({"layers.0.weight": np.zeros((3, 2)), "head.bias": 0.0})
        message = str(info.value)
        assert "\n" not in message and "load_state_dict" in message
        assert "'layers.0.bias'" in message and "'head.bias'" in message

    @pytest.mark.parametrize("strict", [True, False])
    def test_shape_mismatch_always_raises_and_changes_nothing(self, strict):
        model = nn.Sequential(nn.Linear(3, 2, rng=0), nn.Linear(2, 1, rng=0))
        before = [p.data.copy() for p in model.parameters()]
        state = nn.Sequential(nn.Linear(3, 2, rng=1), nn.Linear(2, 1, rng=1)).state_dict()
        state["layers.1.weight"] = np.zeros((2, 1))
        with pytest.raises(ValueError, match=r"'layers.1.weight' has shape \(1, 2\) in the "
                                             r"model but \(2, 1\) in the state"):
            model.load_state_dict(state, strict=strict)
        assert all(np.array_equal(p.data, b) for p, b in zip(model.parameters(), before))

    def test_torch_tensors_with_grad_are_read(self):
        t = torch.nn.Linear(3, 2).double()
        model = nn.Linear(3, 2)
        model.load_state_dict({"weight": t.weight, "bias": t.bias})
        close(model.weight, t.weight)

    def test_not_a_dict(self):
        with pytest.raises(TypeError, match="load_state_dict: expected a dict"):
            nn.Linear(2, 2).load_state_dict([1, 2])


# =======================================================================================
# 4. reduction=
# =======================================================================================

def _grad_pair(cr_fn, torch_fn, x, *rest):
    xc = cr.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    out_c, out_t = cr_fn(xc), torch_fn(xt)
    close(out_c, out_t)
    weights = rng_normal(*out_t.shape, seed=9)
    (out_c * weights).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    close(xc.grad, xt.grad)


class TestReduction:
    REDUCTIONS = ["mean", "sum", "none"]

    @pytest.mark.parametrize("reduction", REDUCTIONS)
    @pytest.mark.parametrize("fast_on", [False, True])
    def test_cross_entropy(self, reduction, fast_on):
        x, labels = rng_normal(6, 4), np.array([0, 3, 1, 1, 2, 0])
        before = fused.enabled()
        fused.set_enabled(fast_on)
        try:
            _grad_pair(lambda z: F.cross_entropy(z, labels, reduction=reduction),
                       lambda z: TF.cross_entropy(z, torch.tensor(labels),
                                                  reduction=reduction), x)
            _grad_pair(lambda z: nn.CrossEntropyLoss(reduction=reduction)(z, labels),
                       lambda z: torch.nn.CrossEntropyLoss(reduction=reduction)(
                           z, torch.tensor(labels)), x)
        finally:
            fused.set_enabled(before)

    @pytest.mark.parametrize("reduction", REDUCTIONS)
    def test_mse(self, reduction):
        x, target = rng_normal(3, 4), rng_normal(3, 4, seed=1)
        _grad_pair(lambda z: F.mse_loss(z, target, reduction=reduction),
                   lambda z: TF.mse_loss(z, torch.tensor(target), reduction=reduction), x)
        _grad_pair(lambda z: nn.MSELoss(reduction=reduction)(z, target),
                   lambda z: torch.nn.MSELoss(reduction=reduction)(z, torch.tensor(target)), x)

    @pytest.mark.parametrize("reduction", REDUCTIONS)
    def test_bce_with_logits(self, reduction):
        x = rng_normal(5, 2) * 3
        target = np.random.default_rng(1).uniform(size=(5, 2))
        _grad_pair(lambda z: F.binary_cross_entropy_with_logits(z, target,
                                                                reduction=reduction),
                   lambda z: TF.binary_cross_entropy_with_logits(
                       z, torch.tensor(target), reduction=reduction), x)
        _grad_pair(lambda z: nn.BCEWithLogitsLoss(reduction=reduction)(z, target),
                   lambda z: torch.nn.BCEWithLogitsLoss(reduction=reduction)(
                       z, torch.tensor(target)), x)

    @pytest.mark.parametrize("reduction", REDUCTIONS)
    def test_hinge(self, reduction):
        # PyTorch has no micrograd SVM loss: its value is relu(1 - y * score) by hand
        scores, labels = np.array([-2.0, 0.5, -1.0, 0.0]), np.array([-1.0, 1.0, -1.0, 1.0])
        _grad_pair(lambda z: F.hinge_loss(z, labels, reduction=reduction),
                   lambda z: {"mean": torch.mean, "sum": torch.sum,
                              "none": lambda a: a}[reduction](
                       torch.relu(1 - torch.tensor(labels) * z)), scores)

    @pytest.mark.parametrize("fn, args", [
        (F.cross_entropy, (np.zeros((1, 2)), [0])),
        (F.mse_loss, (np.zeros(2), np.zeros(2))),
        (F.binary_cross_entropy_with_logits, (np.zeros(2), np.zeros(2))),
        (F.hinge_loss, (np.zeros(2), np.ones(2))),
    ])
    def test_unknown_reduction_names_the_loss(self, fn, args):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: reduction must be 'mean', "
                                             rf"'sum' or 'none', got 'avg'"):
            fn(*args, reduction="avg")

    @pytest.mark.parametrize("cls", [nn.CrossEntropyLoss, nn.MSELoss, nn.BCEWithLogitsLoss])
    def test_modules_check_at_construction(self, cls):
        with pytest.raises(ValueError, match=f"{cls.__name__}: reduction"):
            cls(reduction="batchmean")


class TestLabelSmoothing:
    """cross_entropy(..., label_smoothing=e): the target is (1 - e) one_hot + e / C, as
    in PyTorch, with every reduction, fast overrides on or off, to second order."""

    LABELS = np.array([0, 3, 1, 1, 2, 0])

    @pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5, 1.0])
    @pytest.mark.parametrize("reduction", TestReduction.REDUCTIONS)
    @pytest.mark.parametrize("fast_on", [False, True])
    def test_value_and_gradient_match_torch(self, smoothing, reduction, fast_on):
        x, labels = rng_normal(6, 4) * 3, self.LABELS
        before = fused.set_enabled(fast_on)
        try:
            _grad_pair(lambda z: F.cross_entropy(z, labels, reduction=reduction,
                                                 label_smoothing=smoothing),
                       lambda z: TF.cross_entropy(z, torch.tensor(labels), reduction=reduction,
                                                  label_smoothing=smoothing), x)
            _grad_pair(lambda z: nn.CrossEntropyLoss(reduction=reduction,
                                                     label_smoothing=smoothing)(z, labels),
                       lambda z: torch.nn.CrossEntropyLoss(
                           reduction=reduction, label_smoothing=smoothing)(
                           z, torch.tensor(labels)), x)
        finally:
            fused.set_enabled(before)

    def test_the_gradient_is_softmax_minus_the_smoothed_target(self):
        x = rng_normal(6, 4)
        logits = cr.tensor(x, requires_grad=True)
        F.cross_entropy(logits, self.LABELS, label_smoothing=0.2).backward()
        target = np.full((6, 4), 0.2 / 4)
        target[np.arange(6), self.LABELS] += 0.8
        softmax = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
        close(logits.grad, (softmax - target) / 6)

    @pytest.mark.parametrize("labels", [[0.0, 3.0, 1.0, 1.0, 2.0, 0.0],
                                        [0, 3, 1, 1, 2, 0],
                                        np.array([0, 3, 1, 1, 2, 0], dtype=np.int32)],
                             ids=["floats", "list", "int32"])
    def test_hessian_matches_torch_whatever_form_the_labels_take(self, labels):
        x = rng_normal(6, 4)
        ours = cr.hessian(lambda z: F.cross_entropy(z, labels, label_smoothing=0.1))(x)
        theirs = torch.autograd.functional.hessian(
            lambda z: TF.cross_entropy(z, torch.tensor(self.LABELS), label_smoothing=0.1),
            torch.tensor(x))
        close(ours, theirs)

    def test_a_jitted_training_step_gives_the_eager_numbers_to_the_last_bit(self):
        x = rng_normal(8, 3)
        labels = np.array([0, 1, 2, 2, 1, 0, 0, 1])
        models = [nn.Linear(3, 3, rng=0) for _ in range(2)]
        opts = [cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) for model in models]
        loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

        def step(model, opt):
            opt.zero_grad()
            loss = loss_fn(model(cr.tensor(x)), labels)
            loss.backward()
            opt.step()
            return loss

        jitted = cr.jit(step)
        for _ in range(10):
            np.testing.assert_array_equal(step(models[0], opts[0]).data,
                                          jitted(models[1], opts[1]).data)
        for p, q in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_array_equal(p.data, q.data)

    @pytest.mark.parametrize("smoothing, error, message", [
        (1.5, ValueError, "label_smoothing must be in [0, 1], got 1.5"),
        (-0.1, ValueError, "label_smoothing must be in [0, 1], got -0.1"),   # torch: no error
        (float("nan"), ValueError, "label_smoothing must be in [0, 1], got nan"),  # nor here
        ("0.1", TypeError, "label_smoothing must be a real number in [0, 1], got str '0.1'"),
        (None, TypeError, "label_smoothing must be a real number in [0, 1], got NoneType"),
        (True, TypeError, "label_smoothing must be a real number in [0, 1], got bool True"),
    ])
    def test_a_bad_value_is_refused_naming_the_loss(self, smoothing, error, message):
        args = (np.zeros((2, 3)), [0, 1])
        for fast_on in (False, True):
            before = fused.set_enabled(fast_on)
            try:
                with pytest.raises(error, match=re.escape(f"cross_entropy: {message}")):
                    F.cross_entropy(*args, label_smoothing=smoothing)
            finally:
                fused.set_enabled(before)
        with pytest.raises(error, match=re.escape(f"CrossEntropyLoss: {message}")):
            nn.CrossEntropyLoss(label_smoothing=smoothing)   # at construction, not first use



# =======================================================================================
# 5. LayerNorm, Embedding, Softmax, LogSoftmax
# =======================================================================================

def _check_module(cr_module, torch_module, x, requires_grad=True):
    """Same output, input gradient and parameter gradients under a random cotangent."""
    xc = cr.tensor(x, requires_grad=True) if requires_grad else x
    xt = torch.tensor(x, requires_grad=requires_grad)
    out_c, out_t = cr_module(xc), torch_module(xt)
    close(out_c, out_t)
    weights = rng_normal(*out_t.shape, seed=5)
    (out_c * weights).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    if requires_grad:
        close(xc.grad, xt.grad)
    torch_params = dict(torch_module.named_parameters())
    assert sorted(n for n, _ in cr_module.named_parameters()) == sorted(torch_params)
    for name, p in cr_module.named_parameters():
        close(p.grad, torch_params[name].grad)


def _copy_params(cr_module, torch_module):
    with torch.no_grad():
        for name, p in torch_module.named_parameters():
            p.copy_(torch.tensor(getattr(cr_module, name).data))


class TestLayerNorm:
    @pytest.mark.parametrize("shape, normalized", [((4, 5), 5), ((2, 3, 4), (3, 4)),
                                                   ((7,), [7])])
    @pytest.mark.parametrize("affine", [True, False])
    def test_against_torch(self, shape, normalized, affine):
        ours = nn.LayerNorm(normalized, elementwise_affine=affine)
        theirs = torch.nn.LayerNorm(normalized, elementwise_affine=affine,
                                    dtype=torch.float64)
        if affine:  # away from ones and zeros, so that their gradients show
            ours.weight.data = rng_normal(*ours.weight.shape, seed=2)
            ours.bias.data = rng_normal(*ours.bias.shape, seed=3)
            _copy_params(ours, theirs)
        _check_module(ours, theirs, rng_normal(*shape) * 3 + 1)

    def test_eps_and_no_bias(self):
        ours, theirs = nn.LayerNorm(3, eps=0.5, bias=False), \
            torch.nn.LayerNorm(3, eps=0.5, bias=False, dtype=torch.float64)
        _check_module(ours, theirs, rng_normal(2, 3))
        assert repr(ours) == "LayerNorm((3,), eps=0.5, elementwise_affine=True)"

    def test_second_derivative_through_cr_grad(self):
        norm = nn.LayerNorm(4)
        norm.weight.data = rng_normal(4, seed=2)
        x0 = rng_normal(4)

        def f_cr(x):
            return cr.sum(norm(x) ** 3)

        hessian_vector = cr.grad(lambda x: cr.sum(cr.grad(f_cr)(x) * np.arange(4.0)))(x0)
        xt = torch.tensor(x0, requires_grad=True)
        t_norm = torch.nn.LayerNorm(4, dtype=torch.float64)
        _copy_params(norm, t_norm)
        (g,) = torch.autograd.grad((t_norm(xt) ** 3).sum(), xt, create_graph=True)
        (hv,) = torch.autograd.grad((g * torch.arange(4.0, dtype=torch.float64)).sum(), xt)
        close(hessian_vector, hv, tol=1e-10)

    def test_errors(self):
        with pytest.raises(ValueError, match=r"LayerNorm: input of shape \(2, 3\), "
                                             r"expected it to end with normalized_shape \(4,\)"):
            nn.LayerNorm(4)(cr.zeros(2, 3))
        with pytest.raises(ValueError, match="LayerNorm: normalized_shape"):
            nn.LayerNorm(0)
        with pytest.raises(ValueError, match="LayerNorm: eps"):
            nn.LayerNorm(3, eps=-1.0)


class TestEmbedding:
    def test_against_torch_with_repeated_indices(self):
        ours = nn.Embedding(6, 3, rng=0)
        theirs = torch.nn.Embedding(6, 3, dtype=torch.float64)
        _copy_params(ours, theirs)
        indices = np.array([[0, 5, 5], [2, 0, 5]])
        out_c, out_t = ours(indices), theirs(torch.tensor(indices))
        assert out_c.shape == (2, 3, 3)
        close(out_c, out_t)
        weights = rng_normal(2, 3, 3, seed=1)
        (out_c * weights).sum().backward()
        (out_t * torch.tensor(weights)).sum().backward()
        close(ours.weight.grad, theirs.weight.grad)
        assert np.all(ours.weight.grad[[1, 3, 4]] == 0)

    @pytest.mark.parametrize("padding_idx", [2, -1])
    def test_padding_idx_row_starts_at_zero_and_gets_no_gradient(self, padding_idx):
        ours = nn.Embedding(5, 3, padding_idx=padding_idx, rng=0)
        theirs = torch.nn.Embedding(5, 3, padding_idx=padding_idx, dtype=torch.float64)
        assert np.all(ours.weight.data[padding_idx] == 0)
        ours.weight.data[padding_idx] = 7.0      # a loaded padding row is still output
        _copy_params(ours, theirs)
        indices = np.array([[2, 4, 2], [0, 1, 4]])
        out_c, out_t = ours(indices), theirs(torch.tensor(indices))
        close(out_c, out_t)
        weights = rng_normal(2, 3, 3, seed=1)
        (out_c * weights).sum().backward()
        (out_t * torch.tensor(weights)).sum().backward()
        close(ours.weight.grad, theirs.weight.grad)
        assert np.all(ours.weight.grad[padding_idx] == 0)
        assert repr(ours) == f"Embedding(5, 3, padding_idx={padding_idx % 5})"
        with pytest.raises(ValueError, match=r"padding_idx must be an int in \[-5, 5\)"):
            nn.Embedding(5, 3, padding_idx=5)

    def test_init_is_standard_normal_and_seeded(self):
        w = nn.Embedding(2000, 10, rng=0).weight.data
        assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02
        np.testing.assert_array_equal(w, nn.Embedding(2000, 10, rng=0).weight.data)

    def test_indices_as_list_and_tensor(self):
        emb = nn.Embedding(4, 2, rng=0)
        np.testing.assert_array_equal(emb([3, 1]).data, emb.weight.data[[3, 1]])
        np.testing.assert_array_equal(emb(cr.tensor(np.array([2]))).data,   # floats
                                      emb.weight.data[[2]])
        np.testing.assert_array_equal(emb(cr.tensor([[2]], dtype=np.int64)).data,
                                      emb.weight.data[[[2]]])

    def test_under_cr_grad_of_the_weight(self):
        emb = nn.Embedding(3, 2, rng=0)

        def loss(w):
            emb.weight = w
            return cr.sum(emb(np.array([0, 0, 2])) ** 2)
        g = cr.grad(loss)(rng_normal(3, 2))
        expected = np.zeros((3, 2))
        w = rng_normal(3, 2)
        expected[0], expected[2] = 4 * w[0], 2 * w[2]
        close(g, expected)

    def test_errors(self):
        emb = nn.Embedding(4, 2)
        with pytest.raises(IndexError, match=r"Embedding: indices must lie in \[0, 4\), "
                                             r"got values from -1 to 4"):
            emb(np.array([-1, 4]))
        with pytest.raises(TypeError, match=r"Embedding: indices must be whole numbers "
                                            r"\(an int array\), got dtype float64"):
            emb(np.array([1.5]))
        with pytest.raises(TypeError, match="got dtype bool"):
            emb(np.array([True]))
        with pytest.raises(ValueError, match="Embedding: embedding_dim"):
            nn.Embedding(3, 0)
        assert repr(emb) == "Embedding(4, 2)"


class TestSoftmaxModules:
    @pytest.mark.parametrize("dim", [-1, 0, 1])
    def test_softmax(self, dim):
        _check_module(nn.Softmax(dim=dim), torch.nn.Softmax(dim=dim), rng_normal(3, 4, 2))
        assert repr(nn.Softmax(dim=dim)) == f"Softmax(dim={dim})"

    @pytest.mark.parametrize("dim", [-1, 0, 2])
    def test_log_softmax(self, dim):
        _check_module(nn.LogSoftmax(dim=dim), torch.nn.LogSoftmax(dim=dim),
                      rng_normal(3, 4, 2) * 10)

    def test_default_is_the_last_axis(self):
        x = rng_normal(2, 3)
        close(nn.Softmax()(cr.tensor(x)), torch.softmax(torch.tensor(x), -1))
        close(nn.LogSoftmax()(cr.tensor(x)), torch.log_softmax(torch.tensor(x), -1))


@pytest.mark.parametrize("make", [
    lambda: (nn.Softmax(dim=0), torch.nn.Softmax(dim=0)),
    lambda: (nn.LogSoftmax(), torch.nn.LogSoftmax(dim=-1)),
    lambda: (nn.LayerNorm(4), torch.nn.LayerNorm(4, dtype=torch.float64)),
])
def test_hessians_match_torch(make):
    ours, theirs = make()
    x0 = rng_normal(4, seed=3)
    w = np.array([0.3, -1.0, 2.0, 0.5])
    h = cr.hessian(lambda x: cr.sum(ours(x) * w * ours(x)))(x0)
    h_t = torch.autograd.functional.hessian(
        lambda x: (theirs(x) * torch.tensor(w) * theirs(x)).sum(), torch.tensor(x0))
    close(h, h_t, tol=1e-10)


# =======================================================================================
# 6. PyTorch state_dicts in and out
# =======================================================================================

VOCAB, DIM = 7, 5


class TextNet(nn.Module):
    def __init__(self):
        self.embed = nn.Embedding(VOCAB, DIM, rng=0)
        self.mlp = nn.Sequential(nn.Linear(DIM, 8, rng=1), nn.ReLU(), nn.LayerNorm(8),
                                 nn.Linear(8, 3, rng=2), nn.Tanh(), nn.Linear(3, 2, rng=3))

    def forward(self, tokens):
        return self.mlp(self.embed(tokens))


class TorchTextNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 8), torch.nn.ReLU(),
                                       torch.nn.LayerNorm(8), torch.nn.Linear(8, 3),
                                       torch.nn.Tanh(), torch.nn.Linear(3, 2))

    def forward(self, tokens):
        return self.mlp(self.embed(tokens))


TOKENS = np.array([[1, 6, 6, 0], [3, 3, 2, 5]])


def _same_function(ours, theirs):
    """Same outputs and the same gradient for every parameter, under the same loss."""
    out_c, out_t = ours(TOKENS), theirs(torch.tensor(TOKENS))
    close(out_c, out_t)
    weights = rng_normal(*out_t.shape, seed=4)
    ours.zero_grad()
    theirs.zero_grad()
    (out_c * weights).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    grads = {name: p.grad for name, p in theirs.named_parameters()}
    layout = ours._torch_layout()   # torch name -> (parameter, to_torch, from_torch)
    assert list(layout) == list(grads)
    for name, (p, to_torch, _) in layout.items():
        close(to_torch(p.grad), grads[name])
    # a Linear's weight gradient is PyTorch's, in the same layout
    close(ours.mlp[0].weight.grad, grads["mlp.0.weight"])


class TestTorchStateDict:
    def test_names_and_shapes_are_pytorchs(self):
        theirs = TorchTextNet().double()
        ours = TextNet().torch_state_dict()
        assert list(ours) == list(theirs.state_dict())
        assert {k: v.shape for k, v in ours.items()} == \
            {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        assert all(isinstance(v, np.ndarray) and v.flags.c_contiguous for v in ours.values())

    def test_torch_to_chainrule_same_outputs_and_gradients(self):
        torch.manual_seed(0)
        theirs, ours = TorchTextNet().double(), TextNet()
        result = ours.load_torch_state_dict(theirs.state_dict())    # tensors as they are
        assert result == ([], [])  # PyTorch's IncompatibleKeys, nothing missing
        np.testing.assert_array_equal(ours.mlp[0].weight.data,
                                      theirs.mlp[0].weight.detach().numpy())
        _same_function(ours, theirs)

    def test_float32_torch_model_loads_into_float64(self):
        torch.manual_seed(1)
        theirs, ours = TorchTextNet(), TextNet()
        ours.load_torch_state_dict(theirs.state_dict())
        assert ours.mlp[0].weight.dtype == np.float64
        close(ours(TOKENS), theirs(torch.tensor(TOKENS)).detach().double(), tol=1e-5)

    def test_chainrule_to_torch_and_back(self):
        ours = TextNet()
        ours.mlp[2].weight.data = rng_normal(8, seed=7)
        ours.mlp[3].bias.data = rng_normal(3, seed=8)
        theirs = TorchTextNet().double()
        theirs.load_state_dict({k: torch.from_numpy(v)
                                for k, v in ours.torch_state_dict().items()})
        _same_function(ours, theirs)

        back = TextNet()
        back.load_torch_state_dict(theirs.state_dict())
        for a, b in zip(back.parameters(), ours.parameters()):
            np.testing.assert_array_equal(a.data, b.data)

    def test_exported_arrays_are_copies(self):
        model = nn.Sequential(nn.Linear(2, 3, rng=0))
        state = model.torch_state_dict()
        state["0.weight"][...] = 9.0
        assert not np.any(model[0].weight.data == 9.0)

    def test_errors_name_pytorchs_keys_and_shapes(self):
        ours = TextNet()
        state = {k: v.detach() for k, v in TorchTextNet().double().state_dict().items()}
        state["mlp.0.weight"] = state["mlp.0.weight"].T       # chainrule's layout by mistake
        with pytest.raises(ValueError, match=r"load_torch_state_dict: 'mlp.0.weight' has "
                                             r"shape \(8, 5\) in the model but \(5, 8\)"):
            ours.load_torch_state_dict(state)
        state["mlp.0.weight"] = state["mlp.0.weight"].T
        state["mlp.6.running_mean"] = torch.zeros(2)
        del state["mlp.2.bias"]
        with pytest.raises(ValueError, match=r"missing \['mlp.2.bias'\], unexpected "
                                             r"\['mlp.6.running_mean'\]"):
            ours.load_torch_state_dict(state)
        result = ours.load_torch_state_dict(state, strict=False)
        assert result == (["mlp.2.bias"], ["mlp.6.running_mean"])

    def test_plain_arrays_and_mlp(self):
        model = nn.MLP([3, 4, 2], rng=0)
        theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                     torch.nn.Linear(4, 2)).double()
        model.load_torch_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        x = rng_normal(5, 3)
        close(model(cr.tensor(x)), theirs(torch.tensor(x)))

    def test_scalar_values_have_no_torch_layout(self):
        with pytest.raises(TypeError, match="torch_state_dict: .*scalar Values.*'layers.0"):
            nn.MLP(2, [3, 1], rng=0).torch_state_dict()

    def test_shared_layers_are_listed_under_each_name_as_pytorch_does(self):
        shared, t_shared = nn.Linear(2, 2, rng=0), torch.nn.Linear(2, 2).double()
        ours = nn.Sequential(shared, nn.Tanh(), shared)
        theirs = torch.nn.Sequential(t_shared, torch.nn.Tanh(), t_shared)
        assert list(ours.torch_state_dict()) == list(theirs.state_dict())
        ours.load_torch_state_dict(theirs.state_dict())
        x = rng_normal(3, 2)
        close(ours(cr.tensor(x)), theirs(torch.tensor(x)))
        assert len(ours.parameters()) == 2

    def test_a_module_under_two_attributes(self):
        class Twice(nn.Module):
            def __init__(self):
                self.a = nn.Linear(2, 2, rng=0)
                self.b = self.a

        class TorchTwice(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = torch.nn.Linear(2, 2)
                self.b = self.a
        ours, theirs = Twice(), TorchTwice().double()
        assert list(ours.torch_state_dict()) == list(theirs.state_dict()) == \
            ["a.weight", "a.bias", "b.weight", "b.bias"]
        ours.load_torch_state_dict(theirs.state_dict())
        close(ours.a.weight, theirs.a.weight)
        assert list(ours.state_dict()) == ["a.weight", "a.bias"]   # chainrule's: once


# ---------------------------------------------------------------------------------------
# 7. nn.functional's activations, normalisations and losses with torch's arguments, and
#    their modules: values, gradients and second derivatives against torch
# ---------------------------------------------------------------------------------------

LABELS = np.array([2, 0, 1, 2])
PROBABILITIES = np.random.default_rng(4).uniform(0.05, 0.95, (4, 3))

# (id, chainrule's f(x), torch's f(x)); x has shape (4, 3)
FUNCTIONAL = [
    ("relu", F.relu, TF.relu),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2)),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: TF.elu(x, 0.7)),
    ("gelu(tanh)", lambda x: F.gelu(x, "tanh"), lambda x: TF.gelu(x, approximate="tanh")),
    ("silu", F.silu, TF.silu),
    ("sigmoid", F.sigmoid, torch.sigmoid),
    ("tanh", F.tanh, torch.tanh),
    ("softplus", lambda x: F.softplus(3 * x, beta=2.0, threshold=5.0),
     lambda x: TF.softplus(3 * x, beta=2.0, threshold=5.0)),
    ("softmax(dim=0)", lambda x: F.softmax(x, dim=0) ** 2, lambda x: TF.softmax(x, dim=0) ** 2),
    ("softmax(implicit dim)", lambda x: F.softmax(x) ** 2,
     lambda x: TF.softmax(x, dim=1) ** 2),
    ("log_softmax", lambda x: F.log_softmax(x, dim=1) ** 2,
     lambda x: TF.log_softmax(x, dim=1) ** 2),
    ("layer_norm", lambda x: F.layer_norm(x, 3, cr.tensor([1.0, 2.0, 3.0]), cr.tensor(0.5)),
     lambda x: TF.layer_norm(x, (3,), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
                             torch.full((3,), 0.5, dtype=torch.float64))),
    ("nll_loss", lambda x: F.nll_loss(F.log_softmax(x, 1), LABELS),
     lambda x: TF.nll_loss(TF.log_softmax(x, 1), torch.from_numpy(LABELS))),
    ("nll_loss(weight,ignore)", lambda x: F.nll_loss(
        F.log_softmax(x, 1), LABELS, weight=np.array([1.0, 2.0, 0.5]), ignore_index=0),
     lambda x: TF.nll_loss(TF.log_softmax(x, 1), torch.from_numpy(LABELS),
                           weight=torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64),
                           ignore_index=0)),
    ("l1_loss", lambda x: F.l1_loss(x, 0.3 * np.ones((4, 3)), reduction="sum"),
     lambda x: TF.l1_loss(x, torch.full((4, 3), 0.3, dtype=torch.float64), reduction="sum")),
    ("smooth_l1_loss", lambda x: F.smooth_l1_loss(2 * x, np.zeros((4, 3)), beta=0.5),
     lambda x: TF.smooth_l1_loss(2 * x, torch.zeros(4, 3, dtype=torch.float64), beta=0.5)),
    ("huber_loss", lambda x: F.huber_loss(2 * x, np.zeros((4, 3)), delta=0.7),
     lambda x: TF.huber_loss(2 * x, torch.zeros(4, 3, dtype=torch.float64), delta=0.7)),
    ("binary_cross_entropy", lambda x: F.binary_cross_entropy(F.sigmoid(x), PROBABILITIES),
     lambda x: TF.binary_cross_entropy(torch.sigmoid(x), torch.from_numpy(PROBABILITIES))),
]


@pytest.mark.parametrize("name, ours, theirs", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_a_torch_named_function_matches_torch_to_second_order(name, ours, theirs):
    x = rng_normal(4, 3, seed=5)
    t = torch.tensor(x, requires_grad=True)
    out = theirs(t)
    close(ours(cr.tensor(x)), out)
    weights = rng_normal(*out.shape, seed=6)
    (out * torch.from_numpy(weights)).sum().backward()
    leaf = cr.tensor(x, requires_grad=True)
    (ours(leaf) * weights).sum().backward()
    close(leaf.grad, t.grad, 1e-11)
    hessian = torch.autograd.functional.hessian(
        lambda x: (theirs(x) * torch.from_numpy(weights)).sum(), torch.from_numpy(x))
    close(cr.hessian(lambda x: cr.sum(ours(x) * weights))(x), hessian, 1e-10)


@pytest.mark.parametrize("ours, theirs", [
    (nn.SiLU(), torch.nn.SiLU()), (nn.LeakyReLU(0.3), torch.nn.LeakyReLU(0.3)),
    (nn.ELU(0.5), torch.nn.ELU(0.5)), (nn.Softplus(2.0), torch.nn.Softplus(2.0)),
    (nn.Identity(), torch.nn.Identity()), (nn.Flatten(0, 1), torch.nn.Flatten(0, 1)),
    (nn.Flatten(), torch.nn.Flatten()),
], ids=["SiLU", "LeakyReLU", "ELU", "Softplus", "Identity", "Flatten(0,1)", "Flatten"])
def test_a_new_layer_matches_torchs(ours, theirs):
    x = rng_normal(2, 3, 4, seed=7)
    t = torch.tensor(x, requires_grad=True)
    out = theirs(t)
    leaf = cr.tensor(x, requires_grad=True)
    mine = ours(leaf)
    assert mine.shape == tuple(out.shape) and repr(ours) == repr(theirs)
    close(mine, out)
    weights = rng_normal(*out.shape, seed=8)
    (out * torch.from_numpy(weights)).sum().backward()
    (mine * weights).sum().backward()
    close(leaf.grad, t.grad)


@pytest.mark.parametrize("ours, theirs, target", [
    (nn.NLLLoss(), torch.nn.NLLLoss(), LABELS), (nn.L1Loss(), torch.nn.L1Loss(), None),
    (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3), None),
    (nn.HuberLoss(delta=0.4), torch.nn.HuberLoss(delta=0.4), None),
    (nn.BCELoss(reduction="sum"), torch.nn.BCELoss(reduction="sum"), PROBABILITIES),
], ids=["NLLLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss"])
def test_a_new_loss_module_matches_torchs(ours, theirs, target):
    x = rng_normal(4, 3, seed=9)
    if target is None:
        target = rng_normal(4, 3, seed=10)
    inputs = (TF.log_softmax(torch.from_numpy(x), 1) if isinstance(theirs, torch.nn.NLLLoss)
              else torch.sigmoid(torch.from_numpy(x)) if isinstance(theirs, torch.nn.BCELoss)
              else torch.from_numpy(x))
    close(ours(cr.tensor(inputs.numpy()), target), theirs(inputs, torch.from_numpy(target)))


def test_functional_dropout_is_seeded_and_the_identity_in_eval():
    x = cr.ones(1000)
    kept = F.dropout(x, 0.3, rng=1).data
    assert set(np.unique(kept).round(6)) == {0.0, round(1 / 0.7, 6)}
    np.testing.assert_array_equal(kept, F.dropout(x, 0.3, rng=1).data)
    assert F.dropout(x, 0.3, training=False) is x
    drop = nn.Dropout(0.3, rng=1)
    np.testing.assert_array_equal(drop(x).data, kept)
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\), got 1.5"):
        F.dropout(x, 1.5)


def test_flatten_refuses_a_start_after_its_end():
    with pytest.raises(ValueError, match="Flatten: start_dim 2 comes after end_dim 1"):
        nn.Flatten(2, 1)(cr.zeros(2, 3, 4))


def test_functional_embedding_matches_torchs():
    weight = rng_normal(5, 3, seed=11)
    index = np.array([[4, 0], [2, 2]])
    t = torch.tensor(weight, requires_grad=True)
    out = TF.embedding(torch.from_numpy(index), t)
    table = cr.tensor(weight, requires_grad=True)
    mine = F.embedding(index, table)
    close(mine, out)
    (out ** 2).sum().backward()
    (mine ** 2).sum().backward()
    close(table.grad, t.grad)
