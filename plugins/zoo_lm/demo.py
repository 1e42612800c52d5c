"""``zoo demo charlm``: a character-level LSTM learns Hamlet, then writes some.

The seeds' second exercise at full size: `char-lstm-lm` reads the built-in
Hamlet (174 KB, public domain) as one character stream with truncated
backpropagation through time, is scored on the held-out last 5% (bits per
character), saved, loaded back from the file alone, and sampled at a few
temperatures.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from importlib import resources

import jax
import numpy as np
import optax

import zoo
from zoo.plugin_api import argument_type, generate_text, output_path, seed_type, split_text
from zoo_lm.perplexity import perplexity
from zoo_lm.recipe import build_vocab, train_language_model

__all__ = ["hamlet", "run"]

MODEL = "char-lstm-lm"


def hamlet() -> str:
    """The built-in text: Shakespeare's Hamlet."""
    return resources.files("zoo_lm").joinpath("data", "hamlet.txt").read_text(encoding="utf-8")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zoo demo charlm", description=__doc__.splitlines()[0])
    count = argument_type("[1, inf)")
    p.add_argument("--epochs", type=argument_type("(0, inf)", float), default=3.0, help="passes over the text")
    p.add_argument(
        "--layers",
        type=argument_type("[1, 64]"),
        default=1,
        help="LSTM layers (the preset has 2; 1 trains twice as fast)",
    )
    p.add_argument("--hidden", type=count, default=256, help="LSTM units per layer")
    p.add_argument("--batch-size", type=count, default=64)
    p.add_argument("--unroll", type=count, default=32)
    p.add_argument(
        "--lr", type=argument_type("(0, inf)", float), default=1e-2, help="Adam learning rate, cosine-decayed to 0"
    )
    p.add_argument("--length", type=count, default=300, help="characters to generate per sample")
    p.add_argument("--prompt", default="HAMLET.\n")
    p.add_argument("--out", type=output_path, default="zoo-demo-charlm.safetensors")
    p.add_argument("--seed", type=seed_type, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def run(argv: Sequence[str] = ()) -> int:
    args = _parser().parse_args(list(argv))
    chars = split_text(hamlet(), "char")
    cut = int(len(chars) * 0.95)
    vocab = build_vocab(chars[:cut], "char")
    train_ids, valid_ids = vocab.encode(chars[:cut]), vocab.encode(chars[cut:])
    sizes = {"num_layers": args.layers, "hidden_size": args.hidden}
    model = zoo.build(MODEL, key=jax.random.key(args.seed), vocab={"tokens": vocab}, **sizes)
    print(
        f"training {model.spec.name} ({args.layers} x {args.hidden}) on {cut:,} characters of Hamlet "
        f"({len(vocab)} symbols), {args.epochs:g} epochs"
    )
    started = time.perf_counter()
    result = train_language_model(
        model,
        train_ids,
        key=jax.random.key(args.seed + 1),
        batch_size=args.batch_size,
        unroll=args.unroll,
        epochs=args.epochs,
        optimizer=lambda per_epoch: optax.chain(
            optax.clip_by_global_norm(5.0),
            optax.adam(optax.cosine_decay_schedule(args.lr, int(args.epochs * per_epoch))),
        ),
        progress=not args.quiet,
        log_every=50,
    )
    elapsed, final = time.perf_counter() - started, result.history[-1]["loss"]
    print(f"trained in {elapsed:.0f}s, final training loss {final:.3f} nats/char")
    path = zoo.save(result.model, args.out)
    loaded = zoo.load(path)
    scores = perplexity(loaded, valid_ids, batch_size=1)
    print(f"saved {path}, loaded it back; held-out {len(valid_ids):,} characters: {scores['bits']:.3f} bits/char")
    for temperature in (0.5, 0.8):
        text = generate_text(
            loaded, args.prompt, length=args.length, key=jax.random.key(args.seed), temperature=temperature, top_p=0.95
        )[0]
        print(f"\n--- temperature {temperature}, top-p 0.95 ---\n{args.prompt}{text}")
    uniform_bits = float(np.log2(len(vocab)))
    return 0 if scores["bits"] < 0.6 * uniform_bits else 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
