"""Random small differentiable programs, compiled twice: to chainrule and to jax.numpy.

A program is one expression tree (``Node``) over a function's arguments: elementwise
functions, arithmetic with broadcasting, reductions, matrix products (also written as
einsum), stacking, reshaping, indexing, where and maximum, cumsum, sort, flip, roll,
tril and triu, and inner transforms. Every node knows its shape, so every program is valid by construction: broadcasting pairs agree,
reductions name axes that exist, matrix products have matching inner dimensions. The
tree may hold inner transforms (``grad(lambda y: ...)(point)``) whose body closes over
the outer arguments, nested up to two deep; a ``Case`` puts one more transform around
the whole program (grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian, or a
transform of a vjp function with respect to its cotangent): three levels in all.

Values stay in safe domains by construction, never by looking at results:

* log and sqrt see only positive things (``e * e + 1``, ``exp(e)``, ``sigmoid(e)``),
  a division only a positive denominator, a fractional power only a positive base;
* every node carries a rough bound on its magnitude, and a node that would grow too
  large is squashed (``tanh``), so nothing overflows;
* kinks (relu, abs, maximum, max, where) only see *fresh* arguments: an input plus a
  random constant, whose entries are random numbers, never tied and never at the kink
  (derivatives there are a convention, not a fact: chainrule and JAX differ at abs'(0)).

Numbers are drawn with six decimals, so a printed program (``describe_case``) is the
whole program: it can be pasted and run.

``check`` runs a case in both libraries and names the outcome (agree, wrong, error);
``shrink`` reduces a failing case to the smallest program that fails the same way. The
tests and the runner behind ``make fuzz`` are in ``tests/test_fuzz.py``.
"""

import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

import chainrule as cr
import chainrule.numpy as cnp
import chainrule.scipy.special as sps
from chainrule import rules

# ---------------------------------------------------------------------------------------
# The two libraries, behind the same names (a backend): the evaluator below calls
# B.exp, B.sum, B.grad, ... and Python's operators, whichever library B is.
# ---------------------------------------------------------------------------------------

def _cr_update(x, index, values, kind):
    if hasattr(x, "at"):  # a transform's value, as a user writes it
        return getattr(x.at[index], kind)(values)
    return UPDATES[kind](x, values, index=index)  # (what .at calls)


UPDATES = {"set": rules.index_set, "add": rules.index_add, "multiply": rules.index_multiply,
           "min": rules.index_min, "max": rules.index_max}


CHAINRULE = SimpleNamespace(
    name="chainrule",
    exp=cr.exp, sin=cr.sin, cos=cr.cos, tanh=cr.tanh, log=cr.log, sqrt=cr.sqrt,
    sigmoid=cr.sigmoid, softplus=cr.softplus, relu=cr.relu, abs=cr.abs,
    maximum=cr.maximum, where=cr.where,
    sum=cr.sum, mean=cr.mean, max=cr.max,
    matmul=cr.matmul, dot=cr.dot, outer=cr.outer, einsum=cr.einsum,
    stack=cr.stack, concatenate=cr.concatenate, reshape=cr.reshape, transpose=cr.transpose,
    arctan=cr.arctan, arcsinh=cr.arcsinh, erf=cr.erf, cumsum=cr.cumsum, sort=cr.sort,
    erfc=sps.erfc, ndtr=sps.ndtr, log_ndtr=sps.log_ndtr,
    flip=cr.flip, roll=cr.roll, tril=cr.tril, triu=cr.triu, logaddexp=cr.logaddexp,
    grad=cr.grad, value_and_grad=cr.value_and_grad, vjp=cr.vjp, jvp=cr.jvp,
    jacrev=cr.jacrev, jacfwd=cr.jacfwd, hessian=cr.hessian,
    fori_loop=cr.fori_loop, scan=cr.scan,
    checkpoint=cr.checkpoint, checkpoint_policies=cr.checkpoint_policies,
    custom_jvp=cr.custom_jvp, custom_vjp=cr.custom_vjp,
    real=cr.real, imag=cr.imag, conj=cr.conj, angle=cr.angle, vdot=cr.vdot,
    fft=cnp.fft.fft, ifft=cnp.fft.ifft, rfft=cnp.fft.rfft, irfft=cnp.fft.irfft,
    update=_cr_update,
)


def jax_backend():
    """JAX in float64 (imported on first use: the generator itself needs no JAX)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    return SimpleNamespace(
        name="jax",
        exp=jnp.exp, sin=jnp.sin, cos=jnp.cos, tanh=jnp.tanh, log=jnp.log, sqrt=jnp.sqrt,
        sigmoid=jax.nn.sigmoid, softplus=jax.nn.softplus, relu=jax.nn.relu, abs=jnp.abs,
        maximum=jnp.maximum, where=jnp.where,
        sum=jnp.sum, mean=jnp.mean, max=jnp.max,
        matmul=jnp.matmul, dot=jnp.dot, outer=jnp.outer, einsum=jnp.einsum,
        arctan=jnp.arctan, arcsinh=jnp.arcsinh, erf=jax.scipy.special.erf,
        erfc=jax.scipy.special.erfc, ndtr=jax.scipy.special.ndtr,
        log_ndtr=jax.scipy.special.log_ndtr,
        cumsum=jnp.cumsum, sort=jnp.sort, flip=jnp.flip, roll=jnp.roll, tril=jnp.tril,
        triu=jnp.triu, logaddexp=jnp.logaddexp,
        stack=jnp.stack, concatenate=jnp.concatenate, reshape=jnp.reshape,
        transpose=jnp.transpose,
        grad=jax.grad, value_and_grad=jax.value_and_grad, vjp=jax.vjp, jvp=jax.jvp,
        jacrev=jax.jacrev, jacfwd=jax.jacfwd, hessian=jax.hessian,
        fori_loop=jax.lax.fori_loop, scan=jax.lax.scan,
        checkpoint=jax.checkpoint, checkpoint_policies=jax.checkpoint_policies,
        custom_jvp=jax.custom_jvp, custom_vjp=jax.custom_vjp,
        real=jnp.real, imag=jnp.imag, conj=jnp.conj, angle=jnp.angle, vdot=jnp.vdot,
        fft=jnp.fft.fft, ifft=jnp.fft.ifft, rfft=jnp.fft.rfft, irfft=jnp.fft.irfft,
        # (JAX differentiates scatter_mul only where it is told the indices are unique)
        update=lambda x, index, values, kind: getattr(jnp.asarray(x).at[index], kind)(
            values, unique_indices=kind == "multiply"),
    )


# ---------------------------------------------------------------------------------------
# Expression trees
# ---------------------------------------------------------------------------------------

@dataclass(eq=False)
class Node:
    """One operation: ``op`` on ``args`` (Nodes), with parameters in ``params``.

    ``shape`` is the shape of its value; ``bound`` a rough bound on its magnitude."""
    op: str
    args: tuple = ()
    shape: tuple = ()
    bound: float = 1.0
    params: dict = field(default_factory=dict)

    def walk(self):
        """This node and every node below it, inner transforms' bodies included."""
        yield self
        for child in self.args:
            yield from child.walk()


INNER_NAMES = ("y", "z", "w")  # the variables of inner transforms, outermost first
INNER_TRANSFORMS = ("grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian")
UNARY = ("exp", "sin", "cos", "tanh", "sigmoid", "softplus", "arctan", "arcsinh", "erf",
         "erfc", "ndtr", "log_ndtr")  # (the last three: chainrule.scipy.special's)
ALONG_AXIS = ("cumsum", "sort", "flip", "roll")  # shape-keeping, along one axis
KINKS = ("relu", "abs")
LOOPS = ("fori_loop", "scan")  # in the loop programs only (``generate(seed, loops=True)``)
FFTS = ("fft", "ifft", "rfft", "irfft")  # in the complex programs only (numpy.fft's)
# in the custom programs only (``generate(seed, custom=True)``): a subtree checkpointed
# (jax.checkpoint, with a policy, over the variables as an argument or closed over), or
# a custom_jvp whose rule is the library's own jvp of the subtree
CUSTOM = ("checkpoint", "custom_jvp")
# and in the reverse-mode programs only (``generate(seed, custom_vjp=True)``, whose
# transforms are grad, value_and_grad, vjp and jacrev, inside as outside: JAX refuses
# forward mode through a custom_vjp), a custom_vjp too, whose bwd is the library's own
# vjp of the subtree at the residuals fwd kept (the variables)
REVERSE_CUSTOM = CUSTOM + ("custom_vjp",)
REVERSE_INNER = ("grad", "value_and_grad", "vjp", "jacrev")
POLICIES = (None, "nothing_saveable", "everything_saveable", "dots_saveable")


def number_text(x):
    return repr(complex(x)) if np.iscomplexobj(x) else repr(float(x))


def array_text(value):
    if isinstance(value, (float, complex)):
        return number_text(value)
    if value.ndim == 0:
        return f"array({number_text(value)})"
    return f"array({np.round(value, 6).tolist()!r})"


def describe(node):
    """The expression as Python source (chainrule's names without the ``cr.`` prefix)."""
    op, a, p = node.op, node.args, node.params
    text = [describe(child) for child in a]
    if op == "var":
        return p["name"] + "".join(f"[{key!r}]" for key in p["path"])
    if op == "const":
        return array_text(p["value"])
    if op in ("add", "sub", "mul", "div", "matmul_op"):
        symbol = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul_op": "@"}[op]
        return f"({text[0]} {symbol} {text[1]})"
    if op == "literal":  # a Python number on one side of an operator
        symbol, number, left = p["symbol"], number_text(p["number"]), p["left"]
        return f"({number} {symbol} {text[0]})" if left else f"({text[0]} {symbol} {number})"
    if op == "neg":
        return f"(-{text[0]})"
    if op == "power":
        return f"({text[0]} ** {p['exponent']!r})"
    if op in ("sum", "mean", "max"):
        extra = "" if p["axis"] is None else f", axis={p['axis']}"
        extra += ", keepdims=True" if p["keepdims"] else ""
        return f"{op}({text[0]}{extra})"
    if op in ("stack", "concatenate"):
        return f"{op}([{', '.join(text)}], axis={p['axis']})"
    if op == "roll":
        return f"roll({text[0]}, {p['shift']}, axis={p['axis']})"
    if op in ALONG_AXIS:
        return f"{op}({text[0]}, axis={p['axis']})"
    if op == "einsum":
        return f"einsum({p['spec']!r}, {', '.join(text)})"
    if op == "reshape":
        return f"reshape({text[0]}, {p['to']})"
    if op == "transpose":
        return f"{text[0]}.T" if p["method"] else f"transpose({text[0]})"
    if op == "index":
        return f"{text[0]}[{p['text']}]"
    if op == "where":
        return f"where({text[0]} > 0.0, {text[1]}, {text[2]})"
    if op == "update":
        return f"{text[0]}.at[{p['index'].tolist()}].{p['kind']}({text[1]})"
    if op in INNER_TRANSFORMS:
        return describe_inner(node, text)
    if op == "checkpoint":
        policy = "" if p["policy"] is None else f", policy=checkpoint_policies.{p['policy']}"
        return f"checkpoint(lambda: {text[0]}{policy})()"
    if op in ("custom_jvp", "custom_vjp"):  # (the rules are the function's own: the
        return text[0]                      # same numbers)
    if op in FFTS:
        extra = "" if p["n"] is None else f", n={p['n']}"
        extra += "" if p["norm"] is None else f", norm={p['norm']!r}"
        return f"fft.{op}({text[0]}{extra})"
    if op == "fori_loop":
        return f"fori_loop(0, {p['steps']}, lambda i, {p['var']}: {text[0]}, {text[1]})"
    if op == "scan":
        reverse = ", reverse=True" if p["reverse"] else ""
        return (f"(lambda c, ys: c + sum(ys, axis=0))(*scan(lambda {p['var']}, {p['xvar']}: "
                f"({text[0]}, {text[1]}), {text[2]}, {text[3]}{reverse}))")
    return f"{op}({', '.join(text)})"  # exp, sin, ..., log, sqrt, maximum, dot, outer, matmul


def describe_inner(node, text):
    p = node.params
    body = f"lambda {p['var']}: {text[0]}"
    point = text[1]
    if node.op == "vjp":
        return f"vjp({body}, {point})[1]({text[2]})[0]"
    if node.op == "jvp":
        return f"(lambda p, t: p + t)(*jvp({body}, ({point},), ({text[2]},)))"
    if node.op == "value_and_grad":
        return f"(lambda v, g: v * g)(*value_and_grad({body})({point}))"
    return f"{node.op}({body})({point})"


# ---------------------------------------------------------------------------------------
# Compiling: one evaluator for both libraries
# ---------------------------------------------------------------------------------------

def evaluate(node, env, B):
    """The value of ``node`` with the variables in ``env`` ({name: value}), using B."""
    op, p = node.op, node.params
    if op == "var":
        value = env[p["name"]]
        for key in p["path"]:
            value = value[key]
        return value
    if op == "const":
        value = p["value"]
        return value.copy() if isinstance(value, np.ndarray) else value
    if op in INNER_TRANSFORMS:
        return evaluate_inner(node, env, B)
    if op in LOOPS:
        return evaluate_loop(node, env, B)
    if op in REVERSE_CUSTOM:
        return evaluate_custom(node, env, B)
    a = [evaluate(child, env, B) for child in node.args]
    if op == "add":
        return a[0] + a[1]
    if op == "sub":
        return a[0] - a[1]
    if op == "mul":
        return a[0] * a[1]
    if op == "div":
        return a[0] / a[1]
    if op == "matmul_op":
        return a[0] @ a[1]
    if op == "neg":
        return -a[0]
    if op == "power":
        return a[0] ** p["exponent"]
    if op == "literal":
        number = p["number"]
        x, y = (number, a[0]) if p["left"] else (a[0], number)
        return {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
                "/": lambda: x / y}[p["symbol"]]()
    if op in ("sum", "mean", "max"):
        return getattr(B, op)(a[0], axis=p["axis"], keepdims=p["keepdims"])
    if op in ("stack", "concatenate"):
        return getattr(B, op)(a, axis=p["axis"])
    if op == "roll":
        return B.roll(a[0], p["shift"], axis=p["axis"])
    if op in ALONG_AXIS:
        return getattr(B, op)(a[0], axis=p["axis"])
    if op == "einsum":
        return B.einsum(p["spec"], *a)
    if op == "reshape":
        return B.reshape(a[0], p["to"])
    if op == "transpose":
        return a[0].T if p["method"] else B.transpose(a[0])
    if op == "index":
        return a[0][p["index"]]
    if op == "where":
        return B.where(a[0] > 0.0, a[1], a[2])
    if op == "update":
        return B.update(a[0], p["index"], a[1], p["kind"])
    if op in FFTS:
        return getattr(B, op)(a[0], n=p["n"], norm=p["norm"])
    return getattr(B, op)(*a)  # unary functions, log, sqrt, maximum, dot, outer, matmul


def evaluate_inner(node, env, B):
    """An inner transform: its body is a function of its own variable that closes over
    every variable in ``env`` (the outer transforms' variables)."""
    p = node.params
    body, point_node = node.args[0], node.args[1]

    def f(y):
        return evaluate(body, {**env, p["var"]: y}, B)

    point = evaluate(point_node, env, B)
    if node.op == "grad":
        return B.grad(f)(point)
    if node.op == "value_and_grad":
        value, gradient = B.value_and_grad(f)(point)
        return value * gradient
    if node.op == "vjp":
        cotangent = evaluate(node.args[2], env, B)
        return B.vjp(f, point)[1](cotangent)[0]
    if node.op == "jvp":
        tangent = evaluate(node.args[2], env, B)
        primal_out, tangent_out = B.jvp(f, (point,), (tangent,))
        return primal_out + tangent_out
    return getattr(B, node.op)(f)(point)  # jacrev, jacfwd, hessian


def evaluate_loop(node, env, B):
    """fori_loop: the body maps the carry to the next one. scan: two bodies of the carry
    and x, the next carry and y; the node's value is the last carry plus the sum of the
    ys. Both bodies close over every variable in ``env``."""
    p = node.params
    if node.op == "fori_loop":
        def body(i, carry):
            return evaluate(node.args[0], {**env, p["var"]: carry}, B)
        return B.fori_loop(0, p["steps"], body, evaluate(node.args[1], env, B))

    def step(carry, x):
        inner = {**env, p["var"]: carry, p["xvar"]: x}
        return evaluate(node.args[0], inner, B), evaluate(node.args[1], inner, B)
    init, xs = evaluate(node.args[2], env, B), evaluate(node.args[3], env, B)
    carry, ys = B.scan(step, init, xs, reverse=p["reverse"])
    return carry + B.sum(ys, axis=0)


def evaluate_custom(node, env, B):
    """A checkpoint or a custom_jvp of the subtree, as a function of every variable in
    ``env`` (passed as one dict, or, for a checkpoint, closed over)."""
    p = node.params

    def body(variables):
        return evaluate(node.args[0], variables, B)
    if node.op == "checkpoint":
        policy = None if p["policy"] is None else getattr(B.checkpoint_policies, p["policy"])
        if p["closure"]:
            return B.checkpoint(lambda: body(env), policy=policy)()
        return B.checkpoint(body, policy=policy)(env)
    if node.op == "custom_vjp":  # (fwd keeps the variables; bwd pulls back through body)
        custom = B.custom_vjp(body)
        custom.defvjp(lambda variables: (body(variables), variables),
                      lambda variables, g: B.vjp(body, variables)[1](g))
        return custom(env)
    custom = B.custom_jvp(body)
    custom.defjvp(lambda primals, tangents: B.jvp(body, primals, tangents))
    return custom(env)


def compile_program(outputs, arg_names, B):
    """The program as a Python function of its arguments, in library B."""
    def program(*args):
        env = dict(zip(arg_names, args))
        results = [evaluate(out, env, B) for out in outputs]
        return results[0] if len(results) == 1 else tuple(results)
    return program


def to_chainrule(case):
    return compile_program(case.outputs, [a.name for a in case.args], CHAINRULE)


def to_jax(case):
    return compile_program(case.outputs, [a.name for a in case.args], jax_backend())


# ---------------------------------------------------------------------------------------
# Generating: a tree of a wanted shape, over the variables in scope
# ---------------------------------------------------------------------------------------

CAP = 30.0         # a node whose bound passes this is squashed with tanh
INNER_BOUND = 20.0  # what an inner transform's result is taken to be bounded by


@dataclass(frozen=True)
class Variable:
    """A name the expression can read, with a path into a pytree (``p["w"]``)."""
    name: str
    path: tuple
    shape: tuple
    bound: float = 1.5
    complex: bool = False  # complex numbers: read by the complex programs' makers only

    def node(self):
        params = {"name": self.name, "path": self.path}
        if self.complex:
            params["complex"] = True
        return Node("var", (), self.shape, self.bound, params)


class Generator:
    """Random expression trees from one seeded NumPy generator."""

    def __init__(self, rng, loops=False, complex_numbers=False, updates=False, custom=False,
                 reverse_only=False):
        self.rng = rng
        self.custom = custom or reverse_only  # whether checkpoint and custom_jvp are
        self.reverse_only = reverse_only  # reverse mode only, and custom_vjp among them
        self.loops = loops  # whether fori_loop and scan are among the operations
        self.complex_numbers = complex_numbers  # whether complex numbers are
        self.updates = updates  # whether x.at[i].set/add/multiply/min/max(v) are

    # -- random choices ------------------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def pick(self, options, weights=None):
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
            weights = weights / weights.sum()
        return options[self.rng.choice(len(options), p=weights)]

    def dim(self):
        return int(self.rng.integers(2, 5))

    def numbers(self, shape):
        """Random numbers away from 0, with six decimals (printed exactly)."""
        magnitude = self.rng.uniform(0.2, 1.5, size=shape)
        sign = self.rng.choice([-1.0, 1.0], size=shape)
        return np.round(magnitude * sign, 6)

    def constant(self, shape, as_float=False):
        value = self.numbers(shape)
        value = float(value) if as_float and shape == () else np.asarray(value)
        return Node("const", (), shape, 1.5, {"value": value})

    # -- leaves ----------------------------------------------------------------------------
    def variable_leaves(self, shape, scope, complex_numbers=False):
        """Ways to read a variable as this shape: itself, an entry, a slice, a row (of
        the real variables, or of the complex ones)."""
        found = []
        for var in scope:
            if var.complex != complex_numbers:
                continue
            if var.shape == shape:
                found.append(var.node())
            elif len(var.shape) == len(shape) + 1 and var.shape[1:] == shape:
                i = int(self.rng.integers(-var.shape[0], var.shape[0]))
                found.append(self.index(var.node(), i, str(i), shape))
            elif len(var.shape) == 1 and len(shape) == 1 and var.shape[0] > shape[0]:
                start = int(self.rng.integers(0, var.shape[0] - shape[0] + 1))
                stop = start + shape[0]
                text = f"{start}:{stop}" if start else f":{stop}"
                if stop == var.shape[0]:
                    text = f"{start}:"
                found.append(self.index(var.node(), slice(start, stop), text, shape))
        return found

    def index(self, node, index, text, shape):
        return Node("index", (node,), shape, node.bound, {"index": index, "text": text})

    def leaf(self, shape, scope):
        """A variable read as this shape where one fits (most often), else a constant.
        An inner transform's own variable is preferred inside its body: the body should
        depend on it."""
        found = self.variable_leaves(shape, scope)
        if found and self.chance(0.8):
            innermost = [n for n in found if self.reads(n, scope[-1].name)]
            if scope[-1].name in INNER_NAMES and innermost and self.chance(0.5):
                return self.pick(innermost)
            return self.pick(found)
        return self.constant(shape, as_float=self.chance(0.5))

    @staticmethod
    def reads(node, name):
        return any(n.op == "var" and n.params["name"] == name for n in node.walk())

    def fresh(self, shape, scope):
        """An argument for a kink: a variable (plus a random constant), whose entries are
        random numbers, so never tied with each other and never exactly at a kink."""
        found = self.variable_leaves(shape, scope)
        if not found:
            return None
        node = self.pick(found)
        if self.chance(0.5):
            offset = self.constant(shape)
            node = Node("add", (node, offset), shape, node.bound + 1.5)
        return node

    # -- composite nodes -------------------------------------------------------------------
    def squash(self, node):
        """tanh of a node that may be large: keeps every value and derivative finite."""
        if node.bound <= CAP:
            return node
        return Node("tanh", (node,), node.shape, 1.0)

    def build(self, shape, depth, scope, nest=0):
        """A random expression of this shape. With ``nest`` > 0 it holds an inner
        transform, whose body holds ``nest - 1`` more."""
        if nest > 0:
            return self.squash(self.carrier(shape, depth, scope, nest))
        if depth <= 0 or self.chance(0.2):
            return self.leaf(shape, scope)
        makers = [self.unary, self.binary, self.literal, self.positive_domain,
                  self.reduction, self.linear_algebra, self.assembly, self.rearrange,
                  self.kink, self.where, self.along_axis]
        weights = [3, 4, 2, 2, 2, 2, 1.5, 1.5, 1.5, 1, 1.5]
        if self.loops:
            makers.append(self.loop)
            weights.append(1.5)
        if self.complex_numbers:
            makers.append(self.complex_part)
            weights.append(4)
        if self.updates:
            makers.append(self.update)
            weights.append(4)
        if self.custom:
            makers.append(self.custom_rule)
            weights.append(3)
        for _ in range(10):
            node = self.pick(makers, weights)(shape, depth - 1, scope)
            if node is not None:
                return self.squash(node)
        return self.leaf(shape, scope)

    def carrier(self, shape, depth, scope, nest):
        """An expression with an inner transform inside: the transform itself, or a
        function, a sum, or arithmetic with another expression, of such an expression."""
        if depth <= 1 or self.chance(0.4):
            return self.inner_transform(shape, depth, scope, nest)
        choice = self.pick(["unary", "sum", "arithmetic"])
        if choice == "unary":
            return self.unary_of(self.squash(self.carrier(shape, depth - 1, scope, nest)))
        if choice == "sum" and shape == ():
            n = self.dim()
            child = self.squash(self.carrier((n,), depth - 1, scope, nest))
            op = self.pick(["sum", "mean"])
            return Node(op, (child,), (), child.bound * (n if op == "sum" else 1),
                        {"axis": None, "keepdims": False})
        child = self.squash(self.carrier(shape, depth - 1, scope, nest))
        other = self.build(self.operand_shape(shape), depth - 1, scope)
        pair = (child, other) if self.chance(0.5) else (other, child)
        return self.arithmetic(self.pick(["add", "sub", "mul"]), pair[0], pair[1], shape)

    def custom_rule(self, shape, depth, scope):
        """A checkpoint (with a policy; the variables passed or closed over) or a
        custom_jvp around a subtree: the same numbers, through the custom primitive."""
        child = self.build(shape, depth, scope)
        if self.reverse_only and self.chance(0.6):
            return Node("custom_vjp", (child,), shape, child.bound)
        if self.reverse_only or self.chance(0.65):  # (custom_jvp's rule, a jvp, would
            # take forward mode through a custom_vjp inside it)
            return Node("checkpoint", (child,), shape, child.bound,
                        {"policy": self.pick(POLICIES), "closure": self.chance(0.5)})
        return Node("custom_jvp", (child,), shape, child.bound)

    # -- arithmetic -------------------------------------------------------------------
    def unary_of(self, child):
        op = self.pick(list(UNARY) + ["neg"])
        if op == "exp" and child.bound > 3.0:
            child = Node("tanh", (child,), child.shape, 1.0)
        bound = {"exp": math.exp(min(child.bound, 3.0)), "softplus": child.bound + 0.7,
                 "neg": child.bound, "arctan": 1.6, "erfc": 2.0,
                 "log_ndtr": 0.5 * child.bound ** 2 + math.log1p(child.bound) + 1.0,
                 "arcsinh": math.asinh(child.bound)}.get(op, 1.0)
        return Node(op, (child,), child.shape, bound)

    def unary(self, shape, depth, scope):
        return self.unary_of(self.build(shape, depth, scope))

    def operand_shape(self, shape):
        """A shape that broadcasts against ``shape`` to give ``shape``."""
        options, weights = [shape, ()], [6, 2]
        if len(shape) == 2:
            options += [shape[1:], (shape[0], 1)]
            weights += [1.5, 1]
        return self.pick(options, weights)

    def arithmetic(self, op, left, right, shape):
        bound = (left.bound * right.bound if op == "mul" else left.bound + right.bound)
        return Node(op, (left, right), shape, bound)

    def binary(self, shape, depth, scope):
        op = self.pick(["add", "sub", "mul", "div"])
        full = self.build(shape, depth, scope)
        other_shape = self.operand_shape(shape)
        if op == "div":  # a positive denominator, at least 1
            denominator = self.positive(other_shape, depth, scope, at_least_one=True)
            return Node("div", (full, denominator), shape, full.bound)
        other = self.build(other_shape, depth, scope)
        pair = (full, other) if self.chance(0.5) else (other, full)
        return self.arithmetic(op, pair[0], pair[1], shape)

    def literal(self, shape, depth, scope):
        """A Python number on one side of an operator: 2.5 * e, e - 0.5, 1.5 / (e*e + 1)."""
        symbol = self.pick(["+", "-", "*", "/"])
        number = float(self.numbers(()))
        left = self.chance(0.5)
        if symbol == "/" and left:
            child = self.positive(shape, depth, scope, at_least_one=True)
            bound = abs(number)
        else:
            child = self.build(shape, depth, scope)
            bound = child.bound * abs(number) if symbol == "*" else \
                child.bound / abs(number) if symbol == "/" else child.bound + abs(number)
        return Node("literal", (child,), shape, bound,
                    {"symbol": symbol, "number": number, "left": left})

    def positive(self, shape, depth, scope, at_least_one=False):
        """A positive expression: e*e + 1, or (when it may be small) exp(e), sigmoid(e)."""
        e = self.build(shape, depth, scope)
        kind = "square" if at_least_one else self.pick(["square", "exp", "sigmoid"])
        if kind == "exp" and e.bound > 3.0:
            kind = "square"
        if kind == "square":
            squared = Node("mul", (e, e), shape, e.bound ** 2)
            return Node("literal", (squared,), shape, e.bound ** 2 + 1.0,
                        {"symbol": "+", "number": 1.0, "left": False})
        if kind == "exp":
            return Node("exp", (e,), shape, math.exp(e.bound))
        return Node("sigmoid", (e,), shape, 1.0)

    def positive_domain(self, shape, depth, scope):
        """log, sqrt and powers, each of something positive (or an integer power)."""
        op = self.pick(["log", "sqrt", "square", "cube", "fractional"])
        if op in ("square", "cube"):
            e = self.build(shape, depth, scope)
            if e.bound > 4.0:
                e = Node("tanh", (e,), shape, 1.0)
            exponent = 2 if op == "square" else 3
            return Node("power", (e,), shape, e.bound ** exponent, {"exponent": exponent})
        e = self.positive(shape, depth, scope)
        if op == "log":  # exp(u) and sigmoid(u) may be as small as e^-|u|
            small = e.args[0].bound if e.op in ("exp", "sigmoid") else 0.0
            return Node("log", (e,), shape, max(math.log(e.bound + 1.0), small + 1.0))
        if op == "sqrt":
            return Node("sqrt", (e,), shape, math.sqrt(e.bound))
        if e.bound > 10.0:
            return Node("sqrt", (e,), shape, math.sqrt(e.bound))
        return Node("power", (e,), shape, e.bound ** 1.5, {"exponent": 1.5})

    # -- reductions, linear algebra, assembly, rearranging ---------------------------
    def reduction(self, shape, depth, scope):
        """sum/mean/max over one axis or all of them; keepdims where the wanted shape
        has an axis of 1 (a vector's total read back with [0])."""
        op = self.pick(["sum", "mean", "max"], [3, 2, 1.5])
        n, keepdims, read_back = self.dim(), False, None
        if shape == ():
            source = (n,) if self.chance(0.6) else (n, self.dim())
            axis = self.pick([None, 0, -1]) if len(source) == 1 else None
            if len(source) == 1 and self.chance(0.25):
                keepdims, read_back = True, (0, "0")
        elif len(shape) == 1:
            axis = self.pick([0, 1, -1])
            source = (n, shape[0]) if axis == 0 else (shape[0], n)
        elif shape[1] == 1:
            source, axis, keepdims = (shape[0], n), self.pick([1, -1]), True
        elif shape[0] == 1:
            source, axis, keepdims = (n, shape[1]), 0, True
        else:
            return None
        child = self.fresh(source, scope) if op == "max" else self.build(source, depth, scope)
        if child is None:
            return None
        count = int(np.prod(source)) if axis is None else source[axis]
        reduced = (1,) if read_back else shape
        node = Node(op, (child,), reduced, child.bound * (count if op == "sum" else 1),
                    {"axis": axis, "keepdims": keepdims})
        return self.index(node, *read_back, shape) if read_back else node

    def linear_algebra(self, shape, depth, scope):
        """matmul (as @ or cr.matmul), dot and outer, with inner dimensions that agree."""
        k = self.dim()
        if shape == ():
            a, b = (k,), (k,)
            op = self.pick(["dot", "matmul", "matmul_op"])
        elif len(shape) == 1:
            a, b = self.pick([((k,), (k, shape[0])), ((shape[0], k), (k,))])
            op = self.pick(["matmul", "matmul_op", "dot"])
        else:
            if self.chance(0.35):
                left = self.build((shape[0],), depth, scope)
                right = self.build((shape[1],), depth, scope)
                return Node("outer", (left, right), shape, left.bound * right.bound)
            a, b = (shape[0], k), (k, shape[1])
            op = self.pick(["matmul", "matmul_op"])
        left, right = self.build(a, depth, scope), self.build(b, depth, scope)
        if self.chance(0.3):  # the same product written as an einsum
            spec = ("j,j->" if len(a) == len(b) == 1 else "ij,jk->ik" if len(shape) == 2
                    else "j,jk->k" if len(a) == 1 else "ij,j->i")
            return Node("einsum", (left, right), shape, k * left.bound * right.bound,
                        {"spec": spec})
        return Node(op, (left, right), shape, k * left.bound * right.bound)

    def along_axis(self, shape, depth, scope):
        """cumsum, sort, flip and roll along one axis (the shape stays), tril and triu."""
        if shape == ():
            return None
        child = self.build(shape, depth, scope)
        if len(shape) == 2 and self.chance(0.25):
            return Node(self.pick(["tril", "triu"]), (child,), shape, child.bound)
        op = self.pick(list(ALONG_AXIS))
        axis = self.pick(range(-len(shape), len(shape)))
        bound = child.bound * shape[axis] if op == "cumsum" else child.bound
        params = {"axis": axis}
        if op == "roll":
            params["shift"] = int(self.rng.integers(-2, 3))
        return Node(op, (child,), shape, bound, params)

    def assembly(self, shape, depth, scope):
        """stack and concatenate of several expressions."""
        if shape == ():
            return None
        if self.chance(0.5):  # stack along the first or the last axis
            axis = self.pick([0, -1]) if len(shape) == 2 else 0
            count = shape[0] if axis == 0 else shape[-1]
            part = shape[1:] if axis == 0 else shape[:-1]
            parts = [self.build(part, depth - 1, scope) for _ in range(count)]
            return Node("stack", tuple(parts), shape, max(p.bound for p in parts),
                        {"axis": axis})
        axis = self.pick(range(len(shape)))
        if shape[axis] < 2:
            return None
        first = int(self.rng.integers(1, shape[axis]))
        sizes = (first, shape[axis] - first)
        parts = []
        for size in sizes:
            part = list(shape)
            part[axis] = size
            parts.append(self.build(tuple(part), depth - 1, scope))
        return Node("concatenate", tuple(parts), shape, max(p.bound for p in parts),
                    {"axis": axis})

    def rearrange(self, shape, depth, scope):
        """reshape, transpose, and reading entries, slices, rows and columns."""
        choice = self.pick(["reshape", "transpose", "index", "slice"])
        if choice == "reshape":
            if len(shape) == 2:
                source = (shape[0] * shape[1],)
            elif len(shape) == 1 and shape[0] == 4:
                source = (2, 2)
            else:
                return None
            child = self.build(source, depth, scope)
            to = shape if self.chance(0.5) or len(shape) == 1 else (shape[0], -1)
            return Node("reshape", (child,), shape, child.bound, {"to": to})
        if choice == "transpose":
            if len(shape) != 2:
                return None
            child = self.build((shape[1], shape[0]), depth, scope)
            return Node("transpose", (child,), shape, child.bound,
                        {"method": self.chance(0.5)})
        if choice == "index":  # x[i] of a longer thing, or a column x[:, j]
            if len(shape) == 1 and self.chance(0.4):
                n = self.dim()
                child = self.build((shape[0], n), depth, scope)
                j = int(self.rng.integers(0, n))
                return self.index(child, (slice(None), j), f":, {j}", shape)
            if len(shape) >= 2:
                return None
            n = self.dim()
            child = self.build((n,) + shape, depth, scope)
            i = int(self.rng.integers(-n, n))
            return self.index(child, i, str(i), shape)
        if len(shape) != 1:  # a slice of a longer vector
            return None
        extra = int(self.rng.integers(1, 3))
        child = self.build((shape[0] + extra,), depth, scope)
        start = int(self.rng.integers(0, extra + 1))
        if start == extra:
            return self.index(child, slice(start, None), f"{start}:", shape)
        return self.index(child, slice(start, start + shape[0]),
                          f"{start}:{start + shape[0]}", shape)

    def update(self, shape, depth, scope):
        """x.at[i].set(v), .add(v), .min(v) or .max(v) along the first axis, where i
        names one entry (or row) at least twice: a set keeps the last write, an add adds
        them all, min and max keep the extreme one. Or .multiply(v) with i naming each
        entry once: JAX refuses scatter_mul's derivative at repeated indices (chainrule's
        is checked there in tests/test_repeated_indices.py). min and max see fresh
        arguments (see the module's docstring), the values shifted by a random constant,
        so that no value ties with another or with x."""
        if shape == ():
            return None
        n, k = shape[0], int(self.rng.integers(2, 5))
        kind = self.pick(["set", "add", "multiply", "min", "max"])
        if kind == "multiply":
            k = min(k, n)
            index = self.rng.permutation(n)[:k]
        else:
            index = self.rng.integers(0, n, size=k)
            index[-1] = index[int(self.rng.integers(0, k - 1))]  # one entry written again
        value_shape = () if self.chance(0.25) else (k,) + shape[1:]
        if kind in ("min", "max"):
            child, values = self.fresh(shape, scope), self.fresh(value_shape, scope)
            if child is None or values is None:
                kind = self.pick(["set", "add"])
            else:
                values = Node("add", (values, self.constant(value_shape)), value_shape,
                              values.bound + 1.5)
        if kind not in ("min", "max"):
            child = self.build(shape, depth, scope)
            values = self.build(value_shape, depth, scope)
        bound = {"add": child.bound + k * values.bound, "multiply": child.bound * values.bound
                 }.get(kind, max(child.bound, values.bound))
        return Node("update", (child, values), shape, bound,
                    {"index": index, "kind": kind})

    # -- kinks -------------------------------------------------------------------------
    def kink(self, shape, depth, scope):
        """relu, abs or maximum of a fresh argument (see the module's docstring)."""
        argument = self.fresh(shape, scope)
        if argument is None:
            return None
        op = self.pick(list(KINKS) + ["maximum"])
        if op == "maximum":
            other = self.constant(self.operand_shape(shape))
            pair = (argument, other) if self.chance(0.5) else (other, argument)
            return Node("maximum", pair, shape, max(argument.bound, 1.5))
        return Node(op, (argument,), shape, argument.bound)

    def where(self, shape, depth, scope):
        condition = self.fresh(shape, scope)
        if condition is None:
            return None
        a = self.build(shape, depth, scope)
        b = self.build(self.operand_shape(shape), depth, scope)
        return Node("where", (condition, a, b), shape, max(a.bound, b.bound))

    # -- loops -----------------------------------------------------------------------------
    def loop(self, shape, depth, scope):
        """fori_loop or scan over 1 to 4 steps: a carry of this shape, whose next value
        (squashed by tanh, so that it stays bounded however many steps) is a body that
        reads the carry (and scan's x) and closes over the outer variables."""
        steps, k = int(self.rng.integers(1, 5)), len(scope)
        init = self.build(shape, depth, scope)
        carry = Variable(f"c{k}", (), shape, max(init.bound, 1.0))
        if self.chance(0.4):
            body = self.loop_body(shape, depth, scope + (carry,), carry)
            return Node("fori_loop", (body, init), shape, carry.bound,
                        {"var": carry.name, "steps": steps})
        x_shape = self.pick([(), (self.dim(),)])
        xs = self.build((steps,) + x_shape, depth, scope)
        x = Variable(f"x{k}", (), x_shape, xs.bound)
        inner = scope + (carry, x)
        body = self.loop_body(shape, depth, inner, carry)
        y = self.squash(self.build(shape, max(depth - 1, 1), inner))
        return Node("scan", (body, y, init, xs), shape, carry.bound + steps * y.bound,
                    {"var": carry.name, "xvar": x.name, "steps": steps,
                     "reverse": self.chance(0.3)})

    def loop_body(self, shape, depth, scope, carry):
        for _ in range(5):  # a body that reads the carry
            body = self.build(shape, max(depth - 1, 1), scope)
            if self.reads(body, carry.name):
                break
        else:
            body = self.plus_a_function_of(body, carry)
        return Node("tanh", (body,), shape, 1.0)

    # -- complex numbers (the complex programs only) ---------------------------------------
    # A complex expression is a tree of its own (``complex_tree``), entered from real ones
    # (1j * e, exp(1j * e), e1 + 1j * e2, fft and rfft of a real e) or from a complex
    # argument, and left by real, imag, abs, |.|**2, angle or irfft (``complex_part``):
    # a real expression with complex numbers inside, which grad and hessian may take.
    # Its bound is one on |z|; a node that would pass it is scaled down by a number (a
    # linear map: tanh of a complex number has poles, 1j * pi / 2 among them).
    def complex_values(self, shape, python=False):
        """Random complex numbers, each part away from 0, with six decimals."""
        value = self.numbers(shape) + 1j * self.numbers(shape)
        return complex(value) if python and shape == () else np.asarray(value)

    def complex_constant(self, shape):
        return Node("const", (), shape, 2.2,
                    {"value": self.complex_values(shape, self.chance(0.5)), "complex": True})

    @staticmethod
    def complex_node(op, args, shape, bound, params=None):
        return Node(op, args, shape, bound, {**(params or {}), "complex": True})

    def scaled(self, node, limit):
        """node, multiplied by a number that brings its bound down to ``limit``."""
        if node.bound <= limit:
            return node
        factor = float(f"{limit / node.bound:.3g}")
        return Node("literal", (node,), node.shape, node.bound * factor,
                    {"symbol": "*", "number": factor, "left": False,
                     "complex": bool(node.params.get("complex"))})

    def right_half(self, z):
        """2 + z with |z| <= 1.5: real part and modulus at least 0.5, away from the cuts
        of log and sqrt along the negative reals, and from a division by 0."""
        z = self.scaled(z, 1.5)
        return self.complex_node("literal", (z,), z.shape, z.bound + 2.0,
                                 {"symbol": "+", "number": 2.0, "left": self.chance(0.5)})

    def times_i(self, e):
        return self.complex_node("literal", (e,), e.shape, e.bound,
                                 {"symbol": "*", "number": 1j, "left": self.chance(0.5)})

    def complex_tree(self, shape, depth, scope):
        """A random expression of this shape whose value is complex."""
        if depth <= 0 or self.chance(0.2):
            return self.complex_leaf(shape, scope)
        makers = [self.complex_unary, self.complex_binary, self.into_complex,
                  self.complex_reduction, self.complex_product, self.fourier, self.conjugate]
        weights = [3, 3, 2, 1.5, 1.5, 3, 1]
        if self.loops:  # (the programs with loops and complex numbers: a complex carry)
            makers.append(self.complex_loop)
            weights.append(1.5)
        for _ in range(10):
            node = self.pick(makers, weights)(shape, depth - 1, scope)
            if node is not None:
                return self.scaled(node, CAP)
        return self.complex_leaf(shape, scope)

    def complex_loop(self, shape, depth, scope):
        """fori_loop or scan whose carry (and scan's x and y) are complex: each step's
        carry is scaled back to |z| <= 1 (tanh, which keeps a real carry bounded, has
        poles in the complex plane)."""
        steps, k = int(self.rng.integers(1, 5)), len(scope)
        init = self.scaled(self.complex_tree(shape, depth, scope), 1.0)
        carry = Variable(f"c{k}", (), shape, 1.0, complex=True)
        if self.chance(0.4):
            body = self.complex_body(shape, depth, scope + (carry,), carry)
            return self.complex_node("fori_loop", (body, init), shape, 1.0,
                                     {"var": carry.name, "steps": steps})
        x_shape = self.pick([(), (self.dim(),)])
        xs = self.complex_tree((steps,) + x_shape, depth, scope)
        x = Variable(f"x{k}", (), x_shape, xs.bound, complex=True)
        inner = scope + (carry, x)
        body = self.complex_body(shape, depth, inner, carry)
        y = self.scaled(self.complex_tree(shape, max(depth - 1, 1), inner), 1.0)
        return self.complex_node("scan", (body, y, init, xs), shape, 1.0 + steps,
                                 {"var": carry.name, "xvar": x.name, "steps": steps,
                                  "reverse": self.chance(0.3)})

    def complex_body(self, shape, depth, scope, carry):
        for _ in range(5):  # a body that reads the carry
            body = self.complex_tree(shape, max(depth - 1, 1), scope)
            if self.reads(body, carry.name):
                break
        else:
            body = self.complex_node("add", (body, carry.node()), shape, body.bound + 1.0)
        return self.scaled(body, 1.0)

    def complex_leaf(self, shape, scope):
        """A complex argument read as this shape, a complex constant, or a real leaf
        made complex."""
        found = self.variable_leaves(shape, scope, complex_numbers=True)
        if found and self.chance(0.7):
            node = self.pick(found)
            node.params["complex"] = True  # (an entry or a slice of one)
            return node
        if self.chance(0.5):
            return self.complex_constant(shape)
        return self.into_complex(shape, 0, scope)

    def into_complex(self, shape, depth, scope):
        """A real expression made complex: 1j * e, exp(1j * e), e1 + 1j * e2."""
        e = self.build(shape, depth, scope)
        kind = self.pick(["times_i", "phase", "pair"])
        if kind == "times_i":
            return self.times_i(e)
        if kind == "phase":  # |exp(1j * e)| = 1 whatever e
            return self.complex_node("exp", (self.times_i(e),), shape, 1.0)
        other = self.times_i(self.build(self.operand_shape(shape), depth, scope))
        pair = (e, other) if self.chance(0.5) else (other, e)
        return self.complex_node("add", pair, shape, e.bound + other.bound)

    def complex_unary(self, shape, depth, scope):
        """Holomorphic functions: exp, sin, cos, powers, and log, sqrt and 1/w of a w in
        the right half plane; and -z."""
        op = self.pick(["exp", "sin", "cos", "square", "cube", "log", "sqrt", "reciprocal",
                        "neg"])
        z = self.complex_tree(shape, depth, scope)
        if op in ("exp", "sin", "cos"):  # |exp z|, |sin z|, |cos z| <= exp(|z|)
            z = self.scaled(z, 3.0)
            return self.complex_node(op, (z,), shape, math.exp(z.bound))
        if op in ("square", "cube"):
            exponent = 2 if op == "square" else 3
            z = self.scaled(z, 4.0 if exponent == 2 else 3.0)
            return self.complex_node("power", (z,), shape, z.bound ** exponent,
                                     {"exponent": exponent})
        if op == "neg":
            return self.complex_node("neg", (z,), shape, z.bound)
        w = self.right_half(z)
        if op == "log":
            return self.complex_node("log", (w,), shape, math.log(w.bound) + math.pi)
        if op == "sqrt":
            return self.complex_node("sqrt", (w,), shape, math.sqrt(w.bound))
        number = float(self.numbers(()))
        return self.complex_node("literal", (w,), shape, 2 * abs(number),
                                 {"symbol": "/", "number": number, "left": True})

    def complex_binary(self, shape, depth, scope):
        """Arithmetic of a complex expression with a complex or a real one; a division
        by a positive real or by a w in the right half plane."""
        op = self.pick(["add", "sub", "mul", "div"])
        full = self.complex_tree(shape, depth, scope)
        other_shape = self.operand_shape(shape)
        if op == "div":
            if self.chance(0.5):
                denominator = self.positive(other_shape, depth, scope, at_least_one=True)
                return self.complex_node("div", (full, denominator), shape, full.bound)
            denominator = self.right_half(self.complex_tree(other_shape, depth, scope))
            return self.complex_node("div", (full, denominator), shape, 2 * full.bound)
        tree = self.complex_tree if self.chance(0.5) else self.build
        other = tree(other_shape, depth, scope)
        pair = (full, other) if self.chance(0.5) else (other, full)
        node = self.arithmetic(op, pair[0], pair[1], shape)
        node.params["complex"] = True
        return node

    def complex_reduction(self, shape, depth, scope):
        """sum or mean of a complex expression, over one axis or all of them."""
        op, n = self.pick(["sum", "mean"]), self.dim()
        if shape == ():
            source = (n,) if self.chance(0.6) else (n, self.dim())
            axis = self.pick([None, 0, -1]) if len(source) == 1 else None
        elif len(shape) == 1:
            axis = self.pick([0, 1, -1])
            source = (n, shape[0]) if axis == 0 else (shape[0], n)
        else:
            return None
        child = self.complex_tree(source, depth, scope)
        count = int(np.prod(source)) if axis is None else source[axis]
        return self.complex_node(op, (child,), shape,
                                 child.bound * (count if op == "sum" else 1),
                                 {"axis": axis, "keepdims": False})

    def complex_product(self, shape, depth, scope):
        """matmul, dot, vdot (which conjugates its first argument), outer and einsum, of
        a complex expression with a complex or a real one."""
        k = self.dim()
        if shape == ():
            a, b = (k,), (k,)
            op = self.pick(["dot", "vdot", "matmul", "matmul_op"])
        elif len(shape) == 1:
            a, b = self.pick([((k,), (k, shape[0])), ((shape[0], k), (k,))])
            op = self.pick(["matmul", "matmul_op", "dot"])
        elif self.chance(0.35):
            a, b, op = (shape[0],), (shape[1],), "outer"
        else:
            a, b = (shape[0], k), (k, shape[1])
            op = self.pick(["matmul", "matmul_op"])
        complex_left = self.chance(0.7)
        left = (self.complex_tree if complex_left else self.build)(a, depth, scope)
        right_complex = not complex_left or self.chance(0.5)
        right = (self.complex_tree if right_complex else self.build)(b, depth, scope)
        bound = left.bound * right.bound * (1 if op == "outer" else k)
        if op not in ("vdot", "outer") and self.chance(0.3):
            spec = ("j,j->" if len(a) == len(b) == 1 else "ij,jk->ik" if len(shape) == 2
                    else "j,jk->k" if len(a) == 1 else "ij,j->i")
            return self.complex_node("einsum", (left, right), shape, bound, {"spec": spec})
        return self.complex_node(op, (left, right), shape, bound)

    def fourier(self, shape, depth, scope):
        """fft or ifft along the last axis (of a complex or a real expression, padded or
        cut to the length by ``n`` or not), or rfft of a real one."""
        if shape == ():
            return None
        m = shape[-1]
        op = self.pick(["fft", "ifft", "rfft"])
        norm = self.pick([None, "ortho", "forward"])
        if op == "rfft":  # n real numbers give n // 2 + 1 complex ones
            n = max(self.pick([2 * m - 2, 2 * m - 1]), 1)  # (m is 1 after a 1-step scan)
            child = self.build(shape[:-1] + (n,), depth, scope)
            return self.complex_node("rfft", (child,), shape, n * child.bound,
                                     {"n": None, "norm": norm})
        length = self.pick([m, self.dim()])
        tree = self.complex_tree if self.chance(0.6) else self.build
        child = tree(shape[:-1] + (length,), depth, scope)
        return self.complex_node(op, (child,), shape, max(length, m) * child.bound,
                                 {"n": None if length == m else m, "norm": norm})

    def conjugate(self, shape, depth, scope):
        z = self.complex_tree(shape, depth, scope)
        return self.complex_node("conj", (z,), shape, z.bound)

    def complex_part(self, shape, depth, scope):
        """A real expression of a complex one: real, imag, abs, abs ** 2, angle, or irfft.
        abs and angle see z plus a complex constant, never 0 (where they have no
        derivative)."""
        options = ["real", "imag", "abs", "square_abs", "angle"]
        if len(shape) == 1:
            options.append("irfft")
        op = self.pick(options)
        depth = max(depth, 2)  # (a complex tree of some depth: it is the point)
        if op == "irfft":  # n real numbers from n // 2 + 1 complex ones
            n = shape[0]
            z = self.complex_tree((n // 2 + 1,), depth, scope)
            return Node("irfft", (z,), shape, (n + 2) * z.bound,
                        {"n": n, "norm": self.pick([None, "ortho", "forward"])})
        z = self.complex_tree(shape, depth, scope)
        if op in ("real", "imag"):
            return Node(op, (z,), shape, z.bound)
        offset = self.complex_constant(self.operand_shape(shape))
        z = self.complex_node("add", (z, offset), shape, z.bound + offset.bound)
        if op == "angle":
            return Node("angle", (z,), shape, math.pi)
        size = Node("abs", (z,), shape, z.bound)
        if op == "abs":
            return size
        return Node("power", (size,), shape, z.bound ** 2, {"exponent": 2})

    def complex_output(self, shape, depth, scope, nest=0):
        """A complex expression for an output (of a holomorphic case, or a vjp's or
        jvp's); plus the carrier of the inner transforms, if any."""
        z = self.complex_tree(shape, depth, scope)
        if nest == 0:
            return z
        carrier = self.build(shape, depth, scope, nest)
        pair = (z, carrier) if self.chance(0.5) else (carrier, z)
        return self.complex_node("add", pair, shape, z.bound + carrier.bound)

    # -- inner transforms --------------------------------------------------------------
    def inner_transform(self, shape, depth, scope, nest):
        """A transform inside the program, of a body that closes over the outer
        variables, at a point (and a tangent or cotangent) that may depend on them."""
        options = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd"]
        if self.reverse_only:
            options = list(REVERSE_INNER)
        elif shape == () or (len(shape) == 2 and shape[0] == shape[1]):
            options.append("hessian")
        op = self.pick(options)
        if op in ("grad", "value_and_grad"):
            var_shape, body_shape = shape, ()
        elif op == "vjp":
            var_shape, body_shape = shape, self.pick([(), (self.dim(),)])
        elif op == "jvp":
            var_shape, body_shape = self.pick([(), (self.dim(),)]), shape
        elif op == "hessian":
            var_shape, body_shape = shape[:len(shape) // 2], ()
        else:  # jacrev, jacfwd: out.shape + in.shape
            split = int(self.rng.integers(0, len(shape) + 1))
            body_shape, var_shape = shape[:split], shape[split:]
        name = INNER_NAMES[len([v for v in scope if v.name in INNER_NAMES])]
        # (the programs with loops and complex numbers: some variables are complex)
        complex_var = self.loops and self.complex_numbers and \
            op in ("grad", "vjp", "jvp") and self.chance(0.4)
        point = (self.complex_point if complex_var else self.point)(var_shape, scope)
        var = Variable(name, (), var_shape, point.bound, complex_var)
        inner_scope = scope + (var,)
        for _ in range(5):  # a body that reads its own variable
            body = self.build(body_shape, max(depth - 1, 2), inner_scope, nest - 1)
            if self.reads(body, name):
                break
        else:
            body = self.plus_a_function_of(body, var)
        args = [body, point]
        if op == "vjp":  # a cotangent (shaped like the body, real)
            args.append(self.point(body_shape, scope))
        if op == "jvp":  # a tangent (like the variable)
            args.append((self.complex_point if complex_var else self.point)(var_shape, scope))
        node = Node(op, tuple(args), shape, INNER_BOUND, {"var": name})
        if complex_var and op != "jvp":  # a gradient of a complex variable is complex
            return Node(self.pick(["real", "imag"]), (node,), shape, INNER_BOUND)
        return node

    def complex_point(self, shape, scope):
        """point's complex counterpart: a complex constant, plus a complex expression of
        the outer variables (or not)."""
        constant = self.complex_constant(shape)
        if self.chance(0.5):
            return constant
        moving = self.scaled(self.complex_tree(self.operand_shape(shape) if shape else (),
                                               1, scope), 1.0)
        return self.complex_node("add", (moving, constant), shape, moving.bound + 2.2)

    def plus_a_function_of(self, body, var):
        """body + sin(sum(var)): a body that depends on its variable, whatever its shape
        (a derivative that is 0 by construction would test little)."""
        read = var.node()
        if var.complex:  # (the body is real: so is what is added to it)
            read = Node("real", (read,), var.shape, read.bound)
        if var.shape:
            read = Node("sum", (read,), (), read.bound * int(np.prod(var.shape)),
                        {"axis": None, "keepdims": False})
        return Node("add", (body, Node("sin", (read,), (), 1.0)), body.shape, body.bound + 1)

    def point(self, shape, scope):
        """Where an inner transform is taken: a constant (a Python float or an array),
        or a constant plus an expression of the outer variables (whose derivative then
        flows through the point). The constant keeps the entries apart (no ties)."""
        constant = self.constant(shape, as_float=self.chance(0.5))
        if self.chance(0.5):
            return constant
        moving = self.build(self.operand_shape(shape) if shape else (), 1, scope)
        moving = Node("tanh", (moving,), moving.shape, 1.0) if moving.bound > 2 else moving
        return Node("add", (moving, constant), shape, moving.bound + 1.5)


# ---------------------------------------------------------------------------------------
# Cases: a program, its arguments, and the transform around it
# ---------------------------------------------------------------------------------------

TOP_TRANSFORMS = ("grad", "value_and_grad", "vjp", "vjp_cotangent", "jvp", "jacrev",
                  "jacfwd", "hessian")
NESTING = (0, 1, 2)  # inner transforms inside the program, one inside the other
PATTERNS = [(t, n) for n in NESTING for t in TOP_TRANSFORMS]
REVERSE_PATTERNS = [(t, n) for n in NESTING
                    for t in ("grad", "value_and_grad", "vjp", "vjp_cotangent", "jacrev")]
ARG_KINDS = ("float", "array0", "vector", "tuple", "dict")
COMPLEX_KINDS = ("complex", "cvector")  # a Python complex, a complex vector (complex programs)
HOLOMORPHIC_TRANSFORMS = ("grad", "value_and_grad", "jacrev", "jacfwd", "hessian")
COTANGENT_TRANSFORMS = ("jvp", "jacrev", "jacfwd", "grad")


@dataclass
class Argument:
    name: str
    kind: str      # float, array0, vector, tuple or dict (complex, cvector)
    value: object  # a Python float, an ndarray, or a tuple or dict of them


@dataclass
class Case:
    """One program and the transform around it, everything drawn from ``seed``."""
    seed: int
    transform: str
    nest: int
    args: list
    argnums: object        # an int, or a tuple of ints
    outputs: list          # one Node, or two (the function returns a tuple)
    extras: dict = field(default_factory=dict)  # see random_directions

    @property
    def differentiated(self):
        nums = (self.argnums,) if isinstance(self.argnums, int) else self.argnums
        return [self.args[n] for n in nums]

    def nodes(self):
        for out in self.outputs:
            yield from out.walk()


def argument_leaves(arg):
    """(path, shape, value) of each leaf of an argument."""
    if isinstance(arg.value, tuple):
        return [((i,), np.shape(v), v) for i, v in enumerate(arg.value)]
    if isinstance(arg.value, dict):
        return [((k,), np.shape(v), v) for k, v in arg.value.items()]
    return [((), np.shape(arg.value), arg.value)]


def make_argument(g, name, kind):
    if kind == "complex":
        return Argument(name, kind, g.complex_values((), python=True))
    if kind == "cvector":
        return Argument(name, kind, g.complex_values((g.dim(),)))
    if kind == "float":
        return Argument(name, kind, float(g.numbers(())))
    if kind == "array0":
        return Argument(name, kind, np.asarray(g.numbers(())))
    if kind == "vector":
        return Argument(name, kind, g.numbers((g.dim(),)))
    if kind == "tuple":
        return Argument(name, kind, (g.numbers((g.dim(),)), np.asarray(g.numbers(()))))
    leaf = float(g.numbers(())) if g.chance(0.3) else np.asarray(g.numbers(()))
    return Argument(name, kind, {"w": g.numbers((g.dim(),)), "b": leaf})


def random_like(g, value):
    """A random tangent or cotangent with the structure and kinds of ``value``."""
    if isinstance(value, tuple):
        return tuple(random_like(g, v) for v in value)
    if isinstance(value, dict):
        return {k: random_like(g, v) for k, v in value.items()}
    if isinstance(value, float):
        return float(g.numbers(()))
    if np.iscomplexobj(value):  # (complex programs: a complex tangent for a complex input)
        return g.complex_values(np.shape(value), python=isinstance(value, complex))
    return np.asarray(g.numbers(np.shape(value)))


def generate(seed, loops=False, complex_numbers=False, updates=False, custom=False,
             custom_vjp=False):
    """The case for a seed: the transform and nesting depth cycle with the seed (every
    pattern once in any len(PATTERNS) seeds in a row); the rest is random. With
    ``loops``, fori_loop and scan are among the operations, and the program holds at
    least one (a family of its own: the same seed gives another program). With
    ``complex_numbers``, another family: complex arguments, complex expressions inside
    real ones, numpy.fft's transforms, holomorphic derivatives (``fit_to_jax_rules``).
    With both, a fourth: loops with complex carries, inner grad, vjp and jvp at complex
    points (and the first three families' programs unchanged). With ``updates``, one
    more: indexed updates whose indices repeat (x.at[i].set(v), .add(v), .min(v), .max(v);
    .multiply(v) at distinct indices). With ``custom``, one more: checkpointed subtrees
    (cr.checkpoint with its policies) and custom_jvp ones, at least one. With
    ``custom_vjp``, the last: reverse mode only (grad, value_and_grad, vjp, jacrev and a
    reverse transform of a vjp function, inside and outside), custom_vjp subtrees (at
    least one) among checkpoints and custom_jvp ones."""
    patterns = REVERSE_PATTERNS if custom_vjp else PATTERNS
    transform, nest = patterns[seed % len(patterns)]
    g = Generator(np.random.default_rng(seed), loops, complex_numbers, updates, custom,
                  reverse_only=custom_vjp)
    args = random_arguments(g)
    case = Case(seed, transform, nest, args, random_argnums(g, len(args)), outputs=[])
    if complex_numbers:
        fit_to_jax_rules(g, case)
    case.outputs = random_outputs(g, case)
    case.extras = {**case.extras, **random_directions(g, case)}
    return case


def random_arguments(g):
    """One to three arguments, x, p and q, of random kinds."""
    names = ["x", "p", "q"][:int(g.rng.integers(1, 4))]
    kinds, weights = ARG_KINDS, [3, 2, 3, 1.5, 1.5]
    if g.complex_numbers:
        kinds, weights = kinds + COMPLEX_KINDS, weights + [2, 3]
    return [make_argument(g, name, g.pick(kinds, weights)) for name in names]


def is_complex_argument(arg):
    return arg.kind in COMPLEX_KINDS


def fit_to_jax_rules(g, case):
    """JAX's rules for complex numbers, met by the arguments: a holomorphic case (some
    of grad, value_and_grad, jacrev, jacfwd and hessian, with ``holomorphic=True``)
    differentiates complex arguments only, and its outputs are complex; otherwise the
    outputs are real (complex for some vjp and jvp cases), and jacfwd and hessian
    differentiate real arguments only (forward mode of a complex input needs
    holomorphic=True). An argument that breaks the rule is drawn again, of a kind that
    keeps it."""
    holomorphic = case.transform in HOLOMORPHIC_TRANSFORMS and g.chance(0.35)
    nums = (case.argnums,) if isinstance(case.argnums, int) else case.argnums
    for n in nums:
        arg = case.args[n]
        if holomorphic and not is_complex_argument(arg):
            kind = "complex" if arg.kind in ("float", "array0") else "cvector"
            case.args[n] = make_argument(g, arg.name, kind)
        elif not holomorphic and case.transform in ("jacfwd", "hessian") \
                and is_complex_argument(arg):
            case.args[n] = make_argument(g, arg.name, "float" if arg.kind == "complex"
                                         else "vector")
    if holomorphic:
        case.extras["holomorphic"] = True


def random_argnums(g, count):
    """One argument (an int), or some of them (a tuple)."""
    if count > 1 and g.chance(0.35):
        chosen = g.rng.choice(count, size=int(g.rng.integers(1, count + 1)), replace=False)
        return tuple(sorted(chosen.tolist()))
    return int(g.rng.integers(0, count))


def random_outputs(g, case):
    """The program's output: one expression (a scalar for grad, value_and_grad and
    hessian), or two (the function returns a pair). The first holds the inner
    transforms. Redrawn (a few times) until it reads a differentiated argument."""
    scope = tuple(Variable(a.name, path, shape, *((2.2, True) if is_complex_argument(a) else ()))
                  for a in case.args for path, shape, _ in argument_leaves(a))
    scalar = case.transform in ("grad", "value_and_grad", "hessian")
    count = 1 if scalar or g.chance(0.7) else 2
    depth = int(g.rng.integers(2, 5))
    wanted = {a.name for a in case.differentiated}
    for _ in range(20):
        outputs = []
        for k in range(count):
            shape = () if scalar else g.pick([(), (g.dim(),), (g.dim(), g.dim())], [3, 3, 1])
            nest = case.nest if k == 0 else 0
            if g.complex_numbers and complex_output(g, case, k):
                outputs.append(g.complex_output(shape, depth, scope, nest))
            else:
                outputs.append(g.build(shape, depth, scope, nest))
        if g.loops and not any(n.op in LOOPS for out in outputs for n in out.walk()):
            first = outputs[0]
            loop = g.squash(g.loop(first.shape, depth - 1, scope))
            outputs[0] = g.arithmetic("add", first, loop, first.shape)
            if first.params.get("complex"):  # (a complex output stays one: its cotangent)
                outputs[0].params["complex"] = True
        customs = ("custom_vjp",) if g.reverse_only else CUSTOM
        if g.custom and not any(n.op in customs for out in outputs for n in out.walk()):
            first = outputs[0]
            outputs[0] = g.custom_rule(first.shape, 0, scope)
            if g.reverse_only:
                outputs[0] = Node("custom_vjp", outputs[0].args, first.shape)
            outputs[0].args = (first,)
            outputs[0].bound = first.bound
        if g.updates and not any(n.op == "update" for out in outputs for n in out.walk()):
            first = outputs[0]
            shape = first.shape or (g.dim(),)
            part = g.squash(g.update(shape, depth - 1, scope))
            if not first.shape:
                part = Node("sum", (part,), (), part.bound * shape[0],
                            {"axis": None, "keepdims": False})
            outputs[0] = g.arithmetic("add", first, part, first.shape)
        if g.complex_numbers and not any(holds_complex(out) for out in outputs):
            first = outputs[0]
            part = g.squash(g.complex_part(first.shape, depth - 1, scope))
            outputs[0] = g.arithmetic("add", first, part, first.shape)
        if any(g.reads(out, name) for out in outputs for name in wanted):
            break
    return outputs


def complex_output(g, case, k):
    """Whether output k of a complex program is complex: every output of a holomorphic
    case; the first, sometimes, of a vjp or jvp (which take complex numbers either way)."""
    if case.extras.get("holomorphic"):
        return True
    return k == 0 and case.transform in ("vjp", "jvp") and g.chance(0.4)


def holds_complex(node):
    return any(n.params.get("complex") for n in node.walk())


def random_directions(g, case):
    """What the transform needs besides the arguments: jvp's tangents, vjp's cotangent,
    and for a transform of a vjp function, which one, the vjp built inside it or
    before it, and its own tangent or weights."""
    extras = {}
    differentiated = tuple(a.value for a in case.differentiated)
    if case.transform == "jvp":
        extras["tangents"] = random_like(g, differentiated)
    if case.transform in ("vjp", "vjp_cotangent"):
        cotangents = [random_cotangent(g, out.shape, out.params.get("complex", False))
                      for out in case.outputs]
        extras["cotangent"] = cotangents[0] if len(cotangents) == 1 else tuple(cotangents)
    if case.transform == "vjp_cotangent":
        extras["outer"] = g.pick(["jacrev", "grad"] if g.reverse_only else
                                 COTANGENT_TRANSFORMS)
        if extras["outer"] == "jacrev" and any(map(is_complex_argument, case.differentiated)):
            # (the pulled-back gradients are complex: jacrev needs real outputs)
            extras["outer"] = g.pick(["jvp", "jacfwd", "grad"])
        extras["vjp_inside"] = g.chance(0.5)
        extras["outer_tangent"] = random_like(g, extras["cotangent"])
        extras["weights"] = random_like(g, differentiated)
    return extras


def random_cotangent(g, shape, complex_numbers=False):
    """Shaped like an output; for a scalar output, a Python float or a 0-d array (a
    complex one for a complex output)."""
    if complex_numbers:
        return g.complex_values(shape, python=g.chance(0.5))
    if shape == () and g.chance(0.5):
        return float(g.numbers(()))
    return np.asarray(g.numbers(shape))


# ---------------------------------------------------------------------------------------
# The inner transforms of a case (what the seeds must cover)
# ---------------------------------------------------------------------------------------

@dataclass
class InnerSite:
    """An inner transform, with what surrounds it."""
    node: Node
    outer: set      # the names of the variables it can close over

    @property
    def var(self):
        return self.node.params["var"]

    @property
    def body(self):
        return self.node.args[0]

    @property
    def point(self):
        return self.node.args[1]

    @property
    def direction(self):
        """The tangent of an inner jvp, or the cotangent of an inner vjp."""
        return self.node.args[2] if len(self.node.args) > 2 else None


def inner_sites(case):
    """Every inner transform of the case, outermost first."""
    found = []

    def visit(node, outer):
        if node.op in INNER_TRANSFORMS:
            found.append(InnerSite(node, outer))
            visit(node.args[0], outer | {node.params["var"]})
            for child in node.args[1:]:
                visit(child, outer)
            return
        for child in node.args:
            visit(child, outer)

    for out in case.outputs:
        visit(out, {a.name for a in case.args})
    return found


# ---------------------------------------------------------------------------------------
# Running a case in one library
# ---------------------------------------------------------------------------------------

def run(case, B):
    """The transform of the program at the case's arguments, computed with library B."""
    f = compile_program(case.outputs, [a.name for a in case.args], B)
    args = [a.value for a in case.args]
    nums = (case.argnums,) if isinstance(case.argnums, int) else case.argnums
    t = case.transform
    if t in ("grad", "value_and_grad", "jacrev", "jacfwd", "hessian"):
        options = {"holomorphic": True} if case.extras.get("holomorphic") else {}
        return getattr(B, t)(f, argnums=case.argnums, **options)(*args)

    def of_differentiated(*values):  # f as a function of the differentiated arguments
        full = list(args)
        for n, v in zip(nums, values):
            full[n] = v
        return f(*full)

    primals = tuple(args[n] for n in nums)
    if t == "jvp":
        return B.jvp(of_differentiated, primals, case.extras["tangents"])
    if t == "vjp":
        out, vjp_fn = B.vjp(of_differentiated, *primals)
        return out, vjp_fn(case.extras["cotangent"])
    return run_vjp_cotangent(case, B, of_differentiated, primals)


def run_vjp_cotangent(case, B, f, primals):
    """A transform of the vjp function with respect to the cotangent (the vjp is built
    inside the transformed function, or before it and closed over)."""
    x = case.extras
    if x["vjp_inside"]:
        def pulled(c):
            return B.vjp(f, *primals)[1](c)
    else:
        vjp_fn = B.vjp(f, *primals)[1]

        def pulled(c):
            return vjp_fn(c)
    cot = x["cotangent"]
    if x["outer"] == "jvp":
        return B.jvp(pulled, (cot,), (x["outer_tangent"],))
    if x["outer"] == "grad":
        return B.grad(lambda c: weighted_total(B, pulled(c), x["weights"]))(cot)
    return getattr(B, x["outer"])(pulled)(cot)


def run_jax(case):
    """The case in JAX, compiled as one program: the same numbers as JAX's eager mode,
    in a tenth of the time (eager mode compiles each operation for each new shape)."""
    import jax
    backend = jax_backend()
    return jax.jit(lambda: run(case, backend))()


def weighted_total(B, tree, weights):
    """sum(leaf * weight) over the leaves of a pytree: a scalar made of every leaf."""
    total = 0.0
    for leaf, w in zip(flatten(tree)[0], flatten(weights)[0]):
        term = leaf * w if isinstance(w, float) else B.sum(leaf * w)
        total = total + (B.real(term) if np.iscomplexobj(w) else term)  # (Re: a real total)
    return total


# ---------------------------------------------------------------------------------------
# Comparing, and the three outcomes
# ---------------------------------------------------------------------------------------

RTOL = 1e-9
ATOL = 1e-12  # the floor, for entries that should be 0 and come out as round-off


def flatten(tree):
    """(leaves, structure) of nested tuples, lists and dicts; lists count as tuples."""
    if isinstance(tree, (tuple, list)):
        parts = [flatten(t) for t in tree]
        return [l for p in parts for l in p[0]], ("tuple", tuple(p[1] for p in parts))
    if isinstance(tree, dict):  # in the order of the keys, as JAX keeps them
        parts = {k: flatten(tree[k]) for k in sorted(tree)}
        return ([l for p in parts.values() for l in p[0]],
                ("dict", tuple((k, p[1]) for k, p in parts.items())))
    return [tree], "leaf"


NUMBERS = (float, int, complex, np.ndarray, np.floating, np.complexfloating)


def as_array(x):
    """x as an ndarray of floats, or of complex numbers if it holds any."""
    return np.asarray(x, dtype=complex if np.iscomplexobj(x) else float)


def as_numpy(tree):
    """The tree with every leaf an ndarray (JAX's arrays included)."""
    leaves, _ = flatten(tree)
    if isinstance(tree, (tuple, list)):
        return tuple(as_numpy(t) for t in tree)
    if isinstance(tree, dict):
        return {k: as_numpy(v) for k, v in tree.items()}
    return as_array(leaves[0])


def difference(ours, theirs):
    """None if chainrule's numbers agree with JAX's, else what differs."""
    our_leaves, our_structure = flatten(ours)
    their_leaves, their_structure = flatten(theirs)
    if our_structure != their_structure:
        return f"structure differs: {our_structure} vs JAX's {their_structure}"
    for i, (a, b) in enumerate(zip(our_leaves, their_leaves)):
        if isinstance(a, (cr.Tensor, cr.Value)):  # the inputs were plain numbers
            return (f"result leaf {i} comes back as a chainrule {type(a).__name__} (a node "
                    f"of a graph), not a number: {a!r:.80}")
        if not isinstance(a, NUMBERS):
            return f"result leaf {i} is a {type(a).__name__}, not a number: {a!r:.80}"
        a, b = as_array(a), as_array(b)
        if a.shape != b.shape:
            return f"result leaf {i} has shape {a.shape}, JAX's {b.shape}"
        if a.dtype != b.dtype:
            return f"result leaf {i} has dtype {a.dtype}, JAX's {b.dtype}"
        err = np.abs(a - b)
        allowed = RTOL * np.maximum(np.abs(a), np.abs(b)) + ATOL
        if not np.all(err <= allowed) or np.any(np.isnan(a) != np.isnan(b)):
            worst = np.unravel_index(np.argmax(err - allowed), a.shape) if a.shape else ()
            return (f"result leaf {i} differs at {worst}: chainrule {a[worst]!r}, "
                    f"JAX {b[worst]!r}")
    return None


@dataclass
class Outcome:
    kind: str       # "agree", "wrong" (a wrong number, no error) or "error"
    detail: str     # what differs, or the error raised
    ours: object = None
    theirs: object = None

    @property
    def category(self):
        """The kind of failure, for telling failures apart (and for shrinking one
        without turning it into another): the error's first words, or what is wrong."""
        if self.kind == "error":
            return "error: " + self.detail.split(";")[0][:70]
        if self.kind == "wrong":
            for words in ("not a number", "structure", "shape", "dtype"):
                if words in self.detail:
                    return "wrong: " + words
            return "wrong: number"
        return self.kind


def check(case, theirs=None):
    """Run the case in both libraries and compare (``theirs``: JAX's result, if it is
    known already). JAX failing, or giving a number that is not finite, means the
    generator made an invalid program: that raises."""
    theirs = run_jax(case) if theirs is None else theirs
    leaves = [as_array(leaf) for leaf in flatten(theirs)[0]]
    if not all(np.all(np.isfinite(leaf)) for leaf in leaves):
        raise AssertionError("invalid program (JAX's result is not finite):\n"
                             + describe_case(case))
    try:
        ours = run(case, CHAINRULE)
    except Exception as error:  # noqa: BLE001  (any error is an outcome to report)
        return Outcome("error", f"{type(error).__name__}: {error}", None, theirs)
    detail = difference(ours, theirs)
    return Outcome("agree" if detail is None else "wrong", detail or "", ours, theirs)


# ---------------------------------------------------------------------------------------
# Shrinking: the smallest program that still fails the same way
# ---------------------------------------------------------------------------------------

KINK_OPS = ("relu", "abs", "maximum", "max", "where")


def plain_constant(shape):
    """A constant with distinct entries, for replacing a subtree."""
    if shape == ():
        return Node("const", (), (), 1.0, {"value": 0.7})
    size = int(np.prod(shape))
    value = np.round(np.linspace(0.3, 1.1, size).reshape(shape), 6)
    return Node("const", (), shape, 1.1, {"value": value})


def sites(node, scope, in_kink=False):
    """(node, variables in scope there, inside a kink's argument?) for every node."""
    yield node, scope, in_kink
    if node.op in INNER_TRANSFORMS:
        inner = scope + (Variable(node.params["var"], (), node.args[1].shape),)
        yield from sites(node.args[0], inner, in_kink)
        for child in node.args[1:]:
            yield from sites(child, scope, in_kink)
        return
    if node.op in LOOPS:  # the bodies see the carry (and x); init and xs do not
        p, bodies = node.params, (1 if node.op == "fori_loop" else 2)
        inner = scope + (Variable(p["var"], (), node.shape),)
        if node.op == "scan":
            inner += (Variable(p["xvar"], (), node.args[3].shape[1:]),)
        for k, child in enumerate(node.args):
            yield from sites(child, inner if k < bodies else scope, in_kink)
        return
    for child in node.args:
        yield from sites(child, scope, in_kink or node.op in KINK_OPS)


def replaced(node, old, new):
    """The tree with the node ``old`` (by identity) replaced by ``new``."""
    if node is old:
        return new
    args = tuple(replaced(child, old, new) for child in node.args)
    if all(a is b for a, b in zip(args, node.args)):
        return node
    return Node(node.op, args, node.shape, node.bound, dict(node.params))


def simpler_versions(case):
    """Cases one step simpler: a subtree replaced by a child of the same shape, by a
    variable, or by a constant; or one of two outputs dropped."""
    top = tuple(Variable(a.name, path, shape)
                for a in case.args for path, shape, _ in argument_leaves(a))
    if len(case.outputs) == 2:
        for keep in (0, 1):
            yield with_outputs(case, [case.outputs[keep]], keep)
    yield from without_unused_arguments(case)
    for k, out in enumerate(case.outputs):
        for node, scope, in_kink in list(sites(out, top)):
            options = [c for c in node.args if c.shape == node.shape]
            if not in_kink:
                options += [v.node() for v in scope if v.shape == node.shape]
            if node.op != "const":
                options.append(plain_constant(node.shape))
            for new in options:
                if new.op == node.op == "var" and new.params == node.params:
                    continue
                outputs = list(case.outputs)
                outputs[k] = replaced(out, node, new)
                yield with_outputs(case, outputs)


def without_unused_arguments(case):
    """The case without an argument that is neither read nor differentiated."""
    nums = (case.argnums,) if isinstance(case.argnums, int) else case.argnums
    for n, arg in enumerate(case.args):
        if n in nums or any(Generator.reads(out, arg.name) for out in case.outputs):
            continue
        renumbered = tuple(m - (m > n) for m in nums)
        argnums = renumbered[0] if isinstance(case.argnums, int) else renumbered
        yield Case(case.seed, case.transform, case.nest, case.args[:n] + case.args[n + 1:],
                   argnums, case.outputs, dict(case.extras))


def with_outputs(case, outputs, keep=None):
    extras = dict(case.extras)
    if keep is not None:  # one output of two: its part of the (co)tangents
        for key in ("cotangent", "outer_tangent"):
            if key in extras:
                extras[key] = extras[key][keep]
    return Case(case.seed, case.transform, case.nest, case.args, case.argnums,
                outputs, extras)


def size(case):
    return sum(1 for _ in case.nodes())


def shrink(case, category, budget=400):
    """Greedily simplify the case while it keeps failing in the same category."""
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for simpler in simpler_versions(case):
            if size(simpler) >= size(case) and len(simpler.outputs) == len(case.outputs) \
                    and len(simpler.args) == len(case.args):
                continue
            tries += 1
            try:
                outcome = check(simpler)
            except Exception:  # noqa: BLE001  (an invalid program is no simpler case)
                continue
            if outcome.category == category:
                case, improved = simpler, True
                break
            if tries >= budget:
                break
    return case


# ---------------------------------------------------------------------------------------
# Printing a case
# ---------------------------------------------------------------------------------------

def value_text(value):
    if isinstance(value, tuple):
        return "(" + ", ".join(value_text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {value_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    return array_text(value)


def transform_text(case):
    """The call of the transform, as Python."""
    names = [a.name for a in case.args]
    call_args = ", ".join(names)
    t, x = case.transform, case.extras
    if t in ("grad", "value_and_grad", "jacrev", "jacfwd", "hessian"):
        holomorphic = ", holomorphic=True" if x.get("holomorphic") else ""
        return f"{t}(f, argnums={case.argnums!r}{holomorphic})({call_args})"
    nums = (case.argnums,) if isinstance(case.argnums, int) else case.argnums
    diff = [names[n] for n in nums]
    if len(diff) == len(names):
        g, lines = "f", []
    else:
        g = "g"
        lines = [f"g = lambda {', '.join(diff)}: f({call_args})"]
    primals = ", ".join(diff)
    if t == "jvp":
        return "\n".join(lines + [f"jvp({g}, ({primals},), {value_text(x['tangents'])})"])
    if t == "vjp":
        return "\n".join(lines + [f"out, vjp_fn = vjp({g}, {primals})",
                                  f"out, vjp_fn({value_text(x['cotangent'])})"])
    if x["vjp_inside"]:
        lines.append(f"pulled = lambda c: vjp({g}, {primals})[1](c)")
    else:
        lines += [f"vjp_fn = vjp({g}, {primals})[1]", "pulled = lambda c: vjp_fn(c)"]
    cot = value_text(x["cotangent"])
    if x["outer"] == "jvp":
        lines.append(f"jvp(pulled, ({cot},), ({value_text(x['outer_tangent'])},))")
    elif x["outer"] == "grad":
        lines.append(f"grad(lambda c: weighted_total(pulled(c), "
                     f"{value_text(x['weights'])}))({cot})   # sum(leaf * weight)")
    else:
        lines.append(f"{x['outer']}(pulled)({cot})")
    return "\n".join(lines)


def describe_case(case):
    """The whole case as Python: the program, its arguments, and the transform."""
    names = ", ".join(a.name for a in case.args)
    outs = [describe(o) for o in case.outputs]
    body = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    lines = [f"# seed {case.seed}: {case.transform}, {case.nest} inner transform(s)",
             f"def f({names}):", f"    return {body}"]
    lines += [f"{a.name} = {value_text(a.value)}   # {a.kind}" for a in case.args]
    lines.append(transform_text(case))
    return "\n".join(lines)


def report(case, outcome):
    """What a failure message shows: the program, the transform, both results."""
    lines = [describe_case(case), f"outcome: {outcome.kind}: {outcome.detail}"]
    if outcome.kind == "wrong":
        lines.append(f"chainrule: {outcome.ours!r}")
    lines.append(f"JAX:       {outcome.theirs!r}")
    return "\n".join(lines)

