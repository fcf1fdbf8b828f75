# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.lax.linalg with the module below.
from chainrule.compat.jax_lax.linalg import *
