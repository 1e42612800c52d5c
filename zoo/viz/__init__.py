"""Figures (needs the ``plot`` extra: matplotlib); each module imports matplotlib only when drawing."""
