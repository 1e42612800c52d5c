"""``zoo eval MODEL_FILE --data FILE [options]``: score a saved model on held-out data.

The model's architecture names a recipe in the registry; a recipe that can
score a model implements the optional `zoo.training.recipes.EvaluatingRecipe` methods:
``add_eval_arguments(parser)`` for its own options and ``evaluate(model,
options) -> {metric: value}`` (perplexity for language models, accuracy for
taggers and classifiers, ...). This command only loads, dispatches and prints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from zoo.errors import UnknownNameError
from zoo.training.recipes import DefaultsFormatter, add_encoding_argument

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="score a saved model on a data file (zoo eval MODEL_FILE --help lists its options)",
        add_help=False,
    )
    p.add_argument("model", nargs="?", help="a .safetensors file written by zoo")
    p.set_defaults(run=run, passthrough=True)


def eval_parser(prog: str, recipe: object) -> argparse.ArgumentParser:
    """The options of ``zoo eval``: the common ones plus the recipe's own."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Score a saved model on held-out data.", formatter_class=DefaultsFormatter
    )
    parser.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    add_encoding_argument(parser)
    add_arguments = getattr(recipe, "add_eval_arguments", None)
    if add_arguments is not None:
        add_arguments(parser)
    if not any(action.dest == "data" for action in parser._actions):  # unless the recipe adds it (its own help)
        parser.add_argument("--data", type=Path, required=True, metavar="FILE", help="the evaluation data file")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.model is None or args.model in ("-h", "--help"):
        print("usage: zoo eval MODEL_FILE --data FILE [options]   (zoo eval MODEL_FILE --help for its options)")
        return 0
    from zoo.building.weights import load
    from zoo.naming.registry import default_registry
    from zoo.naming.spec import import_factory

    model = load(args.model)
    arch = default_registry().architectures[model.spec.arch]
    recipe = import_factory(arch.recipe, plugin=arch.plugin) if arch.recipe else None
    if recipe is None or not callable(getattr(recipe, "evaluate", None)):
        raise UnknownNameError(
            f"{model.spec.name!r} ({arch.name}) has no evaluation in its recipe; score it from Python instead"
        )
    options = eval_parser(f"zoo eval {args.model}", recipe).parse_args(args.rest)
    metrics = {name: v if isinstance(v, str) else float(v) for name, v in recipe.evaluate(model, options).items()}
    if options.json:
        print(json.dumps({"model": model.spec.name, "data": str(options.data), **metrics}))
    else:
        print(f"{model.spec.name} on {options.data}:")
        width = max((len(name) for name in metrics), default=0)
        for name, value in metrics.items():
            print(f"  {name.ljust(width)}  {value if isinstance(value, str) else f'{value:.6g}'}")
    return 0
