"""``zoo train textcnn --data FILE`` and ``zoo eval MODEL --data FILE`` (accuracy)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

import zoo
from zoo.plugin_api import (
    DataError,
    KeepBest,
    StopTraining,
    Vocab,
    add_common_arguments,
    add_encoding_argument,
    argument_type,
)
from zoo_textcnn.data import (
    LEGACY_TOKENIZER,
    LabelledBatches,
    LabelledTexts,
    label_vocab,
    read_columns,
    read_label_text,
)
from zoo_textcnn.optim import kim_optimizer
from zoo_textcnn.pretrained import initialise_embeddings

__all__ = ["TextCNNRecipe", "accuracy", "fit", "read_data", "recipe"]


def read_data(
    path: Path,
    *,
    text_column: str | None,
    label_column: str | None,
    lowercase: bool,
    tokenizer: str = LEGACY_TOKENIZER,
    encoding: str = "utf-8",
) -> LabelledTexts:
    """``label<TAB>text`` lines, or a CSV/TSV with a header when columns are named (decoded with `encoding`)."""
    if text_column or label_column:
        return read_columns(
            path,
            text_column=text_column or "text",
            label_column=label_column or "label",
            lowercase=lowercase,
            tokenizer=tokenizer,
            encoding=encoding,
        )
    return read_label_text(path, lowercase=lowercase, tokenizer=tokenizer, encoding=encoding)


def accuracy(model: Any, data: LabelledTexts) -> float:
    """The fraction of `data` whose most probable label is its gold label."""
    labels = model.vocabs["labels"]
    unknown = sorted({y for y in data.labels if y not in labels})
    if unknown:
        raise DataError(f"labels {unknown[:5]} are not among the model's labels {list(labels.tokens)}")
    gold = np.asarray([labels.index[y] for y in data.labels])
    predicted = np.argmax(model.predict_proba(data.texts), axis=-1)
    return float(np.mean(predicted == gold))


def fit(
    name: str,
    train: LabelledTexts,
    dev: LabelledTexts | None,
    *,
    epochs: int,
    batch_size: int = 50,
    seed: int = 0,
    vectors: Any = None,
    vocab: Vocab | None = None,
    max_norm_limit: float = 3.0,
    learning_rate: float = 1.0,
    patience: int | None = None,
    buckets: Sequence[int] | None = None,
    pad_to_longest: bool = False,
    progress: bool = True,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Train a TextCNN the way Kim did: Adadelta, max-norm, the best epoch on `dev` kept
    (the later one where two score the same).

    With `patience`, training stops after that many epochs without a better dev score.
    `buckets` fixes the padded widths (default: length quantiles of `train`);
    `pad_to_longest` pads every batch to the longest training text instead, as Kim
    did: batches then mix lengths freely rather than grouping similar ones (each
    step costs more).

    **Returns:** ``(model, info)``; `info` holds ``best_dev``, ``best_epoch``,
    ``epochs_run``, ``stopped`` (why it stopped early, or None) and ``coverage``
    (of pretrained vectors, or None).
    """
    vocab = vocab or Vocab.build(train.texts, specials=("pad", "unk"))
    labels = label_vocab(train.labels)
    model = zoo.build(name, key=jax.random.key(seed), vocab={"words": vocab, "labels": labels}, **dict(overrides or {}))
    if pad_to_longest:
        buckets = [max(1, max((len(t) for t in train.texts), default=1))]
    coverage = None
    if vectors is not None:
        model, coverage = initialise_embeddings(model, vectors, key=jax.random.key(seed + 2))
    data = LabelledBatches(
        [vocab.encode(t) for t in train.texts],
        [labels.index[y] for y in train.labels],
        batch_size=batch_size,
        pad_id=vocab.pad_id,
        buckets=buckets,
        seed=seed,
    )
    per_epoch = data.batches_per_epoch()
    keeper = None
    if dev is not None:  # Kim's code keeps the later of two epochs with equal dev accuracy
        keeper = KeepBest(lambda m: accuracy(m, dev), "dev_accuracy", patience=patience, ties="last")
    final, stopped = None, None
    try:
        result = zoo.train(
            model,
            data,
            steps=epochs * per_epoch,
            key=jax.random.key(seed + 1),
            optimizer=kim_optimizer(
                max_norm_limit=max_norm_limit,
                learning_rate=learning_rate,
                train_embeddings=not model.spec["freeze_embeddings"],
            ),
            evaluate=keeper,
            eval_every=per_epoch,
            units="words_mask",
            progress=progress,
            log_every=max(1, per_epoch // 4),
            description=name,
        )
        final = result.model
    except StopTraining as stop:
        stopped = str(stop)
    info = {
        "best_dev": keeper.score if keeper is not None else None,
        "best_epoch": keeper.best_at if keeper is not None else None,
        "epochs_run": len(keeper.history) if keeper is not None else epochs,
        "stopped": stopped,
        "coverage": coverage,
    }
    return (keeper.model if keeper is not None else final), info


class TextCNNRecipe:
    """Train a sentence classifier; keep the epoch that scores best on a held-out dev split."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=0, batch_size=50, lr=1.0)
        parser.add_argument("--data", type=Path, required=True, help="label<TAB>text lines, or a CSV with a header")
        parser.add_argument("--text-column", help="for a CSV/TSV with a header: the text column")
        parser.add_argument("--label-column", help="for a CSV/TSV with a header: the label column")
        add_encoding_argument(parser)
        parser.add_argument("--keep-case", action="store_true", help="do not lowercase the text")
        parser.add_argument(
            "--tokenizer", help="how to split the text: kim (the default), words-marks, or any zoo tokeniser"
        )
        parser.add_argument("--pad-to-longest", action="store_true", help="pad batches to the longest text (Kim)")
        parser.add_argument(
            "--epochs", type=argument_type("[1, inf)"), default=25, help="epochs when --steps is 0 (default 25)"
        )
        parser.add_argument(
            "--dev-fraction",
            type=argument_type("[0, 1)", float),
            default=0.1,
            help="held out for choosing the epoch (0: none, keep the last)",
        )
        parser.add_argument(
            "--patience",
            type=argument_type("[0, inf)"),
            default=5,
            help="stop after this many epochs without a better dev score (0: never)",
        )
        parser.add_argument(
            "--vectors", help="initialise the word vectors: a zoo embedder file or a word2vec text file"
        )
        parser.add_argument("--static", action="store_true", help="freeze the word vectors (CNN-static)")
        parser.add_argument(
            "--max-norm", type=argument_type("(0, inf)", float), default=3.0, help="l2 bound of each class's weights"
        )

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        if options.tokenizer:
            overrides["tokenizer"] = options.tokenizer
        data = read_data(
            options.data,
            text_column=options.text_column,
            label_column=options.label_column,
            lowercase=not options.keep_case,
            tokenizer=zoo.describe(name, **overrides).params.get("tokenizer", LEGACY_TOKENIZER),
            encoding=options.encoding,
        )
        order = np.random.default_rng(options.seed).permutation(len(data))
        n_dev = round(len(data) * options.dev_fraction)
        if len(data) - n_dev < options.batch_size:
            raise DataError(f"{len(data)} texts are too few for batches of {options.batch_size}")
        dev = data.subset(order[:n_dev].tolist()) if n_dev else None
        train = data.subset(order[n_dev:].tolist())
        if options.static:
            overrides.setdefault("freeze_embeddings", True)
        overrides.setdefault("lowercase", not options.keep_case)
        vocab = None
        if options.vectors:
            from zoo_textcnn.pretrained import vectors_of

            known = set(vectors_of(options.vectors).key_to_index)
            counts = {w: 1 for t in train.texts for w in t}
            counts.update({w: 1 for t in (dev.texts if dev else []) for w in t if w in known})
            vocab = Vocab.build(counts, specials=("pad", "unk"))
        per_epoch = -(-len(train) // options.batch_size)
        epochs = options.epochs if options.steps <= 0 else max(1, options.steps // per_epoch)
        model, info = fit(
            name,
            train,
            dev,
            epochs=epochs,
            batch_size=options.batch_size,
            seed=options.seed,
            vectors=options.vectors,
            vocab=vocab,
            max_norm_limit=options.max_norm,
            learning_rate=options.lr,
            patience=options.patience if options.patience > 0 else None,
            pad_to_longest=options.pad_to_longest,
            progress=not options.quiet,
            overrides=overrides,
        )
        if info["coverage"] is not None:
            print(info["coverage"])
        if dev is not None:
            print(f"best dev accuracy {info['best_dev']:.4f} after epoch {info['best_epoch']}")
        return zoo.save(model, options.out)

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--text-column", help="for a CSV/TSV with a header: the text column")
        parser.add_argument("--label-column", help="for a CSV/TSV with a header: the label column")

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float]:
        data = read_data(
            options.data,
            text_column=options.text_column,
            label_column=options.label_column,
            lowercase=model.spec["lowercase"],
            tokenizer=model.spec.params.get("tokenizer", LEGACY_TOKENIZER),
            encoding=options.encoding,
        )
        return {"accuracy": accuracy(model, data), "examples": float(len(data))}


recipe = TextCNNRecipe()
