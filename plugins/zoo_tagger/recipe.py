"""``zoo train bilstm-tagger --data FILE`` and ``zoo eval TAGGER --data FILE`` (token accuracy).

Training scores held-out sentences (``--valid FILE``, or ``--valid-size`` of
``--data``) after every epoch, saves the best epoch, and stops after
``--patience`` epochs without a better one (a tie is none); ``--epochs`` is only a
cap (``--patience 0`` trains all of them). It says what it held out, each epoch's
dev accuracy, which epoch it saved and why it stopped, and warns when the last
epoch was still the best (raise ``--epochs``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import zoo
from zoo.plugin_api import (
    DataError,
    KeepBest,
    StopTraining,
    add_common_arguments,
    add_encoding_argument,
    add_epochs_argument,
    add_valid_size_argument,
    argument_type,
    epochs_to_run,
    held_out_line,
    hold_out,
    last_kept_line,
    resolve_spec,
)
from zoo_tagger.data import TaggedSentences, read_tagged, tag_vocab, tagging_batches, word_vocab

if TYPE_CHECKING:
    import optax

__all__ = [
    "BATCH_SIZE",
    "EPOCHS",
    "LR",
    "PATIENCE",
    "TaggerRecipe",
    "evaluate_tagger",
    "fit",
    "recipe",
]

EPOCHS = 100
"""The default cap on epochs: generous, since patience decides when to stop."""
PATIENCE = 5
"""Epochs without a better dev accuracy before training stops."""
LR = 3e-3
"""Adam's default learning rate."""
BATCH_SIZE = 16
"""Default sentences per batch: small, so a small corpus still gets many updates per epoch."""


def evaluate_tagger(model: Any, data: TaggedSentences, *, batch_size: int = 64) -> dict[str, float]:
    """Token accuracy, and accuracy on tokens whose word is outside the model's vocabulary."""
    predicted = model.tag(data.sentences, batch_size=batch_size)
    words, lower = model.vocabs["words"], model.spec["lowercase"]
    correct = oov = oov_correct = total = 0
    for sentence, gold, guess in zip(data.sentences, data.tags, predicted, strict=True):
        for word, g, p in zip(sentence, gold, guess, strict=True):
            hit = g == p
            total += 1
            correct += hit
            if (word.lower() if lower else word) not in words:
                oov += 1
                oov_correct += hit
    return {
        "accuracy": correct / max(total, 1),
        "oov_accuracy": oov_correct / oov if oov else float("nan"),
        "oov_rate": oov / max(total, 1),
        "tokens": float(total),
    }


def _optimizer(model: Any, lr: float) -> optax.GradientTransformation:
    """Adam with global-norm clipping at 5; a frozen contextual embedder gets no state and no update."""
    import optax

    from zoo.plugin_api import skip_frozen

    adam = optax.chain(optax.clip_by_global_norm(5.0), optax.adam(lr))
    if model.context is None or model.spec["fine_tune_context"]:
        return adam
    return skip_frozen(adam, lambda tree: tree.context)


def fit(
    name: str,
    train: TaggedSentences,
    dev: TaggedSentences | None,
    *,
    epochs: int = EPOCHS,
    batch_size: int = BATCH_SIZE,
    lr: float = LR,
    seed: int = 0,
    min_count: int = 1,
    context: Any = None,
    patience: int | None = PATIENCE,
    buckets: Sequence[int] | None = None,
    progress: bool = True,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Train a tagger with Adam (gradients clipped at norm 5); keep the best epoch on `dev`.

    `context`: a trained `ContextualEmbedder` model (e.g. a loaded ELMo) whose
    layers join the token features (frozen unless ``fine_tune_context``). `buckets`
    fixes the padded widths (default: 8 length quantiles). With `dev`, training
    stops after `patience` epochs without a better dev accuracy (None: runs all
    `epochs`), and the best epoch's model is returned.

    **Returns:** ``(model, info)``; `info` holds ``best_dev``, ``best_epoch``,
    ``epochs_run``, ``epochs`` (the cap), ``patience``, ``history`` (dev accuracy
    per epoch), ``stopped`` (why it stopped early, or None), ``report`` (the line
    saying how training ended and which epoch is returned) and ``tokens_per_s``.
    """
    overrides = dict(overrides or {})
    lowercase = overrides.get("lowercase", True)
    vocab = {
        "words": word_vocab(train.sentences, lowercase=lowercase, min_count=min_count),
        "tags": tag_vocab(train.tags),
    }
    import jax

    from zoo_tagger.model import with_context

    key = jax.random.key(seed)
    if context is not None:
        model = with_context(name, context, key=key, vocab=vocab, **overrides)
    else:
        model = zoo.build(name, key=key, vocab=vocab, **overrides)
    data = tagging_batches(
        train,
        vocab["words"],
        vocab["tags"],
        batch_size=batch_size,
        lowercase=model.spec["lowercase"],
        max_word_length=model.spec["max_word_length"] if model.reads_chars else None,
        context_vocab=model.vocabs.get("context"),
        buckets=buckets,
        seed=seed,
    )
    per_epoch = data.batches_per_epoch()
    keeper = KeepBest(lambda m: evaluate_tagger(m, dev)["accuracy"], "dev_accuracy", patience=patience) if dev else None
    final, stopped, rate, on_time = None, None, float("nan"), False
    try:
        result = zoo.train(
            model,
            data,
            steps=epochs * per_epoch,
            key=jax.random.key(seed + 1),
            optimizer=_optimizer(model, lr),
            evaluate=keeper,
            eval_every=per_epoch,
            units="words_mask",
            progress=progress,
            log_every=max(1, per_epoch // 5),
            description=name,
        )
        final, on_time = result.model, result.stopped_on_time
        rates = [h["units_per_s"] for h in result.history if "units_per_s" in h]
        rate = float(np.median(rates)) if rates else rate
    except StopTraining as stop:
        stopped = str(stop)
    if keeper is not None:
        report = keeper.report(unit="epoch", label="dev token accuracy", planned=epochs, on_time=on_time)
    else:
        report = last_kept_line(result.step / per_epoch, epochs, "epoch", on_time=on_time)
    info = {
        "best_dev": keeper.score if keeper else None,
        "best_epoch": keeper.best_at if keeper else None,
        "epochs_run": len(keeper.history) if keeper else epochs,
        "epochs": epochs,
        "patience": patience,
        "history": list(keeper.history) if keeper else [],
        "stopped": stopped,
        "report": report,
        "tokens_per_s": rate,
    }
    return (keeper.model if keeper else final), info


class TaggerRecipe:
    """Train a tagger on ``word/TAG`` lines or CoNLL columns; keep the best epoch on held-out sentences."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=0, batch_size=BATCH_SIZE, lr=LR)
        parser.add_argument("--data", type=Path, required=True, help="word/TAG lines or CoNLL token<TAB>tag columns")
        parser.add_argument("--format", choices=["auto", "slash", "conll"], default="auto")
        add_encoding_argument(parser)
        parser.add_argument("--valid", type=Path, help="held-out sentences (default: --valid-size from --data)")
        add_valid_size_argument(parser, what="sentences", at_most=1000)
        add_epochs_argument(parser, default=EPOCHS, stops="--patience usually stops sooner")
        parser.add_argument(
            "--patience",
            type=argument_type("[0, inf)"),
            default=PATIENCE,
            help=f"stop after this many epochs without a better dev accuracy (default {PATIENCE}; 0: train all epochs)",
        )
        parser.add_argument("--min-count", type=argument_type("[1, inf)"), default=1, help="rarer words become <unk>")
        parser.add_argument("--elmo", type=Path, help="a trained ELMo (zoo train elmo) whose layers join the features")

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        model, _ = self.fit(name, options, overrides)
        return zoo.save(model, options.out)

    def fit(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """What `train` does short of saving: the selected model and `fit`'s `info`."""
        resolve_spec(name, options, overrides)
        data = read_tagged(options.data, format=options.format, encoding=options.encoding)
        if options.valid is not None:
            train, dev = data, read_tagged(options.valid, format=options.format, encoding=options.encoding)
            held = held_out_line(len(dev), "sentences", f"--valid {options.valid}")
        else:
            count, held = hold_out(options.valid_size, len(data), what="sentences")
            train, dev = data.split(count, seed=options.seed) if count else (data, None)
        print(held if dev is not None else f"{held}: the last epoch is kept")
        if len(train) < options.batch_size:
            raise DataError(f"{len(train)} sentences are too few for batches of {options.batch_size}")
        epochs = epochs_to_run(options, -(-len(train) // options.batch_size))
        context = zoo.load(options.elmo) if options.elmo else None
        model, info = fit(
            name,
            train,
            dev,
            epochs=epochs,
            batch_size=options.batch_size,
            lr=options.lr,
            seed=options.seed,
            min_count=options.min_count,
            context=context,
            patience=options.patience if options.patience > 0 else None,
            progress=not options.quiet,
            overrides=overrides,
        )
        print(info["report"])
        return model, info

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--format", choices=["auto", "slash", "conll"], default="auto")

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float]:
        return evaluate_tagger(model, read_tagged(options.data, format=options.format, encoding=options.encoding))


recipe = TaggerRecipe()
