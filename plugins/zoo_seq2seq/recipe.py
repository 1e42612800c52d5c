"""``zoo train seq2seq+... --pairs FILE`` (or ``--task reversal|sorting|dates``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import jax
import numpy as np
import optax

from zoo.plugin_api import (
    DataError,
    Vocab,
    add_common_arguments,
    add_encoding_argument,
    argument_type,
    build,
    get_tokenizer,
    resolve_spec,
    save,
    train,
)
from zoo_seq2seq.data import build_vocabs, encode_sources, pair_batches, read_pairs
from zoo_seq2seq.tasks import TASKS, get_task

__all__ = ["Seq2SeqRecipe", "exact_match", "recipe"]


def exact_match(model: Any, ids: np.ndarray, mask: np.ndarray, wanted: list[list[str]], **decode: Any) -> float:
    """Fraction of sources whose best decoded output equals the wanted tokens."""
    tgt_vocab = model.vocabs["tgt"]
    tokens = np.asarray(model.decode(ids, mask, **decode).tokens[:, 0])
    return float(np.mean([tgt_vocab.decode(row) == w for row, w in zip(tokens, wanted, strict=True)]))


class Seq2SeqRecipe:
    """Train an encoder-decoder on a parallel corpus or a generated task."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_common_arguments(parser, steps=3000, batch_size=64, lr=1e-3)
        data = parser.add_mutually_exclusive_group(required=True)
        data.add_argument("--pairs", type=Path, help="src<TAB>tgt[<TAB>...] lines, plain or gzip")
        data.add_argument("--task", choices=sorted(TASKS), help="a generated task")
        parser.add_argument(
            "--task-size", type=argument_type("[1, inf)"), default=20000, help="pairs generated for --task"
        )
        parser.add_argument("--swap", action="store_true", help="read the second column as the source")
        add_encoding_argument(parser)
        parser.add_argument("--tokenizer", default=None, help="tokeniser name for --pairs (default: punct)")
        parser.add_argument(
            "--max-length", type=argument_type("[1, inf)"), default=50, help="drop pairs with a longer side (tokens)"
        )
        parser.add_argument("--joint-vocab", action="store_true", help="one vocabulary for source and target")
        parser.add_argument("--min-count", type=argument_type("[1, inf)"), default=1, help="rarer tokens become <unk>")
        parser.add_argument(
            "--max-vocab", type=argument_type("[1, inf)"), default=None, help="keep at most this many tokens per side"
        )
        parser.add_argument("--reverse-source", action="store_true", help="feed the source backwards (Sutskever)")
        parser.add_argument(
            "--valid-size",
            type=argument_type("[0, inf)"),
            default=500,
            help="held-out pairs for exact-match evaluation",
        )

    def _data(self, options: argparse.Namespace) -> tuple[Vocab, Vocab, list, list]:
        if options.task is not None:
            task = get_task(options.task)
            src, tgt = task.make(options.task_size, seed=options.seed)
            if task.fixed_vocab is not None:
                vocab = task.fixed_vocab()
                return vocab, vocab, src, tgt
        else:
            tokenizer = get_tokenizer(options.tokenizer or "punct")
            src, tgt = read_pairs(
                options.pairs,
                swap=options.swap,
                max_length=options.max_length,
                tokenizer=tokenizer,
                encoding=options.encoding,
            )
        src_vocab, tgt_vocab = build_vocabs(
            src, tgt, joint=options.joint_vocab, min_count=options.min_count, max_size=options.max_vocab
        )
        return src_vocab, tgt_vocab, src, tgt

    def train(self, name: str, options: argparse.Namespace, overrides: dict[str, Any]) -> Path:
        if options.reverse_source:
            overrides["reverse_source"] = True
        if options.tokenizer is not None:
            overrides["tokenizer"] = options.tokenizer
        resolve_spec(name, options, overrides)
        src_vocab, tgt_vocab, src, tgt = self._data(options)
        order = np.random.default_rng(options.seed).permutation(len(src))
        n_valid = min(options.valid_size, len(src) // 10)
        if len(src) - n_valid < options.batch_size:
            raise DataError(f"{len(src)} pairs are too few for batches of {options.batch_size}")
        valid, train_ids = [int(i) for i in order[:n_valid]], [int(i) for i in order[n_valid:]]
        data = pair_batches(
            src_vocab,
            tgt_vocab,
            [src[i] for i in train_ids],
            [tgt[i] for i in train_ids],
            batch_size=options.batch_size,
            seed=options.seed,
        )
        overrides.setdefault("strategy.max_length", max(len(t) for t in tgt) + 1)
        model = build(name, key=jax.random.key(options.seed), vocab={"src": src_vocab, "tgt": tgt_vocab}, **overrides)
        ids, mask = encode_sources(src_vocab, [src[i] for i in valid])
        wanted = [tgt[i] for i in valid]
        result = train(
            model,
            data,
            steps=options.steps,
            key=jax.random.key(options.seed + 1),
            optimizer=optax.chain(optax.clip_by_global_norm(5.0), optax.adam(options.lr)),
            evaluate=(lambda m: {"exact_match": exact_match(m, ids, mask, wanted)}) if n_valid else None,
            eval_every=options.eval_every or None,
            checkpoint=options.checkpoint,
            checkpoint_every=options.checkpoint_every,
            resume=options.resume,
            units="tgt_mask",
            progress=not options.quiet,
            description=name,
        )
        return save(result.model, options.out)


recipe = Seq2SeqRecipe()
