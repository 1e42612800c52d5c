"""Word-pair similarity benchmarks (WordSim-353, SimLex-999) and rank correlation.

A benchmark file has one pair per line, ``word1<DELIM>word2<DELIM>score``, and
``#`` comment lines. The model's score of a pair is the cosine of the two
vectors; the result is the Spearman and Pearson correlation with the human
scores over the pairs whose words are both in the (restricted) vocabulary.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from zoo.data.textfile import read_lines
from zoo.errors import DataError
from zoo.eval.datasets import dataset_path

__all__ = [
    "PairScores",
    "WordPairsResult",
    "evaluate_word_pairs",
    "gensim_word_pairs",
    "lookup_table",
    "pearson",
    "rankdata",
    "read_word_pairs",
    "score_word_pairs",
    "spearman",
]


class WordPairsResult(NamedTuple):
    """What `evaluate_word_pairs` measures.

    - `pearson`, `spearman`: correlations of cosine similarity with the human
      scores (NaN with fewer than two scored pairs or constant scores).
    - `oov_fraction`: share of the file's pairs with a word outside the
      vocabulary, in [0, 1].
    - `pairs`: pairs in the file; `scored`: pairs that entered the correlation.
    """

    pearson: float
    spearman: float
    oov_fraction: float
    pairs: int
    scored: int


def _stats() -> Any:
    """`scipy.stats`, imported on first use: it takes about a second to import, which every
    command that merely reads vectors would otherwise pay before its first line of output."""
    import scipy.stats

    return scipy.stats


def rankdata(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of the ranks they span (float64 ``[n]``)."""
    return _stats().rankdata(np.asarray(values, dtype=np.float64), method="average")


def _pair(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Both sides as float64, or None where no correlation is defined (fewer than two
    values, or one side constant)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise DataError(f"correlation of arrays of different shapes {a.shape} and {b.shape}")
    if a.ndim != 1:
        raise DataError(f"correlation needs two 1-d arrays, got shape {a.shape}")
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return None
    return a, b


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's correlation coefficient (`scipy.stats.pearsonr`); NaN if fewer than two
    values or one side is constant."""
    pair = _pair(x, y)
    return float("nan") if pair is None else float(_stats().pearsonr(*pair).statistic)


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation (`scipy.stats.spearmanr`): Pearson's correlation of the
    tie-averaged ranks; NaN where `pearson` is."""
    pair = _pair(x, y)
    return float("nan") if pair is None else float(_stats().spearmanr(*pair).statistic)


def read_word_pairs(
    path: str | os.PathLike, delimiter: str = "\t", encoding: str = "utf-8"
) -> list[tuple[str, str, float]]:
    """``(word1, word2, score)`` per line of a pairs file (or shipped set name); ``#`` lines and
    blank lines skipped, columns after the third ignored; a file without a pair is an error."""
    path = dataset_path(path)
    pairs = []
    for number, line in read_lines(path, encoding=encoding, what="word-pairs file"):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split(delimiter)
        try:
            pairs.append((fields[0], fields[1], float(fields[2])))
            if not np.isfinite(pairs[-1][2]):
                raise ValueError("not a finite score")
        except (IndexError, ValueError) as error:
            raise DataError(
                f"{path}:{number}: expected 'word1{delimiter!r}word2{delimiter!r}score', got {line.strip()!r} "
                "(a header line needs a leading '#')"
            ) from error
    if not pairs:
        raise DataError(
            f"{path} holds no word pairs: expected 'word1{delimiter!r}word2{delimiter!r}score' lines "
            "('#' lines and blank lines are skipped)"
        )
    return pairs


def lookup_table(words: Sequence[str], restrict_vocab: int | None, case_insensitive: bool) -> dict[str, int]:
    """Word -> row among the first `restrict_vocab` words; case-insensitively (keys
    uppercased), a word's most frequent (first) casing wins."""
    kept = list(words if restrict_vocab is None else words[:restrict_vocab])
    if not case_insensitive:
        return {w: i for i, w in enumerate(kept)}
    table: dict[str, int] = {}
    for i, w in enumerate(kept):
        table.setdefault(w.upper(), i)
    return table


class PairScores(NamedTuple):
    """A pairs file scored by a model (what both `evaluate_word_pairs` and `gensim_word_pairs` read).

    - `gold`: ``[n]`` float64 human scores of the pairs that entered;
    - `model`: ``[n]`` float32 cosines of the same pairs (0 for a pair with an unknown word,
      which enters only under `dummy4unknown`);
    - `oov`: pairs with a word outside the vocabulary; `pairs`: pairs in the file.
    """

    gold: np.ndarray
    model: np.ndarray
    oov: int
    pairs: int


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


def score_word_pairs(
    vectors: np.ndarray,
    words: Sequence[str],
    path: str | os.PathLike = "wordsim353",
    *,
    delimiter: str = "\t",
    encoding: str = "utf-8",
    restrict_vocab: int | None = 300000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
) -> PairScores:
    """Score each pair of a pairs file with the cosine of its two vectors (float32, as gensim).

    **Arguments:**

    - `vectors`: ``[V, D]`` rows in the order of `words` (frequency order).
    - `path`: a pairs file or a shipped set (``"wordsim353"``, ``"simlex999"``).
    - `restrict_vocab`: only the first (most frequent) words count as known (None: all).
    - `case_insensitive`: match words ignoring case (most frequent casing wins).
    - `dummy4unknown`: score a pair with an unknown word 0 instead of leaving it out.

    The vectors are only read, never modified.
    """
    table = lookup_table(words, restrict_vocab, case_insensitive)
    fold = str.upper if case_insensitive else (lambda w: w)
    pairs = read_word_pairs(path, delimiter, encoding)
    gold, model, oov = [], [], 0
    for a, b, score in pairs:
        ia, ib = table.get(fold(a)), table.get(fold(b))
        if ia is None or ib is None:
            oov += 1
            if dummy4unknown:
                gold.append(score)
                model.append(0.0)
            continue
        va, vb = (np.asarray(vectors[i], dtype=np.float32) for i in (ia, ib))
        gold.append(score)
        model.append(np.dot(_unit(va), _unit(vb)))
    return PairScores(np.asarray(gold, np.float64), np.asarray(model, np.float32), oov, len(pairs))


def evaluate_word_pairs(
    vectors: np.ndarray,
    words: Sequence[str],
    path: str | os.PathLike = "wordsim353",
    *,
    delimiter: str = "\t",
    encoding: str = "utf-8",
    restrict_vocab: int | None = 300000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
) -> WordPairsResult:
    """Correlate cosine similarities with human judgements (arguments as `score_word_pairs`);
    NaN correlations, not an error, where fewer than two pairs are scored."""
    scores = score_word_pairs(
        vectors,
        words,
        path,
        delimiter=delimiter,
        encoding=encoding,
        restrict_vocab=restrict_vocab,
        case_insensitive=case_insensitive,
        dummy4unknown=dummy4unknown,
    )
    return WordPairsResult(
        pearson=pearson(scores.gold, scores.model),
        spearman=spearman(scores.gold, scores.model),
        oov_fraction=scores.oov / scores.pairs if scores.pairs else float("nan"),
        pairs=scores.pairs,
        scored=len(scores.gold),
    )


def gensim_word_pairs(scores: PairScores, path: str | os.PathLike = "the pairs file") -> tuple[Any, Any, float]:
    """gensim's ``(pearson, spearman, oov_ratio)`` of scored pairs: scipy's `pearsonr` and
    `spearmanr` results (``(statistic, pvalue)`` tuples) and the percentage of pairs with an
    unknown word. Raises `DataError` when fewer than two pairs were scored."""
    if len(scores.gold) < 2:
        raise DataError(
            f"{len(scores.gold)} of the {scores.pairs} pairs of {path} could be scored ({scores.oov} have a word "
            "outside the vocabulary); a correlation needs two: raise restrict_vocab, or pass dummy4unknown=True"
        )
    stats = _stats()
    pearson_result = stats.pearsonr(scores.gold, scores.model)
    spearman_result = stats.spearmanr(scores.gold, scores.model)
    return pearson_result, spearman_result, scores.oov / scores.pairs * 100
