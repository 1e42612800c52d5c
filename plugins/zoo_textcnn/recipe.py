"""``zoo train textcnn --data FILE`` and ``zoo eval MODEL --data FILE`` (accuracy).

Training scores held-out texts (``--valid FILE``, or ``--valid-fraction`` of
``--data``) after every epoch, saves the best epoch, and stops after
``--patience`` epochs without a better one (a tie is none); ``--epochs`` is only a
cap (``--patience 0`` trains all of them). It says what it held out, each epoch's
dev accuracy, which epoch it saved and why it stopped, and warns when the last
epoch was still the best (raise ``--epochs``).

The optimiser is Adam (``--lr`` 1e-3) by default; ``--optimizer adadelta`` is Kim's
(2014) rule (Adadelta, ``--lr`` 1.0), which learns slowly from few texts and trails
Adam there (``docs/tagging.md``). Under `FEW_TEXTS` training texts and no ``--vectors``
it prints a note suggesting a bag-of-words baseline or pretrained vectors.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import zoo
from zoo.plugin_api import (
    DataError,
    KeepBest,
    StopTraining,
    Vocab,
    add_alias,
    add_common_arguments,
    add_encoding_argument,
    add_epochs_argument,
    argument_type,
    epochs_to_run,
    held_out_line,
    last_kept_line,
)
from zoo_textcnn.data import (
    LEGACY_TOKENIZER,
    LabelledBatches,
    LabelledTexts,
    label_vocab,
    read_columns,
    read_label_text,
)
from zoo_textcnn.settings import LEARNING_RATES, OPTIMIZERS

__all__ = [
    "EPOCHS",
    "FEW_TEXTS",
    "PATIENCE",
    "TextCNNRecipe",
    "accuracy",
    "fit",
    "read_data",
    "recipe",
    "small_data_note",
]

EPOCHS = 50
"""The default cap on epochs: generous, since patience decides when to stop."""
PATIENCE = 5
"""Epochs without a better dev accuracy before training stops."""
FEW_TEXTS = 3000
"""Below this many training texts without pretrained vectors, the recipe suggests comparing with a
bag of words: trained on 1,800 movie-review sentences TextCNN scored about a point below TF-IDF +
logistic regression, on TREC's 4,907 questions five points above (``docs/tagging.md``); the
threshold lies between the two."""


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
    epochs: int = EPOCHS,
    batch_size: int = 50,
    seed: int = 0,
    vectors: Any = None,
    vocab: Vocab | None = None,
    max_norm_limit: float = 3.0,
    optimizer: str = "adam",
    learning_rate: float | None = None,
    patience: int | None = PATIENCE,
    buckets: Sequence[int] | None = None,
    pad_to_longest: bool = False,
    progress: bool = True,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Train a TextCNN as Kim did but for the optimiser: max-norm, the best epoch on `dev` kept
    (the later one where two score the same), with Adam (`learning_rate` default 1e-3) or, with
    ``optimizer="adadelta"``, Kim's Adadelta (default 1.0).

    With `patience`, training stops after that many epochs without a better dev score
    (None: all `epochs` run).
    `buckets` fixes the padded widths (default: length quantiles of `train`);
    `pad_to_longest` pads every batch to the longest training text instead, as Kim
    did: batches then mix lengths freely rather than grouping similar ones (each
    step costs more).

    **Returns:** ``(model, info)``; `info` holds ``best_dev``, ``best_epoch``,
    ``epochs_run``, ``epochs`` (the cap), ``patience``, ``history`` (dev accuracy per
    epoch), ``stopped`` (why it stopped early, or None), ``report`` (the line saying
    how training ended and which epoch is returned) and ``coverage`` (of pretrained
    vectors, or None).
    """
    import jax

    from zoo_textcnn.optim import textcnn_optimizer
    from zoo_textcnn.pretrained import initialise_embeddings

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
    final, stopped, on_time = None, None, False
    try:
        result = zoo.train(
            model,
            data,
            steps=epochs * per_epoch,
            key=jax.random.key(seed + 1),
            optimizer=textcnn_optimizer(
                optimizer,
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
        final, on_time = result.model, result.stopped_on_time
    except StopTraining as stop:
        stopped = str(stop)
    if keeper is not None:
        report = keeper.report(unit="epoch", label="dev accuracy", planned=epochs, on_time=on_time)
    else:
        report = last_kept_line(result.step / per_epoch, epochs, "epoch", on_time=on_time)
    info = {
        "best_dev": keeper.score if keeper is not None else None,
        "best_epoch": keeper.best_at if keeper is not None else None,
        "epochs_run": len(keeper.history) if keeper is not None else epochs,
        "epochs": epochs,
        "patience": patience,
        "history": list(keeper.history) if keeper is not None else [],
        "stopped": stopped,
        "report": report,
        "coverage": coverage,
    }
    return (keeper.model if keeper is not None else final), info


def small_data_note(texts: int, *, vectors: bool) -> str | None:
    """A note for training sets under `FEW_TEXTS` texts trained without pretrained vectors, else None."""
    if texts >= FEW_TEXTS or vectors:
        return None
    return (
        f"note: {texts:,} training texts are few for a TextCNN with random word vectors (trained on 1,800 "
        "movie-review sentences, it scored a point below TF-IDF + logistic regression on average): compare "
        "against a bag-of-words model, or start from word vectors pretrained on a large corpus (--vectors FILE)"
    )


class TextCNNRecipe:
    """Train a sentence classifier; keep the epoch that scores best on a held-out dev split."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=0, batch_size=50, lr=LEARNING_RATES["adam"])
        rates = ", ".join(f"{v:g} with {k}" for k, v in LEARNING_RATES.items())
        parser.set_defaults(lr=None)
        parser._option_string_actions["--lr"].help = f"learning rate (default {rates})"
        parser.add_argument(
            "--optimizer",
            choices=OPTIMIZERS,
            default="adam",
            help="adam (the default) or adadelta: Kim's (2014) rule, slower to start on small data",
        )
        parser.add_argument("--data", type=Path, required=True, help="label<TAB>text lines, or a CSV with a header")
        parser.add_argument("--text-column", help="for a CSV/TSV with a header: the text column")
        parser.add_argument("--label-column", help="for a CSV/TSV with a header: the label column")
        add_encoding_argument(parser)
        parser.add_argument(
            "--lowercase", dest="keep_case", action="store_false", default=False, help="lowercase the text (default)"
        )
        keep_case = parser.add_argument(
            "--no-lowercase", dest="keep_case", action="store_true", default=False, help="keep the case of the text"
        )
        add_alias(parser, keep_case, "--keep-case")
        parser.add_argument(
            "--tokenizer", help="how to split the text: kim (the default), words-marks, or any zoo tokeniser"
        )
        parser.add_argument("--pad-to-longest", action="store_true", help="pad batches to the longest text (Kim)")
        add_epochs_argument(parser, default=EPOCHS, stops="--patience usually stops sooner")
        parser.add_argument(
            "--valid", type=Path, help="held-out texts, as --data (default: --valid-fraction of --data)"
        )
        fraction = parser.add_argument(
            "--valid-fraction",
            dest="dev_fraction",
            type=argument_type("[0, 1)", float),
            default=0.1,
            help="the share of --data held out for choosing the epoch without --valid (0: none, keep the last)",
        )
        add_alias(parser, fraction, "--dev-fraction")
        parser.add_argument(
            "--patience",
            type=argument_type("[0, inf)"),
            default=PATIENCE,
            help=f"stop after this many epochs without a better dev accuracy (default {PATIENCE}; 0: train all epochs)",
        )
        parser.add_argument(
            "--vectors",
            metavar="FILE",
            help="initialise the word vectors: a zoo embedder file or a word2vec text file (sets embedding_size)",
        )
        parser.add_argument("--static", action="store_true", help="freeze the word vectors (CNN-static)")
        parser.add_argument(
            "--max-norm", type=argument_type("(0, inf)", float), default=3.0, help="l2 bound of each class's weights"
        )

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        model, _ = self.fit(name, options, overrides)
        return zoo.save(model, options.out)

    def fit(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """What `train` does short of saving: the selected model and `fit`'s `info`."""
        if options.tokenizer:
            overrides["tokenizer"] = options.tokenizer
        read = functools.partial(
            read_data,
            text_column=options.text_column,
            label_column=options.label_column,
            lowercase=not options.keep_case,
            tokenizer=zoo.describe(name, **overrides).params.get("tokenizer", LEGACY_TOKENIZER),
            encoding=options.encoding,
        )
        data = read(options.data)
        order = np.random.default_rng(options.seed).permutation(len(data))
        n_dev = 0 if options.valid is not None else round(len(data) * options.dev_fraction)
        if len(data) - n_dev < options.batch_size:
            raise DataError(f"{len(data)} texts are too few for batches of {options.batch_size}")
        dev = data.subset(order[:n_dev].tolist()) if n_dev else None
        if options.valid is not None:
            dev = read(options.valid)
            print(held_out_line(len(dev), "texts", f"--valid {options.valid}"))
        else:
            source = f"of the {len(data):,} in --data: --valid-fraction {options.dev_fraction:g}"
            print(held_out_line(n_dev, "texts", source if n_dev else f"{source}: the last epoch is kept"))
        train = data.subset(order[n_dev:].tolist())
        if options.static:
            overrides.setdefault("freeze_embeddings", True)
        overrides.setdefault("lowercase", not options.keep_case)
        vocab = None
        if options.vectors:
            from zoo_textcnn.pretrained import vectors_of

            pretrained = vectors_of(options.vectors)
            known = set(pretrained.key_to_index)
            given = [(k, overrides[k]) for k in ("embedding_size", "embedder.embedding_size") if k in overrides]
            if not given:  # the file decides the size
                overrides["embedding_size"] = pretrained.vector_size
            elif given[0][1] != pretrained.vector_size:
                (key, size), dim = given[0], pretrained.vector_size
                raise DataError(
                    f"--vectors {options.vectors} has {dim} dimensions but --set {key}={size} asks for {size}: "
                    "leave out that --set (--vectors sets the size)"
                )
            counts = {w: 1 for t in train.texts for w in t}
            counts.update({w: 1 for t in (dev.texts if dev else []) for w in t if w in known})
            vocab = Vocab.build(counts, specials=("pad", "unk"))
        epochs = epochs_to_run(options, -(-len(train) // options.batch_size))
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
            optimizer=options.optimizer,
            learning_rate=options.lr,
            patience=options.patience if options.patience > 0 else None,
            pad_to_longest=options.pad_to_longest,
            progress=not options.quiet,
            overrides=overrides,
        )
        if info["coverage"] is not None:
            print(info["coverage"])
        print(info["report"])
        note = small_data_note(len(train), vectors=bool(options.vectors))
        if note:
            print(note)
        return model, info

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
