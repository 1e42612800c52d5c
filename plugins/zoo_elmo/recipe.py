"""``zoo train elmo --data FILE`` and ``zoo eval ELMO --data FILE`` (forward/backward perplexity)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import zoo
from zoo.plugin_api import (
    DataError,
    Vocab,
    add_alias,
    add_common_arguments,
    add_encoding_argument,
    add_lowercase_arguments,
    add_valid_size_argument,
    argument_type,
    hold_out,
    last_kept_line,
    resolve_spec,
)
from zoo_elmo.data import lm_batches, read_windows

__all__ = ["ELMoRecipe", "fit", "recipe"]


def fit(
    name: str,
    sentences: Sequence[Sequence[str]],
    *,
    steps: int,
    batch_size: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    min_count: int = 1,
    max_vocab: int | None = None,
    valid: Sequence[Sequence[str]] | None = None,
    eval_every: int | None = None,
    buckets: Sequence[int] | None = None,
    progress: bool = True,
    overrides: Mapping[str, Any] | None = None,
    checkpoint: Path | None = None,
    resume: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """Train the biLM on `sentences` with Adam (gradients clipped at norm 5).

    The softmax vocabulary keeps words seen `min_count` times, at most `max_vocab`
    (the rest are predicted as ``<unk>``; a character token layer still reads them).
    `buckets` fixes the padded widths (default: 4 length quantiles).

    **Returns:** ``(model, info)`` with ``history``, ``tokens_per_s``, ``steps`` (done),
    ``stopped_on_time`` and, given `valid`, its perplexities.
    """
    import jax
    import optax

    from zoo_elmo.perplexity import perplexity

    vocab = Vocab.build(sentences, min_count=min_count, max_size=max_vocab)
    model = zoo.build(name, key=jax.random.key(seed), vocab={"words": vocab}, **dict(overrides or {}))
    data = lm_batches(
        sentences,
        vocab,
        batch_size=batch_size,
        max_word_length=model.spec["max_word_length"] if model.chars is not None else None,
        buckets=buckets,
        seed=seed,
    )
    evaluate = (lambda m: perplexity(m, valid)) if valid else None
    result = zoo.train(
        model,
        data,
        steps=steps,
        key=jax.random.key(seed + 1),
        optimizer=optax.chain(optax.clip_by_global_norm(5.0), optax.adam(lr)),
        evaluate=evaluate,
        eval_every=eval_every,
        units="ids_mask",
        progress=progress,
        log_every=25,
        description=name,
        checkpoint=checkpoint,
        checkpoint_every=500 if checkpoint else None,
        resume=resume,
    )
    rates = [h["units_per_s"] for h in result.history if "units_per_s" in h]
    info: dict[str, Any] = {
        "history": result.history,
        "tokens_per_s": float(np.median(rates)) if rates else None,
        "steps": result.step,
        "stopped_on_time": result.stopped_on_time,
    }
    if valid:
        info.update(perplexity(result.model, valid))
    return result.model, info


class ELMoRecipe:
    """Train ELMo's biLM on raw text: whitespace-tokenised lines cut into windows."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=10000, batch_size=32, lr=1e-3)
        data = parser.add_argument(
            "--data", dest="corpus", type=Path, required=True, help="text, one sentence or paragraph a line"
        )
        add_alias(parser, data, "--corpus")
        parser.add_argument(
            "--window", type=argument_type("[1, inf)"), default=40, help="tokens per training window (default 40)"
        )
        parser.add_argument(
            "--max-tokens", type=argument_type("[1, inf)"), help="read at most this many tokens of the corpus"
        )
        add_lowercase_arguments(parser, default=False, what="the corpus")
        add_encoding_argument(parser)
        parser.add_argument(
            "--min-count", type=argument_type("[1, inf)"), default=2, help="rarer words are predicted as <unk>"
        )
        parser.add_argument(
            "--max-vocab", type=argument_type("[1, inf)"), default=20000, help="softmax vocabulary size (default 20000)"
        )
        add_valid_size_argument(parser, what="windows", at_most=500)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        resolve_spec(name, options, overrides)
        sentences = read_windows(
            options.corpus,
            max_length=options.window,
            max_tokens=options.max_tokens,
            lowercase=options.lowercase,
            encoding=options.encoding,
        )
        order = np.random.default_rng(options.seed).permutation(len(sentences))
        n_valid, held = hold_out(options.valid_size, len(sentences), what="windows")
        print(f"{held}: scored by perplexity" if n_valid else held)
        if len(sentences) - n_valid < options.batch_size:
            raise DataError(f"{len(sentences)} windows are too few for batches of {options.batch_size}")
        valid = [sentences[i] for i in order[:n_valid]]
        train = [sentences[i] for i in order[n_valid:]]
        model, info = fit(
            name,
            train,
            steps=options.steps,
            batch_size=options.batch_size,
            lr=options.lr,
            seed=options.seed,
            min_count=options.min_count,
            max_vocab=options.max_vocab,
            valid=valid or None,
            eval_every=options.eval_every or None,
            progress=not options.quiet,
            overrides=overrides,
            checkpoint=options.checkpoint,
            resume=options.resume,
        )
        scores = ""
        if valid:
            scores = f"perplexity forward {info['perplexity_forward']:.1f}, backward {info['perplexity_backward']:.1f}"
        print(last_kept_line(info["steps"], options.steps, "step", on_time=info["stopped_on_time"], scores=scores))
        return zoo.save(model, options.out)

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--window", type=argument_type("[1, inf)"), default=40, help="tokens per window (default 40)"
        )
        add_lowercase_arguments(parser, default=False, what="the text (as it was for training)")

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float]:
        sentences = read_windows(
            options.data, max_length=options.window, lowercase=options.lowercase, encoding=options.encoding
        )
        from zoo_elmo.perplexity import perplexity

        return perplexity(model, sentences)


recipe = ELMoRecipe()
