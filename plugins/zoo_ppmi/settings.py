"""The recipe's option values, light to import (no JAX or SciPy), so ``zoo train ppmi-svd`` parses
and refuses its options before the solvers are loaded."""

from __future__ import annotations

__all__ = ["SOLVERS"]

SOLVERS = ("arpack", "randomized")
"""Truncated SVD solvers: SciPy's ARPACK (exact top-k) or randomized (Halko et al. 2011)."""
