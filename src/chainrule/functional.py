"""Function transforms in the style of JAX: grad, value_and_grad, vjp, jvp, jacrev,
jacfwd, hessian, hvp, and linear operators.

They take a function and give a function. Inputs may be Python floats, Values, NumPy
arrays or Tensors, and tuples, lists and dicts of those, nested (pytrees); results come
back in the kind that went in (a float for a float, an ndarray for an ndarray).

How reverse mode works here: each input is replaced by a fresh node to differentiate
with respect to (a *target*): a new leaf for a plain number or array, or an ``identity``
node on top of a Value or Tensor that is already part of a graph (an outer transform's,
or the user's). The function runs on the targets, and ``tensor_gradients()`` walks back
from its output to the targets only, stopping there and writing no ``.grad``. Values use
the scalar engine; floats, arrays and Tensors the tensor engine (a float is a 0-d array
there, so it meets arrays as NumPy would).

Why nesting is safe (no perturbation confusion). In
``grad(lambda x: x * grad(lambda y: x + y)(1.0))(1.0)`` the inner transform
differentiates with respect to its own target ``y``, a node of its own; the outer ``x``
is just another operand, whose path the inner walk never follows. The inner gradient
is built from the engine's operations when an outer transform is running (or when the
inputs belong to a graph), and stays a node of the outer graph, so the outer transform
differentiates through it, closures over its variables included: derivatives of any
order. Forward mode tags its tangents with levels instead (``forward.py``).
"""

import threading
import weakref
from numbers import Real

import numpy as np

from . import rules as ops
from .forward import JVPTracer, new_level, tangent_of_result
from .graph import Roots, enable_grad, nodes_towards, topological_order
from .primitive import raw as _innermost
from .tensor import Tensor, backward_pass
from .value import Value

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian",
           "hessian", "hvp", "linear_operator", "hessian_operator", "tree_flatten",
           "tree_unflatten"]


# ---------------------------------------------------------------------------------------
# Gradients with respect to chosen nodes, for the transforms. Unlike backward(), these
# read and write no .grad: a transform never disturbs the gradients a user is
# accumulating, and nested transforms never see each other's. Only the nodes that depend
# on a target are visited, and the walk stops at the targets.
# ---------------------------------------------------------------------------------------

def tensor_gradients(roots, seeds, targets, create_graph=False, batch_shape=()):
    """The gradient of ``sum(seed * root)`` with respect to each target Tensor (None for
    a target the roots do not depend on)."""
    order, depends = nodes_towards(roots, targets)
    stop_at = {id(t) for t in targets}
    grads = {}
    for root, seed in zip(roots, seeds):
        if id(root) in depends:
            previous = grads.get(id(root))
            grads[id(root)] = (root, seed if previous is None else previous[1] + seed, False)
    order = [node for node in order if id(node) in depends and id(node) not in stop_at]
    arrived = backward_pass(grads, order, create_graph, batch_shape, stop_at=stop_at,
                            needed=depends)
    found = []
    for target in targets:  # what arrived, plus a seed if the target is a root itself
        parts = [entry[1] for entry in (arrived.get(id(target)), grads.get(id(target)))
                 if entry is not None]
        found.append(None if not parts else parts[0] if len(parts) == 1
                     else parts[0] + parts[1])
    return found


def value_gradients(roots, seeds, targets, create_graph=False):
    """The same for the scalar engine: a target the roots do not depend on gets 0.0."""
    order, depends = nodes_towards(roots, targets)
    index = {id(t) for t in targets}
    grads = {}
    for root, seed in zip(roots, seeds):
        if id(root) in depends:
            grads[id(root)] = grads[id(root)] + seed if id(root) in grads else seed
    for node in reversed(order):
        if id(node) in index or id(node) not in depends:
            continue
        g = grads.pop(id(node), None)
        if g is None:
            continue
        for operand, d in zip(node._prev, node._partials(create_graph)):
            if id(operand) in depends:
                contribution = d * g
                previous = grads.get(id(operand))
                grads[id(operand)] = contribution if previous is None else previous + contribution
    return [grads.get(id(t), 0.0) for t in targets]


# ---------------------------------------------------------------------------------------
# Pytrees: tuples, lists and dicts of leaves, nested
# ---------------------------------------------------------------------------------------

def tree_flatten(tree):
    """``(leaves, treedef)``: the leaves of nested tuples, lists and dicts, in order, and
    what rebuilds the containers (``tree_unflatten``).

    This is how the transforms take a model's parameters as one argument.

    >>> leaves, treedef = cr.tree_flatten({"w": [1.0, 2.0], "b": 3.0})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> cr.tree_unflatten(treedef, [10.0, 20.0, 30.0])
    {'w': [10.0, 20.0], 'b': 30.0}
    """
    leaves = []
    return leaves, _walk(tree, leaves)


# (module-level, not nested: a nested recursive function refers to itself through its
# closure, a reference cycle left behind at every call)
def _walk(node, leaves):
    if isinstance(node, (tuple, list)):
        return (type(node), [_walk(child, leaves) for child in node])
    if isinstance(node, dict):
        return (dict, [(key, _walk(child, leaves)) for key, child in node.items()])
    leaves.append(node)
    return None


def tree_unflatten(treedef, leaves):
    """The inverse of ``tree_flatten``: the containers of ``treedef`` filled with ``leaves``.

    >>> params = {"w": 2.0, "b": 3.0}
    >>> leaves, treedef = cr.tree_flatten(params)
    >>> cr.tree_unflatten(treedef, [x * 10 for x in leaves])
    {'w': 20.0, 'b': 30.0}
    >>> cr.grad(lambda p: p["w"] * p["b"])(params)    # gradients come back the same way
    {'w': 3.0, 'b': 2.0}
    """
    return _build(treedef, iter(leaves))


def _build(node, leaves):
    if node is None:
        return next(leaves)
    kind, children = node
    if kind is dict:
        return {key: _build(child, leaves) for key, child in children}
    items = [_build(child, leaves) for child in children]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def _tree_map(function, tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [function(leaf) for leaf in leaves])


# ---------------------------------------------------------------------------------------
# Inputs in, results out, in the kind that went in
# ---------------------------------------------------------------------------------------

class _Nesting(threading.local):
    depth = 0  # how many transforms are running their function right now, per thread

    def __init__(self):
        self.live = set()  # ids of the targets of reverse transforms running right now


_nesting = _Nesting()


class _Running:
    """While a transform runs its function: counts the nesting, records graphs, and
    keeps its targets live (a result that depends on them is differentiated later)."""

    def __init__(self, targets=()):
        self.ids = {id(t) for t in targets} - _nesting.live

    def __enter__(self):
        self._grad = enable_grad()
        self._grad.__enter__()
        _nesting.depth += 1
        _nesting.live |= self.ids

    def __exit__(self, *exc):
        _nesting.live -= self.ids
        _nesting.depth -= 1
        self._grad.__exit__(*exc)
        return False


_RESULTS = (Real, np.ndarray, np.generic, Value, Tensor, JVPTracer)


def _checked_output(out, name):
    """The function's output, if every leaf is a number, an array or a traced value."""
    for leaf in tree_flatten(out)[0]:
        if isinstance(leaf, np.ndarray) and leaf.dtype == object:
            raise TypeError(f"{name}: the function returned an array of Python objects "
                            f"(Values inside a NumPy array?); build it with cr.stack, or "
                            f"use Tensors")
        if not isinstance(leaf, _RESULTS) or isinstance(leaf, (bool, np.bool_)):
            hint = " (a missing `return`?)" if leaf is None else ""
            raise TypeError(f"{name}: the function returned {type(leaf).__name__} "
                            f"{leaf!r:.60}{hint}; expected numbers, arrays or Tensors "
                            f"(or tuples, lists and dicts of them)")
    return out


def _kind(x, tracer_ok=False):
    if isinstance(x, JVPTracer):
        if tracer_ok:  # forward over forward: the kind of what the tracer carries
            return _kind(x.primal, True)
        raise TypeError("grad, vjp and jacrev inside several nested jvp/jacfwd at once "
                        "are not supported; nest at most one forward-mode transform "
                        "around them")
    if isinstance(x, Value):
        return "value"
    if isinstance(x, Tensor):
        return "tensor"
    if isinstance(x, np.ndarray) or (isinstance(x, (list, tuple)) and x):
        return "array"
    if isinstance(x, Real):
        return "float"
    if isinstance(x, complex):
        raise TypeError(f"cannot differentiate with respect to the complex number {x!r}; "
                        f"{_REAL_ONLY}")
    raise TypeError(f"expected a float, Value, NumPy array or Tensor to differentiate, "
                    f"got {type(x).__name__} {x!r}")


def _target(x, kind, tensor_engine):
    """The node to differentiate with respect to, standing for the input x."""
    if kind == "value":
        return Value(x.data, (x,), "identity")
    if kind == "tensor":
        if x.dtype.kind != "f":
            raise TypeError(f"cannot differentiate with respect to a tensor of dtype "
                            f"{x.dtype}; {_REAL_ONLY}")
        if x.requires_grad:
            return ops.identity(x)
        target = Tensor._make(x._data, True)
        _TARGETS[id(target)] = target
        return target
    if kind == "float" and not tensor_engine:
        return Value(float(x))
    array = np.asarray(x)
    if array.dtype.kind == "c":
        raise TypeError(f"cannot differentiate with respect to a complex array; "
                        f"{_REAL_ONLY}")
    if array.dtype.kind != "f":
        array = array.astype(np.float64)
    target = Tensor._make(array, requires_grad=True)
    _TARGETS[id(target)] = target
    return target


_REAL_ONLY = ("chainrule differentiates real numbers only: write a complex number as "
              "its real and imaginary parts, two real arrays")


def _result(x, kind, like, create_graph, lead=()):
    """A gradient (or value) in the kind of the input it belongs to; zeros (behind any
    ``lead`` batch axes) where the output does not depend on the input."""
    if x is None:
        x = np.zeros(tuple(lead) + np.shape(_innermost(like)), dtype=_float_dtype(like))
    if kind == "float":  # (a batch of them, with lead axes, is an array)
        return float(_innermost(x)) if not lead else np.asarray(_innermost(x))
    if kind == "value":
        return x if isinstance(x, Value) else Value(float(_innermost(x)))
    if kind == "array":
        return np.asarray(_innermost(x))
    if isinstance(x, Tensor):
        return x if create_graph else x.detach()
    return Tensor._make(np.asarray(_innermost(x)))


def _float_dtype(x):
    dtype = np.result_type(_innermost(x))
    return dtype if dtype.kind in "fc" else np.float64


def _argnums(argnums, nargs, name):
    many = not isinstance(argnums, int)
    nums = tuple(argnums) if many else (argnums,)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(f"{name}: argnums {argnums} is out of range for a function "
                             f"called with {nargs} positional arguments")
    nums = tuple(n % nargs for n in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"{name}: argnums {argnums} names an argument twice; each "
                         f"argument can be differentiated once (as in JAX)")
    return nums, many


class _Trace:
    """One run of f on targets standing for its inputs, ready for reverse passes."""

    def __init__(self, f, args, kwargs, argnums, has_aux, name):
        self.name = name
        self.argnums, self.many = _argnums(argnums, len(args), name)
        self.input_trees = []
        kinds = []
        # Forward mode around this transform (jvp or jacfwd of a gradient): inputs may be
        # tracers, (primal, tangent). The transform then runs on their primals, building
        # the graph of its results, and replays that graph forward with the JVP rules
        # from the inputs' tangents (forward over reverse, as JAX does). A tracer that f
        # captures instead (from an enclosing jvp) makes f's output carry a tangent; as
        # mixed partial derivatives commute, that tangent's gradient is the gradient's
        # tangent: one more reverse pass (see _tangent_pullback).
        input_tangents = []
        levels = set()
        for n in self.argnums:
            leaves, treedef = tree_flatten(args[n])
            tangents = [leaf.tangent if isinstance(leaf, JVPTracer) else None
                        for leaf in leaves]
            levels |= {leaf.level for leaf in leaves if isinstance(leaf, JVPTracer)}
            leaves = [leaf.primal if isinstance(leaf, JVPTracer) else leaf for leaf in leaves]
            self.input_trees.append((leaves, treedef))
            input_tangents.extend(tangents)
            kinds.extend(_kind(leaf) for leaf in leaves)
        # Floats ride on the tensor engine (as 0-d arrays), so that they follow any array
        # they meet; the scalar engine takes the transforms of Values.
        self.tensor_engine = "value" not in kinds
        self.kinds = kinds
        self.nested = _nesting.depth > 0
        new_args = list(args)
        self.targets = []
        kind_iter = iter(kinds)
        for n, (leaves, treedef) in zip(self.argnums, self.input_trees):
            targets = [_target(leaf, next(kind_iter), self.tensor_engine) for leaf in leaves]
            self.targets.extend(targets)
            new_args[n] = tree_unflatten(treedef, targets)
        self.input_tangents = input_tangents
        self.inputs = [leaf for leaves, _ in self.input_trees for leaf in leaves]
        with _Running(self.targets):
            out = f(*new_args, **kwargs)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(f"{name}(..., has_aux=True): the function must return a "
                                f"pair (output, aux), got {type(out).__name__}")
            out, self.aux = out
        else:
            self.aux = None
        self.out = out = _checked_output(out, name)
        out_leaves, self.out_def = tree_flatten(out)
        levels |= {leaf.level for leaf in out_leaves if isinstance(leaf, JVPTracer)}
        if len(levels) > 1:
            raise TypeError(f"{name} inside several nested jvp/jacfwd at once is not "
                            f"supported; nest at most one forward-mode transform around it")
        self.level = max(levels) if levels else None
        self.out_leaves = [leaf.primal if isinstance(leaf, JVPTracer) else leaf
                           for leaf in out_leaves]
        self.out_tangents = [leaf.tangent if isinstance(leaf, JVPTracer) else None
                             for leaf in out_leaves]
        # Build the gradient's own graph only when someone can differentiate it: an
        # outer transform, inputs that are themselves part of a graph, or a user's
        # tensor that f closes over (the gradient then depends on it, and stays a
        # Tensor of its graph, as torch.func's does).
        self.closes_over_a_graph = self.tensor_engine and _closes_over_users_tensor(
            self.out_leaves)
        self.create_graph = self.nested or self.closes_over_a_graph or any(
            (k == "value") or (k == "tensor" and x.requires_grad)
            for k, x in zip(kinds, self.inputs)) or any(
            t is not None for t in self.input_tangents)  # the replay needs the graph
        self.out_kind = ("tensor" if "tensor" in kinds else "value" if "value" in kinds
                         else "array" if "array" in kinds else "float")

    def output(self, tree=None):
        """The output (or aux) with traced values turned into the inputs' kind."""
        tree = self.out if tree is None else tree

        plain = self._plain

        if self.level is not None and any(t is not None for t in self.input_tangents):
            leaves, treedef = tree_flatten(tree)
            primals = [leaf.primal if isinstance(leaf, JVPTracer) else leaf for leaf in leaves]
            captured = [leaf.tangent if isinstance(leaf, JVPTracer) else None
                        for leaf in leaves]
            tangents = _add_tangents(self._replay(primals), captured)
            tree = tree_unflatten(treedef, [
                leaf if t is None else JVPTracer(leaf, t, self.level)
                for leaf, t in zip(primals, tangents)])
        return _tree_map(plain, tree)

    def _plain(self, leaf):
        if isinstance(leaf, JVPTracer):
            return JVPTracer(self._plain(leaf.primal), self._plain(leaf.tangent), leaf.level)
        if _depends_on_a_live_graph(leaf):  # as for the gradients (input_results)
            return leaf
        return _plain(leaf, self.out_kind, self.create_graph)

    def pullback(self, cotangents, batch_shape=()):
        """Gradients for every input leaf, given one cotangent per output leaf (None for
        an output to leave out). With ``batch_shape``, each cotangent is a batch of them,
        all carried through in one backward pass."""
        roots, seeds = [], []
        for leaf, cot in zip(self.out_leaves, cotangents):
            if cot is not None and isinstance(leaf, (Value, Tensor)):
                roots.append(leaf)
                seeds.append(self._seed(leaf, cot))
        grads = self._gradients(roots, seeds, batch_shape)
        if self.level is None:
            return grads
        tangents = _add_tangents(self._replay(grads),
                                 self._tangent_pullback(cotangents, batch_shape))
        return [JVPTracer(g, t, self.level) for g, t in zip(grads, tangents)]

    def _replay(self, results):
        """The tangents of results computed from the targets, given the inputs' tangents:
        forward mode over the recorded graph (one pass, batches of tangents welcome)."""
        start = {id(target): t for target, t in zip(self.targets, self.input_tangents)
                 if t is not None}
        if not start:
            return [None] * len(results)
        return _replay(results, start, self.nested)

    def _gradients(self, roots, seeds, batch_shape):
        if not roots:
            return [None] * len(self.targets)
        if self.tensor_engine:
            return tensor_gradients(roots, seeds, self.targets, self.create_graph,
                                    batch_shape)
        return value_gradients(roots, seeds, self.targets, self.create_graph)

    def _tangent_pullback(self, cotangents, batch_shape):
        """The tangents of the gradients: the gradients of the output's tangent. A batch
        of tangents (jacfwd's columns, axes ``lead`` in front) is pulled back column by
        column, as a batch of cotangents; the result keeps the columns in front."""
        roots, seeds, lead = [], [], ()
        for leaf, tangent, cot in zip(self.out_leaves, self.out_tangents, cotangents):
            if cot is None or not isinstance(tangent, (Value, Tensor)):
                continue
            lead = tuple(np.shape(_innermost(tangent))[
                :np.ndim(_innermost(tangent)) - np.ndim(_innermost(leaf))])
            cot = np.asarray(_innermost(cot), dtype=np.float64)
            if lead:  # cotangent b for column j: cot[b] at column j, zeros elsewhere
                size = int(np.prod(lead))
                columns = np.eye(size).reshape(lead + lead)
                out_ndim = np.ndim(_innermost(leaf))
                cot = (cot.reshape(tuple(batch_shape) + (1,) * (2 * len(lead))
                                   + cot.shape[len(batch_shape):])
                       * columns.reshape((1,) * len(batch_shape) + lead + lead
                                         + (1,) * out_ndim))
            roots.append(tangent)
            seeds.append(self._seed(tangent, cot))
        tangents = self._gradients(roots, seeds, tuple(batch_shape) + lead)
        if not lead or not batch_shape:
            return tangents
        # gradients come as batch + lead + input; a tracer's tangent wants lead in front
        nb, nl = len(batch_shape), len(lead)
        return [None if t is None else ops.transpose(
            t, tuple(range(nb, nb + nl)) + tuple(range(nb))
            + tuple(range(nb + nl, np.ndim(_innermost(t))))) for t in tangents]

    def _seed(self, leaf, cot):
        if isinstance(leaf, Value):
            if isinstance(cot, Value):
                return cot
            return Value(float(np.asarray(_innermost(cot)))) if self.create_graph else \
                float(np.asarray(_innermost(cot)))
        if isinstance(cot, Tensor):  # one in a graph stays: the gradient is linear in it
            return cot if self.create_graph or cot.requires_grad else cot._data
        array = np.asarray(cot, dtype=leaf.dtype)
        return Tensor._make(array) if self.create_graph else array

    def _traced_result(self, g, kind, leaf, batch_shape):
        """A gradient that carries a tangent: both parts in the input's kind (or kept,
        where in a live graph, as input_results keeps them)."""

        def part(x, lead):
            return x if _depends_on_a_live_graph(x) else \
                _result(x, kind, leaf, self.create_graph, lead)

        return JVPTracer(part(g.primal, batch_shape),
                         part(g.tangent, self._tangent_lead() + tuple(batch_shape)),
                         g.level)

    def _tangent_lead(self):
        """The batch axes of the tangents (jacfwd's columns), from the outputs' or, where
        no output carries one, from the inputs'."""
        pairs = list(zip(self.out_leaves, self.out_tangents)) + \
            list(zip(self.inputs, self.input_tangents))
        for leaf, tangent in pairs:
            if tangent is not None:
                return tuple(np.shape(_innermost(tangent))[
                    :np.ndim(_innermost(tangent)) - np.ndim(_innermost(leaf))])
        return ()

    def input_results(self, grads, batch_shape=()):
        """Per argnum, the gradients rebuilt into the input's structure and kind (those
        in a live graph kept as they are: an outer transform differentiates them)."""
        out, i = [], 0
        for leaves, treedef in self.input_trees:
            results = []
            for leaf in leaves:
                g, kind = grads[i], self.kinds[i]
                if isinstance(g, JVPTracer):
                    results.append(self._traced_result(g, kind, leaf, batch_shape))
                elif _depends_on_a_live_graph(g):
                    # inside an outer transform, a gradient that depends on the outer
                    # variables stays a node of their graph: the outer transform
                    # differentiates through it (closures over outer variables)
                    results.append(g)
                else:
                    results.append(_result(g, kind, leaf, self.create_graph, batch_shape))
                i += 1
            out.append(tree_unflatten(treedef, results))
        return tuple(out) if self.many else out[0]


def _add_tangents(first, second):
    return [b if a is None else a if b is None else a + b for a, b in zip(first, second)]


def _replay(results, start, nested):
    """Forward mode over a graph that is already recorded: the tangent of each result,
    given the tangents of some of its nodes ({id: tangent}), by the JVP rules of every
    node in turn (for Values, the partial derivatives of the table)."""
    roots = [r for r in results if isinstance(r, (Tensor, Value))]
    tangents = dict(start)
    for node in topological_order(Roots(roots))[:-1]:
        if id(node) in tangents:
            continue
        if isinstance(node, Value):
            total = None
            for operand, d in zip(node._prev, node._partials(nested)):
                t = tangents.get(id(operand))
                if t is not None:
                    total = d * t if total is None else total + d * t
        else:
            args = node._args
            given = {i: tangents[id(a)] for i, a in enumerate(args)
                     if isinstance(a, Tensor) and id(a) in tangents}
            if not given:
                continue
            if nested:
                total = tangent_of_result(node._op, given, node, args, node._kwargs)
            else:
                total = tangent_of_result(node._op, given, node._data, node._raw_args,
                                          node._kwargs)
        if total is not None:
            tangents[id(node)] = total
    return [tangents.get(id(r)) if isinstance(r, (Tensor, Value)) else None for r in results]


# the leaves transforms make to stand for their inputs, by id (a Tensor's == is elementwise)
_TARGETS = weakref.WeakValueDictionary()


def _is_users(leaf):
    """Whether a leaf is a Tensor of the user's, not one a transform made."""
    return _TARGETS.get(id(leaf)) is not leaf


def _leaves_behind(values):
    """The leaves (Tensors that require grad) of the graph behind these values."""
    tensors = [v for v in values if isinstance(v, Tensor) and v.requires_grad]
    yield from (t for t in tensors if not t._prev)
    interior = [t for t in tensors if t._prev]
    for node in topological_order(Roots(interior))[:-1] if interior else ():
        yield from (operand for operand in node._prev if not operand._prev)


def _closes_over_users_tensor(outputs):
    """Whether the outputs depend on a Tensor of the user's that requires grad: a
    parameter the function closes over, whose graph the gradient must then join."""
    return any(_is_users(leaf) for leaf in _leaves_behind(outputs))


def _depends_on_a_live_graph(x):
    """Whether x depends on a variable someone will still differentiate with respect
    to: a target of a reverse transform running now (an enclosing one), or a Tensor of
    the user's that requires grad. Such a result stays a node of their graph; one that
    depends only on the targets of a finished transform is a plain number."""
    if isinstance(x, Value):
        return bool(x._prev)
    return any(_is_users(leaf) or id(leaf) in _nesting.live for leaf in _leaves_behind([x]))


def _plain(leaf, kind, create_graph):
    if isinstance(leaf, Value):
        return leaf if kind == "value" else (leaf.data if kind == "float" else leaf)
    if isinstance(leaf, Tensor):
        if kind == "tensor":
            return leaf if create_graph else leaf.detach()
        if kind == "float" and leaf.size == 1:
            return float(leaf._data)
        return leaf._data
    return leaf


# ---------------------------------------------------------------------------------------
# Reverse mode: grad, value_and_grad, vjp
# ---------------------------------------------------------------------------------------

def value_and_grad(f, argnums=0, has_aux=False):
    """``f`` and its gradient in one call: ``(value, grad)``, or ``((value, aux), grad)``.

    ``f`` must return a scalar. ``argnums`` picks the argument(s) to differentiate
    (an int, or a tuple: then the gradient is a tuple).

    >>> cr.value_and_grad(lambda x: x ** 3)(2.0)      # x**3 and 3x**2 at x = 2
    (8.0, 12.0)
    """
    def value_and_grad_f(*args, **kwargs):
        trace = _Trace(f, args, kwargs, argnums, has_aux, "grad")
        if len(trace.out_leaves) != 1 or np.size(_innermost(trace.out_leaves[0])) != 1:
            shape = [np.shape(_innermost(leaf)) for leaf in trace.out_leaves]
            raise TypeError(f"grad: the function must return a scalar, but it returned "
                            f"{'shapes ' if len(shape) != 1 else 'shape '}"
                            f"{shape if len(shape) != 1 else shape[0]}; use cr.jacobian for "
                            f"the derivatives of every output, or reduce it with .sum()")
        leaf = trace.out_leaves[0]
        seed = 1.0 if not isinstance(leaf, Tensor) else np.ones(leaf.shape, leaf.dtype)
        grads = trace.input_results(trace.pullback([seed]))
        value = trace.output()
        if has_aux:
            return (value, trace.output(trace.aux)), grads
        return value, grads

    return value_and_grad_f


def grad(f, argnums=0, has_aux=False):
    """The gradient of a scalar function: ``grad(f)(x)`` has the shape of x.

    ``argnums`` picks the argument(s) to differentiate (an int, or a tuple: then a
    tuple of gradients); with ``has_aux=True``, f returns ``(output, aux)`` and the
    result is ``(gradient, aux)``. Floats give floats, arrays arrays, Tensors Tensors.

    >>> cr.grad(lambda x: x * x + 3 * x)(2.0)       # 2x + 3 at x = 2
    7.0
    >>> cr.grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> cr.grad(lambda x, y: x * y, argnums=1)(2.0, 5.0)     # d/dy (x y) = x
    2.0
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    def grad_f(*args, **kwargs):
        (value_aux), grads = value_and_grad_f(*args, **kwargs)
        return (grads, value_aux[1]) if has_aux else grads

    return grad_f


def vjp(f, *primals, has_aux=False):
    """``(out, vjp_fn)``: f at the primals, and the function that takes a cotangent
    (shaped like out) to the vector-Jacobian products, a tuple with one entry per primal.

    >>> out, f_vjp = cr.vjp(lambda x, y: x * y, 2.0, 3.0)
    >>> out, f_vjp(1.0)                            # (d/dx, d/dy) times the cotangent 1
    (6.0, (3.0, 2.0))
    """
    trace = _Trace(f, primals, {}, tuple(range(len(primals))), has_aux, "vjp")

    def vjp_fn(cotangent):
        leaves, treedef = tree_flatten(cotangent)
        if len(leaves) != len(trace.out_leaves):
            raise ValueError(f"vjp: the cotangent has {len(leaves)} leaves, but the "
                             f"output has {len(trace.out_leaves)}")
        for leaf, out in zip(leaves, trace.out_leaves):
            if np.shape(_innermost(leaf)) != np.shape(_innermost(out)):
                raise ValueError(f"vjp: a cotangent of shape {np.shape(_innermost(leaf))} "
                                 f"for an output of shape {np.shape(_innermost(out))}")
        if any(isinstance(leaf, JVPTracer) for leaf in leaves):
            return _pull_traced_cotangent(trace, leaves)
        # a cotangent in a graph (an enclosing grad's variable) gives gradients in it
        return trace.input_results(trace.pullback(leaves))

    out = trace.output()
    return (out, vjp_fn, trace.output(trace.aux)) if has_aux else (out, vjp_fn)


def _pull_traced_cotangent(trace, leaves):
    """vjp_fn at a cotangent that carries a tangent (jvp or jacfwd with respect to the
    cotangent). A VJP is linear in its cotangent, so the tangent of J(x)^T c is
    J(x)^T dc plus, where x is traced by the same transform, the tangent of J(x)^T c
    through x: the pullback of the primal cotangent gives both, and the pullback of dc
    (a batch of them, for jacfwd's columns) adds the first."""
    level = max(leaf.level for leaf in leaves if isinstance(leaf, JVPTracer))
    top = [isinstance(leaf, JVPTracer) and leaf.level == level for leaf in leaves]
    primals = [leaf.primal if is_top else leaf for leaf, is_top in zip(leaves, top)]
    through_x = trace.input_results(trace.pullback(primals))  # lower levels recurse here
    lead = next(tuple(np.shape(_innermost(leaf.tangent))[
        :np.ndim(_innermost(leaf.tangent)) - np.ndim(_innermost(leaf.primal))])
        for leaf, is_top in zip(leaves, top) if is_top)
    tangents = [leaf.tangent if is_top else None for leaf, is_top in zip(leaves, top)]
    through_c = trace.input_results(trace.pullback(tangents, lead), lead)

    def combine(a, b):
        if isinstance(b, JVPTracer) and b.level == level:  # only dc's own product
            b = b.primal
        if isinstance(a, JVPTracer) and a.level == level:
            return JVPTracer(a.primal, a.tangent + b, level)
        return JVPTracer(a, b, level)

    first, second = tree_flatten(through_x), tree_flatten(through_c)[0]
    return tree_unflatten(first[1], [combine(a, b) for a, b in zip(first[0], second)])


# ---------------------------------------------------------------------------------------
# Forward mode: jvp
# ---------------------------------------------------------------------------------------

def jvp(f, primals, tangents, has_aux=False):
    """``(out, tangent_out)``: f at the primals and its directional derivative along the
    tangents, in one forward pass (forward mode: the cost of one evaluation of f).

    >>> cr.jvp(lambda x: x ** 3, (2.0,), (1.0,))    # x**3, and 3x**2 times 1
    (8.0, 12.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples, one entry per argument")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    level = new_level()
    tracers = []
    kinds = []
    for primal, tangent in zip(primals, tangents):
        p_leaves, p_def = tree_flatten(primal)
        t_leaves, _ = tree_flatten(tangent)
        if len(p_leaves) != len(t_leaves):
            raise ValueError("jvp: primals and tangents must have the same structure")
        leaf_tracers = []
        for p, t in zip(p_leaves, t_leaves):
            kinds.append(_kind(p, tracer_ok=True))
            if np.shape(_innermost(p)) != np.shape(_innermost(t)):
                raise ValueError(f"jvp: a tangent of shape {np.shape(_innermost(t))} for a "
                                 f"primal of shape {np.shape(_innermost(p))}")
            p = np.asarray(p, dtype=np.float64) if isinstance(p, (list, tuple)) else p
            t = t if isinstance(t, (Tensor, Value, JVPTracer)) else np.asarray(
                t, dtype=_float_dtype(p))
            leaf_tracers.append(JVPTracer(p, t, level))
        tracers.append(tree_unflatten(p_def, leaf_tracers))
    with _Running():
        out = f(*tracers)
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"jvp(..., has_aux=True): the function must return a pair "
                            f"(output, aux), got {type(out).__name__}")
        out, aux = out
    out = _checked_output(out, "jvp")
    out_kind = ("tensor" if "tensor" in kinds else "value" if "value" in kinds
                else "array" if "array" in kinds else "float")

    def split(leaf, want_tangent):
        if isinstance(leaf, JVPTracer) and leaf.level == level:
            value = leaf.tangent if want_tangent else leaf.primal
        else:  # does not depend on the inputs
            value = np.zeros(np.shape(_innermost(leaf))) if want_tangent else leaf
        return _forward_result(value, out_kind)

    primal_out = _tree_map(lambda leaf: split(leaf, False), out)
    tangent_out = _tree_map(lambda leaf: split(leaf, True), out)
    if has_aux:
        return primal_out, tangent_out, aux
    return primal_out, tangent_out


def _forward_result(x, kind):
    if isinstance(x, (JVPTracer, Value)) or (isinstance(x, Tensor) and kind == "tensor"):
        return x
    if _depends_on_a_live_graph(x):  # on an enclosing transform's variable (a closure)
        return x
    inner = _innermost(x)
    if kind == "float" and np.size(inner) == 1:
        return float(np.asarray(inner))
    if kind == "tensor":
        return Tensor._make(np.asarray(inner))
    if kind == "value":
        return Value(float(np.asarray(inner))) if np.size(inner) == 1 else np.asarray(inner)
    return np.asarray(inner)


# ---------------------------------------------------------------------------------------
# Jacobians and Hessians
# ---------------------------------------------------------------------------------------

def jacrev(f, argnums=0):
    """The Jacobian by reverse mode, shape ``out.shape + in.shape``: for the tensor
    engine, one backward pass seeded with all the rows of an identity at once.

    >>> cr.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0]))      # diag(2x)
    array([[2., 0.],
           [0., 4.]])
    """
    def jacrev_f(*args, **kwargs):
        trace = _Trace(f, args, kwargs, argnums, False, "jacrev")
        per_output = []
        for leaf in trace.out_leaves:
            shape = np.shape(_innermost(leaf))
            size = int(np.prod(shape))
            constant = not isinstance(leaf, (Tensor, Value))  # depends on no input
            if (trace.tensor_engine and isinstance(leaf, Tensor) and shape) or \
                    (constant and shape):
                seed = np.eye(size, dtype=_float_dtype(leaf)).reshape((size,) + shape)
                cotangents = [seed if other is leaf else None for other in trace.out_leaves]
                grads = trace.pullback(cotangents, (size,)) if not constant else \
                    [None] * len(trace.targets)
                blocks = trace.input_results(grads, (size,))
                per_output.append(_batch_axis_into_output_shape(blocks, trace, shape))
            else:  # a scalar output (or the scalar engine's): one pass per output
                cot = [1.0 if other is leaf else None for other in trace.out_leaves]
                per_output.append(trace.input_results(trace.pullback(cot)))
        return tree_unflatten(trace.out_def, per_output)

    return jacrev_f


def _batch_axis_into_output_shape(blocks, trace, out_shape):
    """Move the batch axis of each gradient into the output's shape: out.shape + in.shape."""
    def reshape(block):
        if isinstance(block, (Tensor, np.ndarray, JVPTracer)):
            return ops.reshape(block, out_shape + tuple(np.shape(block)[1:]))
        return block
    if trace.many:
        return tuple(_tree_map(reshape, b) for b in blocks)
    return _tree_map(reshape, blocks)


def jacfwd(f, argnums=0):
    """The Jacobian by forward mode, shape ``out.shape + in.shape``: one forward pass
    per input, carrying all the columns of an identity as a batch of tangents.

    >>> cr.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))      # diag(2x)
    array([[2., 0.],
           [0., 4.]])
    """
    def jacfwd_f(*args, **kwargs):
        nums, many = _argnums(argnums, len(args), "jacfwd")
        kinds = [_kind(leaf, tracer_ok=True) for n in nums
                 for leaf in tree_flatten(args[n])[0]]
        out_kind = ("tensor" if "tensor" in kinds else "value" if "value" in kinds
                    else "array" if "array" in kinds else "float")
        per_arg, out_def = [], None
        for n in nums:
            leaves, treedef = tree_flatten(args[n])
            per_leaf = []
            for k, leaf in enumerate(leaves):
                blocks, out_def = _forward_columns(f, args, kwargs, n, leaves, treedef, k,
                                                   out_kind)
                per_leaf.append(blocks)
            per_arg.append((treedef, per_leaf))
        # The output's structure outside, the inputs' inside (as JAX arranges it).
        regrouped = []
        for j in range(len(per_arg[0][1][0])):
            per_num = [tree_unflatten(treedef, [blocks[j] for blocks in per_leaf])
                       for treedef, per_leaf in per_arg]
            regrouped.append(tuple(per_num) if many else per_num[0])
        return tree_unflatten(out_def, regrouped)

    return jacfwd_f


def _forward_columns(f, args, kwargs, n, leaves, treedef, k, out_kind):
    """d out / d leaves[k] of argument n, for every output leaf: out.shape + in.shape."""
    leaf = leaves[k]
    if isinstance(leaf, (list, tuple)):
        leaf = np.asarray(leaf, dtype=np.float64)
    in_shape = np.shape(_innermost(leaf))
    size = int(np.prod(in_shape))
    scalar = in_shape == ()  # one column: a plain tangent of 1, no batch axis
    columns = 1.0 if scalar else np.eye(size, dtype=_float_dtype(leaf)).reshape(
        (size,) + in_shape)
    level = new_level()
    traced = list(leaves)
    traced[k] = JVPTracer(leaf, columns, level)
    new_args = list(args)
    new_args[n] = tree_unflatten(treedef, traced)
    with _Running():
        out = _checked_output(f(*new_args, **kwargs), "jacfwd")
    out_leaves, out_def = tree_flatten(out)
    blocks = []
    for o in out_leaves:
        out_shape = np.shape(_innermost(o))
        if isinstance(o, JVPTracer) and o.level == level and scalar:
            block = o.tangent
        elif isinstance(o, JVPTracer) and o.level == level:
            tangent = o.tangent  # (size,) + out.shape: move the batch axis to the end
            order = tuple(range(1, len(out_shape) + 1)) + (0,)
            block = ops.reshape(ops.transpose(tangent, order), out_shape + in_shape)
        else:  # this output does not depend on the input
            block = np.zeros(out_shape + in_shape)
        blocks.append(_forward_result(block, out_kind))
    return blocks, out_def


jacobian = jacrev


def hessian(f, argnums=0):
    """The matrix of second derivatives, shape ``in.shape + in.shape``.

    Forward over reverse, as in JAX: the gradient's graph is built once, then replayed
    forward with all the columns of an identity as one batch of tangents.

    >>> cr.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))   # [[2y, 2x], [2x, 0]]
    array([[4., 2.],
           [2., 0.]])
    """
    return jacfwd(jacrev(f, argnums), argnums)


def hvp(f, x, v):
    """The Hessian of scalar ``f`` at ``x`` times ``v``, without forming the Hessian:
    the gradient of ``<grad f(x), v>``, two backward passes. The result has x's shape.

    >>> f = lambda x: x[0] ** 2 * x[1]              # Hessian [[2y, 2x], [2x, 0]]
    >>> cr.hvp(f, np.array([1.0, 2.0]), np.array([1.0, 0.0]))     # its first column
    array([4., 2.])
    """
    def directional(x):
        g = grad(f)(x)
        g_leaves, _ = tree_flatten(g)
        v_leaves, _ = tree_flatten(v)
        total = 0.0
        for gl, vl in zip(g_leaves, v_leaves):
            total = total + ops.sum(gl * np.asarray(vl)) if not isinstance(gl, (Value, float)) \
                else total + gl * float(vl)
        return total
    return grad(directional)(x)


# ---------------------------------------------------------------------------------------
# Matrix-free operators for SciPy's Krylov methods
# ---------------------------------------------------------------------------------------

def _linear_operator_class():
    try:
        from scipy.sparse.linalg import LinearOperator
    except ImportError:
        raise ImportError("linear_operator needs SciPy: pip install 'chainrule[scipy]'") \
            from None
    return LinearOperator


def linear_operator(f, x):
    """The Jacobian of ``f`` at ``x`` as a ``scipy.sparse.linalg.LinearOperator``:
    ``matvec`` is a jvp, ``rmatvec`` a vjp; the matrix is never formed.

    Its shape is (out.size, x.size), for SciPy's iterative solvers (needs SciPy).

    >>> f = lambda x: cr.stack([x[0] * x[1], x[0] + x[1], x[1]])     # R^2 -> R^3
    >>> J = cr.linear_operator(f, np.array([2.0, 3.0]))
    >>> J.shape
    (3, 2)
    >>> J.matvec(np.array([1.0, 0.0])).tolist()            # J @ v, the first column
    [3.0, 1.0, 0.0]
    >>> J.rmatvec(np.array([1.0, 0.0, 0.0])).tolist()      # J.T @ u, the first row
    [3.0, 2.0]
    """
    LinearOperator = _linear_operator_class()
    x = _numbers_for_scipy(x, "linear_operator")
    out, f_vjp = vjp(f, x)
    out = _numbers_for_scipy(out, "linear_operator")

    def matvec(v):
        tangent = jvp(f, (x,), (np.reshape(v, x.shape),))[1]
        return _numbers_for_scipy(tangent, "linear_operator").ravel()

    def rmatvec(u):
        return _numbers_for_scipy(f_vjp(np.reshape(u, out.shape))[0], "linear_operator").ravel()

    return LinearOperator((out.size, x.size), matvec=matvec, rmatvec=rmatvec,
                          dtype=np.float64)


def _numbers_for_scipy(x, name):
    """x as a float64 array, or a TypeError where that would cut it from a graph: inside
    another transform (x, or a variable f closes over, is traced), SciPy's operators,
    which work on numbers, would drop the gradient."""
    if isinstance(x, (JVPTracer, Value)) or (isinstance(x, Tensor) and x.requires_grad):
        raise TypeError(f"{name}: the point or the function's result is part of a graph "
                        f"(inside another transform, or closing over a tensor that "
                        f"requires grad); SciPy's operators work on numbers, so no "
                        f"gradient could flow through them: use cr.jvp and cr.vjp there")
    return np.asarray(x, dtype=np.float64)


def hessian_operator(f, x):
    """The Hessian of scalar ``f`` at ``x`` as a symmetric ``LinearOperator`` (hvp).

    Its shape is (x.size, x.size); each product costs two backward passes.

    >>> H = cr.hessian_operator(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]))
    >>> H.matvec(np.array([1.0, 1.0])).tolist()            # diag(6x) @ [1, 1]
    [6.0, 12.0]
    """
    LinearOperator = _linear_operator_class()
    x = _numbers_for_scipy(x, "hessian_operator")

    def matvec(v):
        return _numbers_for_scipy(hvp(f, x, np.reshape(v, x.shape)), "hessian_operator").ravel()

    return LinearOperator((x.size, x.size), matvec=matvec, rmatvec=matvec, dtype=np.float64)
