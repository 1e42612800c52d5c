"""Seq2seq data: tokenised pairs -> vocabularies -> bucketed batches."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zoo.data.batching import SequenceBatches, pad_sequences
from zoo.data.vocab import Vocab
from zoo.errors import DataError

__all__ = ["encode_pairs", "encode_sources", "pair_batches", "read_pairs"]


def read_pairs(
    path: str | Path, *, lowercase: bool = True, reverse: bool = False
) -> tuple[list[list[str]], list[list[str]]]:
    """Read ``src<TAB>tgt[<TAB>...]`` lines (plain or .gz), whitespace-tokenised.

    With `reverse`, the second column is the source (e.g. Tatoeba's ``en<TAB>es``
    read as Spanish -> English).
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    sources, targets = [], []
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            columns = line.split("\t")
            if len(columns) < 2:
                raise DataError(f"{path}:{number}: expected 'source<TAB>target', got {line[:60]!r}")
            src, tgt = (columns[1], columns[0]) if reverse else (columns[0], columns[1])
            if lowercase:
                src, tgt = src.lower(), tgt.lower()
            sources.append(src.split())
            targets.append(tgt.split())
    if not sources:
        raise DataError(f"{path} holds no pairs")
    return sources, targets


def encode_sources(vocab: Vocab, sources: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Pad-encoded sources ``[n, longest]`` and their masks."""
    return pad_sequences([vocab.encode(s) for s in sources], pad_id=vocab.pad_id)


def encode_pairs(
    src_vocab: Vocab, tgt_vocab: Vocab, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]
) -> dict[str, list[np.ndarray]]:
    """Source ids, and target ids ending with eos (the decoder adds bos itself)."""
    return {
        "src": [src_vocab.encode(s) for s in sources],
        "tgt": [tgt_vocab.encode(t, eos=True) for t in targets],
    }


def pair_batches(
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    *,
    batch_size: int,
    seed: int = 0,
    buckets: Sequence[int] | None = None,
) -> SequenceBatches:
    """Length-bucketed batches with ``src``, ``src_mask``, ``tgt``, ``tgt_mask``."""
    if src_vocab.pad_id != tgt_vocab.pad_id:
        raise DataError("source and target vocabularies must share the pad id")
    return SequenceBatches(
        encode_pairs(src_vocab, tgt_vocab, sources, targets),
        batch_size=batch_size,
        pad_id=src_vocab.pad_id,
        buckets=buckets,
        seed=seed,
    )
