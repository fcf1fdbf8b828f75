# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.torch_random with the module below.
from chainrule.api.torch_random import *
