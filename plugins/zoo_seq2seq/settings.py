"""The recipe's option values, light to import (no JAX), so ``zoo train seq2seq...`` parses and
refuses its options before the model code is loaded."""

from __future__ import annotations

__all__ = ["METRICS"]

METRICS = ("bleu", "chrf", "exact_match", "valid_loss")
"""What a validation reports; `Validation` keeps the best by one of them (the loss lowest, the others highest)."""
