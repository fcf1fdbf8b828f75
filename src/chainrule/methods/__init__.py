"""The methods of a Tensor and of the transforms' traced values, in one place.

    array.py           operators, NumPy's methods, and every operation the rule table
                       lists in its METHODS (``x.exp()`` is ``cr.exp(x)``); ``x.at[...]``
    torch_names.py     PyTorch's spellings (``x.pow``, ``x.view``, ``x.gather``...)
    torch_tensor.py    PyTorch's that only a Tensor has: ``grad_fn``, ``add_``, ``zero_``...
    numpy_protocol.py  NumPy's functions on such a value: chainrule's operation, or an error
    interop.py         a Tensor's numbers for other libraries: ``__array__``, DLPack

``tensor.py`` keeps only what is a Tensor's own state (its data, grad, graph node, and
the in-place updates that check its version).
"""
