"""``zoo train fasttext-classifier --data FILE`` and ``zoo eval MODEL --data FILE`` (P@k, R@k, accuracy)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np

import zoo
from zoo.plugin_api import (
    DataError,
    add_alias,
    add_encoding_argument,
    add_hyperparameter_argument,
    argument_type,
    get_tokenizer,
    held_out_line,
    last_kept_line,
    output_path,
    resolve_spec,
    seed_type,
)
from zoo_word2vec.classifier.data import FORMATS, LabelledLines, read_labelled
from zoo_word2vec.classifier.fit import fit

__all__ = ["FastTextRecipe", "read_data", "recipe", "score"]


def read_data(path: Path, params: dict[str, Any], *, format: str, label_prefix: str, encoding: str) -> LabelledLines:
    """`path` read and split as a model with hyperparameters `params` splits text."""
    tokenizer = get_tokenizer(params["tokenizer"])
    split = (lambda text: tokenizer(text.lower())) if params["lowercase"] else tokenizer
    return read_labelled(path, split=split, format=format, label_prefix=label_prefix, encoding=encoding)


def score(model: Any, data: LabelledLines, *, k: int = 1) -> dict[str, float]:
    """fastText's ``test``: over the lines with a label and an input, precision and recall of the
    top-`k` predictions (``precision@k``, ``recall@k``), plus ``accuracy`` (the most probable label
    is one of the line's) and ``examples``. Labels the model does not know count as missed."""
    kept = [i for i, ys in enumerate(data.labels) if ys]
    if not kept:
        raise DataError("no line has a label to score against")
    probs = model.predict_proba([data.texts[i] for i in kept])
    sizes = np.diff(model.featurizer().rows([data.texts[i] for i in kept])[0])
    names = model.vocabs["labels"].tokens
    top = np.argsort(-probs, axis=1, kind="stable")[:, : min(k, probs.shape[1])]
    hits = predicted = gold = correct = examples = 0
    for row, i in enumerate(kept):
        if sizes[row] == 0:
            continue
        truth = set(data.labels[i])
        guesses = [names[c] for c in top[row]]
        examples += 1
        predicted += len(guesses)
        gold += len(truth)
        hits += sum(g in truth for g in guesses)
        correct += guesses[0] in truth
    return {
        f"precision@{k}": hits / max(predicted, 1),
        f"recall@{k}": hits / max(gold, 1),
        "accuracy": correct / max(examples, 1),
        "examples": float(examples),
    }


class FastTextRecipe:
    """fastText's ``supervised``: SGD over the lines in file order, lr decaying linearly to 0."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--data", type=Path, required=True, help="__label__X text lines, label<TAB>text lines, or reviews TSV"
        )
        self._add_reading_arguments(parser)
        parser.add_argument("--out", type=output_path, required=True, help="where to save the model (.safetensors)")
        parser.add_argument("--lr", type=argument_type("(0, inf)", float), default=0.1, help="learning rate")
        epochs = parser.add_argument(
            "--epochs", dest="epoch", type=argument_type("[1, inf)"), default=5, help="passes over data"
        )
        add_alias(parser, epochs, "--epoch")  # fastText's -epoch
        parser.add_argument(
            "--threads", type=argument_type("[1, 1024]"), default=min(12, os.cpu_count() or 1), help="Hogwild threads"
        )
        parser.add_argument("--min-count", type=argument_type("[1, inf)"), default=1, help="rarest word kept")
        parser.add_argument("--seed", type=seed_type, default=0, help="parameter and label-draw seed")
        parser.add_argument("--set", action="append", metavar="KEY=VALUE", default=[], help="a hyperparameter")
        parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
        add_hyperparameter_argument(parser, "--dim", "dim", type=int, help="size of the word vectors")
        add_hyperparameter_argument(parser, "--word-ngrams", "word_ngrams", type=int, help="longest word n-gram")
        add_hyperparameter_argument(parser, "--bucket", "bucket", type=int, help="hashed rows of n-grams")
        add_hyperparameter_argument(parser, "--minn", "minn", type=int, help="shortest character n-gram")
        add_hyperparameter_argument(parser, "--maxn", "maxn", type=int, help="longest character n-gram (0: none)")
        add_hyperparameter_argument(
            parser, "--loss", "loss", choices=["softmax", "ova"], help="softmax, or one-vs-all (multi-label)"
        )
        add_hyperparameter_argument(parser, "--tokenizer", "tokenizer", help="how to split text (default whitespace)")

    def _add_reading_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--format", choices=FORMATS, default="auto", help="the data's format (auto: detected)")
        parser.add_argument("--label-prefix", default="__label__", help="fastText-format labels start with it")
        if not any(a.dest == "encoding" for a in parser._actions):
            add_encoding_argument(parser)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        spec = resolve_spec(name, options, overrides)  # every hyperparameter checked before reading data
        data = read_data(
            options.data, dict(spec.params), format=options.format, label_prefix=options.label_prefix,
            encoding=options.encoding,
        )  # fmt: skip
        model, stats = fit(
            name, data, epochs=options.epoch, lr=options.lr, threads=options.threads,
            min_count=options.min_count, seed=options.seed, overrides=overrides,
        )  # fmt: skip
        if not options.quiet:
            every = "fastText trains on every line: score a file with zoo eval MODEL --data FILE"
            print(held_out_line(0, "lines", every))
            print(
                f"{len(data)} lines, {len(model.vocabs['words'])} words, {len(model.vocabs['labels'])} labels; "
                f"loss {stats.loss:.4f} after {options.epoch} epochs ({stats.seconds:.2f} s)"
            )
            print(last_kept_line(options.epoch, options.epoch, "epoch", scores=f"training loss {stats.loss:.4f}"))
        return zoo.save(model, options.out)

    def add_eval_arguments(self, parser: argparse.ArgumentParser) -> None:
        self._add_reading_arguments(parser)
        parser.add_argument("--k", type=argument_type("[1, inf)"), default=1, help="score the top k labels (P@k, R@k)")

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float]:
        data = read_data(
            options.data, dict(model.spec.params), format=options.format, label_prefix=options.label_prefix,
            encoding=options.encoding,
        )  # fmt: skip
        return score(model, data, k=options.k)


recipe = FastTextRecipe()
