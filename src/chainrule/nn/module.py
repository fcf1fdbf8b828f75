"""Module: the base of every model, holding the parameters that training updates.

PyTorch's shape: a module's parameters are found by walking its attributes (Parameters,
Values, other modules, and lists of those), so a model is written as plain attributes.
micrograd's scalar modules (Neuron, Layer, MLP) are modules too.
"""

import numpy as np

from ..tensor import Tensor
from ..value import Value

__all__ = ["Module", "Parameter"]


class Parameter(Tensor):
    """A Tensor that a Module trains: it requires grad and is listed by parameters().

    >>> w = cr.nn.Parameter([1.0, 2.0])
    >>> w
    tensor([1., 2.], requires_grad=True)
    """

    __slots__ = ()

    def __init__(self, data, dtype=None):
        super().__init__(data, requires_grad=True, dtype=dtype)


def _is_parameter(x):
    return isinstance(x, (Parameter, Value))


class Module:
    """A model or a part of one.

    ``parameters()`` lists the Parameters (and scalar Values) held in attributes, in the
    order they were set; ``zero_grad()`` clears their gradients before the next step
    (as micrograd's Module does); ``train()`` / ``eval()`` switch modes such as Dropout;
    ``state_dict()`` / ``load_state_dict()`` save and restore the numbers.

    A subclass sets its parameters and submodules as attributes and computes its
    output in ``forward``; calling the module calls ``forward``.

    >>> class Affine(cr.nn.Module):
    ...     def __init__(self):
    ...         self.w = cr.nn.Parameter([2.0])
    ...         self.b = cr.nn.Parameter([0.5])
    ...     def forward(self, x):
    ...         return x * self.w + self.b
    >>> model = Affine()
    >>> model(cr.tensor([1.0, 2.0])).data.tolist()
    [2.5, 4.5]
    >>> [name for name, p in model.named_parameters()]
    ['w', 'b']
    """

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """The computation of the module; subclasses define it.

        >>> class Double(cr.nn.Module):
        ...     def forward(self, x):
        ...         return 2 * x
        >>> Double()(cr.tensor([1.0, 2.0])).data.tolist()   # calling it calls forward
        [2.0, 4.0]
        """
        raise TypeError(f"{type(self).__name__} defines no forward(); a Module subclass "
                        f"computes its output in forward(self, x)")

    # --- what the module holds ------------------------------------------------------

    def named_children(self):
        """(name, module) pairs of the submodules held in attributes.

        >>> class Net(cr.nn.Module):
        ...     def __init__(self):
        ...         self.body = cr.nn.Linear(2, 4, rng=0)
        ...         self.head = cr.nn.Linear(4, 1, rng=0)
        >>> [name for name, module in Net().named_children()]
        ['body', 'head']
        """
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item

    def named_parameters(self, prefix=""):
        """(name, parameter) pairs, names like ``layers.0.weight``.

        A parameter shared by two layers is listed once (under its first name), so an
        optimizer steps it once.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 3, rng=0), cr.nn.ReLU())
        >>> [(name, p.shape) for name, p in model.named_parameters()]
        [('layers.0.weight', (2, 3)), ('layers.0.bias', (3,))]
        """
        seen = set()
        for name, p in self._walk_parameters(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def _walk_parameters(self, prefix):
        for name, value in vars(self).items():
            full = f"{prefix}{name}"
            if _is_parameter(value):
                yield full, value
            elif isinstance(value, Module):
                yield from value._walk_parameters(full + ".")
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if _is_parameter(item):
                        yield f"{full}.{i}", item
                    elif isinstance(item, Module):
                        yield from item._walk_parameters(f"{full}.{i}.")

    def parameters(self):
        """The parameters, each once, in the order they were set: what an optimizer takes.

        >>> layer = cr.nn.Linear(3, 2, rng=0)
        >>> [p.shape for p in layer.parameters()]      # the weight (in, out), the bias
        [(3, 2), (2,)]
        """
        return [p for _, p in self.named_parameters()]

    def zero_grad(self):
        """Clear the gradients: None for Tensors, 0.0 for scalar Values.

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> layer(cr.ones(3, 2)).sum().backward()
        >>> layer.bias.grad.tolist()                   # one for each of the 3 rows
        [3.0]
        >>> layer.zero_grad()
        >>> layer.bias.grad is None
        True
        """
        for p in self.parameters():
            p.grad = 0.0 if isinstance(p, Value) else None

    # --- modes ----------------------------------------------------------------------

    def train(self, mode=True):
        """Training mode (Dropout active) for this module and all below it; returns it.

        >>> model = cr.nn.Sequential(cr.nn.Linear(2, 2, rng=0), cr.nn.Dropout(0.5))
        >>> model.eval()[1].training, model.train()[1].training
        (False, True)
        """
        self.training = bool(mode)
        for _, child in self.named_children():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode, ``train(False)``: Dropout lets everything through.

        >>> drop = cr.nn.Dropout(0.5, rng=0)
        >>> drop.eval()(cr.ones(3)).data.tolist()
        [1.0, 1.0, 1.0]
        """
        return self.train(False)

    # --- saving and restoring -------------------------------------------------------

    def state_dict(self):
        """Name -> a copy of the parameter's numbers (an ndarray).

        >>> layer = cr.nn.Linear(2, 1, rng=0)
        >>> {name: array.shape for name, array in layer.state_dict().items()}
        {'weight': (2, 1), 'bias': (1,)}
        """
        return {name: np.array(p.data, copy=True) for name, p in self.named_parameters()}

    def load_state_dict(self, state):
        """Copy numbers in; names and shapes must match exactly (the error names both).

        Returns the module.

        >>> a, b = cr.nn.Linear(2, 1, rng=0), cr.nn.Linear(2, 1, rng=1)
        >>> b.load_state_dict(a.state_dict())
        Linear(in_features=2, out_features=1, bias=True)
        >>> b.weight.data.tolist() == a.weight.data.tolist()
        True
        """
        own = dict(self.named_parameters())
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        if missing or unexpected:
            raise ValueError(f"load_state_dict: {type(self).__name__} does not match: "
                             f"missing {missing or 'nothing'}, unexpected "
                             f"{unexpected or 'nothing'}")
        arrays = {}
        for name, p in own.items():  # check every shape before changing anything
            array = np.asarray(state[name].data if isinstance(state[name], Tensor)
                               else state[name])
            shape = np.shape(p.data)
            if array.shape != shape:
                raise ValueError(f"load_state_dict: parameter {name!r} has shape {shape} "
                                 f"in the model but {array.shape} in the state")
            arrays[name] = array
        for name, p in own.items():
            array = arrays[name]
            if isinstance(p, Value):
                p.data = float(array)
            else:
                p.data = array.astype(p.dtype, copy=True)
        return self

    # --- a tree for repr ------------------------------------------------------------

    def extra_repr(self):
        """What repr shows inside the parentheses (a subclass's settings).

        >>> cr.nn.Linear(2, 3, rng=0).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self):
        children = list(self.named_children())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"
