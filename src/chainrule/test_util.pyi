# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.test_util with the module below.
from chainrule.compat.jax_test_util import *
