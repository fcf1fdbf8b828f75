# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd.functional with the module below.
from chainrule.compat.torch_autograd_functional import *
