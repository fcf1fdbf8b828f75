"""``torch.cuda``'s questions and seeds, answered as PyTorch answers them on a machine
without a GPU: chainrule computes on the CPU, so there is no CUDA device, and seeding one
does nothing (torch's ``cuda.manual_seed_all`` does nothing there either). A program
that starts as makemore.py does (``torch.manual_seed(s); torch.cuda.manual_seed_all(s)``,
``device = "cuda" if torch.cuda.is_available() else "cpu"``) runs with the import changed.

>>> cr.cuda.is_available(), cr.cuda.device_count()
(False, 0)
>>> cr.cuda.manual_seed_all(3407)     # nothing to seed
"""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available() -> bool:
    """Whether a CUDA device can be used: never, here (torch.cuda.is_available on a
    machine without one).

    >>> cr.cuda.is_available()
    False
    """
    return False


def device_count() -> int:
    """How many CUDA devices there are: 0.

    >>> cr.cuda.device_count()
    0
    """
    return 0


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator: there is none, so nothing happens, as
    in torch without a GPU. ``cr.manual_seed`` seeds the generator chainrule draws from.

    >>> cr.cuda.manual_seed(0)
    """
    int(seed)  # (a seed that is not a number is refused all the same)


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: there is none, so nothing happens.

    >>> cr.cuda.manual_seed_all(0)
    """
    int(seed)
