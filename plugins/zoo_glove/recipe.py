"""``zoo train glove --data FILE --out vectors.safetensors [options]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import zoo
from zoo.plugin_api import (
    WEIGHTINGS,
    add_alias,
    add_checkpoint_arguments,
    add_corpus_arguments,
    add_hyperparameter_argument,
    add_log_argument,
    argument_type,
    cooccurrence_matrix,
    corpus_vocabulary,
    held_out_line,
    last_kept_line,
    output_path,
    resolve_spec,
    seed_type,
)

__all__ = ["GloVeRecipe", "recipe"]


def add_vector_arguments(parser: argparse.ArgumentParser) -> None:
    """Output, seed, quiet and ``--set`` options."""
    parser.add_argument("--out", type=output_path, required=True, help="where to save the model (.safetensors)")
    parser.add_argument("--seed", type=seed_type, default=0, help="initialisation and shuffling seed")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--set", action="append", metavar="KEY=VALUE", default=[], help="any hyperparameter of the model"
    )


class GloVeRecipe:
    """Count co-occurrences over a corpus, then fit GloVe with AdaGrad."""

    memory_footprint = 3.0  # the tables, their AdaGrad accumulators and gradients

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_corpus_arguments(parser)
        add_vector_arguments(parser)
        add_hyperparameter_argument(parser, "--dim", "embedding_size", type=int, help="vector size")
        add_hyperparameter_argument(parser, "--window", "window", type=int, help="context window")
        add_hyperparameter_argument(
            parser, "--weighting", "weighting", choices=WEIGHTINGS, help="distance weighting (harmonic: 1/d)"
        )
        add_hyperparameter_argument(
            parser,
            "--x-max",
            "x_max",
            type=float,
            help="weighting cut-off x_max: f(x) = min(1, x/x_max)^a; 10 suits corpora of a few M words",
        )
        exponent = add_hyperparameter_argument(
            parser, "--x-exponent", "alpha", type=float, metavar="A", help="weighting exponent a (GloVe's alpha)"
        )
        add_alias(parser, exponent, "--alpha")
        parser.add_argument(
            "--epochs", type=argument_type("[1, inf)"), default=25, help="passes over the co-occurrences (default 25)"
        )
        parser.add_argument(
            "--lr",
            type=argument_type("(0, inf)", float),
            default=0.05,
            help="AdaGrad learning rate (default 0.05; 0.2 fits small corpora faster)",
        )
        parser.add_argument(
            "--batch-size", type=argument_type("[1, inf)"), default=16384, help="entries per step (default 16384)"
        )
        add_checkpoint_arguments(parser, every=5, unit="epochs")
        parser.add_argument(
            "--minutes",
            type=argument_type("(0, inf)", float),
            default=None,
            help="time budget: stop after the epoch in which this many minutes of training ran out, save, and say so",
        )
        add_log_argument(parser)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        resolve_spec(name, options, overrides)
        import jax

        from zoo_glove.train import entries_from_matrix, fit_glove

        say = (lambda *a: None) if options.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
        start = time.perf_counter()
        vocab = corpus_vocabulary(options)
        model = zoo.build(name, key=jax.random.key(options.seed), vocab={"words": vocab}, **overrides)
        p = model.spec.params
        say(f"vocabulary: {len(vocab)} words ({time.perf_counter() - start:.1f}s)")
        say(held_out_line(0, "text", "GloVe fits the co-occurrences of the whole corpus"))
        matrix = cooccurrence_matrix(
            list(options.corpus),
            vocab,
            window=p["window"],
            weighting=p["weighting"],
            symmetric=p["symmetric"],
            tokenizer=options.tokenizer,
            encoding=options.encoding,
        )
        entries = entries_from_matrix(matrix, x_max=p["x_max"], alpha=p["alpha"])
        say(f"co-occurrences: {matrix.nnz} non-zero ({time.perf_counter() - start:.1f}s)")
        del matrix
        model, history = fit_glove(
            model,
            entries,
            epochs=options.epochs,
            batch_size=options.batch_size,
            learning_rate=options.lr,
            key=jax.random.key(options.seed + 1),
            checkpoint=options.checkpoint,
            checkpoint_every=options.checkpoint_every,
            resume=options.resume,
            progress=not options.quiet,
            description=name,
            time_limit=options.minutes * 60 if options.minutes is not None else None,
        )
        if history:
            done, loss = history[-1]["epoch"], f"loss {history[-1]['cost']:.4f}"
            say(last_kept_line(done, options.epochs, "epoch", on_time=done < options.epochs, scores=loss))
        return zoo.save(model, options.out)


recipe = GloVeRecipe()
