"""Arithmetic expressions in named variables, turned into a graph of Values.

    >>> root, variables = parse_expression("x*y + tanh(x)", {"x": 2, "y": 3})
    >>> root.backward()
    >>> variables["y"].grad
    2.0

The text comes from a command line, so it is never run as Python: it is *parsed* with
``ast`` and the tree is walked over a whitelist (numbers, variables, ``pi``, ``e``,
``+ - * / **``, unary ``-`` and ``+``, and a few functions, called as ``tanh(x)`` or
``x.tanh()``). Anything else is refused with an ``ExpressionError`` that names it, before
anything is computed. The walks use explicit stacks, so a deeply nested expression
cannot hit Python's recursion limit.
"""

import ast
import keyword
import math
import operator
import re
import unicodedata
import warnings
from numbers import Real

from ..scalar import value as engine
from ..scalar.floatmath import value_of
from ..scalar.value import Value

__all__ = ["ExpressionError", "parse_expression", "parse_assignments", "unused",
           "FUNCTIONS", "CONSTANTS", "MAX_LENGTH"]

MAX_LENGTH = 10_000

FUNCTIONS = {
    "exp": engine.exp, "log": engine.log, "sqrt": engine.sqrt,
    "sin": engine.sin, "cos": engine.cos, "tanh": engine.tanh,
    "sigmoid": engine.sigmoid, "relu": engine.relu, "abs": engine.absolute,
}
CONSTANTS = {"pi": math.pi, "e": math.e}


def _divide(a, b):
    # Value / Value checks for zero itself; this covers constants, e.g. 1 / (2 - 2).
    if value_of(b) == 0:
        raise ValueError(f"/: division by zero ({value_of(a)!r} / 0)")
    return a / b


BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: _divide, ast.Pow: engine.power}
UNARY = {ast.USub: operator.neg, ast.UAdd: lambda a: a}  # Value has no __pos__

_OPERATOR_SYMBOLS = {
    ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&", ast.Not: "not", ast.Invert: "~",
}
_REFUSED = {  # what to call the constructs people are most likely to try
    ast.Subscript: "subscripts (a[i])",
    ast.Lambda: "lambda expressions", ast.IfExp: "conditional expressions (a if c else b)",
    ast.Compare: "comparisons", ast.BoolOp: "'and' and 'or'",
    ast.NamedExpr: "assignment expressions (:=)", ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings", ast.List: "lists", ast.Tuple: "tuples",
    ast.Set: "sets", ast.Dict: "dicts", ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "generator expressions", ast.Starred: "starred expressions (*a)",
    ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield", ast.Slice: "slices",
}
_ALLOWED = ("allowed: numbers, variables, pi, e, + - * / **, and the functions "
            + ", ".join(FUNCTIONS))


class ExpressionError(ValueError):
    """An expression or an assignment list that cannot be used, with the reason."""


def parse_expression(text, values):
    """Build the graph of the expression ``text``; returns ``(root, variables)``.

    ``values`` maps variable names to numbers (or to existing Values, used as they are).
    ``variables`` maps every given name to its leaf Value, used or not, so after
    ``root.backward()`` each one's ``.grad`` is d root / d variable. A variable shadows
    the constant ``pi`` or ``e`` of the same name.

    Raises ``ExpressionError`` for a syntax error, a construct outside the whitelist, an
    unknown variable, a too long or too deeply nested text, a value outside a
    function's domain (``log(-1)``), or a number or result too large for a float
    (``1e400``, ``10**400``, ``exp(1000)``): as ``parse_assignments`` refuses ``x=inf``,
    an infinity is never a value here.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_expression: expected a str, got {type(text).__name__}")
    variables = _leaves(values)
    # Python would refuse leading blanks ("unexpected indent"); positions in messages
    # count from the first non-blank character.
    text = text.strip()
    tree = _parse(text)
    # Python's parser normalizes identifiers (NFKC), so look names up the same way.
    names = {unicodedata.normalize("NFKC", name): leaf for name, leaf in variables.items()}
    _check(tree, text, names)
    result = _evaluate(tree, text, names)
    return (result if isinstance(result, Value) else Value(result)), variables


def parse_assignments(text):
    """``"x=2, y=3"`` -> ``{"x": 2.0, "y": 3.0}``: the command line's ``--at`` values.

    An empty text gives ``{}``. Raises ``ExpressionError`` for an item that is not
    ``name=number``, a name that is not an identifier, a number that is not finite, or
    a name given twice.
    """
    values = {}
    if not text.strip():
        return values
    for item in text.split(","):
        name, equals, number = (part.strip() for part in item.partition("="))
        if not equals:
            raise ExpressionError(f"expected name=number, got {item.strip()!r} in {text!r}")
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ExpressionError(f"{name!r} is not a valid variable name (in {item.strip()!r}); "
                                  f"a name is a letter or _ followed by letters, digits or _")
        if name in values:
            raise ExpressionError(f"variable {name!r} is given twice in {text!r}")
        try:
            x = float(number)
        except ValueError:
            raise ExpressionError(f"{number!r} is not a number (in {item.strip()!r})") from None
        if not math.isfinite(x):
            raise ExpressionError(f"{name}={number}: the value must be a finite number")
        values[name] = x
    return values


def unused(root, variables):
    """The names in ``variables`` whose Value ``root`` was not computed from (their
    gradient is 0 because they play no part, not because of the numbers).

    >>> root, variables = parse_expression("x * y", {"x": 2, "y": 3, "z": 4})
    >>> unused(root, variables)
    ['z']
    """
    seen, stack = {id(root)}, [root]
    while stack:  # an explicit stack: graphs can be deeper than the recursion limit
        for operand in stack.pop()._prev:
            if id(operand) not in seen:
                seen.add(id(operand))
                stack.append(operand)
    return [name for name, leaf in variables.items() if id(leaf) not in seen]


# --- the three steps: parse, check against the whitelist, evaluate -------------------

def _leaves(values):
    leaves = {}
    for name, x in values.items():
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ExpressionError(f"{name!r} is not a valid variable name")
        if isinstance(x, Value):
            leaves[name] = x
        elif isinstance(x, Real) and not isinstance(x, bool):
            leaves[name] = Value(float(x))
        else:
            raise ExpressionError(f"the value of {name!r} must be a real number, "
                                  f"got {type(x).__name__} {x!r}")
    return leaves


def _parse(text):
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is too long: {len(text):,} characters; "
                              f"the limit is {MAX_LENGTH:,}")
    if not text:
        raise ExpressionError("the expression is empty")
    try:
        with warnings.catch_warnings():  # e.g. SyntaxWarning for (1)(2): we refuse it anyway
            warnings.simplefilter("ignore")
            return ast.parse(text, mode="eval").body
    except SyntaxError as err:
        if err.offset:
            where = f" at line {err.lineno}, column {err.offset}" if "\n" in text \
                else f" at column {err.offset}"
        elif err.msg == "invalid syntax":  # Python's way of saying the text ended early
            where = " at the end of the expression (is something missing?)"
        else:
            where = ""
        raise ExpressionError(f"syntax error{where}: {err.msg}") from None
    except (RecursionError, MemoryError):
        # CPython's parser gives up on deep nesting, and a long flat sum (a + b + ... is
        # nested to the left) is deep: parse its terms one by one, and chain them here
        chain = _long_chain(text)
        if chain is None:
            raise ExpressionError("the expression is nested too deeply") from None
        return chain
    except ValueError as err:  # e.g. an integer literal with over 4300 digits
        raise ExpressionError(f"cannot parse the expression: {err}") from None


_CHAINED = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div}


def _long_chain(text):
    """A long chain of + and - (or of * and /) at the top level, as the tree Python would
    build (nested to the left), from its terms parsed one at a time; None if the text
    is not such a chain or a term is itself too deep."""
    import io
    import tokenize
    if "\n" in text:
        return None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    offsets = [0]  # the start of each line, to turn (row, column) into an offset
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    for operators in (("+", "-"), ("*", "/")):
        depth, previous, cuts = 0, None, []
        for token in tokens:
            if token.string in "([{" and token.type == tokenize.OP:
                depth += 1
            elif token.string in ")]}" and token.type == tokenize.OP:
                depth -= 1
            elif depth == 0 and token.string in operators and previous is not None and (
                    previous.type in (tokenize.NAME, tokenize.NUMBER) or previous.string == ")"):
                cuts.append((offsets[token.start[0] - 1] + token.start[1], token.string))
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                  tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
                previous = token
        if len(cuts) < 2:
            continue
        starts = [0] + [at + 1 for at, _ in cuts]
        ends = [at for at, _ in cuts] + [len(text)]
        try:
            terms = [_term(text, a, b) for a, b in zip(starts, ends)]
        except (SyntaxError, RecursionError, MemoryError):
            return None
        tree = terms[0]
        for (_, op), term in zip(cuts, terms[1:]):
            tree = ast.BinOp(left=tree, op=_CHAINED[op](), right=term, lineno=1,
                             col_offset=0, end_lineno=1, end_col_offset=term.end_col_offset)
        return tree
    return None


def _term(text, start, end):
    """text[start:end] parsed, its nodes placed where they are in the whole text."""
    piece = text[start:end]
    shift = start + len(piece) - len(piece.lstrip())
    term = ast.parse(piece.strip(), mode="eval").body
    for node in ast.walk(term):
        if hasattr(node, "col_offset"):
            node.col_offset += shift
            node.end_col_offset += shift
    return term


def _check(tree, text, names):
    """Refuse anything outside the whitelist; report the leftmost offence.

    A separate pass, so a refused expression computes nothing at all.
    """
    problems = []
    callees = set()  # the function part of calls: judged with their call
    for order, node in enumerate(ast.walk(tree)):  # ast.walk is iterative
        if not isinstance(node, ast.expr) or id(node) in callees:
            continue
        if isinstance(node, ast.Call):
            callees.add(id(node.func))
        found = _problem(node, names)
        if found:
            message, (line, column) = found
            problems.append((line, column, order, message, node))
    if problems:
        line, column, _, message, node = min(problems, key=lambda p: p[:3])
        raise ExpressionError(f"{message} ({_where(text, node, line, column)})")


def _problem(node, names):
    """``(message, (line, byte column))`` if ``node`` is not allowed, else None."""
    at = (node.lineno, node.col_offset)
    if isinstance(node, ast.Constant):
        x = node.value
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return f"the constant {x!r} is not allowed; only numbers are", at
        try:
            too_large = math.isinf(float(x))  # 1e400 reads as inf
        except OverflowError:  # an int beyond a float's range
            too_large = True
        return ("the number is too large for a float", at) if too_large else None
    if isinstance(node, ast.Name):
        if node.id in names or node.id in CONSTANTS:
            return None
        if node.id in FUNCTIONS:
            return f"{node.id!r} is a function: call it, as in {node.id}(x)", at
        given = ", ".join(names) if names else "none"
        return f"unknown variable {node.id!r}; given: {given}", at
    if isinstance(node, ast.BinOp):
        if type(node.op) in BINARY:
            return None
        symbol = _OPERATOR_SYMBOLS.get(type(node.op), type(node.op).__name__)
        return f"the operator {symbol!r} is not allowed; allowed: + - * / **", at
    if isinstance(node, ast.UnaryOp):
        if type(node.op) in UNARY:
            return None
        symbol = _OPERATOR_SYMBOLS.get(type(node.op), type(node.op).__name__)
        return f"the unary operator {symbol!r} is not allowed; allowed: - and +", at
    if isinstance(node, ast.Call):
        return _call_problem(node)
    if isinstance(node, ast.Attribute):
        return (f"attribute access '.{node.attr}' is not allowed; only the methods "
                f"{_methods()} can be called", _attribute_position(node))
    what = _REFUSED.get(type(node), f"{type(node).__name__} expressions")
    return f"{what} are not allowed; {_ALLOWED}", at


def _call_problem(call):
    """Calls are allowed in two forms: f(x) and x.f(), f one of FUNCTIONS."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id not in FUNCTIONS:
            return (f"{func.id!r} is not an allowed function; allowed: {', '.join(FUNCTIONS)}",
                    (func.lineno, func.col_offset))
        name, wanted = f"{func.id}()", 1
    elif isinstance(func, ast.Attribute):
        if func.attr not in FUNCTIONS:
            return (f"'.{func.attr}()' is not an allowed method; allowed: {_methods()}",
                    _attribute_position(func))
        name, wanted = f".{func.attr}()", 0
    else:
        return ("only functions called by name can be called, as in tanh(x) or x.tanh()",
                (call.lineno, call.col_offset))
    at = (call.lineno, call.col_offset)
    if call.keywords:
        keyword_ = call.keywords[0]
        shown = f"{keyword_.arg}=..." if keyword_.arg else "**..."
        return f"keyword arguments ({shown}) are not allowed in {name}", at
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return f"starred arguments (*...) are not allowed in {name}", at
    if len(call.args) != wanted:
        expected = "exactly one argument" if wanted else "no arguments"
        return f"{name} takes {expected}, got {len(call.args)}", at
    return None


def _evaluate(tree, text, names):
    """Compute the checked tree bottom-up with an explicit stack (no recursion)."""
    results = []  # the values of finished subtrees, left to right
    todo = [(tree, False)]
    while todo:
        node, operands_done = todo.pop()
        if isinstance(node, ast.Constant):
            results.append(node.value)  # an int stays an int: x**2 reads "**2"
            continue
        if isinstance(node, ast.Name):
            results.append(names[node.id] if node.id in names else CONSTANTS[node.id])
            continue
        operands = _operands(node)
        if not operands_done:
            todo.append((node, True))
            todo.extend((operand, False) for operand in reversed(operands))
            continue
        args = results[len(results) - len(operands):]
        del results[len(results) - len(operands):]
        try:
            result = _apply(node, args)
            if not math.isfinite(value_of(result)):  # operands are finite: overflow
                raise OverflowError(f"the result is {value_of(result)!r}, too large "
                                    f"for a float")
        except (ValueError, ZeroDivisionError, OverflowError) as err:
            position = _where(text, node, node.lineno, node.col_offset)
            raise ExpressionError(f"cannot evaluate ({position}): {err}") from None
        results.append(result)
    return results[0]


def _operands(node):
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node.func, ast.Name):  # f(x)
        return [node.args[0]]
    return [node.func.value]  # x.f()


def _apply(node, args):
    if isinstance(node, ast.BinOp):
        return BINARY[type(node.op)](*args)
    if isinstance(node, ast.UnaryOp):
        return UNARY[type(node.op)](*args)
    func = node.func
    return FUNCTIONS[func.id if isinstance(func, ast.Name) else func.attr](*args)


# --- reporting -------------------------------------------------------------------------

def _methods():
    return ", ".join(f".{name}()" for name in FUNCTIONS)


def _attribute_position(node):
    """Where the attribute's name starts: the receiver is reported on its own."""
    return node.end_lineno, node.end_col_offset - len(node.attr.encode())


def _where(text, node, line, byte_column):
    """'column 5: `z`': the position in characters (ast counts UTF-8 bytes), 1-based,
    and the offending text, shortened."""
    lines = re.split(r"\r\n|\r|\n", text)
    column = len(lines[line - 1].encode()[:byte_column].decode(errors="ignore")) + 1
    where = f"line {line}, column {column}" if len(lines) > 1 else f"column {column}"
    snippet = ast.get_source_segment(text, node) or ""
    snippet = " ".join(snippet.split())
    if len(snippet) > 40:
        snippet = snippet[:37] + "..."
    return f"at {where}: `{snippet}`"
