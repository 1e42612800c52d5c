"""A plugin module that is slow to import (a heavy dependency imported at the top)."""

import time

from plugin_samples import DOT_COPY, Registers

time.sleep(0.3)

plugin = Registers(DOT_COPY)
