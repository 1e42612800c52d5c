"""Training: the loop, checkpoints, the mesh, selection on a dev set, recipes behind ``zoo train``."""
