"""``zoo translate MODEL_FILE "text" ...`` (or ``--file``): decode with a saved seq2seq model."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from zoo.building.files import output_path
from zoo.cli.tag_cmd import read_inputs
from zoo.errors import DataError, ZooError
from zoo.naming.domains import argument_type
from zoo.training.recipes import add_alias, add_encoding_argument, seed_type

__all__ = ["BEAM_ALPHA", "add_decode_arguments", "decode_options", "register"]

BEAM_ALPHA = 0.6
"""The beam component's default length penalty (its ``alpha`` in registry.toml), shown by --help."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("translate", help="translate text with a saved model (greedy, beam or sampling)")
    p.add_argument("model", type=Path, help="a .safetensors file saved by zoo")
    p.add_argument("text", nargs="*", help="sentences to translate (default: --file or standard input)")
    p.add_argument("--file", type=Path, help="one sentence a line; '-' for standard input")
    add_encoding_argument(p)
    out = p.add_argument(
        "--out", type=output_path, metavar="FILE", help="write translations here instead of standard output"
    )
    add_alias(p, out, "--output")
    p.add_argument("--replace-unk", action="store_true", help="copy the most attended source word for <unk>")
    add_decode_arguments(p)
    p.set_defaults(run=run)


def add_decode_arguments(p: argparse.ArgumentParser) -> None:
    """The search options shared by commands that decode."""
    search = p.add_argument_group("search (default: the strategy the model was saved with)")
    count = argument_type("[1, inf)")  # the domains of the decoding strategies' own parameters
    search.add_argument("--beam", type=count, metavar="K", help="beam search of width K")
    penalty = search.add_argument(
        "--length-penalty",
        type=argument_type("[0, inf)", float),
        metavar="A",
        help=f"beam: log-probabilities divided by length^A, 0: none (default {BEAM_ALPHA}, beam's alpha; "
        "a model trained with a beam strategy: its own)",
    )
    add_alias(search, penalty, "--alpha")
    search.add_argument(
        "--n-best", type=count, default=1, metavar="N", help="outputs per input, best first (with their scores)"
    )
    search.add_argument("--sample", action="store_true", help="draw samples instead of searching")
    search.add_argument(
        "--temperature", type=argument_type("(0, inf)", float), default=None, help="sampling temperature"
    )
    search.add_argument(
        "--top-k", type=argument_type("[0, inf)"), default=None, help="sample among the k likeliest tokens (0: all)"
    )
    search.add_argument("--top-p", type=argument_type("(0, 1]", float), default=None, help="nucleus sampling mass")
    search.add_argument("--seed", type=seed_type, default=0, help="sampling seed")
    search.add_argument("--max-length", type=argument_type("[1, 100000]"), help="most output tokens")


def decode_options(args: argparse.Namespace) -> dict[str, Any]:
    """`model.decode` keyword arguments from the search options."""
    if args.sample and args.beam is not None:
        raise DataError("choose --beam or --sample, not both")
    if not args.sample and any(v is not None for v in (args.temperature, args.top_k, args.top_p)):
        raise DataError("--temperature, --top-k and --top-p need --sample")
    if args.length_penalty is not None and args.beam is None:
        raise DataError("--length-penalty needs --beam K")
    options: dict[str, Any] = {}
    if args.sample:
        import jax

        options = {"strategy": "sample", "num_samples": args.n_best, "key": jax.random.key(args.seed)}
        for name in ("temperature", "top_k", "top_p"):
            if getattr(args, name) is not None:
                options[name] = getattr(args, name)
    elif args.beam is not None:
        options = {"strategy": "beam", "beam_size": args.beam, "n_best": args.n_best}
        if args.n_best > args.beam:
            raise DataError(f"--n-best {args.n_best} exceeds the beam width {args.beam}")
        if args.length_penalty is not None:
            options["alpha"] = args.length_penalty
    elif args.n_best != 1:
        raise DataError("--n-best needs --beam K or --sample")
    if args.max_length is not None:
        options["max_length"] = args.max_length
    return options


def run(args: argparse.Namespace) -> int:
    from zoo.building.weights import load

    options = decode_options(args)
    texts = read_inputs(args)
    model = load(args.model)  # a damaged file is refused before JAX is imported
    from zoo.interfaces import Translator

    if not isinstance(model, Translator):
        raise ZooError(f"{model.spec.name!r} does not translate text; it is not a sequence-to-sequence model")
    if args.replace_unk:
        options["replace_unk"] = True
    results = model.translate(texts, with_scores=True, **options)
    lines = []
    for outputs in results:
        if args.n_best == 1:
            lines.append(outputs[0][0] if outputs else "")
        else:
            lines += [f"{rank}\t{score:.4f}\t{text}" for rank, (text, score) in enumerate(outputs, 1)]
    text = "\n".join(lines) + "\n"
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
