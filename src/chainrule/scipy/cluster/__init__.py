"""SciPy's clustering, as ``jax.scipy.cluster`` has it: ``vq.vq``, the nearest code of a
code book for each observation.

    >>> from chainrule.scipy.cluster import vq
    >>> vq.vq(np.array([[0.9], [3.2]]), np.array([[1.0], [3.0]]))[0].tolist()
    [0, 1]
"""

from . import vq

__all__ = ["vq"]
