# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.autograd.user_space with the module below.
from chainrule.compat.autograd.user_space import *
