# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.func with the module below.
from chainrule.compat.torch_func import *
