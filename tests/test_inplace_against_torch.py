"""Views x in-place writes x autograd, fuzzed against PyTorch (float64, CPU).

A random program starts from three tensors of shape (3, 4): two leaves that require
grad (``p0``, ``p1``) and a constant (``p2``). Each step then does one of:

* a result: ``exp``, ``tanh``, ``sin``, ``relu``, ``sigmoid``, ``abs``, ``clamp``,
  powers, ``clone``, a sum, mean, product, ``softmax``, ``cumsum`` or ``logsumexp``
  along an axis, ``t @ t.T``, or a sum, difference or product of two tensors;
* a view: slices, a row, ``[..., 1]``, ``t()``, ``T``, ``swapaxes``, ``permute``,
  ``reshape``, ``view``, ``flatten``, ``narrow``, ``unsqueeze``, ``squeeze``,
  ``[None]``, a piece of ``chunk`` or ``split``, ``detach()``; made with grad on or
  inside ``no_grad()``, of any tensor, a leaf, a result or another view;
* a write in place into any tensor of the program: ``add_``, ``sub_(alpha=)``,
  ``mul_``, ``div_``, ``zero_``, ``fill_``, ``copy_``, ``+=``, ``-=``, ``*=`` (the
  operand a number, a tensor of the same shape or a row), or ``t[index] = value``
  (an integer, a slice, a (row, slice) pair, an integer array or a boolean mask; the
  value a number or another tensor's entries); with grad on or inside ``no_grad()``;
* a write into the array: ``t.data[index] = v``, or ``t.data = new values``;
* a walk from a weighted sum of one tensor, with ``retain_graph`` or not (so a later
  walk may pass through the same graph again, and the leaves' gradients add up).

It ends with a walk from one of the tensors that require grad.

The oracle is the same program in PyTorch. The draw runs it in PyTorch as it goes (so
each step is one PyTorch accepts the shapes of) and stops at the first step PyTorch
refuses. Then, with chainrule:

* both run to the end: every tensor of the program has PyTorch's values, shape and
  ``requires_grad``, and every leaf PyTorch's ``.grad`` (None where PyTorch has None);
* PyTorch raises: chainrule raises too (at that step or before, with one of the
  errors below), or gives the numbers PyTorch gives when made to allow the program
  (``TorchAllowed``), where PyTorch refused for one of three reasons: a walk through a
  value written after it was saved ("modified by an inplace operation": PyTorch run
  with ``saved_tensors_hooks`` that save a copy of each value), a write with grad on
  through a view made inside ``no_grad()`` (run with that view made of ``detach()``),
  or a write into one of the views ``chunk`` or ``split`` return (the same
  ``narrow``);
* chainrule raises where PyTorch gives a number: allowed only with one of chainrule's
  stated refusals (docs/conventions.md, "Writing after use"): an in-place operation on
  a tensor that requires grad outside ``no_grad()``, a write into values a graph that
  can still be walked saved, a walk after a saved value was written, a second walk of
  a freed graph, and NumPy's own "read-only" for a write straight into such an array.
  Any other error fails the program.

Left out of the draw, each with its own test at the end of this file: a write of a
value that requires grad into a tensor that does not (``c.add_(x)``, ``c.copy_(x)``,
``c[i] = x[i]`` with grad on), which chainrule refuses; and an entry of a vector,
``diagonal``, ``contiguous``, ``real`` and ``view`` of a tensor that is not
contiguous, which behave as PyTorch's. So is ``transpose(a, b)``, which is NumPy's permutation of all the axes in
chainrule (docs/coming-from-pytorch.md); ``split`` is drawn only where it cuts two
pieces of two (its number is a count of pieces in NumPy's meaning, a size in PyTorch's).
A view made inside ``no_grad()`` of a tensor that requires grad is only written into
(``DrawPool``). The named tests at the end also pin each kind of refusal where PyTorch
gives a number.

``CHAINRULE_INPLACE_N=20000`` draws more programs; 1000 run by default (about ten
seconds), the first 100 in ``make test-fast``.
"""

import contextlib
import os
import re

import numpy as np
import pytest
import torch

import chainrule as cr
from seeds_and_tolerances import per_test_generator

COUNT = int(os.environ.get("CHAINRULE_INPLACE_N", "1000"))
SHAPE = (3, 4)
STEPS = (3, 14)  # the number of steps a program draws, before its last walk
RNG = per_test_generator(2026)

# The refusals chainrule states (tensor.py, saved.py, backward.py); any other error
# where PyTorch gives a number, or raises, fails the program.
STATED_REFUSALS = {
    "in-place on a tensor that requires grad": "in-place operations on a tensor that "
                                               "requires grad would make its gradient wrong",
    "setitem on a tensor that requires grad": r"this tensor requires grad, and writing "
                                              r"into it would make its gradient wrong",
    "write into saved values": "are saved by a recorded graph that can still be walked",
    "walk after a saved value was written": "was modified in place after the graph was built",
    "second walk of a freed graph": "walked by an earlier backward",
    "NumPy: read-only array": "assignment destination is read-only|output array is read-only",
}
# PyTorch's refusal of a walk through a value written after it was saved: chainrule
# may give the number PyTorch gives when its saved values are copies instead.
TORCH_MODIFIED = "modified by an inplace operation"
# PyTorch's refusal of a write with grad on through a view made inside no_grad(), as
# ambiguous; chainrule's such view is detach()'s (it does not require grad).
TORCH_NO_GRAD_VIEW = "created in no_grad mode and .*modified inplace with grad mode"
# PyTorch's refusal of a write into (or after a write, of a use of) one of the several
# views chunk() and split() return; the same narrow() is one view, which it allows.
TORCH_MULTIPLE_VIEWS = "function that returns multiple views"


# --- the two libraries, one interface --------------------------------------------------

class Torch:
    name = "torch"
    allowed = False  # (TorchAllowed below)
    no_grad = staticmethod(torch.no_grad)

    @staticmethod
    def tensor(array, requires_grad=False):
        return torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad)

    @staticmethod
    def index(index):
        if isinstance(index, tuple):
            return tuple(Torch.index(part) for part in index)
        return torch.from_numpy(index) if isinstance(index, np.ndarray) else index

    @staticmethod
    def values(t):
        return t.detach().numpy().copy()

    @staticmethod
    def grad(t):
        return None if t.grad is None else t.grad.numpy().copy()

    @staticmethod
    def constant(array):
        return torch.from_numpy(array)


class Chainrule:
    name = "chainrule"
    allowed = False
    no_grad = staticmethod(cr.no_grad)

    @staticmethod
    def tensor(array, requires_grad=False):
        return cr.tensor(np.array(array, dtype=np.float64), requires_grad=requires_grad)

    @staticmethod
    def index(index):
        return index

    @staticmethod
    def values(t):
        return np.array(t.data, dtype=np.float64, copy=True)

    @staticmethod
    def grad(t):
        return None if t.grad is None else np.array(t.grad, copy=True)

    @staticmethod
    def constant(array):
        return array


# --- the steps: (text, step(lib, pool)); a step may append a tensor to the pool ----------

UNARY = {  # any shape
    "exp": lambda t: t.exp(), "tanh": lambda t: t.tanh(), "sin": lambda t: t.sin(),
    "square": lambda t: t * t, "scale": lambda t: t * 1.5, "shift": lambda t: t + 0.5,
    "clone": lambda t: t.clone(), "neg": lambda t: -t, "relu": lambda t: t.relu(),
    "sigmoid": lambda t: t.sigmoid(), "cube": lambda t: t.pow(3), "abs": lambda t: t.abs(),
    "clamp(-0.5, 0.5)": lambda t: t.clamp(-0.5, 0.5),
}
REDUCING = {  # at least one axis
    "sum(0)": lambda t: t.sum(0), "mean(-1)": lambda t: t.mean(-1),
    "prod(-1)": lambda t: t.prod(-1), "softmax(-1)": lambda t: t.softmax(-1),
    "cumsum(0)": lambda t: t.cumsum(0), "logsumexp(-1)": lambda t: t.logsumexp(-1),
}
MATRIX = {"t @ t.T": lambda t: t @ t.T}  # two axes


def _unary(t):
    ops = dict(UNARY)
    if t.ndim >= 1:
        ops |= REDUCING
    if t.ndim == 2:
        ops |= MATRIX
    return ops


BINARY = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b}


def _views(t):
    """The views of a tensor of t's shape (a torch tensor, to ask about contiguity) that
    both libraries make as views of the same memory."""
    views = {"detach": lambda v: v.detach(), "real": lambda v: v.real}
    if t.ndim >= 1:
        views["[0]"] = lambda v: v[0]
    if t.ndim >= 2:  # (torch's flatten() of a vector is the tensor itself, which t.data = a
        views["flatten()"] = lambda v: v.flatten()  # shows)
    if t.ndim >= 1 and t.shape[0] > 1:
        views |= {"[1:]": lambda v: v[1:], "[::2]": lambda v: v[::2],
                  "unsqueeze(0)": lambda v: v.unsqueeze(0),
                  "[None]": lambda v: v[None], "reshape(-1)": lambda v: v.reshape(-1)}
        if t.is_contiguous():
            views["view(-1)"] = lambda v: v.view(-1)
    if t.ndim == 2:
        views |= {"t()": lambda v: v.t(), "swapaxes(0, 1)": lambda v: v.swapaxes(0, 1),
                  "diagonal()": lambda v: v.diagonal(),
                  "permute(1, 0)": lambda v: v.permute(1, 0), "T": lambda v: v.T,
                  "[:, ::2]": lambda v: v[:, ::2], "[..., 1]": lambda v: v[..., 1]}
        if t.shape[1] > 2:
            views["narrow(1, 1, 2)"] = lambda v: v.narrow(1, 1, 2)
        if t.shape[1] % 2 == 0:
            views["chunk(2, 1)[1]"] = lambda v: v.chunk(2, 1)[1]
        if t.shape[1] == 4:  # (two pieces of two: NumPy's meaning of split and torch's)
            views["split(2, 1)[0]"] = lambda v: v.split(2, 1)[0]
    if t.ndim == 3 and t.shape[0] == 1:
        views["squeeze(0)"] = lambda v: v.squeeze(0)
    return views


def _index(rng, shape):
    """An index into a tensor of this shape, and its text: an integer, a slice, a
    (row, slice) pair, an integer array (distinct entries), or a boolean mask."""
    if not shape:
        return Ellipsis, "..."
    n = shape[0]
    kinds = ["int", "slice", "array", "mask"] + (["pair"] if len(shape) >= 2 else [])
    kind = kinds[rng.integers(len(kinds))]
    if kind == "int":
        k = int(rng.integers(n))
        return k, str(k)
    if kind == "slice":
        start = int(rng.integers(n))
        return slice(start, None), f"{start}:"
    if kind == "pair":
        k = int(rng.integers(n))
        return (k, slice(None, None, 2)), f"{k}, ::2"
    if kind == "array":
        rows = rng.permutation(n)[:rng.integers(1, n + 1)]
        return rows, f"{rows.tolist()}"
    mask = rng.random(shape) < 0.5
    return mask, f"mask{mask.astype(int).tolist()}"


def _in_place(method, target, source, alpha):
    """``target.method(source)`` in either library."""
    if method == "add_":
        return target.add_(source)
    if method == "sub_":
        return target.sub_(source, alpha=alpha)
    if method == "mul_":
        return target.mul_(source)
    if method == "div_":
        return target.div_(source)
    if method == "zero_":
        return target.zero_()
    if method == "fill_":
        return target.fill_(source)
    if method == "copy_":
        return target.copy_(source)
    if method == "+=":
        target += source
    elif method == "-=":
        target -= source
    elif method == "*=":
        target *= source
    return target


METHODS = ["add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "+=", "-=", "*=",
           "setitem"]
TENSOR_SOURCES = {"add_", "sub_", "mul_", "copy_", "+=", "-=", "*=", "setitem"}


def _grad_on_or_off(lib, no_grad):
    """Grad on, or inside ``no_grad()``."""
    return lib.no_grad() if no_grad else contextlib.nullcontext()


def _shares_memory(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


class DrawPool(list):
    """PyTorch's tensors while a program is drawn, and the positions of the views made
    inside ``no_grad()`` of a tensor that requires grad. PyTorch says such a view
    requires grad (a leaf whose ``.grad`` stays None), chainrule says it does not
    (test_a_view_made_inside_no_grad_is_detach_in_chainrule_and_a_leaf_in_torch); the
    draw uses one only as the target of a write, where both give the same numbers."""

    def __init__(self, tensors):
        super().__init__(tensors)
        self.views_without_grad = set()

    def operands(self):
        return [j for j in range(len(self)) if j not in self.views_without_grad]

    def requires_grad(self, j):
        return self[j].requires_grad and j not in self.views_without_grad


def _draw_step(rng, pool):
    """One step, drawn from what the (torch) pool holds now: (text, step)."""
    n = len(pool)
    kind = rng.choice(["unary", "binary", "view", "in place", "data", "data =", "backward"],
                      p=[0.14, 0.08, 0.25, 0.37, 0.05, 0.03, 0.08])
    if kind in ("in place", "data", "data ="):
        i = int(rng.integers(n))
    else:
        operands = pool.operands()
        i = operands[rng.integers(len(operands))]
    t = pool[i]
    new = f"p{n}"
    if kind == "unary":
        ops = _unary(t)
        name = list(ops)[rng.integers(len(ops))]
        return f"{new} = p{i}.{name}", lambda lib, p: p.append(ops[name](p[i]))
    if kind == "binary":
        partners = [j for j in pool.operands() if pool[j].shape == t.shape]
        j = partners[rng.integers(len(partners))]
        name = list(BINARY)[rng.integers(len(BINARY))]
        return f"{new} = {name}(p{i}, p{j})", lambda lib, p: p.append(BINARY[name](p[i], p[j]))
    if kind == "view":
        views = _views(t)
        name = list(views)[rng.integers(len(views))]
        no_grad = bool(rng.random() < 0.3)
        view = views[name]

        def make_view(lib, p):
            with _grad_on_or_off(lib, no_grad):
                base = p[i].detach() if no_grad and lib.allowed else p[i]
                p.append(SINGLE_VIEWS[name](base) if lib.allowed and name in SINGLE_VIEWS
                         else view(base))
        if no_grad and t.requires_grad:
            pool.views_without_grad.add(n)
        return f"{new} = p{i}.{name}{' (no_grad)' if no_grad else ''}", make_view
    if kind == "data":
        index, text = _index(rng, tuple(t.shape))
        value = float(rng.uniform(-1.0, 1.0))

        def data_write(lib, p):
            p[i].data[lib.index(index)] = value
        return f"p{i}.data[{text}] = {value:.3f}", data_write
    if kind == "data =":
        values = rng.uniform(-1.0, 1.0, tuple(t.shape))

        def data_assign(lib, p):
            p[i].data = lib.constant(values.copy())
        return f"p{i}.data = (new values)", data_assign
    if kind == "backward":
        grads = [j for j in range(n) if pool.requires_grad(j)]
        if not grads:
            return _draw_step(rng, pool)
        return _walk(rng, pool, grads[rng.integers(len(grads))], bool(rng.random() < 0.5))
    return _draw_in_place(rng, pool, i)


def _leaf_or_view_of_one(t):
    try:
        return t.requires_grad and (t.is_leaf or t._base is not None and t._base.is_leaf)
    except RuntimeError:  # (PyTorch refuses to say, for a view it will refuse to write)
        return False


def _draw_in_place(rng, pool, i):
    t = pool[i]
    method = METHODS[rng.integers(len(METHODS))]
    # a write with grad on into a leaf that requires grad, or a view of one, is refused
    # by both at once: mostly drawn inside no_grad(), so that programs go on
    no_grad = bool(rng.random() < (0.9 if _leaf_or_view_of_one(t) else 0.5))
    alpha = float(rng.choice([1.0, 0.5, -2.0]))
    scalar = float(rng.uniform(0.5, 1.5) * (1 if method == "div_" else rng.choice([-1, 1])))
    # a tensor source: another tensor of t's shape (or of a row of it, broadcast) that
    # shares no memory with t (a copy between overlapping tensors PyTorch refuses),
    # and, with grad on, requires grad only if t does (a value with a gradient written
    # into a tensor without one:
    # test_a_value_that_requires_grad_written_into_a_constant_carries_its_gradient)
    sources = [j for j in pool.operands() if pool[j].shape in (t.shape, t.shape[1:])
               and not _shares_memory(pool[j], t)
               and (no_grad or pool.requires_grad(i) or not pool[j].requires_grad)]
    j = (sources[rng.integers(len(sources))]
         if method in TENSOR_SOURCES and sources and rng.random() < 0.5 else None)
    where = " (no_grad)" if no_grad else ""
    if method == "setitem":
        index, text = _index(rng, tuple(t.shape))
        if j is not None and pool[j].shape != t.shape:
            j = None  # (a row is a source of the in-place operations only)

        def setitem(lib, p):
            with _grad_on_or_off(lib, no_grad):
                value = scalar if j is None else p[j][lib.index(index)]
                p[i][lib.index(index)] = value
        value_text = f"{scalar:.3f}" if j is None else f"p{j}[{text}]"
        return f"p{i}[{text}] = {value_text}{where}", setitem

    def in_place(lib, p):
        with _grad_on_or_off(lib, no_grad):
            _in_place(method, p[i], scalar if j is None else p[j], alpha)
    source = f"{scalar:.3f}" if j is None else f"p{j}"
    return f"p{i} {method} {source}{where}" + (f" alpha={alpha}" if method == "sub_" else ""), \
        in_place


def _walk(rng, pool, i, retain):
    weights = rng.standard_normal(tuple(pool[i].shape))

    def walk(lib, p):
        (p[i] * lib.constant(weights)).sum().backward(retain_graph=retain)
    return f"(p{i} * w).sum().backward(retain_graph={retain})", walk


class Program:
    """Drawn while it runs in PyTorch: the steps up to the first one PyTorch refuses,
    or, if none, up to a last walk."""

    def __init__(self, rng):
        self.leaves = [rng.uniform(-1.0, 1.0, SHAPE) for _ in range(3)]
        self.steps = []
        pool = DrawPool(self.start(Torch))
        self.error = None
        for _ in range(rng.integers(*STEPS)):
            if not self.add(_draw_step(rng, pool), pool):
                break
        else:
            grads = [j for j in range(len(pool)) if pool.requires_grad(j)]
            if grads:
                self.add(_walk(rng, pool, grads[rng.integers(len(grads))], False), pool)
        self.pool = pool  # PyTorch's tensors at the end (or at the step it refused)

    def start(self, lib):
        x, w, c = self.leaves
        return [lib.tensor(x, True), lib.tensor(w, True), lib.tensor(c)]

    def add(self, step, pool):
        self.steps.append(step)
        try:
            step[1](Torch, pool)
        except Exception as err:  # PyTorch refuses: the program ends here
            self.error = err
            return False
        return True

    def run(self, lib):
        """(pool, the number of the step that raised or None, the error or None)."""
        pool = self.start(lib)
        for k, (_, step) in enumerate(self.steps):
            try:
                step(lib, pool)
            except Exception as err:
                return pool, k, err
        return pool, None, None

    def text(self):
        return "\n".join(f"  {k}: {text}" for k, (text, _) in enumerate(self.steps))


def _clone_saved_values():
    return torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t)


def _refusal(err):
    """The name of the stated refusal err is, or None."""
    for name, pattern in STATED_REFUSALS.items():
        if isinstance(err, (RuntimeError, ValueError)) and re.search(pattern, str(err)):
            return name
    return None


def _assert_same(ours, theirs, program):
    where = f"program:\n{program.text()}"
    assert len(ours) == len(theirs), where
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert tuple(a.shape) == tuple(b.shape), f"p{k}: shape\n{where}"
        if k not in program.pool.views_without_grad:
            assert a.requires_grad == b.requires_grad, f"p{k}: requires_grad\n{where}"
        np.testing.assert_allclose(Chainrule.values(a), Torch.values(b), rtol=1e-12,
                                   atol=1e-14, err_msg=f"p{k}: values\n{where}")
    for k in range(3):
        g, h = Chainrule.grad(ours[k]), Torch.grad(theirs[k])
        assert (g is None) == (h is None), f"p{k}.grad: {g} vs torch {h}\n{where}"
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14,
                                       err_msg=f"p{k}.grad\n{where}")


class TorchAllowed(Torch):
    """PyTorch made to allow what it refuses as ambiguous, with the numbers it gives
    otherwise: each view made inside ``no_grad()`` is made of ``detach()`` (a view that
    does not require grad, as chainrule's, which a write with grad on may reach), and
    a piece of ``chunk`` or ``split`` is the same ``narrow`` (one view, which may be
    written, where PyTorch refuses a write into one of several views)."""
    allowed = True


SINGLE_VIEWS = {"chunk(2, 1)[1]": lambda v: v.narrow(1, v.shape[1] // 2, v.shape[1] // 2),
                "split(2, 1)[0]": lambda v: v.narrow(1, 0, 2)}


def check(program):
    """Run the program in chainrule and compare with PyTorch; return what happened: "same
    numbers", "both raise", "chainrule refuses: <which>", or, where PyTorch refused,
    "numbers of PyTorch allowed: <how>"."""
    ours, step, err = program.run(Chainrule)
    if err is not None:
        name = _refusal(err)
        assert name is not None, (f"step {step}: {type(err).__name__}: {err}\n"
                                  f"program:\n{program.text()}")
        return "both raise" if program.error is not None else f"chainrule refuses: {name}"
    if program.error is None:
        _assert_same(ours, program.pool, program)
        return "same numbers"
    message = str(program.error)
    allowed = {TORCH_MODIFIED: "saved values copied", TORCH_NO_GRAD_VIEW: "views detached",
               TORCH_MULTIPLE_VIEWS: "pieces narrowed"}
    how = [allowed[refusal] for refusal in allowed if re.search(refusal, message)]
    assert how, (f"torch raises {type(program.error).__name__}: {program.error}\n"
                 f"chainrule does not\nprogram:\n{program.text()}")
    theirs, again = _torch_allowed(program)
    assert again is None, f"torch allowed: {again}\nprogram:\n{program.text()}"
    _assert_same(ours, theirs, program)
    return f"numbers of PyTorch allowed: {how[0]}"


def _torch_allowed(program):
    """PyTorch's run with saved values copied, as TorchAllowed: the numbers it gives where
    it refuses a walk after a write, a write through its own no_grad view, or a piece of
    ``chunk`` or ``split`` after a write, had it allowed them. (pool, the error or None)"""
    with _clone_saved_values():
        theirs, _, again = program.run(TorchAllowed)
    return theirs, again


OUTCOMES = ({"same numbers", "both raise"}
            | {f"numbers of PyTorch allowed: {how}" for how in ("saved values copied",
                                                                 "views detached",
                                                                 "pieces narrowed")}
            | {f"chainrule refuses: {name}" for name in STATED_REFUSALS})


@pytest.mark.parametrize("seed", [pytest.param(s, marks=[pytest.mark.slow] if s >= 100 else [])
                                  for s in range(COUNT)])
def test_views_and_in_place_writes_match_torch_or_raise(seed):
    assert check(Program(RNG)) in OUTCOMES


# --- named cases: where chainrule differs from PyTorch --------------------------------

def _both(build):
    """build(lib) in PyTorch and in chainrule."""
    return build(Torch), build(Chainrule)


def _write_carrying_a_gradient(how):
    def build(lib):
        x = lib.tensor([1.0, 2.0, 3.0], True)
        c = lib.tensor([1.0, 1.0, 1.0])
        if how == "c[0:3] = x":
            c[0:3] = x
        elif how == "c.copy_(x)":
            c.copy_(x)
        elif how == "c.add_(x)":
            c.add_(x)
        else:
            c *= x
        ((c * c).sum() + x.sum()).backward()
        return lib.grad(x)
    return build


@pytest.mark.parametrize("how", ["c[0:3] = x", "c.copy_(x)", "c.add_(x)", "c *= x"])
def test_a_value_that_requires_grad_written_into_a_constant_is_refused(how):
    """PyTorch makes c part of x's graph (x.grad [3, 5, 7], or [5, 7, 9] for add_);
    chainrule refuses the write, as it refuses every in-place operation that a graph
    would have to record, and names the way that records it. Writing the numbers alone
    (x.detach(), or inside no_grad()) is allowed."""
    theirs = _write_carrying_a_gradient(how)(Torch)
    assert np.all(np.asarray(theirs) > 1)
    with pytest.raises(RuntimeError, match="carries a derivative") as refused:
        _write_carrying_a_gradient(how)(Chainrule)
    assert "\n" not in str(refused.value)
    c = cr.ones(3)
    with cr.no_grad():
        exec(how, {}, {"c": c, "x": cr.tensor([1.0, 2.0, 3.0], requires_grad=True)})
    assert c.requires_grad is False


def _entry_written(lib):
    c = lib.tensor([0.0, 0.0, 0.0])
    entry = c[0]
    entry += 1.0
    return lib.values(c)


def test_an_entry_is_a_view_as_in_torch():
    theirs, ours = _both(_entry_written)
    np.testing.assert_array_equal(ours, theirs)


def _written_through(view):
    def build(lib):
        c = lib.tensor(np.arange(12.0).reshape(3, 4))
        view(c).mul_(-1.0)
        return lib.values(c)
    return build


def test_diagonal_is_a_view_as_in_torch():
    theirs, ours = _both(_written_through(lambda c: c.diagonal()))
    np.testing.assert_array_equal(ours, theirs)


def test_contiguous_of_a_transpose_is_a_copy_as_in_torch():
    theirs, ours = _both(_written_through(lambda c: c.t().contiguous()))
    np.testing.assert_array_equal(ours, theirs)


def test_real_of_a_real_tensor_is_a_view_as_in_torch():
    theirs, ours = _both(_written_through(lambda c: c.real))
    np.testing.assert_array_equal(ours, theirs)


def test_view_of_a_tensor_that_is_not_contiguous_raises_as_in_torch():
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.zeros(3, 4).t().view(-1)
    with pytest.raises(RuntimeError, match="view"):
        cr.zeros(3, 4).t().view(-1)


def test_copy_of_floats_into_an_integer_tensor_truncates_as_in_torch():
    theirs = torch.tensor([1, 2]).copy_(torch.tensor([1.7, -2.2])).tolist()
    assert cr.tensor([1, 2]).copy_(cr.tensor([1.7, -2.2])).tolist() == theirs == [1, -2]


def test_a_write_that_would_drop_information_names_the_operation():
    """Complex into real (torch drops the imaginary part with a warning) and, for the
    arithmetic updates, floats into integers: a one-line error naming the call."""
    with pytest.raises(TypeError, match=r"^x.copy_\(y\): cannot write complex128 values"):
        cr.tensor([1.0, 2.0]).copy_(cr.tensor([1j, 2.0]))
    with pytest.raises(TypeError, match=r"^x.add_\(y\): cannot write float64 values"):
        cr.tensor([1, 2]).add_(cr.tensor([1.5, 2.0]))


def test_a_view_made_inside_no_grad_is_detach_in_chainrule_and_a_leaf_in_torch():
    """PyTorch's view of a tensor that requires grad, made inside no_grad(), requires
    grad and is a leaf whose .grad stays None; chainrule's does not require grad (it is
    detach()'s view). Both give the same gradients to the tensor it is a view of; a walk
    from the view alone finds no graph in chainrule, and fills nothing in PyTorch."""
    def build(lib):
        x = lib.tensor([1.0, 2.0, 3.0], True)
        with lib.no_grad():
            v = x[0:2]
        ((v * v).sum() + (x * x).sum()).backward()
        return v.requires_grad, lib.grad(x), lib.grad(v) if lib is Torch else v.grad
    (theirs_flag, theirs, their_view), (our_flag, ours, our_view) = _both(build)
    np.testing.assert_array_equal(ours, theirs)
    assert (theirs_flag, our_flag) == (True, False)
    assert their_view is None and our_view is None
    x = cr.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with cr.no_grad():
        v = x[0:2]
    with pytest.raises(RuntimeError, match="this tensor does not require grad"):
        (v * v).sum().backward()


# --- named cases: where chainrule refuses and PyTorch gives a number -----------------

def _in_place_on_a_result(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    h = x * 2.0
    h.add_(1.0)
    (h * h).sum().backward()
    return lib.grad(x)


def _no_grad_write_into_a_leaf_a_sum_read(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    y = (x + 1.0).sum()          # add saves nothing of x
    with lib.no_grad():
        x.mul_(2.0)
    y.backward()
    return lib.grad(x)


def _no_grad_write_through_a_view_made_with_grad(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    v = x[0:2]
    with lib.no_grad():
        v.add_(1.0)
    (x * x).sum().backward()
    return lib.grad(x)


def _data_write_after_the_graph(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    y = (x * x).sum()
    x.data[0] = 5.0
    y.backward()
    return lib.grad(x)


def _write_through_detach_of_a_result_then_walk(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    h = x * 2.0                   # multiply by a number saves nothing of h
    d = h.detach()
    d.add_(1.0)
    (h * h).sum().backward()
    return lib.grad(x)


def _write_into_an_input_exp_does_not_save(lib):
    x = lib.tensor([1.0, 2.0, 3.0], True)
    d = x.detach()[0:2]
    y = x.exp().sum()             # exp's rule reads its result, not x
    d[0] = 5.0
    y.backward()
    return lib.grad(x)


REFUSALS = [
    pytest.param(_in_place_on_a_result, r"x.add_\(y\): in-place operations on a tensor "
                 r"that requires grad", id="h.add_ on a result"),
    pytest.param(_no_grad_write_into_a_leaf_a_sum_read, r"x.mul_\(y\): the values of this "
                 r"tensor .* are saved by a recorded graph", id="no_grad x.mul_ after x + 1"),
    pytest.param(_no_grad_write_through_a_view_made_with_grad, r"x.add_\(y\): the values "
                 r"of this tensor .*the result of getitem\) are saved",
                 id="no_grad write through x[0:2]"),
    pytest.param(_data_write_after_the_graph, "assignment destination is read-only",
                 id="x.data[0] = 5 after the graph"),
    pytest.param(_write_through_detach_of_a_result_then_walk, r"backward: the result of "
                 r"multiply was modified in place", id="h.detach().add_ then a walk"),
    pytest.param(_write_into_an_input_exp_does_not_save, r"backward: a tensor of shape "
                 r"\(3,\) used by exp was modified in place", id="write x after exp(x)"),
]


@pytest.mark.parametrize("program, message", REFUSALS)
def test_chainrule_refuses_where_torch_gives_a_number(program, message):
    """chainrule refuses every write a graph could have read (docs/conventions.md),
    where PyTorch checks only the values an operation saved and lets a result be
    written with grad on; each refusal is one line naming the operation."""
    theirs = program(Torch)
    assert theirs is not None and np.all(np.isfinite(theirs))
    with pytest.raises((RuntimeError, ValueError), match=message) as refused:
        program(Chainrule)
    assert _refusal(refused.value) is not None and "\n" not in str(refused.value)


def test_a_write_into_an_expanded_view_is_refused_for_what_it_is():
    """Both libraries refuse a write into expand()'s view (one number stands for many
    entries); chainrule's message says so, in one line."""
    with pytest.raises(RuntimeError):
        torch.ones(3).expand(2, 3).add_(1.0)
    for write in (lambda v: v.add_(1.0), lambda v: v.__setitem__((0, 0), 2.0)):
        with pytest.raises(RuntimeError, match="broadcast view") as refused:
            write(cr.ones(3).expand(2, 3))
        assert "\n" not in str(refused.value)
