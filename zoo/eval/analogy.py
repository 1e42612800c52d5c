"""Word analogies ("a is to b as c is to ?") in the Google format, evaluated in batches.

The file has ``: section`` headers, then one question ``a b c d`` per line. A
question is covered when its four words are among the `restrict_vocab` most
frequent ones; the prediction is the best-scoring word other than a, b and c:

- 3CosAdd (Mikolov et al. 2013): ``argmax_x cos(x, b - a + c)`` on unit vectors.
- 3CosMul (Levy & Goldberg 2014): ``argmax_x cos'(x, b) cos'(x, c) / (cos'(x, a) + ε)``
  with ``cos' = (1 + cos) / 2``.

All covered questions are scored as matrix products over the restricted
vocabulary, a chunk of questions at a time, so the 19,544 Google questions
take a few seconds. Results match gensim's `evaluate_word_analogies`.

??? cite

    Mikolov, Chen, Corrado & Dean 2013, Efficient Estimation of Word
    Representations in Vector Space. Levy & Goldberg 2014, Linguistic
    Regularities in Sparse and Explicit Word Representations (CoNLL).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from zoo.data.textfile import read_lines
from zoo.errors import DataError
from zoo.eval.datasets import dataset_path
from zoo.eval.similarity import lookup_table

__all__ = ["METHODS", "AnalogyResult", "AnalogySection", "evaluate_analogies", "predict_analogies", "read_analogies"]

METHODS = ("3cosadd", "3cosmul")
Question = tuple[str, str, str, str]


class AnalogySection(NamedTuple):
    """One section's questions: those answered right, wrong, and those skipped (a word unknown)."""

    name: str
    correct: list[Question]
    incorrect: list[Question]
    skipped: int

    @property
    def covered(self) -> int:
        return len(self.correct) + len(self.incorrect)

    @property
    def accuracy(self) -> float:
        """Correct over covered questions (NaN when none is covered)."""
        return len(self.correct) / self.covered if self.covered else float("nan")


class AnalogyResult(NamedTuple):
    """``(score, sections)`` as gensim returns them: the total accuracy over covered
    questions, then one `AnalogySection` per file section and a last one named
    ``"Total accuracy"`` summing them."""

    score: float
    sections: list[AnalogySection]

    @property
    def total(self) -> AnalogySection:
        return self.sections[-1]

    @property
    def covered(self) -> int:
        """Questions whose four words were known (scored)."""
        return self.total.covered

    @property
    def skipped(self) -> int:
        """Questions left out because a word was unknown."""
        return self.total.skipped

    @property
    def questions(self) -> int:
        return self.total.covered + self.total.skipped

    def _accuracy(self, syntactic: bool) -> float:
        parts = [s for s in self.sections[:-1] if s.name.startswith("gram") == syntactic]
        right = sum(len(s.correct) for s in parts)
        covered = sum(s.covered for s in parts)
        return right / covered if covered else float("nan")

    @property
    def semantic_accuracy(self) -> float:
        """Accuracy over the sections whose name does not start with ``gram``."""
        return self._accuracy(False)

    @property
    def syntactic_accuracy(self) -> float:
        """Accuracy over the ``gram*`` sections of the Google set."""
        return self._accuracy(True)

    def as_gensim(self) -> tuple[float, list[dict[str, Any]]]:
        """gensim's ``(score, sections)``: each section a dict ``{"section": name, "correct":
        [(a, b, c, expected), ...], "incorrect": [...]}``, the last ``"Total accuracy"``;
        the score is 0.0, not NaN, when no question was covered."""
        sections = [
            {"section": s.name, "correct": list(s.correct), "incorrect": list(s.incorrect)} for s in self.sections
        ]
        total = self.total
        return (len(total.correct) / total.covered if total.covered else 0.0), sections


def read_analogies(path: str | os.PathLike) -> list[tuple[str, list[Question]]]:
    """``[(section name, [(a, b, c, d), ...]), ...]`` from a Google-format file (or ``"google"``);
    a file without a question is an error."""
    path = dataset_path(path)
    sections: list[tuple[str, list[Question]]] = []
    for number, line in read_lines(path, what="analogy file"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(":"):
            sections.append((line[1:].strip(), []))
            continue
        words = line.split()
        if len(words) != 4:
            raise DataError(f"{path}:{number}: expected four words 'a b c d', got {line!r}")
        if not sections:
            raise DataError(f"{path}:{number}: a question before the first ': section' header")
        sections[-1][1].append((words[0], words[1], words[2], words[3]))
    if not any(questions for _, questions in sections):
        raise DataError(f"{path} holds no analogy questions: expected ': section' lines, then 'a b c d' lines")
    return sections


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def _group_members(groups: np.ndarray) -> np.ndarray:
    """``[n_groups, m]`` the rows of each group, padded by repeating its last row."""
    sizes = np.bincount(groups)
    order = np.argsort(groups, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    offsets = np.minimum(np.arange(sizes.max())[None, :], np.maximum(sizes - 1, 0)[:, None])
    return order[np.minimum(starts[:, None] + offsets, len(order) - 1)]


def predict_analogies(
    unit: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    *,
    groups: np.ndarray | None = None,
    method: str = "3cosadd",
    epsilon: float = 1e-3,
    chunk_size: int = 512,
) -> np.ndarray:
    """Answer ``a : b :: c : ?`` for many questions at once (compiled, in chunks).

    **Arguments:**

    - `unit`: ``[V, D]`` unit-length vectors (only these rows can be answers).
    - `a`, `b`, `c`: ``[Q]`` row indices of the question words.
    - `groups`: ``[V]`` group id per row (rows of one group are one word in
      different casings); every row in the group of a, b or c is excluded.
      None: each row is its own group.
    - `method`: ``"3cosadd"`` or ``"3cosmul"``; `epsilon`: 3CosMul's ε.
    - `chunk_size`: questions scored per matrix product (memory: chunk × V floats).

    **Returns:** ``[Q]`` predicted row indices.
    """
    if method not in METHODS:
        raise DataError(f"unknown analogy method {method!r}; choose one of {METHODS}")
    import jax.numpy as jnp

    count = len(a)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    groups = np.arange(len(unit)) if groups is None else np.asarray(groups)
    members = _group_members(groups)
    excluded = np.concatenate([members[groups[np.asarray(x)]] for x in (a, b, c)], axis=1)
    chunks = -(-count // chunk_size)
    pad = chunks * chunk_size - count
    abc = np.pad(np.stack([a, b, c], axis=1), ((0, pad), (0, 0))).reshape(chunks, chunk_size, 3)
    excluded = np.pad(excluded, ((0, pad), (0, 0))).reshape(chunks, chunk_size, -1)
    predictor = _compiled_predictor(method, float(epsilon))
    out = predictor(jnp.asarray(unit, jnp.float32), jnp.asarray(abc), jnp.asarray(excluded))
    return np.asarray(out).reshape(-1)[:count].astype(np.int64)


@functools.cache
def _compiled_predictor(method: str, epsilon: float):
    """A jitted ``(unit [V, D], abc [n, chunk, 3], banned [n, chunk, k]) -> [n, chunk]``, one per method."""
    import jax
    import jax.numpy as jnp

    def chunk(unit, rows, banned):
        ua, ub, uc = (unit[rows[:, k]] for k in range(3))
        if method == "3cosadd":
            scores = (ub - ua + uc) @ unit.T
        else:
            shifted = lambda u: (1.0 + u @ unit.T) / 2.0
            scores = shifted(ub) * shifted(uc) / (shifted(ua) + epsilon)
        scores = scores.at[jnp.arange(rows.shape[0])[:, None], banned].set(-jnp.inf)
        return jnp.argmax(scores, axis=1)

    return jax.jit(lambda unit, abc, banned: jax.lax.map(lambda x: chunk(unit, *x), (abc, banned)))


def evaluate_analogies(
    vectors: np.ndarray,
    words: Sequence[str],
    path: str | os.PathLike = "google",
    *,
    restrict_vocab: int | None = 300000,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
    method: str = "3cosadd",
    epsilon: float = 1e-3,
) -> AnalogyResult:
    """Accuracy on a Google-format analogy file, per section and in total.

    **Arguments:**

    - `vectors`: ``[V, D]`` rows in the order of `words` (most frequent first).
    - `path`: a file, or ``"google"`` for the shipped Google analogy set.
    - `restrict_vocab`: questions and answers use only the first (most frequent) words.
    - `case_insensitive`: match ignoring case; each word's most frequent casing is used, and
      the questions in the result are uppercased (as gensim reports them).
    - `dummy4unknown`: count questions with an unknown word as wrong instead of skipping them.
    - `method`: ``"3cosadd"`` (gensim's `most_similar`) or ``"3cosmul"``.

    The vectors are only read, never modified.
    """
    table = lookup_table(words, restrict_vocab, case_insensitive)
    fold = str.upper if case_insensitive else (lambda w: w)
    limit = len(words) if restrict_vocab is None else min(restrict_vocab, len(words))
    kept = list(words[:limit])
    groups = np.asarray([table[fold(w)] for w in kept], dtype=np.int64)
    unit = _unit(np.asarray(vectors)[:limit])
    parsed = read_analogies(path)
    questions_at, ids = [], []  # (section, position) of each covered question, its rows
    for number, (_, items) in enumerate(parsed):
        for position, question in enumerate(items):
            found = [table.get(fold(w)) for w in question]
            if None not in found:
                questions_at.append((number, position))
                ids.append(found)
    ids_array = np.asarray(ids, dtype=np.int64).reshape(-1, 4)
    predicted = predict_analogies(unit, *ids_array[:, :3].T, groups=groups, method=method, epsilon=epsilon)
    right = groups[predicted] == ids_array[:, 3]
    outcome = dict(zip(questions_at, right.tolist(), strict=True))
    sections = []
    for number, (name, items) in enumerate(parsed):
        correct, incorrect, skipped = [], [], 0
        for position, question in enumerate(items):
            ok = outcome.get((number, position))
            if ok is None and not dummy4unknown:
                skipped += 1
            else:
                (correct if ok else incorrect).append(tuple(fold(w) for w in question))
        sections.append(AnalogySection(name, correct, incorrect, skipped))
    total = AnalogySection(
        "Total accuracy",
        [q for s in sections for q in s.correct],
        [q for s in sections for q in s.incorrect],
        sum(s.skipped for s in sections),
    )
    return AnalogyResult(total.accuracy, [*sections, total])
