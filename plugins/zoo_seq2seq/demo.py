"""``zoo demo reversal``: learn to reverse digit sequences, save, reload, decode.

The seeds' third exercise: a seq2seq model with Luong attention learns to
reverse random digit sequences of length 3-10; the demo saves it, loads it
back from the file alone, decodes 1,000 held-out sequences and prints the
exact-match accuracy and one alignment (it should be an anti-diagonal).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import jax
import numpy as np
import optax

from zoo.plugin_api import argument_type, build, load, output_path, save, seed_type, train
from zoo_seq2seq.data import encode_sources, pair_batches
from zoo_seq2seq.tasks import digit_vocab, reversal_pairs

__all__ = ["alignment_table", "run"]

MODEL = "seq2seq-reversal"


def alignment_table(weights: np.ndarray, source: Sequence[str], output: Sequence[str]) -> str:
    """Attention weights as text: one row per output token, one column per source token."""
    width = max(4, *(len(t) for t in source))
    lines = [" " * 6 + "".join(t.rjust(width + 1) for t in source)]
    for token, row in zip(output, weights, strict=False):
        lines.append(token.rjust(5) + " " + "".join(f"{w:{width + 1}.2f}" for w in row[: len(source)]))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="zoo demo reversal", description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=argument_type("[1, inf)"), default=1500)
    p.add_argument("--train-size", type=argument_type("[1, inf)"), default=20000)
    p.add_argument("--test-size", type=argument_type("[1, inf)"), default=1000)
    p.add_argument("--out", type=output_path, default="zoo-demo-reversal.safetensors")
    p.add_argument("--seed", type=seed_type, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def held_out_split(train_size: int, test_size: int, seed: int):
    """Training pairs with every held-out source removed, and the held-out pairs."""
    test_src, test_tgt = reversal_pairs(test_size, seed=seed + 1)
    held = {tuple(s) for s in test_src}
    src, tgt = reversal_pairs(train_size, seed=seed)
    kept = [i for i, s in enumerate(src) if tuple(s) not in held]
    return [src[i] for i in kept], [tgt[i] for i in kept], test_src, test_tgt


def run(argv: Sequence[str] = ()) -> int:
    args = _parser().parse_args(list(argv))
    vocab = digit_vocab()
    train_src, train_tgt, test_src, test_tgt = held_out_split(args.train_size, args.test_size, args.seed)
    data = pair_batches(vocab, vocab, train_src, train_tgt, batch_size=64, seed=args.seed, buckets=[6, 11])
    model = build(MODEL, key=jax.random.key(args.seed), vocab={"src": vocab, "tgt": vocab})
    print(f"training {model.spec.name} on {len(train_src):,} reversal pairs ({args.steps} steps)")
    started = time.perf_counter()
    result = train(
        model,
        data,
        steps=args.steps,
        key=jax.random.key(args.seed + 1),
        optimizer=optax.adam(3e-3),
        units="tgt_mask",
        progress=not args.quiet,
        log_every=100,
    )
    print(f"trained in {time.perf_counter() - started:.0f}s, final loss {result.history[-1]['loss']:.4f}")
    path = save(result.model, args.out)
    loaded = load(path)
    print(f"saved {path} and loaded it back from the file alone ({loaded.spec.name})")
    ids, mask = encode_sources(vocab, test_src)
    tokens = np.asarray(loaded.decode(ids, mask).tokens[:, 0])
    outputs = [vocab.decode(row) for row in tokens]
    exact = float(np.mean([o == t for o, t in zip(outputs, test_tgt, strict=True)]))
    print(f"exact match on {len(test_src):,} held-out sequences: {exact:.1%}")
    example = int(np.argmax([len(s) for s in test_src[:50]]))
    src, out = test_src[example], outputs[example]
    print(f"\nsource: {' '.join(src)}\noutput: {' '.join(out)}")
    weights = np.asarray(loaded.attention_weights(ids[example], tokens[example]))
    print("attention (rows: output tokens, columns: source tokens):")
    print(alignment_table(weights, src, [*out, "</s>"]))
    return 0 if exact >= 0.99 else 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
