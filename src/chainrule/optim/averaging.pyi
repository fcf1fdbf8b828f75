# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.optim.averaging with the module below.
from chainrule.nn.optim.averaging import *
