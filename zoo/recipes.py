"""Recipes: how ``zoo train NAME`` turns command-line options into a training run.

An architecture names its recipe in the registry (``recipe = "module:attr"``).
A recipe adds its own options (``--corpus``, ``--pairs``, ...) to the common
ones below, then trains with `zoo.train` and saves the model. A recipe that
also implements `EvaluatingRecipe` scores saved models with ``zoo eval``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from zoo.files import output_path

__all__ = ["EvaluatingRecipe", "Recipe", "add_common_arguments", "add_encoding_argument", "output_path"]


class Recipe(Protocol):
    """What an architecture's recipe object provides."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this architecture's options (data files, sizes) to `parser`."""
        ...

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        """Train the model `name` with `overrides` as `options` say; return the saved file."""
        ...


class EvaluatingRecipe(Recipe, Protocol):
    """A recipe that can also score a saved model (``zoo eval MODEL_FILE --data FILE``).

    ``zoo eval`` adds ``--data`` (the evaluation file) and ``--json`` itself.
    """

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this architecture's evaluation options (batch size, file format, ...)."""
        ...

    def evaluate(self, model: Any, options: argparse.Namespace) -> Mapping[str, float]:
        """Score `model` on ``options.data``; metric name -> value, printed in this order."""
        ...


def add_common_arguments(parser: argparse.ArgumentParser, *, steps: int, batch_size: int, lr: float) -> None:
    """Options every recipe accepts, with the recipe's defaults."""
    parser.add_argument("--out", type=output_path, required=True, help="where to save the trained model (.safetensors)")
    parser.add_argument("--steps", type=int, default=steps, help=f"optimiser steps (default {steps})")
    parser.add_argument("--batch-size", type=int, default=batch_size, help=f"default {batch_size}")
    parser.add_argument("--lr", type=float, default=lr, help=f"learning rate (default {lr})")
    parser.add_argument("--seed", type=int, default=0, help="parameter and data-order seed")
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        default=[],
        help="a hyperparameter, dotted to scope it: --set encoder.num_layers=2",
    )
    parser.add_argument("--checkpoint", type=output_path, help="training-state file for --resume")
    parser.add_argument("--checkpoint-every", type=int, default=500)
    parser.add_argument("--resume", action="store_true", help="continue from --checkpoint if it exists")
    parser.add_argument("--eval-every", type=int, default=0, help="evaluate every N steps (0: at the end)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_corpus_arguments(parser: argparse.ArgumentParser, *, min_count: int = 5) -> None:
    """Options of recipes that read a text corpus and build a word vocabulary."""
    parser.add_argument(
        "--corpus", type=Path, nargs="+", required=True, help="text file(s), plain or .gz, one sentence a line"
    )
    parser.add_argument(
        "--tokenizer", default=None, help="tokeniser name (default 'words': lowercase Unicode words; see docs)"
    )
    parser.add_argument(
        "--min-count", type=int, default=min_count, help=f"drop words rarer than this (default {min_count})"
    )
    parser.add_argument("--max-vocab", type=int, default=None, help="keep at most this many words (most frequent)")
    add_encoding_argument(parser)


def add_encoding_argument(parser: argparse.ArgumentParser) -> None:
    """``--encoding``: how a command's text files are decoded (``options.encoding``, default UTF-8)."""
    parser.add_argument(
        "--encoding", default="utf-8", help="text encoding of the input files (default utf-8; e.g. latin-1, cp1252)"
    )


def corpus_vocabulary(options: argparse.Namespace) -> Any:
    """Count the corpus of `options` (see `add_corpus_arguments`) and build its word vocabulary."""
    from zoo.data.corpus import build_word_vocab, count_tokens

    counts = count_tokens(list(options.corpus), options.tokenizer, encoding=options.encoding)
    return build_word_vocab(counts, min_count=options.min_count, max_vocab=options.max_vocab)
