"""Temporary stand-in for `zoo.data.corpus` until it lands (same signatures, minimal)."""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from zoo.data.vocab import Vocab

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def _sentences(source, tokenizer=None) -> Iterable[Sequence[str]]:
    if not isinstance(source, str | bytes) and not hasattr(source, "__fspath__"):
        return source
    tokenize = tokenizer or (lambda line: _WORD.findall(line.lower()))
    opener = gzip.open if str(source).endswith(".gz") else open

    def lines() -> Iterator[list[str]]:
        with opener(source, "rt", encoding="utf-8") as handle:
            for line in handle:
                tokens = tokenize(line)
                if tokens:
                    yield tokens

    return lines()


def count_tokens(source, tokenizer=None) -> Counter[str]:
    counts: Counter[str] = Counter()
    for sentence in _sentences(source, tokenizer):
        counts.update(sentence)
    return counts


def build_word_vocab(counts, min_count: int = 5, max_vocab: int | None = None, *, specials=()) -> Vocab:
    return Vocab.build(counts, min_count=min_count, max_size=max_vocab, specials=tuple(specials))


def iter_ids(source, vocab: Vocab, tokenizer=None) -> Iterator[np.ndarray]:
    index = vocab.index
    for sentence in _sentences(source, tokenizer):
        ids = [i for i in map(index.get, sentence) if i is not None]
        if ids:
            yield np.asarray(ids, dtype=np.int32)
