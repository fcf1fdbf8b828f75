from .value import Value
