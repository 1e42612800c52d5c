"""Attention heatmaps: where each output token looked in the source."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["attention_heatmap"]


def attention_heatmap(
    weights: np.ndarray,
    source: Sequence[str],
    target: Sequence[str],
    path: str | Path,
    *,
    title: str | None = None,
    annotate: bool = True,
) -> Path:
    """Draw ``weights [target, source]`` as a heatmap and save it as a PNG.

    **Arguments:**

    - `weights`: row t is the attention of output token t over the source
      positions; rows and columns beyond the token lists are cut off.
    - `source`, `target`: the token labels of the columns and rows.
    - `path`: the PNG to write; `title`: drawn above the map.
    - `annotate`: write each weight in its cell (two decimals).

    **Returns:** the path written. Needs matplotlib (``pip install 'zoo[plot]'``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("attention plots need matplotlib: pip install 'zoo[plot]'") from error
    grid = np.asarray(weights, dtype=np.float64)[: len(target), : len(source)]
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * len(source), 1.0 + 0.45 * len(target)), dpi=120)
    image = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(source)), labels=list(source), rotation=60, ha="right")
    ax.set_yticks(range(len(target)), labels=list(target))
    ax.set_xlabel("source position")
    ax.set_ylabel("output position")
    if annotate:
        for row in range(grid.shape[0]):
            for col in range(grid.shape[1]):
                value = grid[row, col]
                ax.text(
                    col,
                    row,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black" if value > 0.6 else "white",
                )
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
