"""``chainrule graph``: an arithmetic expression parsed into a graph of Values, backward
run through it, the gradients printed (each chain-rule step too, with --explain) and the
graph printed as text, or drawn into the file ``-o`` names (with Graphviz; as text for
``-o graph.txt``, and printed where Graphviz is missing). The picture and the explanation name the nodes alike."""

import math

from .cli_messages import print_error, print_warning

__all__ = ["run"]


def run(args):
    """Run ``chainrule graph``; returns the exit status."""
    from .expression import ExpressionError, parse_assignments, parse_expression, unused
    from .viz import GraphvizNotFound, draw_graph, render_graph
    try:
        values = parse_assignments(args.at)
        root, variables = parse_expression(args.expression, values)
    except ExpressionError as err:
        return print_error("graph", err)
    problem = args.output is not None and _picture_problem(args.output)
    if problem:  # before any output, so a typo in the path costs nothing
        return print_error("graph", f"-o {args.output}: {problem}")
    if root._prev:  # the expression's name in the explanation and the picture
        root.label = next(name for name in ("f", "g", "h", "out", "output_")
                          if name not in variables)
    try:
        root.backward(explain=variables if args.explain else False)
    except ValueError as err:
        return print_error("graph", err)
    for name, value in variables.items():
        # as an infinite --at value is refused, so is an infinite result of one
        if not math.isfinite(value.grad):
            return print_error("graph", f"d/d{name} is {value.grad!r}: the gradient "
                                        f"at {args.at} is too large for a float")
    print(f"value = {root.data!r}")
    not_used = unused(root, variables)
    for name, value in variables.items():
        note = f"   ({name} is not in the expression)" if name in not_used else ""
        print(f"d/d{name} = {value.grad!r}{note}")
    if args.output is None:  # nothing written where the user did not ask for it
        print(draw_graph(root, names=variables, format="text"))
        return 0
    try:
        # named as the explanation names them: the variables, f, then v1, v2, ...
        path = render_graph(root, args.output, names=variables)
    except GraphvizNotFound as err:
        # the policy of `chainrule train`: a picture that cannot be made is a warning
        # once the results are out. What could be written was; the text is also
        # printed, so the graph can be seen without installing anything.
        print(err.text_path.read_text(encoding="utf-8"), end="")
        for written in (err.text_path, err.source_path):
            if written is not None:
                print(f"wrote {written}")
        print_warning("graph", err)
        return 0
    except OSError as err:
        return print_error("graph", f"-o {args.output}: cannot write it: "
                                    f"{err.strerror or err}")
    print(f"wrote {path}")
    return 0


def _picture_problem(output):
    """Why ``-o output`` cannot be written, in the command's words; None if it can."""
    from .viz import RENDER_FORMATS, SOURCE_SUFFIXES, TEXT_SUFFIX
    if output.is_dir():
        return (f"is a folder; expected a file to write, such as "
                f"{output / 'graph.svg'}")
    suffix = output.suffix.lower()
    if suffix not in RENDER_FORMATS and suffix not in SOURCE_SUFFIXES and suffix != TEXT_SUFFIX:
        found = f"from its suffix {output.suffix!r}" if suffix else "without a suffix"
        return (f"cannot tell the picture's format {found}; use .svg, .png, .pdf, "
                f".dot/.gv for the Graphviz source, or .txt for text")
    if not output.parent.is_dir():
        return f"cannot write it: the folder {output.parent} does not exist"
    return None
