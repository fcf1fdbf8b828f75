"""Random pytree-shaped programs through every function transform, against JAX.

A transform that takes and gives trees can be wrong without any derivative rule being
wrong: a gradient put at the wrong leaf, two argnums swapped, an aux lost, a batch axis
put on the wrong output, a tuple given back as a list. Such a result has the right
numbers in the wrong places, and no test of one operation sees it. So here each case is
generated from its own seed:

* the inputs: one to three arguments, each a random tree of dicts (keys in no sorted
  order), tuples, lists, NamedTuples, a class registered with both libraries whose
  children flatten in the opposite order to its fields (with static data), None and
  nodes without leaves; the leaves are Python floats and 0-d, 1-d and 2-d float64
  arrays, and now and then one leaf object stands at two places;
* three functions of a few of those leaves, written once as Python source against a
  namespace ``ns`` (sum, products, sin, tanh, exp, matmul, indexing) and run with
  ``ns = chainrule`` and ``ns = jax.numpy``: one gives a scalar (grad, hessian), one a
  random tree (vjp, jvp, the Jacobians, vmap, jit), one a random aux tree; an output
  leaf may be an input given back as it is, or a constant;
* the transforms: grad and value_and_grad (argnums 0, an int and a tuple in no sorted
  order; has_aux), vjp's pullback on a random cotangent tree, jvp on random tangent
  trees, jacrev, jacfwd and hessian (JAX's nesting: the output's tree outside, the
  input's inside), each of vjp, jvp, jacrev, jacfwd and hessian with has_aux too; vmap
  (in_axes an int, or a tuple of prefixes of the arguments' trees, None, dicts and
  containers of axes in places; out_axes a prefix of the output's tree; axis_size where
  nothing is mapped) and vmap of grad; jit of grad and of value_and_grad (traced once,
  then called on new numbers, and on the same numbers with the dicts in another order)
  and jit of vmap.

Every result is compared with JAX's node by node: a dict has the same keys (chainrule
keeps a dict's insertion order where JAX sorts keys, as documented, so a dict is
compared by key), a tuple stays a tuple, a list a list, a NamedTuple or registered
class its own class (with its static data), None stays None; and each leaf has JAX's
shape and numbers to rtol 1e-10. Tangent, cotangent and in_axes dicts are built in an
order of their own, so a transform that paired them with the primal's leaves by
position instead of by key would be caught too. JAX's results for a case are computed
in one jax.jit (see jax_results), which is most of this file's time.

At the end, the defects these cases found, each as its smallest program.

``make test-fast`` runs the first FAST cases; ``CHAINRULE_PYTREE_FUZZ_N=2000`` runs more
than the default COUNT.
"""

import functools
import os
from typing import NamedTuple

import numpy as np
import pytest

import chainrule as cr

from seeds_and_tolerances import seeded

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

COUNT = int(os.environ.get("CHAINRULE_PYTREE_FUZZ_N", "80"))
FAST = 10
BATCH = 3
RTOL = 1e-10
ATOL = 1e-12  # for entries that are zero up to the rounding of a cancelling sum


@pytest.fixture(autouse=True)
def _float64_jax():
    """JAX in float64 for every test (tests/conftest.py puts the switch back after)."""
    jax.config.update("jax_enable_x64", True)


class Pair(NamedTuple):
    left: object
    right: object


class Triple(NamedTuple):
    p: object
    q: object
    r: object


class Box:
    """A class registered as a node with both libraries: its children flatten in the
    opposite order to its fields (second, then first), and its name is static data
    the transforms must carry through."""

    def __init__(self, first, second, name="box"):
        self.first, self.second, self.name = first, second, name

    def __repr__(self):
        return f"Box({self.first!r}, {self.second!r}, {self.name!r})"


def _flatten_box(box):
    return (box.second, box.first), box.name


def _unflatten_box(name, children):
    return Box(children[1], children[0], name)


cr.register_pytree_node(Box, _flatten_box, _unflatten_box)
jax.tree_util.register_pytree_node(Box, _flatten_box, _unflatten_box)

NAMED = {"Pair": Pair, "Triple": Triple}
KEYS = ["w", "b", "z", "a", "m", "c"]
SHAPES = {"float": None, "0d": (), "v2": (2,), "v3": (3,), "m23": (2, 3), "m32": (3, 2)}
KINDS = list(SHAPES)


# ---- trees ------------------------------------------------------------------------

def pick(rng, options):
    """One of a list's items as it is (rng.choice would make a NumPy scalar of it)."""
    return options[int(rng.integers(len(options)))]


def random_leaf(rng, kind):
    if kind == "float":
        return float(rng.uniform(-1.0, 1.0))
    return np.array(rng.uniform(-1.0, 1.0, size=SHAPES[kind]))


def random_tree(rng, depth, path, leaves, made):
    """A tree of inputs; each leaf's access path and kind are appended to ``leaves``.
    A path is a list of steps: ("[]", key or index) or (".", attribute). Now and then
    a leaf is the very object of an earlier one (``made``): a transform that told
    leaves apart by identity would mix their derivatives up."""
    if depth >= 3 or rng.random() < 0.35:
        if made and rng.random() < 0.1:
            kind, leaf = pick(rng, made)
        else:
            kind = pick(rng, KINDS)
            leaf = random_leaf(rng, kind)
            made.append((kind, leaf))
        leaves.append((path, kind))
        return leaf

    def child(step):
        r = rng.random()
        if r < 0.1:
            return None
        if r < 0.15:  # a node without leaves
            return pick(rng, [(), [], {}])
        return random_tree(rng, depth + 1, path + [step], leaves, made)
    node = pick(rng, ["dict", "tuple", "list", "Pair", "Triple", "Box"])
    if node == "Box":
        return Box(child((".", "first")), child((".", "second")),
                   f"box{int(rng.integers(100))}")
    if node in NAMED:
        return NAMED[node](*[child((".", field)) for field in NAMED[node]._fields])
    size = int(rng.integers(1, 4))
    if node == "dict":
        keys = [str(k) for k in rng.choice(KEYS, size, replace=False)]
        return {k: child(("[]", k)) for k in keys}
    children = [child(("[]", i)) for i in range(size)]
    return tuple(children) if node == "tuple" else children


def map_tree(fn, tree, rng=None):
    """fn on every leaf, containers rebuilt as they are (dicts in a shuffled key order
    when rng is given)."""
    if tree is None:
        return None
    if isinstance(tree, dict):
        keys = list(tree)
        if rng is not None:
            keys = [keys[i] for i in rng.permutation(len(keys))]
        return {k: map_tree(fn, tree[k], rng) for k in keys}
    if isinstance(tree, Box):
        return Box(map_tree(fn, tree.first, rng), map_tree(fn, tree.second, rng), tree.name)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*[map_tree(fn, c, rng) for c in tree])
    if isinstance(tree, (tuple, list)):
        return type(tree)(map_tree(fn, c, rng) for c in tree)
    return fn(tree)


def like(rng, tree):
    """A tree of new random numbers of the same structure, kinds and shapes, its dicts
    in an order of their own (a tangent, a cotangent, the next call's inputs)."""
    def leaf(x):
        if isinstance(x, float):
            return float(rng.uniform(-1.0, 1.0))
        return np.array(rng.uniform(-1.0, 1.0, size=np.shape(x)))
    return map_tree(leaf, tree, rng)


def ordered_like(tree, order):
    """``tree``'s dicts in the key order of ``order``'s (the same structure otherwise)."""
    if isinstance(order, dict):
        return {k: ordered_like(tree[k], order[k]) for k in order}
    if isinstance(order, Box):
        return Box(ordered_like(tree.first, order.first),
                   ordered_like(tree.second, order.second), order.name)
    if isinstance(order, tuple) and hasattr(order, "_fields"):
        return type(order)(*[ordered_like(a, b) for a, b in zip(tree, order)])
    if isinstance(order, (tuple, list)):
        return type(order)(ordered_like(a, b) for a, b in zip(tree, order))
    return tree


# ---- programs ---------------------------------------------------------------------

def access(argnum, path):
    text = f"a{argnum}"
    for step, key in path:
        text += f".{key}" if step == "." else f"[{key!r}]"
    return text


def scalar_term(rng, leaves):
    """Source of a scalar computed from one or two leaves."""
    argnum, path, kind = pick(rng, leaves)
    x = access(argnum, path)
    shape = SHAPES[kind]
    matmuls = [access(a2, p2) for a2, p2, k2 in leaves
               if shape and len(shape) == 2 and SHAPES[k2] and SHAPES[k2][0] == shape[1]]
    options = ["sin", "tanh", "exp", "square"]
    if shape:
        options += ["index"]
    if matmuls:
        options += ["matmul", "matmul"]
    op = pick(rng, options)
    if op == "matmul":
        return f"ns.sum(ns.tanh(ns.matmul({x}, {pick(rng, matmuls)})))"
    if op == "index":
        index = ", ".join(str(int(rng.integers(n))) for n in shape)
        return f"{x}[{index}]"
    if op == "sin":
        return f"ns.sum(ns.sin({x}))"
    if op == "tanh":
        return f"ns.sum(ns.tanh({x}) * {x})"
    if op == "exp":
        return f"ns.sum(ns.exp(0.5 * {x}))"
    return f"ns.sum({x} * {x})"


def scalar_expression(rng, leaves):
    terms = []
    for _ in range(int(rng.integers(2, 5))):
        term = f"{rng.uniform(0.5, 2.0):.3f} * {scalar_term(rng, leaves)}"
        if rng.random() < 0.35:
            term = f"{term} * {scalar_term(rng, leaves)}"
        terms.append(term)
    return " + ".join(terms)


def array_expression(rng, leaves):
    """Source of an output leaf: a scalar, or an array the shape of an input leaf or of
    a matrix product; now and then an input leaf itself, or a constant."""
    arrays = [(a, p, k) for a, p, k in leaves if SHAPES[k]]
    r = rng.random()
    if r < 0.08:  # an input given back as it is: the output is the argument's tracer
        argnum, path, _ = pick(rng, leaves)
        return access(argnum, path)
    if r < 0.11:  # a constant: no derivative, and nothing to map
        return f"{rng.uniform(-1.0, 1.0):.3f}"
    if r < 0.3 or not arrays:
        return scalar_expression(rng, leaves)
    argnum, path, kind = pick(rng, arrays)
    x = access(argnum, path)
    matmuls = [access(a2, p2) for a2, p2, k2 in leaves
               if len(SHAPES[kind]) == 2 and SHAPES[k2] and SHAPES[k2][0] == SHAPES[kind][1]]
    if matmuls and r < 0.6:
        return f"ns.sin(ns.matmul({x}, {pick(rng, matmuls)}))"
    unary = pick(rng, ["ns.sin({})", "ns.tanh({})", "ns.exp(0.5 * {})", "{} * {}"])
    return f"{unary.format(x, x)} * ({scalar_term(rng, leaves)})"


def output_source(rng, leaves, depth=0):
    """Source of a random tree of output expressions."""
    if depth >= 2 or rng.random() < 0.3:
        return array_expression(rng, leaves)
    node = pick(rng, ["dict", "tuple", "list", "Pair", "Box"])

    def child():
        if rng.random() < 0.1:
            return "None"
        return output_source(rng, leaves, depth + 1)
    size = 2 if node in ("Pair", "Box") else int(rng.integers(1, 4))
    items = [child() for _ in range(size)]
    if all(item == "None" for item in items):  # JAX's Jacobians ask for a leaf
        items[0] = array_expression(rng, leaves)
    if node == "Pair":
        return f"Pair({items[0]}, {items[1]})"
    if node == "Box":
        return f"Box({items[0]}, {items[1]}, 'out{int(rng.integers(100))}')"
    if node == "dict":
        keys = [str(k) for k in rng.choice(KEYS, size, replace=False)]
        return "{" + ", ".join(f"{k!r}: {item}" for k, item in zip(keys, items)) + "}"
    if node == "tuple":
        return "(" + ", ".join(items) + ",)"
    return "[" + ", ".join(items) + "]"


# ---- vmap's axes ------------------------------------------------------------------

def random_axes(rng, tree, allow_none=True):
    """A prefix of ``tree``: at each node either one axis for the whole subtree or the
    node's own container of axes for its children (dicts in an order of their own)."""
    if tree is None:
        return None
    if isinstance(tree, (dict, tuple, list)) and rng.random() < 0.5:  # a Box: one axis
        if isinstance(tree, dict):
            keys = [list(tree)[i] for i in rng.permutation(len(tree))]
            return {k: random_axes(rng, tree[k], allow_none) for k in keys}
        children = [random_axes(rng, child, allow_none) for child in tree]
        if hasattr(tree, "_fields"):
            return type(tree)(*children)
        return type(tree)(children)
    options = [0, -1]
    if all(np.ndim(x) >= 1 for x in jax.tree_util.tree_leaves(tree)):
        options.append(1)
    if allow_none:
        options.append(None)
    return pick(rng, options)


def stack(rng, tree, axes):
    """``tree`` with each leaf under an axis stacked BATCH times along it, a little
    apart; a leaf under None left as it is."""
    if tree is None:
        return None
    if isinstance(tree, (dict, tuple, list)):
        if isinstance(axes, dict):
            return {k: stack(rng, tree[k], axes[k]) for k in tree}
        if isinstance(tree, dict):
            return {k: stack(rng, v, axes) for k, v in tree.items()}
        parts = axes if isinstance(axes, (tuple, list)) else [axes] * len(tree)
        children = [stack(rng, child, a) for child, a in zip(tree, parts)]
        return type(tree)(*children) if hasattr(tree, "_fields") else type(tree)(children)
    if isinstance(tree, Box):
        return Box(stack(rng, tree.first, axes), stack(rng, tree.second, axes), tree.name)
    if axes is None:
        return tree
    copies = [np.asarray(tree) + 0.1 * k * rng.standard_normal(np.shape(tree))
              for k in range(BATCH)]
    return np.stack(copies, axis=axes)


def mapped_leaves(tree, axes):
    if tree is None:
        return 0
    if isinstance(tree, (dict, tuple, list)):
        if isinstance(axes, dict):
            return sum(mapped_leaves(tree[k], axes[k]) for k in tree)
        children = list(tree.values()) if isinstance(tree, dict) else tree
        parts = axes if isinstance(axes, (tuple, list)) else [axes] * len(children)
        return sum(mapped_leaves(child, a) for child, a in zip(children, parts))
    if isinstance(tree, Box):
        return mapped_leaves(tree.first, axes) + mapped_leaves(tree.second, axes)
    return 0 if axes is None else 1


def vmap_setup(rng, args, out):
    """(in_axes, the arguments stacked along them, out_axes): in_axes an int, or a tuple
    of prefixes of the arguments' trees with None in places; out_axes a prefix of the
    output's tree."""
    if rng.random() < 0.25:
        in_axes, per_argument = 0, [0] * len(args)
    else:
        per_argument = [random_axes(rng, a) for a in args]
        if not any(mapped_leaves(a, x) for a, x in zip(args, per_argument)):
            per_argument[0] = 0
        in_axes = tuple(per_argument)
    batched = tuple(stack(rng, a, x) for a, x in zip(args, per_argument))
    return in_axes, batched, random_axes(rng, out, allow_none=False)


# ---- the cases and JAX's results for them -----------------------------------------

class Case:
    """One generated case: its arguments, the source of its functions, and every other
    input its tests give the transforms (tangents, a cotangent, vmap's axes)."""

    def __init__(self, number):
        self.number = number
        rng = seeded("test_pytrees_under_transforms", number)
        self.args, leaves, made = [], [], []
        for argnum in range(int(rng.integers(1, 4))):
            found = []
            while not found:
                found = []
                tree = random_tree(rng, 0, [], found, made)
            self.args.append(tree)
            leaves += [(argnum, path, kind) for path, kind in found]
        self.args = tuple(self.args)
        # the functions read a few of the leaves, some of them more than once
        used = [pick(rng, leaves) for _ in range(int(rng.integers(2, 6)))]
        names = ", ".join(f"a{k}" for k in range(len(self.args)))
        scalar, tree, aux = (scalar_expression(rng, used), output_source(rng, used),
                             output_source(rng, used))
        shared = ""
        if shares_an_output(number):
            # one value at two places of the output, a function of every argument: each
            # place has its own block of the Jacobian, whatever argnums
            firsts = {argnum: access(argnum, path) for argnum, path, _ in reversed(leaves)}
            shared = "    shared = " + " + ".join(
                f"ns.sum(ns.sin({x}))" for x in firsts.values()) + "\n"
            tree = f"({tree}, shared, {{'again': shared}})"
        self.source = (f"def scalar({names}):\n"
                       f"    return {scalar}\n"
                       f"def tree({names}):\n"
                       f"{shared}"
                       f"    return {tree}\n"
                       f"def aux({names}):\n"
                       f"    return {aux}\n")
        count = len(self.args)
        self.argnums_int = int(rng.integers(count))
        chosen = rng.permutation(count)[: int(rng.integers(1, count + 1))]
        self.argnums_tuple = tuple(int(k) for k in chosen)  # in no sorted order at times
        self.argnums_hessian = self.argnums_tuple if number % 2 else self.argnums_int
        out = jax.tree_util.tree_map(lambda s: np.zeros(s.shape),
                                     jax.eval_shape(self.functions(jnp)[1], *self.args))
        self.cotangent = like(rng, out)
        self.tangents = tuple(like(rng, a) for a in self.args)
        # the next call's numbers: the same structure, dicts in the same order
        self.new_args = tuple(ordered_like(like(rng, a), a) for a in self.args)
        self.in_axes, self.batched, self.out_axes = vmap_setup(rng, self.args, out)
        self.batched_new = tuple(ordered_like(like(rng, a), a) for a in self.batched)

    def functions(self, ns):
        """(scalar, tree, scalar with an aux tree), run on namespace ns."""
        scope = {"ns": ns, "Pair": Pair, "Box": Box}
        exec(self.source, scope)
        scalar, aux = scope["scalar"], scope["aux"]

        def with_aux(*args):
            return scalar(*args), aux(*args)
        return scalar, scope["tree"], with_aux

    def tree_with_aux(self, ns):
        """The tree function with the same aux as the scalar one."""
        scope = {"ns": ns, "Pair": Pair, "Box": Box}
        exec(self.source, scope)
        tree, aux = scope["tree"], scope["aux"]
        return lambda *args: (tree(*args), aux(*args))

    def describe(self):
        structure = [str(cr.tree_structure(a)) for a in self.args]
        return f"case {self.number}; arguments {structure}\n{self.source}"


def shares_an_output(number):
    """Whether the case's tree function gives one value at two places."""
    return number % 5 == 4


@functools.lru_cache(maxsize=None)
def case(number):
    return Case(number)


def select(tree_def, tree, pick_from):
    """``tree`` cut at ``tree_def``'s leaves, each piece (a tuple over every argument)
    replaced by ``pick_from(piece)``."""
    return tree_def.unflatten([pick_from(piece) for piece in tree_def.flatten_up_to(tree)])


def chosen(argnums):
    """What ``argnums`` keeps of a tuple with an entry for every argument."""
    if isinstance(argnums, int):
        return lambda every: every[argnums]
    return lambda every: tuple(every[k] for k in argnums)


@functools.lru_cache(maxsize=None)
def jax_results(number):
    """Everything the case's tests compare with, computed by JAX in one jax.jit: one
    XLA compilation a case instead of one for each operation at each new shape (eager
    JAX's cost, most of this file's time otherwise). The first derivatives are
    taken with respect to every argument once and cut down to each argnums here (the
    blocks of JAX's own result for that argnums), which keeps the program, and its
    compilation, small."""
    c = case(number)
    scalar, tree, with_aux = c.functions(jnp)
    every = tuple(range(len(c.args)))

    def everything(args, new_args, cotangent, tangents, batched, batched_new):
        out, pullback = jax.vjp(tree, *args)
        mapped = jax.vmap(tree, in_axes=c.in_axes, out_axes=c.out_axes)
        return {
            "value_and_grad": jax.value_and_grad(with_aux, argnums=every,
                                                 has_aux=True)(*args),
            "at new numbers": jax.value_and_grad(with_aux, argnums=every,
                                                 has_aux=True)(*new_args),
            "jacobian": jax.jacrev(tree, argnums=every)(*args),
            "hessian": jax.hessian(scalar, argnums=c.argnums_hessian)(*args),
            "vjp": (out, pullback(cotangent)),
            "jvp": jax.jvp(tree, args, tangents),
            "vmap": (mapped(*batched), mapped(*batched_new)),
            "axis_size": jax.vmap(tree, in_axes=None, axis_size=BATCH,
                                  out_axes=c.out_axes)(*args),
            "vmap of grad": jax.vmap(jax.grad(scalar, argnums=every),
                                     in_axes=c.in_axes)(*batched),
        }

    # XLA's optimizations would take longer than running these small programs
    compiled = jax.jit(everything, compiler_options={"xla_backend_optimization_level": 0})
    results = compiled(c.args, c.new_args, c.cotangent, c.tangents, c.batched,
                       c.batched_new)
    (value, aux), grads = results["value_and_grad"]
    out_def = jax.tree_util.tree_structure(results["vjp"][0])
    for argnums in {0, c.argnums_int, c.argnums_tuple}:
        results[f"grad {argnums}"] = chosen(argnums)(grads)
        results[f"value_and_grad {argnums}"] = (value, aux), chosen(argnums)(grads)
        results[f"jacobian {argnums}"] = select(out_def, results["jacobian"], chosen(argnums))
    results["vmap of grad"] = chosen(c.argnums_tuple)(results["vmap of grad"])
    (value, aux), grads = results["at new numbers"]
    results["at new numbers"] = (value, aux), chosen(c.argnums_hessian)(grads)
    return results


# ---- comparison -------------------------------------------------------------------

def assert_same(ours, theirs, where="result"):
    """ours has JAX's tree (dicts by key, the same container classes, None where JAX
    has None) and JAX's numbers at each leaf."""
    if theirs is None:
        assert ours is None, f"{where}: chainrule gives {type(ours).__name__}, JAX None"
        return
    if isinstance(theirs, dict):
        assert type(ours) is dict, f"{where}: chainrule gives {type(ours).__name__}, JAX dict"
        assert set(ours) == set(theirs), f"{where}: keys {list(ours)} against {list(theirs)}"
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
        return
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), \
            f"{where}: chainrule gives {type(ours).__name__}, JAX {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} items against {len(theirs)}"
        for k, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{k}]")
        return
    if isinstance(theirs, Box):
        assert type(ours) is Box, f"{where}: chainrule gives {type(ours).__name__}, JAX Box"
        assert ours.name == theirs.name, f"{where}: name {ours.name!r} against {theirs.name!r}"
        assert_same(ours.first, theirs.first, f"{where}.first")
        assert_same(ours.second, theirs.second, f"{where}.second")
        return
    assert ours is not None and not isinstance(ours, (dict, tuple, list, Box)), \
        f"{where}: chainrule gives {type(ours).__name__} where JAX has a leaf"
    mine, want = np.asarray(ours), np.asarray(theirs)
    assert mine.dtype == np.float64, f"{where}: dtype {mine.dtype}"
    assert mine.shape == want.shape, f"{where}: shape {mine.shape} against {want.shape}"
    np.testing.assert_allclose(mine, want, rtol=RTOL, atol=ATOL, err_msg=where)


def check(c, what, ours, theirs):
    try:
        assert_same(ours, theirs, what)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{c.describe()}") from None


# ---- the tests --------------------------------------------------------------------

CASES = [pytest.param(n, id=f"case{n}", marks=[] if n < FAST else [pytest.mark.slow])
         for n in range(COUNT)]


@pytest.mark.parametrize("number", CASES)
def test_grad_and_value_and_grad(number):
    c, want = case(number), jax_results(number)
    scalar, _, with_aux = c.functions(cr)
    for argnums in (0, c.argnums_int, c.argnums_tuple):
        check(c, f"grad argnums={argnums}", cr.grad(scalar, argnums=argnums)(*c.args),
              want[f"grad {argnums}"])
        check(c, f"value_and_grad has_aux argnums={argnums}",
              cr.value_and_grad(with_aux, argnums=argnums, has_aux=True)(*c.args),
              want[f"value_and_grad {argnums}"])


@pytest.mark.parametrize("number", CASES)
def test_vjp_and_jvp(number):
    c, want = case(number), jax_results(number)
    _, tree, _ = c.functions(cr)
    out, pullback = cr.vjp(tree, *c.args)
    check(c, "vjp: the output and the pullback of a cotangent tree",
          (out, pullback(c.cotangent)), want["vjp"])
    check(c, "jvp on tangent trees", cr.jvp(tree, c.args, c.tangents), want["jvp"])
    # has_aux: the same numbers, and the aux tree beside them
    aux = want["value_and_grad 0"][0][1]
    out, pullback, aux_of_vjp = cr.vjp(c.tree_with_aux(cr), *c.args, has_aux=True)
    check(c, "vjp has_aux", (out, pullback(c.cotangent), aux_of_vjp), (*want["vjp"], aux))
    check(c, "jvp has_aux", cr.jvp(c.tree_with_aux(cr), c.args, c.tangents, has_aux=True),
          (*want["jvp"], aux))


@pytest.mark.parametrize("number", CASES)
def test_jacrev(number):
    c, want = case(number), jax_results(number)
    aux = want["value_and_grad 0"][0][1]
    for argnums in (c.argnums_int, c.argnums_tuple):
        jacobian = want[f"jacobian {argnums}"]
        check(c, f"jacrev argnums={argnums}",
              cr.jacrev(c.functions(cr)[1], argnums=argnums)(*c.args), jacobian)
        check(c, f"jacrev has_aux argnums={argnums}",
              cr.jacrev(c.tree_with_aux(cr), argnums=argnums, has_aux=True)(*c.args),
              (jacobian, aux))


@pytest.mark.parametrize("number", CASES)
def test_jacfwd_and_hessian(number):
    c, want = case(number), jax_results(number)
    scalar, tree, _ = c.functions(cr)
    aux = want["value_and_grad 0"][0][1]
    for argnums in (c.argnums_int, c.argnums_tuple):
        jacobian = want[f"jacobian {argnums}"]
        check(c, f"jacfwd argnums={argnums}", cr.jacfwd(tree, argnums=argnums)(*c.args),
              jacobian)
        check(c, f"jacfwd has_aux argnums={argnums}",
              cr.jacfwd(c.tree_with_aux(cr), argnums=argnums, has_aux=True)(*c.args),
              (jacobian, aux))
    check(c, f"hessian argnums={c.argnums_hessian}",
          cr.hessian(scalar, argnums=c.argnums_hessian)(*c.args), want["hessian"])
    check(c, f"hessian has_aux argnums={c.argnums_hessian}",
          cr.hessian(c.functions(cr)[2], argnums=c.argnums_hessian, has_aux=True)(*c.args),
          (want["hessian"], aux))


@pytest.mark.parametrize("number", CASES)
def test_vmap_with_prefix_axes(number):
    c, want = case(number), jax_results(number)
    _, tree, _ = c.functions(cr)
    check(c, f"vmap in_axes={c.in_axes} out_axes={c.out_axes}",
          cr.vmap(tree, in_axes=c.in_axes, out_axes=c.out_axes)(*c.batched), want["vmap"][0])
    # per-example gradients: every argument's, shared ones too, batched along axis 0
    scalar = c.functions(cr)[0]
    check(c, f"vmap(grad argnums={c.argnums_tuple}) in_axes={c.in_axes}",
          cr.vmap(cr.grad(scalar, argnums=c.argnums_tuple), in_axes=c.in_axes)(*c.batched),
          want["vmap of grad"])
    # nothing mapped: every output is broadcast along a batch axis of axis_size
    check(c, f"vmap in_axes=None axis_size={BATCH} out_axes={c.out_axes}",
          cr.vmap(tree, in_axes=None, axis_size=BATCH, out_axes=c.out_axes)(*c.args),
          want["axis_size"])


@pytest.mark.parametrize("number", CASES)
def test_jit_of_grad_and_of_vmap_on_new_numbers(number):
    c, want = case(number), jax_results(number)
    scalar, tree, _ = c.functions(cr)
    argnums = c.argnums_hessian
    step = cr.jit(cr.grad(scalar, argnums=argnums))
    check(c, "jit(grad), the call that traces", step(*c.args), want[f"grad {argnums}"])
    # the same structure and shapes, new numbers: the trace replayed, not its constants
    # (and the new leaves are new objects, where the first call's shared some)
    again = step(*c.new_args)
    (_, _), grads = want["at new numbers"]
    check(c, "jit(grad) on new numbers", again, grads)
    check(c, "jit(grad) on new numbers, against eager chainrule", again,
          cr.grad(scalar, argnums=argnums)(*c.new_args))
    # the same leaves, the dicts in another order: a dict is matched by key
    shuffled = map_tree(lambda leaf: leaf, c.new_args, seeded("shuffled", number))
    check(c, "jit(grad) on the new numbers, dicts in another order", step(*shuffled), grads)
    step = cr.jit(cr.value_and_grad(c.functions(cr)[2], argnums=argnums, has_aux=True))
    check(c, "jit(value_and_grad has_aux)", step(*c.args), want[f"value_and_grad {argnums}"])
    check(c, "jit(value_and_grad has_aux) on new numbers", step(*c.new_args),
          want["at new numbers"])
    mapped = cr.jit(cr.vmap(tree, in_axes=c.in_axes, out_axes=c.out_axes))
    first, second = want["vmap"]
    check(c, f"jit(vmap) in_axes={c.in_axes} out_axes={c.out_axes}", mapped(*c.batched),
          first)
    check(c, "jit(vmap) on new numbers", mapped(*c.batched_new), second)


# ---- defects found here, each by its smallest program -------------------------------

def test_jvp_has_aux_gives_its_aux_as_values():
    """jvp's aux comes back as values, as grad's and vjp's do, not as the transform's
    live tracers (which np.asarray refuses)."""
    f = lambda ns: lambda x: (ns.sin(x), {"a": 2.0 * x})
    x, t = np.array([1.0, 2.0]), np.ones(2)
    ours = cr.jvp(f(cr), (x,), (t,), has_aux=True)
    theirs = jax.jvp(f(jnp), (x,), (t,), has_aux=True)
    assert_same(ours, theirs)


def test_jacrev_and_jacfwd_give_each_block_in_the_same_kind():
    """The two ways to one Jacobian give the same tree with the same kind of leaf at each
    place; the numbers are equal either way."""
    point = {"t": cr.tensor(np.array([1.0, 2.0])), "a": np.array([0.5, 0.25])}
    f = lambda d: cr.sin(d["t"]) * cr.sum(d["a"])
    reverse, forward = cr.jacrev(f)(point), cr.jacfwd(f)(point)
    for key in point:
        np.testing.assert_allclose(np.asarray(getattr(forward[key], "data", forward[key])),
                                   np.asarray(getattr(reverse[key], "data", reverse[key])),
                                   rtol=RTOL)
    kinds = lambda tree: {key: type(leaf).__name__ for key, leaf in tree.items()}
    assert kinds(forward) == kinds(reverse)  # jacrev: t Tensor, a ndarray; jacfwd: both Tensor


@pytest.mark.parametrize("graph_leaf", ["value", "tensor"])
def test_a_gradient_that_depends_on_a_value_in_a_graph_stays_in_that_graph(graph_leaf):
    """Results come back in the kind that went in, leaf by leaf, except where a result
    depends on a value that is part of a graph (a Value, which always records, or a
    Tensor that requires grad): d/da of sum(a * a) * v is 2 a v, a function of v, so it
    stays in v's graph (a Tensor, since a Value holds one number) and a backward
    through it reaches v. Handing back a plain array would cut that edge and lose the
    second derivative without a word."""
    v = cr.Value(0.3) if graph_leaf == "value" else cr.tensor(0.3, requires_grad=True)
    a = np.array([0.5, 0.25])
    g = cr.grad(lambda d: cr.sum(d["a"] * d["a"]) * d["v"])({"a": a, "v": v})
    assert type(g["v"]) is type(v)
    np.testing.assert_allclose(np.asarray(getattr(g["v"], "data", g["v"])), np.sum(a * a),
                               rtol=RTOL)
    assert type(g["a"]) is cr.Tensor
    np.testing.assert_allclose(g["a"].data, 2 * a * 0.3, rtol=RTOL)
    g["a"].sum().backward()  # d/dv sum(2 a v) = 2 sum(a)
    np.testing.assert_allclose(float(np.asarray(v.grad)), 2 * np.sum(a), rtol=RTOL)


def test_argnums_may_be_a_numpy_integer():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    f = lambda ns: lambda x, y: ns.sum(x * y * y)
    argnums = np.int64(1)  # as np.arange or a generator's integers give it
    assert_same(cr.grad(f(cr), argnums=argnums)(a, b), jax.grad(f(jnp), argnums=argnums)(a, b))
    # (JAX's jacrev, jacfwd and hessian give a tuple for a NumPy integer, where its grad
    # gives one array: chainrule gives what an int gives, in every transform)
    for transform in ("value_and_grad", "jacrev", "jacfwd", "hessian"):
        assert_same(getattr(cr, transform)(f(cr), argnums=argnums)(a, b),
                    getattr(jax, transform)(f(jnp), argnums=1)(a, b))


def test_jacrev_gives_each_place_of_one_value_its_own_block():
    """vjp's pullback adds the cotangents of the two places, as it should; a Jacobian
    has a block for each place, not their sum at each (which (x, x) -> (2, 2) would be)."""
    f = lambda ns: lambda x: (lambda y: (y, {"again": y}))(ns.sin(x))
    x = np.array([1.0, 2.0])
    assert_same(cr.jacfwd(f(cr))(x), jax.jacfwd(f(jnp))(x))
    assert_same(cr.jacrev(f(cr))(x), jax.jacrev(f(jnp))(x))
    assert cr.jacrev(lambda x: (x, x))(1.5) == (1.0, 1.0)
