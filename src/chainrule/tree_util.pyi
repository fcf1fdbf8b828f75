# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.tree_util with the module below.
from chainrule.transforms.tree_util import *
