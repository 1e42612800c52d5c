"""gensim's corpus arguments and vocabulary scan: what `Word2Vec.build_vocab` reads and keeps."""

from __future__ import annotations

import logging
import os
import types
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from zoo.plugin_api import DataError, InvalidParameterError, corpus_files

logger = logging.getLogger(__name__)

__all__ = [
    "RULE_DEFAULT",
    "RULE_DISCARD",
    "RULE_KEEP",
    "check_corpus",
    "count_words",
    "effective_min_count",
    "gensim_order",
    "keep_vocab_item",
    "refuse",
    "sample_ints",
]

RULE_DEFAULT = 0
"""A `trim_rule`'s answer: keep the word if it is seen `min_count` times (gensim.utils' constant)."""
RULE_DISCARD = 1
"""A `trim_rule`'s answer: drop the word, whatever its count."""
RULE_KEEP = 2
"""A `trim_rule`'s answer: keep the word, whatever its count."""


def keep_vocab_item(word: str, count: int, min_count: int, trim_rule: Any = None) -> bool:
    """Whether `word`, seen `count` times, stays: ``trim_rule(word, count, min_count)`` decides
    (`RULE_KEEP`, `RULE_DISCARD`), else (`RULE_DEFAULT`, or no rule) ``count >= min_count``."""
    if trim_rule is not None:
        answer = trim_rule(word, count, min_count)
        if answer == RULE_KEEP:
            return True
        if answer == RULE_DISCARD:
            return False
    return count >= min_count


def gensim_order(counts: Any) -> list[int]:
    """The rows of `counts` (``[V]``, in first-appearance order) as gensim's sorted vocabulary
    puts them: most frequent first, ties with the later word first."""
    counts = np.asarray(counts, dtype=np.int64)
    return [int(i) for i in np.lexsort((-np.arange(len(counts)), -counts))]


def sample_ints(counts: Any, sample: float) -> np.ndarray:
    """``[V]`` uint32 gensim's ``sample_int``: each word's chance to be kept by subsampling,
    times ``2**32 - 1`` (the threshold `sample` of the words counted, or of `sample` words when >= 1)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    threshold = total if not sample else sample * total if sample < 1.0 else int(sample * (3 + np.sqrt(5)) / 2)
    keep = np.minimum(1.0, (np.sqrt(counts / threshold) + 1) * (threshold / np.maximum(counts, 1)))
    return (keep * (2**32 - 1)).astype(np.uint32)


def refuse(option: str, value: Any, default: Any, why: str) -> None:
    """An error if a gensim option zoo does not implement is set to anything but gensim's default."""
    if value is not default and value != default:
        raise InvalidParameterError(
            f"{option}={value!r} is not supported by zoo: {why} (leave {option} at {default!r})"
        )


class CorpusArgumentError(DataError, TypeError):
    """Neither or both of corpus_iterable and corpus_file, or a corpus_file that is no path: a
    `TypeError`, as gensim's."""


def check_corpus(corpus_iterable: Any, corpus_file: Any, what: str) -> tuple[Any, Any]:
    """The corpus and tokenizer `fit` takes for gensim's ``corpus_iterable`` or ``corpus_file``."""
    if (corpus_iterable is None) == (corpus_file is None):
        raise CorpusArgumentError(f"{what} needs exactly one of corpus_iterable (sentences) and corpus_file")
    if corpus_file is not None and not isinstance(corpus_file, str | os.PathLike):
        raise CorpusArgumentError(
            f"{what}: corpus_file must be a path (str or os.PathLike), got {type(corpus_file).__name__}; "
            "pass token lists as corpus_iterable"
        )
    if corpus_file is not None:
        corpus_files(corpus_file)  # a missing file, an empty folder or a pattern matching nothing: a DataError
        return str(corpus_file), "whitespace"  # gensim's LineSentence: split on whitespace, case kept
    if isinstance(corpus_iterable, str | bytes | os.PathLike):
        raise DataError(
            f"{what} got a string as sentences: pass token lists ([['the', 'cat'], ...]), "
            "or corpus_file=PATH for a file"
        )
    if isinstance(corpus_iterable, types.GeneratorType) or iter(corpus_iterable) is corpus_iterable:
        raise DataError(
            "sentences is an iterator (a generator?), which can be read only once, but the vocabulary and every "
            "epoch read it: pass a list, a restartable iterable (a class with __iter__), or corpus_file=PATH"
        )
    first = next(iter(corpus_iterable), None)
    if isinstance(first, str):
        # gensim warns and reads each string as its characters; code written for it relies on that
        logger.warning(
            "Each 'sentences' item should be a list of words (usually unicode strings). "
            "First item here is instead plain %s.",
            type(first),
        )
        return _Characters(corpus_iterable), None
    return corpus_iterable, None


class _Characters:
    """A restartable corpus whose string sentences read as lists of their characters, as gensim reads them."""

    def __init__(self, sentences: Iterable[Any]) -> None:
        self.sentences = sentences

    def __iter__(self) -> Any:
        return (list(s) if isinstance(s, str) else s for s in self.sentences)


def count_words(
    sentences: Iterable[Sequence[str]], max_vocab_size: int | None, trim_rule: Any = None
) -> tuple[Counter[str], int, int]:
    """gensim's vocabulary scan: word counts in order of first appearance, sentences and words read.
    With `max_vocab_size`, whenever more distinct words than that are held, those seen fewer than
    ``n`` times are dropped (``n`` = 1, 2, ... at each pruning; `trim_rule` may keep or drop a word
    there, `keep_vocab_item`), as gensim bounds its memory."""
    counts: Counter[str] = Counter()
    sentences_read = words_read = 0
    below = 1
    for sentence in sentences:
        counts.update(sentence)
        sentences_read += 1
        words_read += len(sentence)
        if max_vocab_size is not None and len(counts) > max_vocab_size:
            for word in [w for w, c in counts.items() if not keep_vocab_item(w, c, below, trim_rule)]:
                del counts[word]
            below += 1
    return counts, sentences_read, words_read


def effective_min_count(counts: Counter[str], min_count: int, max_final_vocab: int | None) -> int:
    """gensim's rule: with `max_final_vocab`, raise min_count to one above the count of the
    word just past that many (so the vocabulary may end smaller than `max_final_vocab`)."""
    least = max(1, min_count)
    if max_final_vocab is not None and max_final_vocab < len(counts):
        ranked = sorted(counts.values(), reverse=True)
        least = max(least, ranked[max_final_vocab] + 1)
    return least
