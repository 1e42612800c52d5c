"""Streaming text corpora: lines, tokenised sentences, token counts, word vocabularies.

Everything here streams: a corpus is read one line at a time (plain text or
gzip, detected from the file's first bytes, not its name), so a corpus larger
than memory works and memory grows with the vocabulary, never with the corpus.
A line is a sentence; a line longer than `MAX_LINE_CHARS` (a corpus with no
newlines at all, like text8) is cut at whitespace into pieces of about that size.
Files are read through `zoo.data.textfile`: strict UTF-8 by default (give
`encoding` and `errors` for other files), binary and truncated files refused.

A corpus is a file, a folder or a glob pattern, or a sequence of them, read
one after the other (`zoo.data.corpus_files.corpus_files`: folders and patterns
give their files sorted by name), or the parts `split_corpus` cut it into.

The word pipeline every embedder shares::

    counts = count_tokens("corpus.txt.gz")               # Counter, one pass
    counts = count_tokens("corpus/*.txt", workers=4)      # the same Counter, four processes
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

from zoo.data.corpus_files import CorpusPart, corpus_files, split_corpus
from zoo.data.textfile import MAX_LINE_CHARS, open_text
from zoo.data.tokenize import Tokenizer, get_tokenizer
from zoo.data.vocab import SPECIALS, Vocab
from zoo.errors import DataError, ZooError

__all__ = [
    "MAX_LINE_CHARS",
    "Corpus",
    "CorpusPart",
    "build_word_vocab",
    "corpus_files",
    "count_tokens",
    "iter_ids",
    "iter_lines",
    "iter_sentences",
    "open_text",
    "parts_and_workers",
    "split_corpus",
]

Corpus = str | os.PathLike | CorpusPart | Sequence[str | os.PathLike | CorpusPart]
"""One corpus file, folder or glob pattern, or several read one after the other (or parts of them)."""


def _sources(corpus: Corpus) -> list[Path | CorpusPart]:
    """The files and parts of `corpus`, in reading order (folders and patterns expanded)."""
    if isinstance(corpus, CorpusPart):
        return [corpus]
    entries = [corpus] if isinstance(corpus, str | os.PathLike) else list(corpus)
    if not entries:
        raise DataError("an empty list of corpus files")
    return [s for e in entries for s in ([e] if isinstance(e, CorpusPart) else corpus_files(e))]


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
    for source in _sources(corpus):
        part = source if isinstance(source, CorpusPart) else CorpusPart(source)
        reading = {"encoding": encoding, "errors": errors, "max_chars": max_chars}
        with open_text(part.path, what="corpus file", start=part.start, stop=part.stop, **reading) as text:
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
    """A path or part, or a non-empty list/tuple of them (a list of sentences holds lists)."""
    if isinstance(source, str | os.PathLike | CorpusPart):
        return True
    return isinstance(source, list | tuple) and bool(source) and isinstance(source[0], str | os.PathLike | CorpusPart)


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
    workers: int | None = 1,
    across_processes: bool = False,
) -> Counter[str]:
    """Count every token in one pass.

    **Arguments:**

    - `source`: a corpus (files, folders, glob patterns, parts; see `Corpus`),
      tokenised with `tokenizer` and decoded with `encoding` and `errors`, or an
      iterable of token sequences.
    - `workers`: processes that count the files at the same time (None: one per
      core). The corpus is cut into parts (`split_corpus`: plain text at line ends,
      a gzip file whole) and their counts merged in corpus order, so the result is
      the same for every number of workers. A corpus under
      `zoo.data.corpus_pool.POOL_BYTES` given as paths is counted here (workers would
      cost more than they save); one given as parts is shared among them as it is.
    - `across_processes`: in a ``jax.distributed`` run, every process counts its
      share of the parts and all receive the merged counts
      (`zoo.data.corpus_pool.gather_counts`); every process must call it alike.

    **Returns:** a `Counter` whose keys keep the order of first appearance, which
    `build_word_vocab` uses to break frequency ties; ``counts.total()`` is the
    corpus size in tokens.
    """
    if not _is_corpus(source):
        if across_processes:
            raise DataError("across_processes shares corpus files among processes; these sentences are in memory")
        return _count(_sentences(source, tokenizer, encoding, errors))
    from zoo.data import corpus_pool
    from zoo.data.worker_pool import ordered_map

    if across_processes:
        parts, given = _parts(source, 16 * corpus_pool.process_count(), encoding)
        share = corpus_pool.process_share(parts)
        pool = _pool(share, workers, tokenizer, given=given)
    else:
        share, pool = parts_and_workers(source, workers, tokenizer=tokenizer, encoding=encoding)
    found = ordered_map(_count_part, share, workers=pool, initializer=_start_reader,
                        initargs=(tokenizer, encoding, errors))  # fmt: skip
    if not across_processes:
        return corpus_pool.merge_counts(found)
    try:
        counts: Counter[str] | Exception = corpus_pool.merge_counts(found)
    except ZooError as error:  # bad data in this process's share: the others hear of it, not wait for it
        counts = error
    return corpus_pool.gather_counts(counts, parts)


def parts_and_workers(
    corpus: Corpus, workers: int | None, *, tokenizer: str | Tokenizer | None = None, encoding: str = "utf-8"
) -> tuple[list[CorpusPart], int]:
    """How `count_tokens` (and a plugin's encoder) shares `corpus` among up to `workers` processes
    (None: one per core): ``(parts in corpus order, processes worth starting)``.

    Files are cut into about 4 parts per worker (`split_corpus`; with one worker they stay
    whole); a corpus given as parts keeps them. One process (no pool) for a corpus under
    `zoo.data.corpus_pool.POOL_BYTES` given as paths, for one part, or, when no number of
    workers was asked for, for a tokenizer that cannot be sent to a worker (a lambda); asked
    for, such a tokenizer is a `DataError`.
    """
    from zoo.data.corpus_pool import check_workers

    cores = check_workers(workers)
    parts, given = _parts(corpus, 4 * cores if cores > 1 else 1, encoding)
    return parts, _pool(parts, workers, tokenizer, given=given)


def _parts(corpus: Corpus, pieces: int, encoding: str) -> tuple[list[CorpusPart], bool]:
    """The parts of `corpus` (its own, or its files cut into about `pieces`), and whether they were given."""
    sources = _sources(corpus)
    given = any(isinstance(s, CorpusPart) for s in sources)
    if given or pieces == 1:  # given, or for one reader: the files as they are
        return [s if isinstance(s, CorpusPart) else CorpusPart(s) for s in sources], given
    return split_corpus(sources, pieces, encoding=encoding), False


def _pool(parts: list[CorpusPart], workers: int | None, tokenizer: str | Tokenizer | None, *, given: bool) -> int:
    from zoo.data.corpus_pool import pool_workers

    pool = pool_workers(parts, workers, given=given)
    return _check_tokenizer(tokenizer, pool, asked=workers is not None) if pool > 1 else pool


def _count(sentences: Iterable[Sequence[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for sentence in sentences:
        counts.update(sentence)
    return counts


def _check_tokenizer(tokenizer: str | Tokenizer | None, pool: int, *, asked: bool) -> int:
    """The workers that can read with `tokenizer`: it is sent to them, so it must pickle (a name or a
    module-level function); a lambda is an error if workers were `asked` for, else it reads here."""
    from zoo.data.corpus_pool import picklable

    get_tokenizer(tokenizer)  # an unknown name is an error here, not in every worker
    if picklable(tokenizer):
        return pool
    if not asked:
        return 1
    raise DataError(
        f"workers read the corpus with the tokenizer, so it is sent to them, but {tokenizer!r} cannot be pickled: "
        "give a tokenizer name, or a function defined at a module's top level (not a lambda), or workers=1"
    )


_READER: dict[str, object] = {}


def _start_reader(tokenizer: str | Tokenizer | None, encoding: str, errors: str) -> None:
    """What every part a worker reads needs (`zoo.data.corpus_pool.map_parts`'s initializer)."""
    _READER.update(tokenizer=get_tokenizer(tokenizer), encoding=encoding, errors=errors)


def _count_part(part: Path | CorpusPart) -> Counter[str]:
    r = _READER
    return _count(iter_sentences(part, r["tokenizer"], encoding=r["encoding"], errors=r["errors"]))


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
