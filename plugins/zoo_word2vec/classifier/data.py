"""Labelled text files: fastText's ``__label__X text``, ``label<TAB>text``, scored movie reviews.

`read_labelled` detects the format from the first line that is not blank (or takes it
named):

- ``fasttext``: white-space separated tokens; those starting with the label prefix
  (``__label__``) are the line's labels (any number, anywhere), kept whole as fastText
  keeps them, the rest its text;
- ``tsv``: ``label<TAB>text``, one label a line;
- ``reviews``: a header ``id<TAB>sentiment<TAB>text`` (the movie-review sentences), the
  label the sign of the score (``positive``/``negative``), sentences scored 0 left out.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from zoo.plugin_api import DataError, Vocab, read_lines
from zoo_word2vec.classifier.features import EOS

__all__ = ["FORMATS", "LabelledLines", "detect_format", "label_vocab", "read_labelled", "word_vocab"]

FORMATS = ("auto", "fasttext", "tsv", "reviews")


class LabelledLines:
    """Texts (token lists) and each one's labels (a tuple of strings), in file order."""

    def __init__(self, texts: Sequence[Sequence[str]], labels: Sequence[Sequence[str]]) -> None:
        if len(texts) != len(labels):
            raise DataError(f"{len(texts)} texts but {len(labels)} label lists")
        self.texts = [list(t) for t in texts]
        self.labels = [tuple(ls) for ls in labels]

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, indices: Iterable[int]) -> LabelledLines:
        indices = list(indices)
        return LabelledLines([self.texts[i] for i in indices], [self.labels[i] for i in indices])


def detect_format(first_line: str, *, label_prefix: str = "__label__") -> str:
    """The format of a file from its first non-blank line (see the module's docstring)."""
    columns = first_line.rstrip("\n").split("\t")
    if len(columns) >= 3 and {"sentiment", "text"} <= {c.strip() for c in columns}:
        return "reviews"
    if any(t.startswith(label_prefix) for t in first_line.split()):
        return "fasttext"
    if "\t" in first_line:
        return "tsv"
    raise DataError(
        f"cannot tell the format of a line starting {first_line[:60]!r}: expected fastText's "
        f"'{label_prefix}X text', 'label<TAB>text', or an 'id<TAB>sentiment<TAB>text' header; "
        "name it with --format"
    )


def read_labelled(
    path: str | Path,
    *,
    split: Callable[[str], list[str]] = str.split,
    format: str = "auto",
    label_prefix: str = "__label__",
    encoding: str = "utf-8",
) -> LabelledLines:
    """Read a labelled file (plain or .gz) in `format`; texts are split by `split` (fastText's own
    files: always on white space). Blank lines are skipped; a file without any text is a `DataError`."""
    if format not in FORMATS:
        raise DataError(f"format must be one of {FORMATS}, got {format!r}")
    path = Path(path)
    lines = ((n, line) for n, line in read_lines(path, encoding=encoding, what="labelled file") if line.strip())
    first = next(lines, None)
    if first is None:
        raise DataError(f"{path} holds no labelled texts")
    if format == "auto":
        format = detect_format(first[1], label_prefix=label_prefix)
    texts, labels = [], []
    if format == "reviews":
        rows = csv.DictReader((line + "\n" for _, line in [first, *lines]), delimiter="\t", quoting=csv.QUOTE_NONE)
        if not {"sentiment", "text"} <= set(rows.fieldnames or []):
            raise DataError(f"{path}: expected a header with 'sentiment' and 'text' columns, got {rows.fieldnames}")
        for row in rows:
            score = float(row["sentiment"])
            if score != 0:
                texts.append(split(row["text"]))
                labels.append(("positive" if score > 0 else "negative",))
    else:
        for number, line in [first, *lines]:
            if format == "fasttext":
                tokens = line.split()
                labels.append(tuple(t for t in tokens if t.startswith(label_prefix)))
                texts.append([t for t in tokens if not t.startswith(label_prefix)])
            else:
                label, sep, text = line.partition("\t")
                if not sep or not label.strip():
                    raise DataError(f"{path}:{number}: expected 'label<TAB>text', got {line[:60]!r}")
                labels.append((label.strip(),))
                texts.append(split(text))
    if not texts:
        raise DataError(f"{path} holds no labelled texts")
    return LabelledLines(texts, labels)


def word_vocab(texts: Iterable[Sequence[str]], *, min_count: int = 1) -> Vocab:
    """Words seen at least `min_count` times, most frequent first (ties: first seen), ``</s>``
    counted once per line as fastText counts it; no reserved tokens."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(text)
        counts[EOS] += 1
    kept = [(w, c) for w, c in counts.items() if c >= min_count]
    kept.sort(key=lambda wc: -wc[1])
    return Vocab([w for w, _ in kept], [c for _, c in kept], {})


def label_vocab(labels: Iterable[Sequence[str]]) -> Vocab:
    """The labels, most frequent first (fastText's order; ties by name)."""
    counts = Counter(label for ls in labels for label in ls)
    kept = sorted(counts.items(), key=lambda lc: (-lc[1], lc[0]))
    return Vocab([label for label, _ in kept], [c for _, c in kept], {})
