"""The public surfaces over the engine: NumPy's face and PyTorch's creation functions.

    numpy.py         ``chainrule.numpy``: NumPy's names, differentiable
    linalg.py        ``cr.linalg``: numpy.linalg's names
    random.py        ``cr.random``: JAX's random keys
    creation.py      ``cr.tensor``, ``zeros``, ``arange``...: Tensors made from data
    torch_random.py  PyTorch's random functions and ``cr.Generator``
    paths.py         the public import paths (``chainrule.numpy``...) kept where they were

Each module is imported where it is used; this package imports none of them.
"""
