"""``zoo train ppmi-svd --data FILE --out vectors.safetensors [options]``.

Training has no iterations: it counts the vocabulary and the co-occurrences, takes their
shifted PPMI and its truncated SVD. Each phase is a line on standard error (unless
``--quiet``) and, with ``--log-file``, a record of the metrics log: ``phase``, ``seconds``
and its sizes (``vocab_size``; ``nnz`` of the counts and of the PPMI matrix; ``dim``,
``solver`` and ``top_singular_value`` of the SVD), with ``elapsed`` and ``time``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import zoo
from zoo.plugin_api import (
    WEIGHTINGS,
    Progress,
    add_corpus_arguments,
    add_hyperparameter_argument,
    add_log_argument,
    cooccurrence_matrix,
    corpus_vocabulary,
    held_out_line,
    open_log,
    output_path,
    resolve_spec,
    seed_type,
)
from zoo_ppmi.settings import SOLVERS

__all__ = ["PPMIRecipe", "recipe"]


class PPMIRecipe:
    """Count co-occurrences over a corpus, then factorise their shifted PPMI."""

    memory_footprint = 1.0  # the factorised vectors; the counts are sized by the corpus

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
        add_log_argument(parser)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        resolve_spec(name, options, overrides)
        with open_log(None) as log, Progress(total=4, unit="phase", show=False, log=log) as records:
            return self._train(name, options, overrides, _Phases(records, quiet=options.quiet))

    def _train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any], phases: _Phases) -> Path:
        import jax

        from zoo_ppmi.svd import fit_ppmi_svd

        vocab = corpus_vocabulary(options)
        model = zoo.build(name, key=jax.random.key(options.seed), vocab={"words": vocab}, **overrides)
        p = model.spec.params
        phases.done("vocabulary", {"vocab_size": len(vocab)}, f"vocabulary: {len(vocab)} words")
        if not options.quiet:
            whole = "the SVD factorises the counts of the whole corpus in one pass: nothing to choose or stop"
            print(held_out_line(0, "text", whole), file=sys.stderr)
        counts = cooccurrence_matrix(
            list(options.corpus),
            vocab,
            window=p["window"],
            weighting=p["weighting"],
            tokenizer=options.tokenizer,
            encoding=options.encoding,
        )
        phases.done("cooccurrences", {"nnz": int(counts.nnz)}, f"co-occurrences: {counts.nnz} non-zero")
        model = fit_ppmi_svd(model, counts, solver=options.solver, seed=options.seed, on_phase=phases.timed)
        return zoo.save(model, options.out)


_SHOWN = {"ppmi": "PPMI: {nnz} positive entries", "svd": "SVD: {dim} dimensions ({solver})"}
"""The line of each phase that `zoo_ppmi.svd.fit_ppmi_svd` reports, from its sizes."""


class _Phases:
    """The phases of a run: a line each on standard error (unless quiet), a record each in the
    metrics log of `records` (a `Progress` that shows nothing itself)."""

    def __init__(self, records: Progress, *, quiet: bool) -> None:
        self.records, self.quiet = records, quiet
        self.started = self.last = time.perf_counter()

    def done(self, phase: str, sizes: dict[str, Any], shown: str) -> None:
        """`phase` ended now, `sizes` its figures: the record, and the line ``shown (time so far)``."""
        now = time.perf_counter()
        self.timed(phase, now - self.last, sizes, shown=shown)

    def timed(self, phase: str, seconds: float, sizes: dict[str, Any], *, shown: str | None = None) -> None:
        """`phase` took `seconds` (`zoo_ppmi.svd.fit_ppmi_svd`'s ``on_phase``)."""
        self.records.interval({"phase": phase, "seconds": round(seconds, 3), **sizes}, "", phase)
        self.last = time.perf_counter()
        if not self.quiet:
            text = shown if shown is not None else _SHOWN[phase].format(**sizes)
            print(f"{text} ({self.last - self.started:.1f}s)", file=sys.stderr, flush=True)


recipe = PPMIRecipe()
