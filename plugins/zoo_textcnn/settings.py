"""The recipe's option values, light to import (no JAX), so ``zoo train textcnn`` parses and
refuses its options before the model code is loaded."""

from __future__ import annotations

__all__ = ["LEARNING_RATES", "OPTIMIZERS"]

OPTIMIZERS = ("adam", "adadelta")
"""``adam``: the default; ``adadelta``: Kim's (2014) rule."""
LEARNING_RATES = {"adam": 1e-3, "adadelta": 1.0}
"""Each optimiser's default learning rate."""
