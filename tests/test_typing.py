"""The public API carries type hints (chainrule ships py.typed, so type checkers read
them): every public function, and every public method of the public classes, annotates
each parameter and its return, and ``typing.get_type_hints`` resolves the annotations.

The names are collected from the ``__all__`` lists, so a new public function without
hints fails here; what is left unannotated on purpose is listed below, with the reason.
"""

import inspect
import typing
from pathlib import Path

import numpy as np
import pytest

import chainrule as cr
from chainrule import checkpoint, nn, optim
from chainrule.nn import functional as F

ROOT = Path(__file__).resolve().parents[1]

# The public namespaces, each with the prefix its names are shown with.
NAMESPACES = [("cr.", cr), ("nn.", nn), ("nn.functional.", F), ("optim.", optim),
              ("checkpoint.", checkpoint)]

# Classes whose methods are not checked, and why.
UNCHECKED_CLASSES = {
    # The operations' own objects: their signatures are the NumPy functions they wrap.
    "Primitive",
    # Context managers: all their methods are dunders.
    "no_grad", "enable_grad", "inference_mode", "detect_anomaly",
}

def _functions():
    """(shown name, function) for every public function and public method checked.

    Most operations (cr.exp, cr.sum, ...) are Primitive objects, not functions: they
    cannot carry hints, and are not collected; the composed operations are functions
    and are checked."""
    seen, found = set(), []
    for prefix, namespace in NAMESPACES:
        for name in namespace.__all__:
            obj = getattr(namespace, name)
            if inspect.isfunction(obj) and obj not in seen:
                seen.add(obj)
                found.append((prefix + name, obj))
            elif inspect.isclass(obj) and obj.__module__.startswith("chainrule") \
                    and name not in UNCHECKED_CLASSES:
                for shown, method in _methods(prefix + name, obj):
                    if method not in seen:
                        seen.add(method)
                        found.append((shown, method))
    return found


def _methods(shown, cls):
    """The public methods (and ``__init__``) defined by cls or a chainrule base class.

    Operator dunders (``__add__``, ...) are left out: they follow Python's data model,
    and their hints would say nothing a reader does not know. So are the Tensor methods
    that are operations (``x.exp()`` is ``cr.exp(x)``, marked by ``.operation``)."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("chainrule"):
            continue
        for name, attr in vars(klass).items():
            if name != "__init__" and name.startswith("_"):
                continue
            if not inspect.isfunction(attr) or hasattr(attr, "operation"):
                continue
            yield f"{shown}.{name}", attr


FUNCTIONS = _functions()


def test_the_collection_finds_what_the_brief_names():
    names = {shown for shown, _ in FUNCTIONS}
    expected = {"cr.grad", "cr.jvp", "cr.tree_flatten", "cr.gradcheck", "cr.zeros",
                "cr.tensor", "cr.Tensor.backward", "cr.Tensor.detach", "cr.Tensor.astype",
                "cr.save", "checkpoint.load_header", "nn.Module.state_dict",
                "nn.Linear.__init__", "nn.Linear.forward", "nn.functional.cross_entropy",
                "optim.SGD.__init__", "optim.Optimizer.step", "optim.StepLR.lr_at",
                "optim.LRScheduler.load_state_dict", "cr.stack", "cr.var", "cr.einsum"}
    assert expected <= names, sorted(expected - names)


@pytest.mark.parametrize("shown, function", FUNCTIONS, ids=[s for s, _ in FUNCTIONS])
def test_every_parameter_and_the_return_are_annotated(shown, function):
    sig = inspect.signature(function)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    missing = [p.name for p in sig.parameters.values()
               if p.annotation is inspect.Parameter.empty
               and p.name not in ("self", "cls") and p.kind not in variadic]
    assert not missing, f"{shown}: no type hint on {missing}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{shown}: no return hint"


@pytest.mark.parametrize("shown, function", FUNCTIONS, ids=[s for s, _ in FUNCTIONS])
def test_the_hints_resolve(shown, function):
    hints = typing.get_type_hints(function)
    assert "return" in hints


def test_the_aliases_say_what_they_mean():
    grad = typing.get_type_hints(cr.grad)
    assert grad["argnums"] == int | tuple[int, ...]
    assert grad["has_aux"] is bool
    assert typing.get_type_hints(cr.zeros)["return"] is cr.Tensor
    assert typing.get_type_hints(cr.Tensor.numpy)["return"] is np.ndarray
    assert typing.get_type_hints(cr.Tensor.detach)["return"] is cr.Tensor
    assert typing.get_type_hints(nn.Module.train)["return"] is nn.Module
    assert typing.get_type_hints(cr.tensor)["data"] == np.typing.ArrayLike


def test_every_callable_left_out_is_a_primitive():
    """What the collection skips among the callables is only what cannot carry hints
    (the rest are modules and constants)."""
    for prefix, namespace in NAMESPACES:
        for name in namespace.__all__:
            obj = getattr(namespace, name)
            # (a module may be callable: cr.checkpoint, whose call is cr.remat, checked
            # as itself)
            assert (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj)
                    or isinstance(obj, cr.Primitive) or not callable(obj)), prefix + name


def test_the_api_reference_shows_signatures_without_hints():
    """numpy.typing.ArrayLike spelled out is hundreds of characters; docs/api.md stays
    readable (help() and the source show the hints)."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "ArrayLike" not in text and "typing." not in text
    assert "`cr.grad(f, argnums=0, has_aux=False, holomorphic=False)`" in text
