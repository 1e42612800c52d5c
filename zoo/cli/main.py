"""Entry point of the ``zoo`` command.

Each command lives in its own light module (no JAX at import) with a
``register(subparsers)`` function; heavy imports happen when a command runs.
Commands that set ``passthrough=True`` receive unparsed options in ``args.rest``
(``zoo train NAME`` and ``zoo demo NAME`` parse them by the model's recipe).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from zoo import __version__
from zoo.errors import ZooError

__all__ = ["COMMANDS", "main"]

COMMANDS = [
    "zoo.cli.listing",
    "zoo.cli.train_cmd",
    "zoo.cli.demo_cmd",
    "zoo.cli.eval_cmd",
    "zoo.cli.generate_cmd",
    "zoo.cli.check_cmd",
    "zoo.cli.plot_cmd",
    "zoo.cli.translate_cmd",
    "zoo.cli.vectors_cmd",
    "zoo.cli.tag_cmd",
    "zoo.cli.classify_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zoo",
        description="Word embeddings and classic sequence models on JAX, built by name.",
    )
    parser.add_argument("--version", action="version", version=f"zoo {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.rest = [*getattr(args, "rest", []), *extra]
    try:
        return int(args.run(args) or 0)
    except ZooError as error:
        print(f"zoo {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"zoo {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
