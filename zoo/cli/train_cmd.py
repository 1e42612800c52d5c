"""``zoo train NAME [options]``: train any model whose architecture has a recipe."""

from __future__ import annotations

import argparse
import sys

from zoo.errors import UnknownNameError

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train a model by name (zoo train NAME --help lists its options)",
        add_help=False,
    )
    p.add_argument("name", nargs="?", help="model name, e.g. seq2seq+luong-general")
    p.set_defaults(run=run, passthrough=True)


def run(args: argparse.Namespace) -> int:
    from zoo.cli.common import parse_overrides
    from zoo.naming.registry import default_registry
    from zoo.naming.resolve import architecture_of
    from zoo.naming.spec import import_factory
    from zoo.training.recipes import DefaultsFormatter, show_defaults

    if args.name is None or args.name in ("-h", "--help"):
        print("usage: zoo train NAME [options]   (zoo train NAME --help for the options of NAME)")
        return 0
    registry = default_registry()
    arch = architecture_of(registry, args.name)
    if arch.recipe is None:
        raise UnknownNameError(f"{arch.name!r} has no training recipe; train it from Python with zoo.train")
    recipe = import_factory(arch.recipe, plugin=arch.plugin)
    parser = argparse.ArgumentParser(
        prog=f"zoo train {args.name}", description=arch.summary, formatter_class=DefaultsFormatter
    )
    recipe.add_arguments(parser)
    show_defaults(parser, args.name)  # --help: the values of this model, from the registry
    options = parser.parse_args(args.rest)
    from zoo.training.distributed import barrier, start_from_options

    several = start_from_options(options)  # several processes: join the run before any data is read
    from zoo.budget import footprint
    from zoo.training.deadline import time_budget
    from zoo.training.progress import metrics_log

    minutes = getattr(options, "minutes", None)  # --minutes: every zoo.train of the run stops on time
    log_file = getattr(options, "log_file", None)  # --log-file: every training loop of the run writes to it
    scale = getattr(recipe, "memory_footprint", 4.0)  # parameters, gradients, Adam's two moments
    held = f"training {args.name} holds {scale:g}x its parameters (with gradients and optimiser state)"
    with time_budget(minutes * 60 if minutes is not None else None), metrics_log(log_file), footprint(scale, held):
        path = recipe.train(args.name, options, parse_overrides(options.set))
    if several is not None:
        barrier("zoo train: saved")  # process 0 wrote the file
    if several is not None and several.index != 0:
        print(f"process {several.index} of {several.count} done: process 0 saved {path}", file=sys.stderr)
        return 0
    print(f"saved {path}", file=sys.stderr)
    return 0
