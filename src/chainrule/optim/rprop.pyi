# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.optim.rprop with the module below.
from chainrule.nn.optim.rprop import *
