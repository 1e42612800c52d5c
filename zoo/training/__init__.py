"""Training: the loop, checkpoints, the mesh, several processes, dev-set selection, recipes behind ``zoo train``."""
