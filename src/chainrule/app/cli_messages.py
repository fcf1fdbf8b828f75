"""The ``chainrule`` command's words on stderr: one line for an error, one for a warning,
and counts of epochs and steps as the lines say them."""

import sys


def print_error(command, message):
    """``chainrule COMMAND: error: MESSAGE`` on stderr; returns 2, the status of a bad
    argument or input."""
    print(f"chainrule {command}: error: {message}", file=sys.stderr)
    return 2


def print_warning(command, message):
    """``chainrule COMMAND: warning: MESSAGE`` on stderr."""
    print(f"chainrule {command}: warning: {message}", file=sys.stderr)


def count(n, noun):
    """ "1 epoch", "2 epochs" """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
