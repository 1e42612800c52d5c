"""``zoo train seq2seq+... --pairs FILE`` (or ``--task reversal``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import jax
import numpy as np
import optax

import zoo
from zoo.data.tasks import digit_vocab, reversal_pairs
from zoo.data.vocab import Vocab
from zoo.errors import DataError
from zoo.recipes import add_common_arguments
from zoo_seq2seq.data import encode_sources, pair_batches, read_pairs

__all__ = ["Seq2SeqRecipe", "recipe"]


class Seq2SeqRecipe:
    """Train an encoder-decoder on a parallel corpus or a generated task."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=3000, batch_size=64, lr=1e-3)
        data = parser.add_mutually_exclusive_group(required=True)
        data.add_argument("--pairs", type=Path, help="src<TAB>tgt lines, plain or .gz")
        data.add_argument("--task", choices=["reversal"], help="a generated task")
        parser.add_argument("--swap", action="store_true", help="read the second column as the source")
        parser.add_argument("--min-count", type=int, default=1, help="drop rarer tokens to <unk>")
        parser.add_argument("--max-vocab", type=int, default=None, help="keep at most this many tokens per side")
        parser.add_argument("--valid-size", type=int, default=500, help="held-out pairs for exact-match evaluation")

    def _data(self, options: argparse.Namespace) -> tuple[Vocab, Vocab, list, list]:
        if options.task == "reversal":
            vocab = digit_vocab()
            src, tgt = reversal_pairs(20000, seed=options.seed)
            return vocab, vocab, src, tgt
        src, tgt = read_pairs(options.pairs, reverse=options.swap)
        build = dict(min_count=options.min_count, max_size=options.max_vocab)
        return Vocab.build(src, **build), Vocab.build(tgt, **build), src, tgt

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        src_vocab, tgt_vocab, src, tgt = self._data(options)
        order = np.random.default_rng(options.seed).permutation(len(src))
        n_valid = min(options.valid_size, len(src) // 10)
        if len(src) - n_valid < options.batch_size:
            raise DataError(f"{len(src)} pairs are too few for batches of {options.batch_size}")
        valid = [int(i) for i in order[:n_valid]]
        train_ids = [int(i) for i in order[n_valid:]]
        data = pair_batches(
            src_vocab,
            tgt_vocab,
            [src[i] for i in train_ids],
            [tgt[i] for i in train_ids],
            batch_size=options.batch_size,
            seed=options.seed,
        )
        longest = max(len(t) for t in tgt) + 1
        overrides.setdefault("strategy.max_length", longest)
        model = zoo.build(
            name, key=jax.random.key(options.seed), vocab={"src": src_vocab, "tgt": tgt_vocab}, **overrides
        )
        ids, mask = encode_sources(src_vocab, [src[i] for i in valid])
        wanted = [tgt[i] for i in valid]

        def evaluate(m) -> dict[str, float]:
            tokens = np.asarray(m.decode(ids, mask).tokens[:, 0])
            return {
                "exact_match": float(np.mean([tgt_vocab.decode(r) == w for r, w in zip(tokens, wanted, strict=True)]))
            }

        result = zoo.train(
            model,
            data,
            steps=options.steps,
            key=jax.random.key(options.seed + 1),
            optimizer=optax.chain(optax.clip_by_global_norm(5.0), optax.adam(options.lr)),
            evaluate=evaluate if n_valid else None,
            eval_every=options.eval_every or None,
            checkpoint=options.checkpoint,
            checkpoint_every=options.checkpoint_every,
            resume=options.resume,
            units="tgt_mask",
            progress=not options.quiet,
            description=name,
        )
        return zoo.save(result.model, options.out)


recipe = Seq2SeqRecipe()
