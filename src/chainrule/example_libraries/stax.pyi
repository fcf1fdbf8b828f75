# For type checkers, written by scripts/make_exports.py: at run time
# api/paths.py answers the import of chainrule.example_libraries.stax with the module below.
from chainrule.compat.example_libraries.stax import *
