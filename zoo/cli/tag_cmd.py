"""``zoo tag MODEL_FILE "a sentence" ...`` (or ``--file``): tag tokens with a saved tagger."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zoo.building.files import output_path
from zoo.data.textfile import decode_bytes, read_lines
from zoo.errors import DataError, ZooError
from zoo.training.recipes import add_alias, add_encoding_argument

__all__ = ["read_inputs", "register"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tag", help="tag every token of sentences with a saved model (e.g. part of speech)")
    p.add_argument("model", type=Path, help="a .safetensors file saved by zoo (a model that tags)")
    p.add_argument("text", nargs="*", help="sentences, tokens split at spaces (default: --file or standard input)")
    p.add_argument("--file", type=Path, help="one sentence a line; '-' for standard input")
    add_encoding_argument(p)
    p.add_argument(
        "--format", choices=["slash", "conll"], default="slash", help="word/TAG lines, or token<TAB>tag columns"
    )
    out = p.add_argument(
        "--out", type=output_path, metavar="FILE", help="write the tagged text here instead of standard output"
    )
    add_alias(p, out, "--output")
    p.set_defaults(run=run)


def read_inputs(args: argparse.Namespace) -> list[str]:
    """The texts of a command: its arguments, else ``--file`` lines, else standard input (blank lines skipped)."""
    if args.text and args.file is not None:
        raise DataError("give texts or --file, not both")
    if args.text:
        return list(args.text)
    encoding = getattr(args, "encoding", "utf-8")
    if args.file is None or str(args.file) == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        text = sys.stdin.read() if stdin is None else decode_bytes(stdin.read(), encoding=encoding, name="stdin")
        lines = text.splitlines()
    else:
        lines = [line for _, line in read_lines(args.file, encoding=encoding, what="input file")]
    return [line for line in lines if line.strip()]


def run(args: argparse.Namespace) -> int:
    from zoo.building.weights import load

    sentences = [line.split() for line in read_inputs(args)]
    model = load(args.model)  # a damaged file is refused before JAX is imported
    from zoo.interfaces import Tagger

    if not isinstance(model, Tagger):
        raise ZooError(f"{model.spec.name!r} does not tag tokens; train a model that does (zoo list shows the models)")
    tagged = model.tag(sentences)
    if args.format == "slash":
        text = "".join(
            " ".join(f"{w}/{t}" for w, t in zip(s, tags, strict=True)) + "\n"
            for s, tags in zip(sentences, tagged, strict=True)
        )
    else:
        text = "".join(
            "".join(f"{w}\t{t}\n" for w, t in zip(s, tags, strict=True)) + "\n"
            for s, tags in zip(sentences, tagged, strict=True)
        )
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
