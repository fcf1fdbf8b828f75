"""A Module's numbers under PyTorch's names and layouts: ``torch_state_dict`` and
``load_torch_state_dict``, so the same model moves between chainrule and PyTorch. A layer
whose layout differs from PyTorch's says how in ``_torch_converters``, a container whose
names differ in ``_torch_children`` (``Module`` inherits these; none is public but the
two methods).
"""

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ..scalar.value import Value
from .module_state import BufferSlot, IncompatibleKeys, load, same

__all__ = ["TorchLayout"]


class TorchLayout:
    """The methods of a Module that speak PyTorch's ``state_dict`` layout."""

    def torch_state_dict(self) -> dict[str, np.ndarray]:
        """A copy of the numbers with PyTorch's names and layouts, ready for the same
        model's ``load_state_dict`` in PyTorch.

        The values are ndarrays (``torch.from_numpy`` makes them tensors); the keys are
        PyTorch's, such as ``0.weight`` for a Sequential's first layer (here
        ``layers.0.weight``); the layouts are PyTorch's already (a Linear's weight is
        (out_features, in_features) in both).

        Layers with a PyTorch counterpart: Linear, LayerNorm, Embedding, Sequential and
        MLP, and the layers without parameters; lists and dicts of modules are
        PyTorch's ModuleList and ModuleDict. Scalar Values (micrograd's MLP) have none.

        >>> model = cr.nn.Sequential(cr.nn.Linear(3, 2, rng=0), cr.nn.ReLU())
        >>> {name: a.shape for name, a in model.torch_state_dict().items()}
        {'0.weight': (2, 3), '0.bias': (2,)}
        """
        # (order="C", not np.ascontiguousarray, which makes a 0-d buffer 1-d)
        return {torch_name: np.asarray(to_torch(np.array(p.data, copy=True)), order="C")
                for torch_name, (p, to_torch, _) in self._torch_layout().items()}

    def load_torch_state_dict(self, state: Mapping[str, ArrayLike],
                              strict: bool = True) -> "IncompatibleKeys":
        """Copy in a PyTorch ``state_dict()`` of the same model.

        PyTorch's key names and layouts (see ``torch_state_dict``), tensors or ndarrays;
        errors name PyTorch's keys and shapes. Returns as ``load_state_dict``.

        >>> model = cr.nn.Sequential(cr.nn.Linear(3, 2, rng=0), cr.nn.ReLU())
        >>> W = np.arange(6.0).reshape(2, 3)             # PyTorch's (out, in)
        >>> _ = model.load_torch_state_dict({"0.weight": W, "0.bias": np.zeros(2)})
        >>> model[0].weight.data.tolist()                # the same layout
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        """
        own = {}
        for torch_name, (p, to_torch, from_torch) in self._torch_layout().items():
            own[torch_name] = (p, np.shape(to_torch(np.asarray(p.data))), from_torch)
        return IncompatibleKeys(*load(own, state, strict, "load_torch_state_dict",
                                      type(self).__name__))

    def _torch_layout(self):
        """torch name -> (parameter, to_torch, from_torch) for every parameter. As in
        PyTorch's state_dict, a module or parameter held twice is listed under each name
        (tied weights load from either)."""
        layout = {}
        for torch_prefix, module in self._torch_modules("", ()):
            for name, p in module._entries():
                if isinstance(p, TorchLayout):  # (a submodule)
                    continue
                if isinstance(p, Value):
                    raise TypeError(f"torch_state_dict: {type(module).__name__} holds "
                                    f"scalar Values ({torch_prefix + name!r}), which have "
                                    f"no PyTorch counterpart; only tensor layers convert")
                to_torch, from_torch = module._torch_converters(name)
                layout[torch_prefix + name] = (p, to_torch, from_torch)
            for key in module._buffer_names:
                if (vars(module).get(key) is not None
                        and key not in module._non_persistent_buffers):
                    layout[torch_prefix + key] = (BufferSlot(module, key), same, same)
        return layout

    def _torch_modules(self, prefix, ancestors):
        ancestors = (*ancestors, id(self))  # only a module holding itself is cut short
        yield prefix, self
        for name, child in self._torch_children():
            if id(child) not in ancestors:
                yield from child._torch_modules(f"{prefix}{name}.", ancestors)

    def _torch_children(self):
        """(PyTorch's name, module) of the submodules, one held twice under both names:
        the same names by default."""
        return self._module_entries()

    def _torch_converters(self, name):
        """(to_torch, from_torch) layout maps of the parameter ``name``: the identity
        by default, for a layer whose layout is PyTorch's."""
        return same, same
