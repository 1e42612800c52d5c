"""``zoo train word2vec-skipgram|word2vec-cbow|fasttext|fasttext-cbow --data FILE --out vectors.safetensors``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import zoo
from zoo.plugin_api import (
    add_alias,
    add_checkpoint_arguments,
    add_corpus_arguments,
    add_hyperparameter_argument,
    add_log_argument,
    argument_type,
    corpus_vocabulary,
    held_out_line,
    last_kept_line,
    output_path,
    resolve_spec,
    seed_type,
)
from zoo_word2vec.settings import BACKENDS, check_objective

__all__ = ["JOB_WORDS", "EmbeddingRecipe", "recipe", "switch"]

JOB_WORDS = 10_000
"""Corpus words per job (one kernel call or compiled step); checkpoints fall between jobs."""

# option -> (hyperparameter, type, help, old spellings): each is checked by the model's domain; left out, an
# option keeps the architecture's (or preset's) value, which --help shows
_SETTINGS = {
    "--dim": ("embedding_size", int, "vector size", ()),
    "--window": ("window", int, "context window (words each side)", ()),
    "--negative": ("negative", int, "negative samples per word (0: none, with --hs)", ()),
    "--epochs": ("epochs", int, "passes over the corpus", ()),
    "--sample": ("sample", float, "downsampling threshold of frequent words", ()),
    "--lr": ("alpha", float, "starting learning rate, decayed linearly to --min-lr", ("--alpha",)),
    "--min-lr": ("min_alpha", float, "final learning rate", ("--min-alpha",)),
}


def switch(text: str) -> bool:
    """An on/off option's value: true/false, yes/no, on/off, 1/0 (any case)."""
    value = _SWITCH.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false (or 1/0, yes/no, on/off), got {text!r}")
    return value


_SWITCH = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}

# on/off options: ``--hs`` alone turns hierarchical softmax on, ``--hs false`` off
_SWITCHES = {
    "--hs": ("hs", "hierarchical softmax over a Huffman tree of the word counts (with --negative 0: alone)"),
    "--shrink-windows": ("shrink_windows", "each word draws its window from 1..--window (false: the whole window)"),
}


class EmbeddingRecipe:
    """Count the vocabulary, train with the compiled kernels (or JAX), save one file."""

    memory_footprint = 2.0  # the tables and one working copy (in-place SGD, no optimiser state)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_corpus_arguments(parser)
        parser.add_argument("--out", type=output_path, required=True, help="where to save the model (.safetensors)")
        for flag, (param, kind, text, old) in _SETTINGS.items():
            add_alias(parser, add_hyperparameter_argument(parser, flag, param, type=kind, help=text), *old)
        for flag, (param, text) in _SWITCHES.items():
            add_hyperparameter_argument(
                parser, flag, param, type=switch, nargs="?", const=True, metavar="BOOL", help=text
            )
        parser.add_argument(
            "--threads",
            type=argument_type("[1, inf)"),
            default=None,
            help="CPU threads, and processes that count and encode the corpus (default: all cores)",
        )
        parser.add_argument(
            "--streams",
            type=argument_type("[1, inf)"),
            default=None,
            help="places the corpus is read from at once, as fastText's threads read their shares of the file "
            "(default: 12 for fasttext, as fastText's default threads; 1, file order, for word2vec)",
        )
        parser.add_argument(
            "--backend",
            choices=BACKENDS,
            default="auto",
            help="numba kernels or JAX steps (default auto: numba on the CPU, JAX on an accelerator)",
        )
        parser.add_argument("--seed", type=seed_type, default=0, help="initialisation and sampling seed")
        parser.add_argument("--set", action="append", metavar="KEY=VALUE", default=[], help="any other hyperparameter")
        parser.add_argument(
            "--minutes",
            type=argument_type("(0, inf)", float),
            default=None,
            help="time budget: stop at the first job after this many minutes of training, save, and say so",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        add_log_argument(parser)
        add_checkpoint_arguments(parser, every=1000, unit=f"jobs of {JOB_WORDS:,} words")
        parser.add_argument(
            "--checkpoint-seconds",
            type=argument_type("(0, inf)", float),
            default=None,
            help="also write --checkpoint every S seconds",
        )

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        spec = resolve_spec(name, options, overrides)
        check_objective(spec.params, f"zoo train {name}")  # before the corpus is counted
        import jax

        from zoo_word2vec.fit import fit

        corpus = [str(p) for p in options.corpus]
        vocab = corpus_vocabulary(options)
        model = zoo.build(name, vocab=vocab, key=jax.random.key(options.seed), **overrides)
        print(held_out_line(0, "text", "the vectors train on the whole corpus"), file=sys.stderr)
        model, stats = fit(
            model,
            corpus,
            backend=options.backend,
            threads=options.threads,
            workers=options.threads,
            streams=options.streams,
            seed=options.seed,
            tokenizer=options.tokenizer,
            encoding=options.encoding,
            progress=not options.quiet,
            job_words=JOB_WORDS,
            checkpoint=options.checkpoint,
            checkpoint_every=options.checkpoint_every,
            checkpoint_seconds=options.checkpoint_seconds,
            resume=options.resume,
            time_limit=options.minutes * 60 if options.minutes is not None else None,
        )
        if stats.resumed is not None:
            at = stats.resumed
            print(
                f"resumed from {options.checkpoint}: epoch {at.epoch + 1}, job {at.job}, {at.words:,} words done",
                file=sys.stderr,
            )
        ran = f"numba kernels, {stats.threads} threads" if stats.backend == "numba" else f"{stats.backend} steps"
        loss = f", final loss {stats.history[-1]['loss']:.4f}" if stats.history else ""
        print(
            f"{len(vocab)} words, {stats.words:,} trained in {stats.seconds:.1f}s "
            f"({stats.words_per_s / 1000:.0f}k words/s, {ran}){loss}",
            file=sys.stderr,
        )
        epochs = model.spec["epochs"]
        done = stats.history[-1]["epoch"] if stats.history else epochs
        print(last_kept_line(done, epochs, "epoch", on_time=stats.stopped_on_time), file=sys.stderr)
        return zoo.save(model, options.out)


recipe = EmbeddingRecipe()
