"""``chainrule data fetch``: a data set downloaded where a network is (MNIST's four IDX
files, checked against their sizes and SHA-256)."""

from .cli_messages import print_error

__all__ = ["run"]


def run(args):
    """Run ``chainrule data fetch``; returns the exit status."""
    from ..data import fetch_mnist
    kwargs = {"base_url": args.base_url} if args.base_url else {}
    if args.to.exists() and not args.to.is_dir():
        return print_error("data fetch", f"--to {args.to}: is a file, expected a folder")
    try:
        paths = fetch_mnist(args.to, **kwargs)
    except (OSError, ValueError) as err:
        return print_error("data fetch", _os_error_text(err))
    print("MNIST is in " + str(args.to) + (f" ({len(paths)} files)" if paths else ""))
    return 0


def _os_error_text(err):
    """An OSError as words: "PATH: Permission denied", not "[Errno 13] ..."."""
    if isinstance(err, OSError) and err.strerror:
        return f"{err.filename}: {err.strerror}" if err.filename else err.strerror
    return str(err)
