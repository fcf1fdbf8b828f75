# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.jax_nn.attention with the module below.
from chainrule.compat.jax_nn.attention import *
