# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd.wrap_util with the module below.
from chainrule.compat.autograd.wrap_util import *
