# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.predicates with the module below.
from chainrule.rules.predicates import *
