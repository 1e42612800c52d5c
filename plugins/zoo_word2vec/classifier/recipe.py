"""``zoo train fasttext-classifier --data FILE`` and ``zoo eval MODEL --data FILE``: fastText's ``test``
(N, P@k, R@k; and accuracy) and, with ``--per-label``, its ``test-label`` (F1, precision, recall)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from zoo_word2vec.settings import LABELLED_FORMATS

if TYPE_CHECKING:
    from zoo_word2vec.classifier.data import LabelledLines

__all__ = ["FastTextRecipe", "per_label", "read_data", "recipe", "score"]


def read_data(path: Path, params: dict[str, Any], *, format: str, label_prefix: str, encoding: str) -> LabelledLines:
    """`path` read and split as a model with hyperparameters `params` splits text."""
    from zoo_word2vec.classifier.data import read_labelled

    tokenizer = get_tokenizer(params["tokenizer"])
    split = (lambda text: tokenizer(text.lower())) if params["lowercase"] else tokenizer
    return read_labelled(path, split=split, format=format, label_prefix=label_prefix, encoding=encoding)


def _predicted(model: Any, data: LabelledLines, k: int, threshold: float) -> tuple[list, list[set[str]]]:
    """fastText's ``test`` lines: those with a label the model knows (unknown labels dropped, as
    fastText drops them); their predictions (`top_labels`) and their labels."""
    known = set(model.vocabs["labels"].tokens)
    lines = [(i, {y for y in ys if y in known}) for i, ys in enumerate(data.labels)]
    lines = [(i, ys) for i, ys in lines if ys]
    if not lines:
        raise DataError("no line has a label the model knows to score against")
    texts = data.texts
    found = model.top_labels([texts[i] for i, _ in lines], k=k, threshold=threshold)
    return [labels for labels, _ in found], [ys for _, ys in lines]


def score(model: Any, data: LabelledLines, *, k: int = 1, threshold: float = 0.0) -> dict[str, float]:
    """fastText's ``test``: ``N`` (lines with a known label), ``P@k`` and ``R@k`` (precision and
    recall of the top-`k` predictions that pass `threshold`), and ``accuracy`` (the best label is
    one of the line's; P@1 for one label a line)."""
    predictions, golds = _predicted(model, data, k, threshold)
    hits = sum(len(set(p) & g) for p, g in zip(predictions, golds, strict=True))
    predicted = sum(len(p) for p in predictions)
    correct = sum(bool(p) and p[0] in g for p, g in zip(predictions, golds, strict=True))
    return {
        "N": float(len(golds)),
        f"P@{k}": hits / predicted if predicted else float("nan"),
        f"R@{k}": hits / sum(len(g) for g in golds),
        "accuracy": correct / len(golds),
    }


def per_label(model: Any, data: LabelledLines, *, k: int = 1, threshold: float = 0.0) -> dict[str, dict[str, float]]:
    """fastText's ``test-label``: for each label of the model, in its order, ``f1``, ``precision``
    and ``recall`` of the top-`k` predictions (NaN where a label is never predicted, or never gold)."""
    predictions, golds = _predicted(model, data, k, threshold)
    counts = {label: [0, 0, 0] for label in model.vocabs["labels"].tokens}  # predicted, gold, both
    for found, gold in zip(predictions, golds, strict=True):
        for label in found:
            counts[label][0] += 1
            counts[label][2] += label in gold
        for label in gold:
            counts[label][1] += 1
    ratio = lambda a, b: a / b if b else float("nan")
    return {
        label: {"f1": ratio(2 * both, p + g), "precision": ratio(both, p), "recall": ratio(both, g)}
        for label, (p, g, both) in counts.items()
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
            parser, "--loss", "loss", choices=["softmax", "ova", "hs", "ns"],
            help="softmax, one-vs-all (multi-label), hierarchical softmax (many labels) or negative sampling",
        )  # fmt: skip
        add_hyperparameter_argument(parser, "--neg", "neg", type=int, help="noise labels per step (--loss ns)")
        add_hyperparameter_argument(
            parser, "--tokenizer", "tokenizer", help="how to split text (default fasttext: as fastText splits it)"
        )

    def _add_reading_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--format", choices=LABELLED_FORMATS, default="auto", help="the data's format (auto: detected)"
        )
        parser.add_argument("--label-prefix", default="__label__", help="fastText-format labels start with it")
        if not any(a.dest == "encoding" for a in parser._actions):
            add_encoding_argument(parser)

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        spec = resolve_spec(name, options, overrides)  # every hyperparameter checked before reading data
        data = read_data(
            options.data, dict(spec.params), format=options.format, label_prefix=options.label_prefix,
            encoding=options.encoding,
        )  # fmt: skip
        from zoo_word2vec.classifier.fit import fit  # JAX and the kernels: once the data is read

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
        parser.add_argument(
            "--threshold", type=argument_type("[0, 1]", float), default=0.0, help="predict labels this probable only"
        )
        parser.add_argument(
            "--per-label", action="store_true", help="F1, precision and recall of each label (fastText's test-label)"
        )

    def evaluate(self, model: Any, options: argparse.Namespace) -> dict[str, float]:
        data = read_data(
            options.data, dict(model.spec.params), format=options.format, label_prefix=options.label_prefix,
            encoding=options.encoding,
        )  # fmt: skip
        metrics = score(model, data, k=options.k, threshold=options.threshold)
        if options.per_label:
            for label, values in per_label(model, data, k=options.k, threshold=options.threshold).items():
                metrics |= {f"{name} {label}": value for name, value in values.items()}
        return metrics


recipe = FastTextRecipe()
