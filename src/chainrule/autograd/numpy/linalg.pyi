# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd.numpy.linalg with the module below.
from chainrule.compat.autograd.numpy.linalg import *
from chainrule.compat.autograd.numpy.linalg import __getattr__ as __getattr__
