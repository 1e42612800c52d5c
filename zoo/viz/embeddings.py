"""A 2-D PCA projection of chosen word vectors, drawn as a labelled scatter plot."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zoo.errors import DataError

__all__ = ["pca_2d", "plot_embeddings"]


def pca_2d(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project ``[n, D]`` rows on their first two principal components.

    **Returns:** ``(coords [n, 2], explained [2])``: coordinates of the centred
    rows and the share of variance each component explains. Signs are fixed
    so that each component's largest loading is positive (deterministic).
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or len(x) < 2:
        raise DataError(f"PCA needs at least two vectors, got shape {x.shape}")
    centred = x - x.mean(axis=0)
    _, values, components = np.linalg.svd(centred, full_matrices=False)
    components = components[:2]
    signs = np.sign(components[np.arange(len(components)), np.argmax(np.abs(components), axis=1)])
    components = components * np.where(signs == 0, 1.0, signs)[:, None]
    coords = centred @ components.T
    if coords.shape[1] < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
    variance = values**2
    explained = np.pad(variance[:2] / max(variance.sum(), 1e-300), (0, max(0, 2 - len(variance))))
    return coords, explained


def plot_embeddings(
    words: Sequence[str], vectors: np.ndarray, out: str | os.PathLike, *, title: str | None = None
) -> Path:
    """Draw `words` at the PCA coordinates of their `vectors` ``[n, D]`` and save a PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise DataError("plotting needs matplotlib: pip install 'zoo[plot]'") from error
    coords, explained = pca_2d(vectors)
    fig, ax = plt.subplots(figsize=(8, 6.5), dpi=120)
    ax.scatter(coords[:, 0], coords[:, 1], s=28, color="#2c7fb8")
    span = np.ptp(coords, axis=0).max() or 1.0
    for word, (x, y) in zip(words, coords, strict=True):
        ax.annotate(word, (x, y), xytext=(x + 0.01 * span, y + 0.01 * span), fontsize=10)
    ax.set_xlabel(f"PC 1 ({100 * explained[0]:.0f}% of variance)")
    ax.set_ylabel(f"PC 2 ({100 * explained[1]:.0f}% of variance)")
    ax.set_title(title or f"Word vectors, PCA projection ({len(words)} words)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out
