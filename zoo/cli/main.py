"""Entry point of the ``zoo`` command.

Each command lives in its own light module (no JAX at import) with a
``register(subparsers)`` function; heavy imports happen when a command runs.
Commands that set ``passthrough=True`` receive unparsed options in ``args.rest``
(``zoo train NAME`` and ``zoo demo NAME`` parse them by the model's recipe).
Every other command takes its positional arguments anywhere among its options
(``zoo translate MODEL --beam 2 "text"``). A reader that closes standard output
early (``zoo list | head -1``) ends the command quietly with status 141.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from zoo import __version__
from zoo.errors import ZooError
from zoo.training.recipes import DefaultsFormatter

__all__ = ["CLOSED_PIPE", "COMMANDS", "Parser", "build_parser", "main"]

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
    "zoo.cli.store_cmd",
]


CLOSED_PIPE = 141
"""Exit status when standard output is closed early: 128 + SIGPIPE, as the shell reports for `cat`, `grep`, ..."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose commands take positional arguments anywhere among their options.

    A command with positional arguments parses them intermixed with its options
    (`parse_known_intermixed_args`: options first, then the positionals left
    over, in order), so ``zoo translate MODEL --beam 2 "text"`` means what
    ``zoo translate MODEL "text" --beam 2`` does. Parsers that dispatch to
    subcommands or take a remainder (which the standard library cannot
    intermix), and commands that pass unknown options through
    (``passthrough``), parse as usual. Subparsers are of this class too.
    """

    _intermixing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)  # --help states every default
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        if self._intermixing or not self._intermixable():
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # parse_known_intermixed_args calls parse_known_args itself
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def _intermixable(self) -> bool:
        positionals = self._get_positional_actions()
        grouped = {id(a) for group in self._mutually_exclusive_groups for a in group._group_actions}
        return (
            bool(positionals)
            and not self._defaults.get("passthrough", False)
            and all(a.nargs not in (argparse.PARSER, argparse.REMAINDER) and id(a) not in grouped for a in positionals)
        )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
        status = int(args.run(args) or 0)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe is caught below
        return status
    except BrokenPipeError:
        return _stdout_closed()
    except ZooError as error:
        print(f"zoo {args.command}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a file the command reads or writes that the system refuses
        where = f"{error.filename}: " if error.filename else ""
        print(f"zoo {args.command}: error: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"zoo {args.command}: interrupted", file=sys.stderr)
        return 130


def _stdout_closed() -> int:
    """Standard output's reader went away (``zoo list | head -1``): stop quietly with `CLOSED_PIPE`.

    Standard output is pointed at the null device, so that the interpreter's
    final flush of what is still buffered does not report the broken pipe
    again. 141 is the status a shell reports for a tool a closed pipe stopped:
    the output was cut short, and ``set -o pipefail`` scripts see zoo as they
    see `cat` or `grep` there.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # standard output without a descriptor (captured, replaced)
        pass
    return CLOSED_PIPE


if __name__ == "__main__":
    sys.exit(main())
