"""Fitting PPMI-SVD: shifted PPMI of the counts, then a truncated SVD (exact or randomised)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from zoo.plugin_api import DataError, TrainingDiverged, pmi_matrix
from zoo_ppmi.model import PPMISVD
from zoo_ppmi.settings import SOLVERS

__all__ = ["SOLVERS", "fit_ppmi_svd", "randomized_svd", "truncated_svd"]


def randomized_svd(
    matrix: sp.spmatrix, rank: int, *, oversample: int = 20, power_iterations: int = 5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top `rank` singular triplets by randomised range finding with power iterations.

    Costs ``2 (power_iterations + 1)`` sparse products with a ``[V, rank + oversample]``
    block; exact to working precision for well-separated spectra.

    ??? cite

        Halko, Martinsson & Tropp 2011, Finding Structure with Randomness
        (SIAM Review), Algorithm 4.4.
    """
    rng = np.random.default_rng(seed)
    width = min(rank + oversample, min(matrix.shape))
    basis, _ = np.linalg.qr(matrix @ rng.standard_normal((matrix.shape[1], width)))
    for _ in range(power_iterations):
        basis, _ = np.linalg.qr(matrix.T @ basis)
        basis, _ = np.linalg.qr(matrix @ basis)
    small = np.asarray((matrix.T @ basis).T)  # [width, V]
    left, values, right = np.linalg.svd(small, full_matrices=False)
    return (basis @ left)[:, :rank], values[:rank], right[:rank]


def truncated_svd(
    matrix: sp.spmatrix, rank: int, *, solver: str = "arpack", seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U [V, r], s [r], Vt [r, V])``, singular values descending, signs fixed
    so that each left singular vector's largest entry is positive (deterministic)."""
    if solver not in SOLVERS:
        raise DataError(f"unknown SVD solver {solver!r}; choose one of {SOLVERS}")
    if not 0 < rank < min(matrix.shape):
        raise DataError(f"the rank must be in 1..{min(matrix.shape) - 1}, got {rank}")
    if solver == "arpack":
        start = np.random.default_rng(seed).standard_normal(min(matrix.shape))
        left, values, right = spla.svds(matrix, k=rank, v0=start, solver="arpack")
        order = np.argsort(-values)
        left, values, right = left[:, order], values[order], right[order]
    else:
        left, values, right = randomized_svd(matrix, rank, seed=seed)
    signs = np.sign(left[np.argmax(np.abs(left), axis=0), np.arange(rank)])
    signs[signs == 0] = 1.0
    return left * signs, values, right * signs[:, None]


def fit_ppmi_svd(
    model: PPMISVD,
    counts: sp.spmatrix,
    *,
    solver: str = "arpack",
    seed: int = 0,
    on_phase: Callable[[str, float, dict[str, Any]], None] | None = None,
) -> PPMISVD:
    """Set `model`'s factors from co-occurrence `counts` ``[V, V]`` (per its hyperparameters).

    `on_phase(name, seconds, sizes)` is called after each of the two phases: ``"ppmi"``
    (sizes: ``nnz``, the positive entries kept) and ``"svd"`` (``dim``, ``solver``,
    ``top_singular_value``).

    Raises `TrainingDiverged` if the factors are not finite (nothing is returned then)."""
    p = model.spec.params
    if counts.shape != (model.num_embeddings, model.num_embeddings):
        raise DataError(f"counts of shape {counts.shape} for a vocabulary of {model.num_embeddings}")
    if not np.isfinite(sp.csr_matrix(counts).data).all():
        raise DataError("the co-occurrence counts hold NaN or infinite values; count them again (cooccurrence_matrix)")
    report = on_phase if on_phase is not None else lambda *a: None
    start = time.perf_counter()
    matrix = pmi_matrix(counts, cds=p["cds"], shift=p["shift"], positive=True)
    if matrix.nnz == 0:
        raise DataError("the shifted PPMI matrix is empty: lower `shift` or use a larger corpus")
    report("ppmi", time.perf_counter() - start, {"nnz": int(matrix.nnz)})
    start = time.perf_counter()
    left, values, right = truncated_svd(matrix, model.embedding_size, solver=solver, seed=seed)
    sizes = {"dim": int(model.embedding_size), "solver": solver, "top_singular_value": float(values[0])}
    report("svd", time.perf_counter() - start, sizes)
    word = left * values ** p["eig"]
    context = right.T * values ** (1.0 - p["eig"])
    if not (np.isfinite(word).all() and np.isfinite(context).all()):
        raise TrainingDiverged(
            f"PPMI-SVD: the factors became NaN or infinite (singular values {values.min():g} .. {values.max():g}, "
            f"eig={p['eig']}); nothing was returned or saved. Use eig in [0, 1], a smaller rank (embedding_size), "
            "or check the counts for bad values."
        )
    return eqx.tree_at(
        lambda m: (m.word, m.context), model, (jnp.asarray(word, jnp.float32), jnp.asarray(context, jnp.float32))
    )
