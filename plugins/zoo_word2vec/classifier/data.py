"""Labelled text files: fastText's ``__label__X text``, ``label<TAB>text``, scored movie reviews.

`read_labelled` detects the format from the first line that is not blank (or takes it
named):

- ``fasttext``: tokens separated as fastText separates them (`zoo_word2vec.classifier.splitting`);
  those starting with the label prefix (``__label__``) are the line's labels (any number,
  anywhere), kept whole as fastText keeps them, the rest its text (read by compiled code,
  `zoo_word2vec.classifier.reading`, in UTF-8, ASCII, Latin-1 or cp1252);
- ``tsv``: ``label<TAB>text``, one label a line;
- ``reviews``: a header ``id<TAB>sentiment<TAB>text`` (the movie-review sentences), the
  label the sign of the score (``positive``/``negative``), sentences scored 0 left out.
"""

from __future__ import annotations

import codecs
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from zoo.plugin_api import DataError, Vocab, read_lines
from zoo_word2vec.classifier.encoded import EncodedLines
from zoo_word2vec.classifier.features import EOS
from zoo_word2vec.classifier.reading import FAST_ENCODINGS, read_fasttext_lines
from zoo_word2vec.classifier.splitting import fasttext_split
from zoo_word2vec.settings import LABELLED_FORMATS

__all__ = ["FORMATS", "LabelledLines", "detect_format", "label_vocab", "read_labelled", "word_vocab"]

FORMATS = LABELLED_FORMATS


class LabelledLines:
    """Texts (token lists) and each one's labels (a tuple of strings), in file order.

    Made from lists, or from `EncodedLines` (a fastText-format file read by compiled code), in
    which case the lists are built only when asked for; `encoded` gives the arrays either way.
    """

    def __init__(self, texts: Sequence[Sequence[str]], labels: Sequence[Sequence[str]]) -> None:
        if len(texts) != len(labels):
            raise DataError(f"{len(texts)} texts but {len(labels)} label lists")
        self._texts: list[list[str]] | None = [list(t) for t in texts]
        self._labels: list[tuple[str, ...]] | None = [tuple(ls) for ls in labels]
        self._encoded: EncodedLines | None = None

    @classmethod
    def from_encoded(cls, encoded: EncodedLines) -> LabelledLines:
        lines = cls.__new__(cls)
        lines._texts = lines._labels = None
        lines._encoded = encoded
        return lines

    @property
    def texts(self) -> list[list[str]]:
        if self._texts is None:
            self._texts = self.encoded().texts()
        return self._texts

    @property
    def labels(self) -> list[tuple[str, ...]]:
        if self._labels is None:
            self._labels = self.encoded().line_labels()
        return self._labels

    def encoded(self) -> EncodedLines:
        """The lines as arrays (built once)."""
        if self._encoded is None:
            self._encoded = EncodedLines.from_lists(self.texts, self.labels)
        return self._encoded

    def __len__(self) -> int:
        return len(self._texts) if self._texts is not None else len(self.encoded())

    def subset(self, indices: Iterable[int]) -> LabelledLines:
        indices = list(indices)
        if self._texts is None:
            return LabelledLines.from_encoded(self.encoded().subset(indices))
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
    if format == "fasttext" and codecs.lookup(encoding).name in FAST_ENCODINGS:
        lines.close()
        return LabelledLines.from_encoded(read_fasttext_lines(path, label_prefix=label_prefix, encoding=encoding))
    texts, labels = [], []
    if format == "reviews":
        for text, label in _reviews(path, first, lines):
            texts.append(split(text))
            labels.append((label,))
    else:
        for number, line in [first, *lines]:
            if format == "fasttext":
                tokens = fasttext_split(line)
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


def _reviews(path: Path, header: tuple[int, str], lines: Iterable[tuple[int, str]]) -> Iterable[tuple[str, str]]:
    """``(text, label)`` of each scored row after the `header` line; a row with another number of
    columns than the header, an empty text, or a score that is no finite number is a `DataError`
    naming its line (never a guess)."""
    columns = [c.strip() for c in header[1].rstrip("\n").split("\t")]
    if not {"sentiment", "text"} <= set(columns):
        raise DataError(f"{path}: expected a header with 'sentiment' and 'text' columns, got {columns}")
    at_score, at_text = columns.index("sentiment"), columns.index("text")
    for number, line in lines:
        fields = line.rstrip("\n").split("\t")
        if len(fields) != len(columns):  # more: a tab in the text would drop the words after it
            raise DataError(
                f"{path}:{number}: expected {len(columns)} tab-separated columns ({', '.join(columns)}), got "
                f"{len(fields)}: {line[:60]!r}"
            )
        try:
            score = float(fields[at_score])
        except ValueError:
            score = float("nan")
        if not np.isfinite(score):
            raise DataError(
                f"{path}:{number}: the sentiment {fields[at_score][:20]!r} is not a finite number; expected a score "
                "(its sign is the label: positive or negative, 0 left out)"
            )
        if not fields[at_text].strip():
            raise DataError(f"{path}:{number}: the text column is empty: give the text, or drop the row")
        if score != 0:
            yield fields[at_text], "positive" if score > 0 else "negative"


def word_vocab(data: LabelledLines | Iterable[Sequence[str]], *, min_count: int = 1) -> Vocab:
    """Words of `data` (labelled lines, or texts as token lists) seen at least `min_count` times,
    most frequent first (ties: first seen), ``</s>`` counted once per line as fastText counts it
    (first seen after the first line); no reserved tokens."""
    if not isinstance(data, LabelledLines):
        texts = list(data)
        data = LabelledLines(texts, [()] * len(texts))
    encoded = data.encoded()
    tokens, counts, first = list(encoded.tokens), encoded.token_counts(), encoded.first_seen().astype(np.float64)
    lines = len(encoded)
    if lines:
        eos_first = encoded.offsets[1] - 0.5
        if EOS in tokens:
            i = tokens.index(EOS)
            counts[i] += lines
            first[i] = min(first[i], eos_first)
        else:
            tokens.append(EOS)
            counts, first = np.append(counts, lines), np.append(first, eos_first)
    order = np.lexsort((first, -counts))
    kept = [i for i in order.tolist() if counts[i] >= min_count]
    return Vocab([tokens[i] for i in kept], [int(counts[i]) for i in kept], {})


def label_vocab(data: LabelledLines | Iterable[Sequence[str]]) -> Vocab:
    """The labels, most frequent first (fastText's order; ties by name)."""
    if isinstance(data, LabelledLines):
        encoded = data.encoded()
        counts = dict(zip(encoded.labels, encoded.label_counts().tolist(), strict=True))
    else:
        counts = Counter(label for ls in data for label in ls)
    kept = sorted(((label, c) for label, c in counts.items() if c > 0), key=lambda lc: (-lc[1], lc[0]))
    return Vocab([label for label, _ in kept], [c for _, c in kept], {})
