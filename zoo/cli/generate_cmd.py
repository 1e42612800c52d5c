"""``zoo generate MODEL_FILE``: sample text from a saved language model."""

from __future__ import annotations

import argparse
from pathlib import Path

from zoo.naming.domains import argument_type
from zoo.training.recipes import add_alias, seed_type

__all__ = ["register"]

_positive = argument_type("[1, inf)")
_count = argument_type("[0, inf)")
_temperature = argument_type("[0, inf)", float)
_mass = argument_type("(0, 1]", float)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="sample text from a saved language model")
    p.add_argument("model", type=Path, help="a .safetensors file of a language model")
    p.add_argument("--prompt", default="", help="text to continue (split into words or characters as trained)")
    p.add_argument("--length", type=_positive, default=100, help="tokens to generate (default 100)")
    p.add_argument("--temperature", type=_temperature, default=1.0, help="0 is greedy; below 1 is more conservative")
    p.add_argument("--top-k", type=_count, default=0, help="sample among the k most probable tokens (0: all)")
    p.add_argument("--top-p", type=_mass, default=1.0, help="nucleus: the most probable tokens holding this mass")
    n_best = p.add_argument(
        "--n-best", type=_positive, default=1, metavar="N", help="independent continuations to draw"
    )
    add_alias(p, n_best, "--samples")
    p.add_argument("--seed", type=seed_type, default=0, help="the same seed gives the same text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from zoo.building.weights import load
    from zoo.errors import UnknownNameError

    model = load(args.model)  # a damaged file is refused before JAX is imported
    import jax

    from zoo.generation import generate_text
    from zoo.interfaces import LanguageModel

    if not isinstance(model, LanguageModel):
        raise UnknownNameError(f"{model.spec.name!r} is not a language model: it cannot generate text")
    texts = generate_text(
        model,
        args.prompt,
        length=args.length,
        key=jax.random.key(args.seed),
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        samples=args.n_best,
    )
    joiner = "" if model.level == "char" or not args.prompt else " "
    for index, text in enumerate(texts):
        if index:
            print("-" * 40)
        print(f"{args.prompt}{joiner}{text}")
    return 0
