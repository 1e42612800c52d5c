"""``zoo plot attention MODEL_FILE "input"``: decode, then draw the attention heatmap."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo.building.files import output_path
from zoo.errors import ZooError
from zoo.naming.domains import argument_type

__all__ = ["register"]


def register(kinds: argparse._SubParsersAction) -> None:
    p = kinds.add_parser("attention", help="heatmap of a translating model's attention on one input")
    p.add_argument("model", type=Path, help="a .safetensors file saved by zoo")
    p.add_argument("text", help="the source sentence")
    p.add_argument("--out", type=output_path, default="attention.png", help="PNG to write (default attention.png)")
    p.add_argument(
        "--beam",
        type=argument_type("[1, inf)"),
        metavar="K",
        help="decode with beam search of width K (default: greedy)",
    )
    p.add_argument("--no-values", action="store_true", help="do not write the weights in the cells")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from zoo.building.weights import load
    from zoo.data.tokenize import get_tokenizer
    from zoo.interfaces import AttentionReporter
    from zoo.viz.attention import attention_heatmap

    model = load(args.model)
    if not isinstance(model, AttentionReporter) or "src" not in model.vocabs:
        raise ZooError(f"{model.spec.name!r} has no attention to plot (it needs source and target vocabularies)")
    src_vocab, tgt_vocab = model.vocabs["src"], model.vocabs["tgt"]
    source = get_tokenizer(model.spec.params.get("tokenizer", "punct"))(args.text)
    ids = np.asarray(src_vocab.encode(source))[None]
    decode = {"strategy": "beam", "beam_size": args.beam} if args.beam else {"strategy": "greedy"}
    hyps = model.decode(ids, **decode)
    length = int(hyps.lengths[0, 0])
    tokens = np.asarray(hyps.tokens[0, 0, :length])
    weights = model.attention_weights(ids[0], tokens)
    if weights is None:
        raise ZooError(
            f"{model.spec.name!r} has no attention to plot; train one that has: "
            "zoo train seq2seq+luong-general --data PAIRS --out MODEL"
        )
    labels = [src_vocab.tokens[i] for i in ids[0]]
    outputs = [tgt_vocab.tokens[i] for i in tokens]
    title = f"{model.spec.name}: {args.text}"
    path = attention_heatmap(np.asarray(weights), labels, outputs, args.out, title=title, annotate=not args.no_values)
    print(f"wrote {path}", file=sys.stderr)
    return 0
