"""Sentence classification data: tokenising, readers, vocabularies, batches."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from zoo.plugin_api import MAX_LINE_CHARS, DataError, SequenceBatches, Vocab, get_tokenizer, read_lines

__all__ = [
    "LabelledBatches",
    "LabelledTexts",
    "label_vocab",
    "read_columns",
    "read_label_text",
    "read_movie_reviews",
    "read_trec",
    "LEGACY_TOKENIZER",
    "kim_tokenize",
    "tokenize",
    "words_and_marks",
]

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]", re.IGNORECASE)

# Kim's clean_str: keep letters, digits and ( ) , ! ? ' `; split off clitics and those marks.
_KIM_DROP = re.compile(r"[^A-Za-z0-9(),!?'`]")
_KIM_CLITIC = re.compile(r"('s|'ve|n't|'re|'d|'ll)\b")
_KIM_MARK = re.compile(r"([(),!?])")
_KIM_QUOTES = re.compile(r"^([`']+)(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])([`']+)$")
_KIM_CLITIC_ONLY = re.compile(r"^(?:'s|'ve|n't|'re|'d|'ll)$", re.IGNORECASE)

LEGACY_TOKENIZER = "words-marks"  # models saved before the tokenizer hyperparameter split text this way


def words_and_marks(text: str) -> list[str]:
    """Words (with inner apostrophes: ``don't``, ``film's``) and single punctuation marks, case kept:
    ``"It's a ''great'' film!"`` -> ``["It's", "a", "'", "'", "great", "'", "'", "film", "!"]``."""
    return _TOKEN.findall(text)


def kim_tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """Kim's (2014) ``clean_str``: only letters, digits and ``( ) , ! ? ' ``` survive (the rest
    become spaces); ``'s 've n't 're 'd 'll`` and ``( ) , ! ?`` are split off.

    Quotes glued to a word (``''Conan''``) are split off too (Kim's data had them apart already).
    ``"It's a ''great'' film, isn't it?"`` -> ``["it", "'s", "a", "''", "great", "''", "film", ",",
    "is", "n't", "it", "?"]``.
    """
    tokens = []
    for token in _KIM_MARK.sub(r" \1 ", _KIM_DROP.sub(" ", text)).split():
        parts = [token] if _KIM_CLITIC_ONLY.match(token) else [p for p in _KIM_QUOTES.split(token) if p]
        for part in parts:
            tokens += _KIM_CLITIC.sub(r" \1", part).split()
    return [t.lower() for t in tokens] if lowercase else tokens


# This plugin's own splitters, case kept (`tokenize` lowercases first when asked); the plugin
# also registers them with zoo (lowercasing, like zoo's other tokenisers) for every other use.
_OWN = {"kim": lambda text: kim_tokenize(text, lowercase=False), LEGACY_TOKENIZER: words_and_marks}


def splitter(tokenizer: str) -> Callable[[str], list[str]]:
    """The function behind a tokeniser name: this plugin's ``kim`` and ``words-marks`` keep case;
    any other name is looked up among zoo's tokenisers (`zoo.data.tokenize.get_tokenizer`)."""
    return _OWN[tokenizer] if tokenizer in _OWN else get_tokenizer(tokenizer)


def tokenize(text: str, *, lowercase: bool = True, tokenizer: str = LEGACY_TOKENIZER) -> list[str]:
    """Split raw text into tokens with a named tokeniser, lowercasing first if asked.

    - ``"kim"``: `kim_tokenize`, Kim's (2014) cleaning (the textcnn default);
    - ``"words-marks"``: `words_and_marks`;
    - any other tokeniser zoo knows (``punct``, ``words``, a plugin's); zoo's own
      tokenisers lowercase whatever `lowercase` says (``whitespace`` keeps case).
    """
    return text_splitter(lowercase=lowercase, tokenizer=tokenizer)(text)


def text_splitter(*, lowercase: bool, tokenizer: str) -> Callable[[str], list[str]]:
    """`tokenize` with its settings fixed, the name looked up once (for reading many texts)."""
    split = splitter(tokenizer)
    return (lambda text: split(text.lower())) if lowercase else split


class LabelledTexts:
    """Tokenised texts and their labels (strings), in file order."""

    def __init__(self, texts: Sequence[Sequence[str]], labels: Sequence[str]) -> None:
        if len(texts) != len(labels):
            raise DataError(f"{len(texts)} texts but {len(labels)} labels")
        self.texts = [list(t) for t in texts]
        self.labels = [str(label) for label in labels]

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, indices: Sequence[int]) -> LabelledTexts:
        return LabelledTexts([self.texts[i] for i in indices], [self.labels[i] for i in indices])


def _lines(path: Path, encoding: str, errors: str, max_line_chars: int) -> Iterator[tuple[int, str]]:
    """Numbered lines of a labelled file, read by `zoo.data.textfile.read_lines`: decoded with
    `encoding` and `errors`, lines over `max_line_chars` skipped (and counted in a warning)."""
    return read_lines(path, encoding=encoding, errors=errors, max_chars=max_line_chars, what="labelled file")


def _rows(path: Path, encoding: str, errors: str, max_line_chars: int) -> Iterator[str]:
    """The lines of `path` with their line ends, for `csv`."""
    return (line + "\n" for _, line in _lines(path, encoding, errors, max_line_chars))


def read_label_text(
    path: str | Path,
    *,
    lowercase: bool = True,
    tokenizer: str = LEGACY_TOKENIZER,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> LabelledTexts:
    """``label<TAB>text`` lines (plain or .gz); blank lines are skipped; texts split by `tokenize`.

    `encoding` and `errors` decode the file (an undecodable or binary file is a `DataError`
    naming the line and byte); lines over `max_line_chars` are skipped unread, and counted in a
    `zoo.data.textfile.LongLinesWarning`. The other readers here take the same three arguments.
    """
    path, split = Path(path), text_splitter(lowercase=lowercase, tokenizer=tokenizer)
    texts, labels = [], []
    for number, line in _lines(path, encoding, errors, max_line_chars):
        if not line.strip():
            continue
        label, sep, text = line.partition("\t")
        if not sep or not label.strip():
            raise DataError(f"{path}:{number}: expected 'label<TAB>text', got {line[:60]!r}")
        texts.append(split(text))
        labels.append(label.strip())
    if not texts:
        raise DataError(f"{path} holds no labelled texts")
    return LabelledTexts(texts, labels)


def read_columns(
    path: str | Path,
    *,
    text_column: str = "text",
    label_column: str = "label",
    lowercase: bool = True,
    tokenizer: str = LEGACY_TOKENIZER,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> LabelledTexts:
    """A CSV (or, for .tsv, tab-separated) file with a header naming its columns."""
    path, split = Path(path), text_splitter(lowercase=lowercase, tokenizer=tokenizer)
    delimiter = "\t" if ".tsv" in path.suffixes else ","
    reader = csv.DictReader(_rows(path, encoding, errors, max_line_chars), delimiter=delimiter)
    missing = [c for c in (text_column, label_column) if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"{path}: no column {missing}; its header has {reader.fieldnames}")
    rows = list(reader)
    if not rows:
        raise DataError(f"{path} holds no rows")
    return LabelledTexts(
        [split(r[text_column]) for r in rows],
        [r[label_column].strip() for r in rows],
    )


def read_movie_reviews(
    path: str | Path,
    *,
    lowercase: bool = True,
    tokenizer: str = LEGACY_TOKENIZER,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> LabelledTexts:
    """Movie-review sentences (``id<TAB>score<TAB>text``): label = sign of the score; zeros dropped."""
    path, split = Path(path), text_splitter(lowercase=lowercase, tokenizer=tokenizer)
    texts, labels = [], []
    rows = _rows(path, encoding, errors, max_line_chars)
    for row in csv.DictReader(rows, delimiter="\t", quoting=csv.QUOTE_NONE):
        score = float(row["sentiment"])
        if score == 0:
            continue
        texts.append(split(row["text"]))
        labels.append("positive" if score > 0 else "negative")
    if not texts:
        raise DataError(f"{path} holds no scored sentences")
    return LabelledTexts(texts, labels)


TREC_COARSE = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


def read_trec(
    path: str | Path, *, lowercase: bool = False, tokenizer: str = LEGACY_TOKENIZER, encoding: str = "utf-8"
) -> tuple[LabelledTexts, LabelledTexts]:
    """TREC questions (``,label-coarse,label-fine,text``): the standard 5,452 training and last 500 test.

    Coarse labels are kept as their column's numbers; questions keep their case by default
    (Kim's setup for TREC).
    """
    columns = {"text_column": "text", "label_column": "label-coarse"}
    data = read_columns(path, **columns, lowercase=lowercase, tokenizer=tokenizer, encoding=encoding)
    if len(data) != 5952:
        raise DataError(f"{path}: expected 5,952 questions (5,452 train + 500 test), got {len(data)}")
    return data.subset(range(5452)), data.subset(range(5452, 5952))


def label_vocab(labels: Sequence[str]) -> Vocab:
    """Labels as a vocabulary without reserved ids, sorted by name (stable ids)."""
    return Vocab(sorted(set(labels)), specials={})


class LabelledBatches(SequenceBatches):
    """Length-bucketed batches of ``words``, ``words_mask`` and ``labels [B]``.

    Filler rows of a bucket's last batch are all padding, label 0 (the loss ignores them).
    """

    def __init__(
        self,
        words: Sequence[Sequence[int]],
        labels: Sequence[int],
        *,
        batch_size: int,
        pad_id: int = 0,
        buckets: Sequence[int] | None = None,
        seed: int = 0,
        shuffle: bool = True,
    ) -> None:
        words = [w if len(w) else [pad_id] for w in words]  # an empty text still gives one (padded) position
        super().__init__(
            {"words": words}, batch_size=batch_size, pad_id=pad_id, buckets=buckets, seed=seed, shuffle=shuffle
        )
        self.labels = np.asarray(labels, dtype=np.int32)
        if len(self.labels) != self.size:
            raise DataError(f"{self.size} texts but {len(self.labels)} labels")

    def make_batch(self, bucket: int, indices: np.ndarray) -> Mapping[str, np.ndarray]:
        batch = dict(super().make_batch(bucket, indices))
        labels = np.zeros(self.batch_size, dtype=np.int32)
        labels[: len(indices)] = self.labels[indices]
        batch["labels"] = labels
        return batch
