"""SciPy, imported when a sparse derivative is first asked for (``import chainrule``
imports only NumPy)."""

__all__ = ["sparse_module"]


def sparse_module():
    """``scipy.sparse``, or a one-line ImportError naming the extra that brings it."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError("chainrule's sparse Jacobians and Hessians need SciPy: "
                          "pip install 'chainrule[scipy]'") from None
    return scipy.sparse
