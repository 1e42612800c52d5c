"""``zoo demo [NAME]``: run a built-in demonstration (default: sequence reversal)."""

from __future__ import annotations

import argparse

from zoo.errors import UnknownNameError, close_matches

__all__ = ["register"]

DEFAULT = "reversal"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="train and show a model on built-in data (default: reversal)", add_help=False)
    p.add_argument("name", nargs="?", default=DEFAULT)
    p.set_defaults(run=run, passthrough=True)


def run(args: argparse.Namespace) -> int:
    from zoo.naming.registry import default_registry
    from zoo.naming.spec import import_factory

    registry = default_registry()
    if args.name in ("-h", "--help", "list"):
        print("zoo demo NAME [options]; demos:")
        for name, entry in sorted(registry.demos.items()):
            print(f"  {name:12s} {entry.summary}")
        return 0
    entry = registry.demos.get(args.name)
    if entry is None:
        raise UnknownNameError(
            f"no demo {args.name!r}; demos: {sorted(registry.demos)}." + close_matches(args.name, registry.demos)
        )
    return int(import_factory(entry.run, plugin=entry.plugin)(args.rest) or 0)
