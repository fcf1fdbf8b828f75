# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.custom_derivatives with the module below.
from chainrule.transforms.custom_derivatives import *
