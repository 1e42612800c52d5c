"""Learning curves: metrics of a training run's log against its steps (or elapsed time)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from zoo.errors import DataError

__all__ = ["BOOKKEEPING", "curve_metrics", "plot_curve"]

BOOKKEEPING = ("step", "epoch", "words", "elapsed", "time", "units_per_s", "lr", "unit")
"""Keys of a metrics record that are not curves by default (`zoo.training.progress`)."""


def curve_metrics(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The numeric keys of `records` worth drawing by default, in order of first appearance:
    the loss and every evaluation score (not the step, rate, time or learning rate)."""
    names: list[str] = []
    for record in records:
        for name, value in record.items():
            if name not in BOOKKEEPING and name not in names and _number(value):
                names.append(name)
    return names


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def plot_curve(
    records: Sequence[Mapping[str, Any]],
    path: str | os.PathLike,
    *,
    metrics: Sequence[str] | None = None,
    x: str = "step",
    title: str | None = None,
) -> Path:
    """Draw each of `metrics` (default `curve_metrics`) against `x` (``step`` or ``elapsed``),
    one panel a metric sharing the x axis, and save a PNG at `path`.

    A record without a metric (a training interval has no ``bleu``) adds no point to it;
    a null value (a NaN loss) is a gap. **Returns:** the path written. Needs matplotlib
    (``pip install 'zoo[plot]'``).
    """
    names = list(metrics) if metrics else curve_metrics(records)
    if not names:
        raise DataError("the log has no metrics to draw (no record holds a loss or a score)")
    missing = [m for m in names if not any(m in r for r in records)]
    if missing:
        found = ", ".join(curve_metrics(records)) or "none"
        raise DataError(f"no record of the log has {', '.join(missing)}; its metrics are: {found}")
    if not any(_number(r.get(x)) for r in records):
        other = next((o for o in ("step", "elapsed") if o != x and any(_number(r.get(o)) for r in records)), None)
        hint = f"; draw against {other} instead (zoo plot curve --x {other})" if other else ""
        raise DataError(f"no record of the log has a number for {x!r} to draw against{hint}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise DataError("plotting needs matplotlib: pip install 'zoo[plot]'") from error
    fig, axes = plt.subplots(len(names), 1, sharex=True, figsize=(7, 1.2 + 2.2 * len(names)), dpi=120, squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        points = [(r.get(x), r[name]) for r in records if name in r and _number(r.get(x))]
        xs = [p[0] for p in points]
        ys = [p[1] if _number(p[1]) else float("nan") for p in points]
        ax.plot(xs, ys, marker="o" if len(points) < 30 else None, markersize=3, linewidth=1.2)
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("elapsed (s)" if x == "elapsed" else x)
    if title:
        axes[0, 0].set_title(title, fontsize=9)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
