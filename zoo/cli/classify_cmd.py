"""``zoo classify MODEL_FILE "text" ...`` (or ``--file``): label texts with a saved classifier.

By default each line is the best label, a tab and the text (``--probabilities``: every
label's probability too). With ``--k K`` and/or ``--threshold T`` each line is the `K` best
labels whose probability reaches `T`, each followed by its probability, as fastText's
``predict-prob`` prints them (``--k -1``: every label; an empty line when none passes).
A model file may be any file `zoo.load` reads (a fastText classifier's ``.bin`` too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo.building.files import output_path
from zoo.cli.tag_cmd import read_inputs
from zoo.errors import ZooError
from zoo.naming.domains import argument_type
from zoo.training.recipes import add_alias, add_encoding_argument

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("classify", help="label texts with a saved classifier (e.g. sentiment, question type)")
    p.add_argument("model", type=Path, help="a classifier: a zoo file, a stored NAME.TAG, a plugin's model file")
    p.add_argument("text", nargs="*", help="texts to label (default: --file or standard input)")
    p.add_argument("--file", type=Path, help="one text a line; '-' for standard input")
    add_encoding_argument(p)
    p.add_argument("--probabilities", action="store_true", help="print every label's probability")
    p.add_argument(
        "--k", type=_k, metavar="K", help="print the K best labels, each followed by its probability (-1: all)"
    )
    p.add_argument(
        "--threshold", type=argument_type("[0, 1]", float), metavar="T", help="print only labels this probable"
    )
    out = p.add_argument(
        "--out", type=output_path, metavar="FILE", help="write the labels here instead of standard output"
    )
    add_alias(p, out, "--output")
    p.set_defaults(run=run)


def _k(text: str) -> int:
    value = argument_type("[-1, inf)")(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text}: must be a positive number of labels, or -1 for all of them")
    return value


def _ranked(model: object, texts: list[str], k: int, threshold: float) -> list[tuple[tuple[str, ...], object]]:
    """Each text's `k` best labels that pass `threshold`, and their probabilities."""
    import numpy as np

    from zoo.interfaces import LabelRanker

    if isinstance(model, LabelRanker):
        return model.top_labels(texts, k=k, threshold=threshold)
    names = model.vocabs["labels"].tokens
    out = []
    for probs in model.predict_proba(texts):
        order = [i for i in np.argsort(-probs, kind="stable") if probs[i] >= threshold]
        order = order if k == -1 else order[:k]
        out.append((tuple(names[i] for i in order), probs[order]))
    return out


def run(args: argparse.Namespace) -> int:
    from zoo.building.weights import load

    texts = read_inputs(args)
    model = load(args.model)  # a damaged file is refused before JAX is imported
    from zoo.interfaces import Classifier

    if not isinstance(model, Classifier) or "labels" not in model.vocabs:
        raise ZooError(f"{model.spec.name!r} does not classify texts; train a classifier (zoo list shows the models)")
    if args.k is not None or args.threshold is not None:
        ranked = _ranked(model, texts, 1 if args.k is None else args.k, args.threshold or 0.0)
        lines = [" ".join(f"{label} {float(p):.6g}" for label, p in zip(*pair, strict=True)) for pair in ranked]
        return _write(args, lines)
    labels = model.vocabs["labels"].tokens
    lines = []
    for text, probs in zip(texts, model.predict_proba(texts), strict=True):
        best = int(probs.argmax())
        if args.probabilities:
            scores = " ".join(f"{label}={p:.4f}" for label, p in zip(labels, probs, strict=True))
            lines.append(f"{labels[best]}\t{scores}\t{text}")
        else:
            lines.append(f"{labels[best]}\t{text}")
    return _write(args, lines)


def _write(args: argparse.Namespace, lines: list[str]) -> int:
    output = "\n".join(lines) + "\n"
    if args.out is not None:
        args.out.write_text(output, encoding="utf-8")
    else:
        sys.stdout.write(output)
    return 0
