"""``zoo plot curve metrics.jsonl [--metric loss --metric bleu] [--out curve.png]``: a learning curve."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo.building.files import output_path

__all__ = ["register"]


def register(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser("curve", help="learning curve from a metrics log (zoo train --log-file)")
    p.add_argument("log", type=Path, help="a JSON-lines metrics log written by zoo train --log-file")
    p.add_argument(
        "--metric",
        action="append",
        default=None,
        metavar="NAME",
        help="a metric to draw, one panel each; repeat it (default: the loss and every evaluation score)",
    )
    p.add_argument("--x", choices=("step", "elapsed"), default="step", help="the x axis (default step)")
    p.add_argument("--out", type=output_path, default="curve.png", help="PNG to write (default curve.png)")
    p.add_argument("--title", help="figure title (default: the log's file name)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zoo.errors import DataError
    from zoo.training.progress import read_log
    from zoo.viz.curve import plot_curve

    records = read_log(args.log)
    if not records:
        raise DataError(f"{args.log} holds no records yet")
    path = plot_curve(records, args.out, metrics=args.metric, x=args.x, title=args.title or args.log.name)
    print(f"wrote {path}", file=sys.stderr)
    return 0
