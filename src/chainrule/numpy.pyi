# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.numpy with the module below.
from chainrule.api.numpy import *
from chainrule.api.numpy import __getattr__ as __getattr__
