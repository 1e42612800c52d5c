"""A plugin module that ends the process at import, as a script-like plugin would."""

import sys

sys.exit("this plugin needs a GPU")
