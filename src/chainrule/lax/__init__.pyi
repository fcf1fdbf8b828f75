# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.lax with the module below.
from chainrule.compat.jax_lax import *
from chainrule.compat.jax_lax import __getattr__ as __getattr__
