"""``zoo plot KIND ...``: figures as PNG files (needs the ``plot`` extra: matplotlib).

Each kind of plot is a light module with ``register(subparsers)``, listed in `PLOTS`.
"""

from __future__ import annotations

import argparse
import importlib

__all__ = ["PLOTS", "register"]

PLOTS: list[str] = ["zoo.cli.plot_attention", "zoo.cli.plot_curve", "zoo.cli.plot_embeddings"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="draw a figure to a PNG file (pip install 'zoo[plot]')")
    kinds = p.add_subparsers(dest="plot", required=True, metavar="KIND")
    for module in PLOTS:
        importlib.import_module(module).register(kinds)
