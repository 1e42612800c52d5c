"""``zoo train ppmi-svd --data FILE --out vectors.safetensors [options]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import jax

import zoo
from zoo.plugin_api import (
    WEIGHTINGS,
    add_corpus_arguments,
    add_hyperparameter_argument,
    cooccurrence_matrix,
    corpus_vocabulary,
    output_path,
    resolve_spec,
    seed_type,
)
from zoo_ppmi.svd import SOLVERS, fit_ppmi_svd

__all__ = ["PPMIRecipe", "recipe"]


class PPMIRecipe:
    """Count co-occurrences over a corpus, then factorise their shifted PPMI."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_corpus_arguments(parser)
        parser.add_argument("--out", type=output_path, required=True, help="where to save the model (.safetensors)")
        parser.add_argument("--seed", type=seed_type, default=0, help="SVD start seed")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")
        parser.add_argument("--set", action="append", metavar="KEY=VALUE", default=[], help="any hyperparameter")
        add_hyperparameter_argument(parser, "--dim", "embedding_size", type=int, help="vector size")
        add_hyperparameter_argument(parser, "--window", "window", type=int, help="context window")
        add_hyperparameter_argument(parser, "--weighting", "weighting", choices=WEIGHTINGS, help="distance weighting")
        add_hyperparameter_argument(
            parser, "--shift", "shift", type=float, metavar="K", help="subtract log K from PMI (1: no shift)"
        )
        add_hyperparameter_argument(parser, "--cds", "cds", type=float, help="context distribution smoothing exponent")
        add_hyperparameter_argument(parser, "--eig", "eig", type=float, help="word vectors U Σ^eig")
        parser.add_argument("--solver", choices=SOLVERS, default="arpack", help="truncated SVD (default arpack)")

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        resolve_spec(name, options, overrides)
        say = (lambda *a: None) if options.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
        start = time.perf_counter()
        vocab = corpus_vocabulary(options)
        model = zoo.build(name, key=jax.random.key(options.seed), vocab={"words": vocab}, **overrides)
        p = model.spec.params
        say(f"vocabulary: {len(vocab)} words ({time.perf_counter() - start:.1f}s)")
        counts = cooccurrence_matrix(
            list(options.corpus),
            vocab,
            window=p["window"],
            weighting=p["weighting"],
            tokenizer=options.tokenizer,
            encoding=options.encoding,
        )
        say(f"co-occurrences: {counts.nnz} non-zero ({time.perf_counter() - start:.1f}s)")
        model = fit_ppmi_svd(model, counts, solver=options.solver, seed=options.seed)
        say(f"SVD done ({time.perf_counter() - start:.1f}s)")
        return zoo.save(model, options.out)


recipe = PPMIRecipe()
