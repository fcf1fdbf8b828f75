# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd with the module below.
from chainrule.compat.autograd import *
