"""Seq2seq data: a parallel-corpus reader, a tokeniser, vocabularies and bucketed batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from zoo.plugin_api import (  # re-exported for plugin users
    MAX_LINE_CHARS,
    DataError,
    SequenceBatches,
    Vocab,
    detokenize,
    pad_sequences,
    read_lines,
    tokenize,
)

__all__ = [
    "build_vocabs",
    "detokenize",
    "encode_pairs",
    "encode_sources",
    "pair_batches",
    "read_pairs",
    "tokenize",
]


def read_pairs(
    path: str | Path,
    *,
    swap: bool = False,
    tokenizer: Callable[[str], list[str]] = tokenize,
    max_length: int | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> tuple[list[list[str]], list[list[str]]]:
    """Read ``src<TAB>tgt[<TAB>...]`` lines (plain or gzip), tokenised.

    **Arguments:**

    - `path`: the corpus; gzip is told by its first bytes. Extra columns (an
      attribution, say) are ignored; blank lines are skipped.
    - `swap`: read the second column as the source (Tatoeba's ``en<TAB>es`` read
      as Spanish -> English).
    - `tokenizer`: text -> tokens (default `tokenize`: lowercase, punctuation split).
    - `max_length`: drop pairs with a side longer than this many tokens.
    - `encoding`, `errors`: how the file is decoded (see `zoo.data.textfile`: an
      undecodable or binary file is a `DataError` naming the line and byte).
    - `max_line_chars`: lines longer than this are skipped unread (a
      `LongLinesWarning` counts them), so one huge line cannot fill memory.

    **Returns:** ``(sources, targets)``, lists of token lists.
    """
    path = Path(path)
    sources, targets = [], []
    text = {"encoding": encoding, "errors": errors, "max_chars": max_line_chars, "what": "pairs file"}
    for number, line in read_lines(path, **text):
        if not line.strip():
            continue
        columns = line.split("\t", 2)
        if len(columns) < 2:
            raise DataError(f"{path}:{number}: expected 'source<TAB>target', got {line[:60]!r}")
        src, tgt = tokenizer(columns[1] if swap else columns[0]), tokenizer(columns[0] if swap else columns[1])
        if not src or not tgt or (max_length is not None and max(len(src), len(tgt)) > max_length):
            continue
        sources.append(src)
        targets.append(tgt)
    if not sources:
        limit = f" of at most {max_length} tokens" if max_length is not None else ""
        raise DataError(f"{path} holds no non-empty pairs{limit}")
    return sources, targets


def build_vocabs(
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    *,
    joint: bool = False,
    min_count: int = 1,
    max_size: int | None = None,
) -> tuple[Vocab, Vocab]:
    """Source and target vocabularies (reserved ids first); with `joint`, one shared by both.

    Tokens seen fewer than `min_count` times, or beyond the `max_size` most
    frequent, become ``<unk>`` when encoded.
    """
    options = {"min_count": min_count, "max_size": max_size}
    if joint:
        shared = Vocab.build([*sources, *targets], **options)
        return shared, shared
    return Vocab.build(sources, **options), Vocab.build(targets, **options)


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
    """Length-bucketed batches with ``src``, ``src_mask``, ``tgt``, ``tgt_mask``.

    Pairs of similar length share a bucket (4 quantile widths by default), so
    little compute goes to padding and the step compiles once per bucket.
    """
    if src_vocab.pad_id != tgt_vocab.pad_id:
        raise DataError("source and target vocabularies must share the pad id")
    return SequenceBatches(
        encode_pairs(src_vocab, tgt_vocab, sources, targets),
        batch_size=batch_size,
        pad_id=src_vocab.pad_id,
        buckets=buckets,
        seed=seed,
    )
