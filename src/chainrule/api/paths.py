"""The import paths users type, kept where the modules behind them moved.

``import chainrule.numpy as cnp``, ``from chainrule.autograd import grad`` and
``import chainrule.optim`` are promises to users; the modules behind them live one level
down (``api/``, ``compat/``, ``nn/``), so the package's top level is the engine alone. A
finder on ``sys.meta_path`` answers each public path with the module that lives at its
real path: one module object under two names, never a second copy (a second copy would
hold its own registries and classes, and ``isinstance`` would fail across them).
"""

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["PUBLIC_PATHS", "real_name", "install"]

# public path -> where the module lives; a package's submodules follow it
# (``chainrule.autograd.numpy.linalg`` is ``chainrule.compat.autograd.numpy.linalg``).
PUBLIC_PATHS = {
    "chainrule.numpy": "chainrule.api.numpy",
    "chainrule.linalg": "chainrule.api.linalg",
    "chainrule.random": "chainrule.api.random",
    "chainrule.creation": "chainrule.api.creation",
    "chainrule.torch_random": "chainrule.api.torch_random",
    "chainrule.predicates": "chainrule.rules.predicates",
    # (a path inside another is listed first: the first that matches answers)
    "chainrule.autograd.functional": "chainrule.compat.torch_autograd_functional",
    "chainrule.autograd": "chainrule.compat.autograd",
    "chainrule.micrograd": "chainrule.compat.micrograd",
    "chainrule.example_libraries": "chainrule.compat.example_libraries",
    "chainrule.optim": "chainrule.nn.optim",            # PyTorch's torch.optim (and .lr_scheduler)
    "chainrule.checkpoint": "chainrule.nn.checkpoint",
    "chainrule.lax": "chainrule.compat.jax_lax",        # JAX's jax.lax
    "chainrule.jax_nn": "chainrule.compat.jax_nn",      # JAX's jax.nn
    "chainrule.tree_util": "chainrule.transforms.tree_util",  # JAX's jax.tree_util
    "chainrule.test_util": "chainrule.compat.jax_test_util",  # JAX's jax.test_util
    "chainrule.ad_checkpoint": "chainrule.transforms.ad_checkpoint",  # JAX's jax.ad_checkpoint
    "chainrule.cuda": "chainrule.api.cuda",             # PyTorch's torch.cuda (no GPU)
    "chainrule.custom_derivatives": "chainrule.transforms.custom_derivatives",  # JAX's
    "chainrule.tree": "chainrule.transforms.tree",      # JAX's jax.tree
    "chainrule.func": "chainrule.compat.torch_func",    # PyTorch's torch.func
}


def real_name(name: str) -> str | None:
    """Where the module a public path names lives, or None if the path is not one."""
    for public, real in PUBLIC_PATHS.items():
        if name == public or name.startswith(public + "."):
            return real + name[len(public):]
    return None


class _PublicPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a public path and loads it as the module at its real path."""

    def __init__(self):
        self._real_specs = {}

    def find_spec(self, fullname, path=None, target=None):
        real = real_name(fullname)
        if real is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        real = real_name(spec.name)
        module = importlib.import_module(real)
        self._real_specs[spec.name] = module.__spec__
        # Submodules a module registers itself (autograd's ``scipy.stats.norm``, which has
        # no file to find) are answered from sys.modules, before any finder is asked.
        for name in [n for n in sys.modules if n.startswith(real + ".")]:
            sys.modules.setdefault(spec.name + name[len(real):], sys.modules[name])
        return module

    def exec_module(self, module):
        # The import system stamped the public path's spec on the module: give it back
        # its own, so reloading, pickling and relative imports see where it lives.
        spec = self._real_specs.pop(module.__spec__.name, None)
        if spec is not None:
            module.__spec__ = spec


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _PublicPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PublicPaths())
