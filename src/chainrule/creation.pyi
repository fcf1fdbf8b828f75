# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.creation with the module below.
from chainrule.api.creation import *
