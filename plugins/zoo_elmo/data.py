"""Corpora for ELMo's biLM: text lines -> token windows -> spelled, bucketed batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from zoo.plugin_api import DataError, SequenceBatches, SpelledBatches, Vocab, bucket_boundaries, iter_lines

__all__ = ["lm_batches", "read_windows", "windows"]


def windows(tokens: Sequence[str], max_length: int) -> Iterator[list[str]]:
    """Cut a line's tokens into pieces of at most `max_length` (the last may be shorter)."""
    for start in range(0, len(tokens), max_length):
        yield list(tokens[start : start + max_length])


def read_windows(
    path: str | Path,
    *,
    max_length: int = 40,
    max_tokens: int | None = None,
    lowercase: bool = False,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> list[list[str]]:
    """Whitespace-tokenised lines of a text file (plain or gzip), cut into windows of at most
    `max_length` tokens; stops after `max_tokens` tokens (None: the whole file).

    Read as a corpus (`zoo.data.corpus.iter_lines`): decoded with `encoding` and `errors`,
    very long lines cut at whitespace."""
    path = Path(path)
    out: list[list[str]] = []
    seen = 0
    for line in iter_lines(path, encoding=encoding, errors=errors):
        tokens = (line.lower() if lowercase else line).split()
        for piece in windows(tokens, max_length):
            out.append(piece)
            seen += len(piece)
        if max_tokens is not None and seen >= max_tokens:
            break
    if not out:
        raise DataError(f"{path} holds no text")
    return out


def lm_batches(
    sentences: Sequence[Sequence[str]],
    vocab: Vocab,
    *,
    batch_size: int,
    max_word_length: int | None,
    buckets: Sequence[int] | None = None,
    seed: int = 0,
    shuffle: bool = True,
) -> SequenceBatches:
    """Batches of ``ids``/``ids_mask`` (targets in `vocab`) and, with `max_word_length`, ``chars``."""
    fields = {"ids": [vocab.encode(s) for s in sentences]}
    options = {
        "batch_size": batch_size,
        "pad_id": vocab.pad_id,
        "buckets": buckets or bucket_boundaries([len(s) for s in sentences], count=4),
        "seed": seed,
        "shuffle": shuffle,
    }
    if max_word_length is None:
        return SequenceBatches(fields, **options)
    return SpelledBatches(fields, sentences, max_length=max_word_length, **options)
