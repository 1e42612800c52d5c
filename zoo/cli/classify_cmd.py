"""``zoo classify MODEL_FILE "text" ...`` (or ``--file``): label texts with a saved classifier."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo.building.files import output_path
from zoo.cli.tag_cmd import read_inputs
from zoo.errors import ZooError
from zoo.training.recipes import add_alias, add_encoding_argument

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("classify", help="label texts with a saved classifier (e.g. sentiment, question type)")
    p.add_argument("model", type=Path, help="a .safetensors file saved by zoo (a classifier)")
    p.add_argument("text", nargs="*", help="texts to label (default: --file or standard input)")
    p.add_argument("--file", type=Path, help="one text a line; '-' for standard input")
    add_encoding_argument(p)
    p.add_argument("--probabilities", action="store_true", help="print every label's probability")
    out = p.add_argument(
        "--out", type=output_path, metavar="FILE", help="write the labels here instead of standard output"
    )
    add_alias(p, out, "--output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zoo.building.weights import load

    texts = read_inputs(args)
    from zoo.interfaces import Classifier

    model = load(args.model)
    if not isinstance(model, Classifier) or "labels" not in model.vocabs:
        raise ZooError(f"{model.spec.name!r} does not classify texts; train a classifier (zoo list shows the models)")
    labels = model.vocabs["labels"].tokens
    lines = []
    for text, probs in zip(texts, model.predict_proba(texts), strict=True):
        best = int(probs.argmax())
        if args.probabilities:
            scores = " ".join(f"{label}={p:.4f}" for label, p in zip(labels, probs, strict=True))
            lines.append(f"{labels[best]}\t{scores}\t{text}")
        else:
            lines.append(f"{labels[best]}\t{text}")
    output = "\n".join(lines) + "\n"
    if args.out is not None:
        args.out.write_text(output, encoding="utf-8")
    else:
        sys.stdout.write(output)
    return 0
