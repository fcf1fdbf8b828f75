# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.optim.swa_utils with the module below.
from chainrule.nn.optim.swa_utils import *
