# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd.numpy with the module below.
from chainrule.compat.autograd.numpy import *
from chainrule.compat.autograd.numpy import __getattr__ as __getattr__
