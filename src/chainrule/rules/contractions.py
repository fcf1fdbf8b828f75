"""Contractions: einsum, and what is built from it (tensordot, inner, kron, vdot,
cross, dot for operands of more than two axes, and the 1-d convolve and correlate).

einsum is one primitive for any number of operands. The gradient of operand k is an
einsum of g with the other operands, into operand k's labels; a label that appears
twice in operand k (``'ii->i'``) is a diagonal, so its gradient is placed on the
diagonal (multiplied by identities), and a label that only operand k has was summed
over, so its gradient is broadcast along it. The JVP of operand k is the same einsum
with the tangent in its place. Leading batch axes of g or t get labels of their own.

convolve and correlate are a contraction too: the windows of the longer operand,
gathered by a constant index array (im2col, as the n-d convolutions do), against the
shorter one, so their derivatives are indexing's and einsum's.
"""

import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

from numpy.typing import ArrayLike

from .. import arrays as xp
from ..primitive import ndim_of, raw, shape_of
from .common import Result, lead, op, tangent_lead
from .complexes import conj, is_complex
from .elementwise import multiply
from .reductions import sum
from .indexing import getitem
from .joining import concatenate, stack
from .shapes import broadcast_to, reshape, transpose

__all__ = ["einsum", "tensordot", "inner", "kron", "vdot", "cross", "convolve", "correlate"]


def explicit_labels(subscripts, shapes):
    """Explicit labels: one string per operand (each '...' spelled out with letters of
    its own, right-aligned as NumPy broadcasts them), the output's (NumPy's implicit
    output where there is no '->'), and the letters no label uses. The einsum rules,
    vmap's and the sparsity pattern's reading of einsum all start here.

    >>> explicit_labels("...i,ij", [(5, 2, 3), (3, 4)])
    (['abi', 'ij'], 'abj', 'cdefghklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
    """
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    inputs = inputs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(inputs)} operands, "
                         f"got {len(shapes)}")
    free = [c for c in string.ascii_letters if c not in subscripts]
    ellipsis_ndim = 0
    for labels, shape in zip(inputs, shapes):
        if "..." in labels:
            ellipsis_ndim = max(ellipsis_ndim, len(shape) - (len(labels) - 3))
    dots = "".join(free[:ellipsis_ndim])
    explicit = []
    for labels, shape in zip(inputs, shapes):
        if "..." in labels:
            labels = labels.replace("...", dots[len(dots) - (len(shape) - len(labels) + 3):])
        if len(labels) != len(shape):
            raise ValueError(f"einsum: labels {labels!r} for an operand of shape {shape}; "
                             f"expected one label per axis")
        explicit.append(labels)
    if arrow:
        output = output.replace("...", dots)
    else:  # implicit: the broadcast axes, then the labels that occur once, in order
        counts = Counter("".join(inputs).replace("...", ""))
        output = dots + "".join(sorted(c for c, n in counts.items() if n == 1))
    return explicit, output, "".join(free[ellipsis_ndim:])


@op("einsum", variadic=True)
def _einsum(*operands, subscripts, optimize=False):
    return xp.einsum(subscripts, *operands, optimize=optimize)


def _einsum_vjp(g, ans, *operands, argnum, subscripts, optimize=False):
    inputs, output, free = explicit_labels(subscripts, [shape_of(o) for o in operands])
    batch = free[:len(lead(g, ans))]
    free = free[len(batch):]
    mine = inputs[argnum]
    unique = "".join(dict.fromkeys(mine))
    others = [i for i in range(len(operands)) if i != argnum]
    known = set(output).union(*[inputs[i] for i in others])
    present = "".join(c for c in unique if c in known)
    spec = ",".join([batch + output] + [inputs[i] for i in others]) + "->" + batch + present
    out = _einsum(g, *[operands[i] for i in others], subscripts=spec, optimize=optimize)
    sizes = dict(zip(mine, shape_of(operands[argnum])))
    if len(present) < len(unique):  # summed inside operand k alone: broadcast back
        got = dict(zip(present, shape_of(out)[len(batch):]))
        keep = shape_of(out)[:len(batch)]
        out = reshape(out, keep + tuple(got.get(c, 1) for c in unique))
        out = broadcast_to(out, keep + tuple(got.get(c, sizes[c]) for c in unique))
    if len(unique) < len(mine):  # a repeated label reads a diagonal: write it back there
        labels, eyes, new = "", [], iter(free)
        for i, c in enumerate(mine):
            if c in mine[:i]:
                fresh = next(new)
                eyes.append((c + fresh, xp.eye(sizes[c], dtype=xp.result_type(raw(g)))))
                labels += fresh
            else:
                labels += c
        spec = ",".join([batch + unique] + [e for e, _ in eyes]) + "->" + batch + labels
        out = _einsum(out, *[eye for _, eye in eyes], subscripts=spec, optimize=optimize)
    return out


def _einsum_jvp(t, ans, *operands, argnum, subscripts, optimize=False):
    inputs, output, free = explicit_labels(subscripts, [shape_of(o) for o in operands])
    batch = free[:len(tangent_lead(t, operands[argnum]))]
    inputs[argnum] = batch + inputs[argnum]
    args = list(operands)
    args[argnum] = t
    return _einsum(*args, subscripts=",".join(inputs) + "->" + batch + output,
                   optimize=optimize)


# einsum is linear in each operand, so its JVP is the same contraction with the tangent
# in the operand's place, and its VJP the adjoint contraction: g against the other
# operands, into the operand's labels (as autograd's and JAX's einsum rules do).
_einsum.defvjp(_einsum_vjp)
_einsum.defjvp(_einsum_jvp)


def einsum(*args: Any, optimize: bool | str = False, precision: Any = None) -> Result:
    """Einstein summation, as np.einsum: ``einsum('ij,jk->ik', a, b)`` is a @ b.

    Any subscripts NumPy accepts: explicit (``->``) or implicit output, ``...`` for
    broadcast axes, repeated labels in one operand (``'ii->i'``, a diagonal;
    ``'ii'``, a trace), and the interleaved form ``einsum(a, [0, 1], b, [1, 2])``.
    Differentiable in every operand.

    >>> a = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> cr.einsum("ii->i", a).data.tolist()   # the diagonal
    [1.0, 4.0]
    >>> y = cr.einsum("ij,ij->", a, a)        # the sum of squares
    >>> y.backward()
    >>> a.grad.tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """
    if isinstance(args[0], str):
        subscripts, operands = args[0], list(args[1:])
    else:  # operand, sublist, operand, sublist, ..., [output sublist]
        def word(sublist):
            return "".join("..." if s is Ellipsis else string.ascii_letters[s]
                           for s in sublist)
        operands = list(args[0:len(args) - len(args) % 2:2])
        subscripts = ",".join(word(s) for s in args[1:len(args) - len(args) % 2:2])
        if len(args) % 2:
            subscripts += "->" + word(args[-1])
    # (the errors, in einsum's words)
    explicit_labels(subscripts, [shape_of(o) for o in operands])
    return _einsum(*operands, subscripts=subscripts, optimize=optimize)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Sequence[int]] = 2, *,
              precision: Any = None) -> Result:
    """The sum of products over the given axes, as np.tensordot: ``axes=n`` pairs the
    last n axes of a with the first n of b; ``axes=(axes_a, axes_b)`` names them.

    The result has a's remaining axes, then b's. An einsum, so its derivatives are
    einsum's.

    >>> a = cr.ones(2, 3, 4)
    >>> cr.tensordot(a, cr.ones(3, 4, 5)).shape
    (2, 5)
    >>> cr.tensordot(a, cr.ones(4, 3), axes=([1, 2], [1, 0])).shape
    (2,)
    """
    na, nb = ndim_of(a), ndim_of(b)
    if isinstance(axes, (int, xp.integer)):
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, xp.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, xp.integer)) else list(axes_b)
    axes_a, axes_b = [x % na for x in axes_a], [x % nb for x in axes_b]
    if len(axes_a) != len(axes_b) or any(shape_of(a)[i] != shape_of(b)[j]
                                         for i, j in zip(axes_a, axes_b)):
        raise ValueError(f"tensordot: shapes {shape_of(a)} and {shape_of(b)} with axes "
                         f"{axes_a} and {axes_b}; expected axes of equal sizes, paired")
    letters = iter(string.ascii_letters)
    la = [next(letters) for _ in range(na)]
    lb = [next(letters) for _ in range(nb)]
    for i, j in zip(axes_a, axes_b):
        lb[j] = la[i]
    out = [la[i] for i in range(na) if i not in axes_a] + \
          [lb[j] for j in range(nb) if j not in axes_b]
    return _einsum(a, b, subscripts="".join(la) + "," + "".join(lb) + "->" + "".join(out))


def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None) -> Result:
    """The inner product over the last axes, as np.inner: shape a.shape[:-1] +
    b.shape[:-1]; a 0-d operand multiplies.

    >>> cr.inner(cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0])).item()
    11.0
    """
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1], [-1]))


def vdot(a: ArrayLike, b: ArrayLike, *, precision: Any = None) -> Result:
    """The dot product of a and b flattened, as np.vdot (a complex a is conjugated).

    >>> cr.vdot(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), cr.ones(2, 2)).item()
    10.0
    """
    if xp.size(raw(a)) != xp.size(raw(b)):
        raise ValueError(f"vdot: shapes {shape_of(a)} and {shape_of(b)}; expected the "
                         f"same number of entries")
    if is_complex(a):
        a = conj(a)
    return sum(multiply(reshape(a, (-1,)), reshape(b, (-1,))))


def kron(a: ArrayLike, b: ArrayLike) -> Result:
    """The Kronecker product, as np.kron: blocks a[i, j] * b.

    >>> cr.kron(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 10.0])).data.tolist()
    [1.0, 10.0, 2.0, 20.0]
    """
    nd = max(ndim_of(a), ndim_of(b))
    sa = (1,) * (nd - ndim_of(a)) + shape_of(a)
    sb = (1,) * (nd - ndim_of(b)) + shape_of(b)
    spread_a = reshape(a, tuple(x for n in sa for x in (n, 1)))
    spread_b = reshape(b, tuple(x for n in sb for x in (1, n)))
    return reshape(multiply(spread_a, spread_b), tuple(x * y for x, y in zip(sa, sb)))


def _to_end(x, axis):
    nd = ndim_of(x)
    axis %= nd
    return transpose(x, tuple(i for i in range(nd) if i != axis) + (axis,))


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Result:
    """The cross product of 3-vectors (along ``axisa`` of a and ``axisb`` of b,
    broadcast over the other axes), as np.cross; ``axis`` sets all three. 2-vectors
    have z = 0, and two 2-vectors give the z component alone, as in NumPy.

    >>> cr.cross(cr.tensor([1.0, 0.0, 0.0]), cr.tensor([0.0, 1.0, 0.0])).data.tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _to_end(a, axisa), _to_end(b, axisb)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: vectors of sizes {na} and {nb} (shapes {shape_of(a)} and "
                         f"{shape_of(b)} with the vector axis last); expected 2 or 3")
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else 0.0
    b2 = b[..., 2] if nb == 3 else 0.0
    x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    shape = xp.broadcast_shapes(shape_of(x), shape_of(y), shape_of(z))
    out = stack([broadcast_to(c, shape) for c in (x, y, z)], axis=-1)
    nd = ndim_of(out)
    axisc %= nd
    order = list(range(nd - 1))
    order.insert(axisc, nd - 1)
    return transpose(out, tuple(order))


def _sliding(name, a, v, mode):
    """np.convolve or np.correlate of 1-d a and v, as JAX computes them: the longer
    operand first (for correlate, the result then reversed, as NumPy does), then
    out[k] = sum_j a_padded[k + j] * kernel[j], the kernel v flipped (convolve) or
    conjugated (correlate), a padded with zeros as ``mode`` says."""
    shapes = (shape_of(a), shape_of(v))
    if len(shapes[0]) != 1 or len(shapes[1]) != 1:
        raise ValueError(f"{name}: arrays of shapes {shapes[0]} and {shapes[1]}; expected "
                         f"two 1-d arrays")
    if 0 in shapes[0] + shapes[1]:
        raise ValueError(f"{name}: arrays of shapes {shapes[0]} and {shapes[1]}; expected "
                         f"two non-empty arrays")
    m = min(shapes[0][0], shapes[1][0])  # the kernel's length
    pads = {"full": (m - 1, m - 1), "same": (m // 2, m - 1 - m // 2), "valid": (0, 0)}
    if mode not in pads:
        raise ValueError(f"{name}: mode {mode!r}; expected 'full', 'same' or 'valid'")
    if name == "correlate" and is_complex(v):
        v = conj(v)
    swapped = shapes[0][0] < shapes[1][0]
    if swapped:
        a, v = v, a
    if name == "convolve":
        v = getitem(v, index=slice(None, None, -1))
    before, after = pads[mode]
    if before or after:
        dtype = xp.result_type(raw(a))
        a = concatenate([xp.zeros(before, dtype), a, xp.zeros(after, dtype)])
    starts = xp.arange(shape_of(a)[0] - m + 1)
    windows = getitem(a, index=starts[:, None] + xp.arange(m))  # (outputs, m)
    out = tensordot(windows, v, axes=1)
    if swapped and name == "correlate":
        return getitem(out, index=slice(None, None, -1))
    return out  # (convolution is symmetric: the swap changes nothing)


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Result:
    """The discrete convolution of 1-d a and v, as np.convolve: ``mode`` full (every
    overlap), same (max(len(a), len(v)) entries, centred) or valid (full overlaps only).

    >>> a = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = cr.convolve(a, np.array([0.0, 1.0, 0.5]))
    >>> y.data.tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    >>> y.sum().backward()
    >>> a.grad.tolist()                       # each entry meets the whole kernel
    [1.5, 1.5, 1.5]
    """
    return _sliding("convolve", a, v, mode)


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Result:
    """The cross-correlation sum_n a[n + k] * conj(v[n]) of 1-d a and v, as np.correlate
    (mode valid by default; full, same as convolve). When v is the longer, the result is
    NumPy's: the correlation of v with a, reversed.

    >>> cr.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [3.5]
    >>> cr.correlate(np.array([1.0, 2.0]), np.array([1.0, 0.0, 0.0]), "full").tolist()
    [0.0, 0.0, 1.0, 2.0]
    >>> cr.correlate(np.array([1j]), np.array([1j])).tolist()   # v is conjugated
    [(1+0j)]
    """
    return _sliding("correlate", a, v, mode)
