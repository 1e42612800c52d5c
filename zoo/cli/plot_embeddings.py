"""``zoo plot embeddings MODEL --words w1,w2,... --out f.png``: a PCA map of chosen words."""

from __future__ import annotations

import argparse
from pathlib import Path

from zoo.building.files import output_path

__all__ = ["register"]


def register(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser("embeddings", help="2-D PCA projection of word vectors")
    p.add_argument("model", type=Path, help="zoo model file of an embedder, or a word-vectors file")
    p.add_argument("--words", required=True, help="comma-separated words to draw (at least two)")
    p.add_argument("--out", type=output_path, required=True, help="PNG file to write")
    p.add_argument("--title", help="figure title")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from zoo.errors import DataError
    from zoo.vectors import KeyedVectors
    from zoo.viz.embeddings import plot_embeddings

    kv = KeyedVectors.load(args.model)
    words = [w.strip() for w in args.words.split(",") if w.strip()]
    missing = [w for w in words if w not in kv and kv.oov is None]
    if missing:
        raise DataError(f"not in the vocabulary of {args.model}: {missing}")
    vectors = np.stack([kv.get_vector(w) for w in words])
    path = plot_embeddings(words, vectors, args.out, title=args.title)
    print(f"wrote {path}")
    return 0
