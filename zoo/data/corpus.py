"""Streaming text corpora: lines, tokenised sentences, token counts, word vocabularies.

Everything here streams: a corpus is read one line at a time (plain text or
gzip, detected from the file's first bytes, not its name), so a corpus larger
than memory works and memory grows with the vocabulary, never with the corpus.
A line is a sentence; a line longer than `MAX_LINE_CHARS` (a corpus with no
newlines at all, like text8) is cut at whitespace into pieces of about that size.
Files are read through `zoo.data.textfile`: strict UTF-8 by default (give
`encoding` and `errors` for other files), binary and truncated files refused.

The word pipeline every embedder shares::

    counts = count_tokens("corpus.txt.gz")               # Counter, one pass
    vocab = build_word_vocab(counts, min_count=5)         # most frequent first
    for ids in iter_ids("corpus.txt.gz", vocab):          # int32 arrays, OOV dropped
        ...
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from zoo.data.textfile import MAX_LINE_CHARS, open_text
from zoo.data.tokenize import Tokenizer, get_tokenizer
from zoo.data.vocab import SPECIALS, Vocab
from zoo.errors import DataError

__all__ = [
    "MAX_LINE_CHARS",
    "Corpus",
    "build_word_vocab",
    "count_tokens",
    "iter_ids",
    "iter_lines",
    "iter_sentences",
    "open_text",
]

Corpus = str | os.PathLike | Sequence[str | os.PathLike]
"""One corpus file, or several read one after the other."""


def _paths(corpus: Corpus) -> list[Path]:
    if isinstance(corpus, str | os.PathLike):
        return [Path(corpus)]
    paths = [Path(p) for p in corpus]
    if not paths:
        raise DataError("an empty list of corpus files")
    return paths


def iter_lines(
    corpus: Corpus, *, max_chars: int = MAX_LINE_CHARS, encoding: str = "utf-8", errors: str = "strict"
) -> Iterator[str]:
    """Yield the lines of one or several files, without their line ends.

    A line longer than `max_chars` is yielded in pieces cut at whitespace (each
    shorter than ``2 * max_chars``; a single token up to ``4 * max_chars``), so
    memory stays bounded on a corpus without newlines. `encoding` and `errors`
    decode the files (see `zoo.data.textfile`): undecodable or binary input is a
    `DataError` naming the file, line and byte offset.
    """
    for path in _paths(corpus):
        with open_text(path, encoding=encoding, errors=errors, max_chars=max_chars, what="corpus file") as text:
            carry = ""
            for piece in text.pieces():
                if piece.endswith("\n"):
                    yield (carry + piece).rstrip("\r\n")
                    carry = ""
                    continue
                carry += piece  # a part of a line (reads may stop short of max_chars)
                if len(carry) < max_chars:
                    continue
                cut = max(carry.rfind(" "), carry.rfind("\t"))
                if cut > 0:
                    yield carry[:cut]
                    carry = carry[cut + 1 :]
                elif len(carry) >= 4 * max_chars:  # one enormous token: give it whole
                    yield carry
                    carry = ""
            if carry:
                yield carry


def iter_sentences(
    corpus: Corpus, tokenizer: str | Tokenizer | None = None, *, encoding: str = "utf-8", errors: str = "strict"
) -> Iterator[list[str]]:
    """Yield the tokens of each non-empty line of `corpus` (one file or several).

    **Arguments:**

    - `corpus`: a path (plain text or gzip) or a sequence of paths.
    - `tokenizer`: a name (``"words"``, the default; see `zoo.data.tokenize`), a
      tokeniser a plugin registered, or any callable ``str -> list[str]``.
    - `encoding`, `errors`: how the files are decoded (as in `iter_lines`).

    **Returns:** an iterator of token lists; lines without tokens are skipped.
    Each call reads the files anew, so the result can be iterated once per epoch
    by calling again.
    """
    tokenize = get_tokenizer(tokenizer)
    for line in iter_lines(corpus, encoding=encoding, errors=errors):
        tokens = tokenize(line)
        if tokens:
            yield tokens


def _is_corpus(source: object) -> bool:
    """A path, or a non-empty list/tuple of paths (a list of sentences holds lists)."""
    if isinstance(source, str | os.PathLike):
        return True
    return isinstance(source, list | tuple) and bool(source) and isinstance(source[0], str | os.PathLike)


def _sentences(
    source: Corpus | Iterable[Sequence[str]], tokenizer: str | Tokenizer | None, encoding: str, errors: str
) -> Iterable[Sequence[str]]:
    if _is_corpus(source):
        return iter_sentences(source, tokenizer, encoding=encoding, errors=errors)
    if tokenizer is not None:
        raise DataError("a tokenizer applies to corpus files; these sentences are already tokenised")
    return source


def count_tokens(
    source: Corpus | Iterable[Sequence[str]],
    tokenizer: str | Tokenizer | None = None,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> Counter[str]:
    """Count every token in one pass.

    `source` is a corpus path or a list of paths (tokenised with `tokenizer`,
    decoded with `encoding` and `errors`), or an iterable of token sequences.
    Keys keep the order of first appearance, which `build_word_vocab` uses to
    break frequency ties; ``counts.total()`` is the corpus size in tokens.
    """
    counts: Counter[str] = Counter()
    for sentence in _sentences(source, tokenizer, encoding, errors):
        counts.update(sentence)
    return counts


def build_word_vocab(
    counts: Counter[str] | dict[str, int],
    min_count: int = 5,
    max_vocab: int | None = None,
    *,
    specials: Sequence[str] = (),
) -> Vocab:
    """The vocabulary of a word-embedding model.

    Words seen at least `min_count` times, most frequent first (ties in order
    of first appearance), at most `max_vocab` of them; `Vocab.counts` keeps
    their frequencies (embedders use them for subsampling and noise). By
    default there are no reserved tokens: id i is the i-th most frequent word,
    as in word2vec's files, so "the first N words" means "the N most frequent"
    (``restrict_vocab`` in `zoo.vectors.KeyedVectors`). Out-of-vocabulary words
    are dropped from the text (`iter_ids`), not mapped to ``<unk>``. Pass
    `specials` (roles of `zoo.data.SPECIALS`, e.g. ``("pad",)``) if a model
    needs reserved ids; they come first, with count 0.
    """
    if min_count < 1:
        raise DataError(f"min_count must be at least 1, got {min_count}")
    if max_vocab is not None and max_vocab < 1:
        raise DataError(f"max_vocab must be positive or None, got {max_vocab}")
    unknown = [s for s in specials if s not in SPECIALS]
    if unknown:
        raise DataError(f"unknown special roles {unknown}; known: {sorted(SPECIALS)}")
    vocab = Vocab.build(counts, min_count=min_count, max_size=max_vocab, specials=tuple(specials))
    if len(vocab) == len(specials):
        most = max(counts.values(), default=0)
        raise DataError(
            f"no word occurs at least min_count={min_count} times (the most frequent occurs {most} times); "
            "lower min_count or use a larger corpus"
        )
    return vocab


def iter_ids(
    source: Corpus | Iterable[Sequence[str]],
    vocab: Vocab,
    tokenizer: str | Tokenizer | None = None,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> Iterator[np.ndarray]:
    """Yield each sentence as an int32 array of vocabulary ids, dropping unknown words.

    Sentences left empty are skipped. `source`, `encoding` and `errors` are as in `count_tokens`.
    """
    index = vocab.index
    for sentence in _sentences(source, tokenizer, encoding, errors):
        ids = [i for i in map(index.get, sentence) if i is not None]
        if ids:
            yield np.fromiter(ids, dtype=np.int32, count=len(ids))
