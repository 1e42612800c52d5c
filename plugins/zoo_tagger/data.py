"""Tagged sentences: readers (``word/TAG`` lines, CoNLL columns), vocabularies, batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zoo.plugin_api import (
    MAX_LINE_CHARS,
    DataError,
    SequenceBatches,
    SpelledBatches,
    Vocab,
    bucket_boundaries,
    open_text,
    read_lines,
)

__all__ = [
    "TaggedSentences",
    "read_conll",
    "read_slash_tagged",
    "read_tagged",
    "tag_vocab",
    "tagging_batches",
    "word_vocab",
]


class TaggedSentences:
    """Sentences (token lists) and their tags (tag lists of the same lengths)."""

    def __init__(self, sentences: Sequence[Sequence[str]], tags: Sequence[Sequence[str]]) -> None:
        if len(sentences) != len(tags):
            raise DataError(f"{len(sentences)} sentences but {len(tags)} tag sequences")
        for number, (words, labels) in enumerate(zip(sentences, tags, strict=True)):
            if len(words) != len(labels):
                raise DataError(f"sentence {number} has {len(words)} tokens but {len(labels)} tags")
        self.sentences = [list(s) for s in sentences]
        self.tags = [list(t) for t in tags]

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[tuple[list[str], list[str]]]:
        return iter(zip(self.sentences, self.tags, strict=True))

    def subset(self, indices: Sequence[int]) -> TaggedSentences:
        return TaggedSentences([self.sentences[i] for i in indices], [self.tags[i] for i in indices])

    def split(self, held_out: int, *, seed: int = 0) -> tuple[TaggedSentences, TaggedSentences]:
        """A random ``(rest, held_out)`` split with `held_out` sentences."""
        if not 0 < held_out < len(self):
            raise DataError(f"cannot hold out {held_out} of {len(self)} sentences")
        order = np.random.default_rng(seed).permutation(len(self))
        return self.subset(sorted(order[held_out:].tolist())), self.subset(sorted(order[:held_out].tolist()))

    @property
    def num_tokens(self) -> int:
        return sum(len(s) for s in self.sentences)


def _text(encoding: str, errors: str, max_line_chars: int) -> dict[str, Any]:
    return {"encoding": encoding, "errors": errors, "max_chars": max_line_chars, "what": "tagged file"}


def read_slash_tagged(
    path: str | Path, *, encoding: str = "utf-8", errors: str = "strict", max_line_chars: int = MAX_LINE_CHARS
) -> TaggedSentences:
    """One sentence a line, tokens ``word/TAG`` (split at the last ``/``: ``1/2/CD`` is ``1/2`` + ``CD``).

    `encoding` and `errors` decode the file (see `zoo.data.textfile`); lines longer
    than `max_line_chars` are skipped unread (a `LongLinesWarning` counts them).
    """
    path = Path(path)
    sentences, tags = [], []
    for number, line in read_lines(path, **_text(encoding, errors, max_line_chars)):
        items = line.split()
        if not items:
            continue
        words, labels = [], []
        for item in items:
            word, sep, tag = item.rpartition("/")
            if not sep or not word or not tag:
                raise DataError(f"{path}:{number}: {item!r} is not 'word/TAG'")
            words.append(word)
            labels.append(tag)
        sentences.append(words)
        tags.append(labels)
    if not sentences:
        raise DataError(f"{path} holds no tagged sentences")
    return TaggedSentences(sentences, tags)


def read_conll(
    path: str | Path,
    *,
    token_column: int = 0,
    tag_column: int = -1,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> TaggedSentences:
    """CoNLL-style columns: one token a line (``token<TAB>tag``, or more columns), blank lines
    between sentences; ``#`` comment lines and ``-DOCSTART-`` lines are skipped. The other
    arguments are as in `read_slash_tagged`."""
    path = Path(path)
    sentences, tags = [], []
    words: list[str] = []
    labels: list[str] = []

    def flush() -> None:
        if words:
            sentences.append(list(words))
            tags.append(list(labels))
            words.clear()
            labels.clear()

    for number, line in read_lines(path, **_text(encoding, errors, max_line_chars)):
        if not line.strip():
            flush()
            continue
        if line.startswith("#") and not words:
            continue
        columns = line.split("\t") if "\t" in line else line.split()
        if columns[0] == "-DOCSTART-":
            continue
        count = len(columns)
        if not (-count <= token_column < count and -count <= tag_column < count) or (
            token_column % count == tag_column % count  # one column: the token would be its own tag
        ):
            raise DataError(f"{path}:{number}: expected token and tag columns, got {line[:60]!r}")
        words.append(columns[token_column])
        labels.append(columns[tag_column])
    flush()
    if not sentences:
        raise DataError(f"{path} holds no tagged sentences")
    return TaggedSentences(sentences, tags)


def read_tagged(
    path: str | Path,
    *,
    format: str = "auto",
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> TaggedSentences:
    """Read `path` as ``"slash"`` (``word/TAG`` lines) or ``"conll"`` columns; ``"auto"``
    picks CoNLL when a line holds a tab or there are blank lines between short ones.
    The other arguments are as in `read_slash_tagged`."""
    path = Path(path)
    text = {"encoding": encoding, "errors": errors, "max_line_chars": max_line_chars}
    if format == "auto":
        with open_text(path, **_text(encoding, errors, max_line_chars)) as lines:
            head = [line for _, (_, line) in zip(range(200), lines.lines(), strict=False)]
        tabbed = any("\t" in line for line in head)
        one_token_lines = sum(1 for line in head if len(line.split()) in (2, 3, 4) and "/" not in line.split()[0])
        format = "conll" if tabbed or one_token_lines > len(head) // 2 else "slash"
    if format == "slash":
        return read_slash_tagged(path, **text)
    if format == "conll":
        return read_conll(path, **text)
    raise DataError(f"format must be 'auto', 'slash' or 'conll', got {format!r}")


def word_vocab(
    sentences: Sequence[Sequence[str]], *, lowercase: bool = True, min_count: int = 1, max_size: int | None = None
) -> Vocab:
    """Word vocabulary with reserved ``<pad>`` (0) and ``<unk>`` (1); rarer words become ``<unk>``."""
    words = ([w.lower() for w in s] for s in sentences) if lowercase else sentences
    return Vocab.build(words, min_count=min_count, max_size=max_size, specials=("pad", "unk"))


def tag_vocab(tags: Sequence[Sequence[str]]) -> Vocab:
    """The tag set, no reserved ids, sorted (stable ids across runs)."""
    return Vocab(sorted({t for sentence in tags for t in sentence}), specials={})


def tagging_batches(
    data: TaggedSentences,
    words: Vocab,
    tags: Vocab,
    *,
    batch_size: int,
    lowercase: bool = True,
    max_word_length: int | None = None,
    context_vocab: Vocab | None = None,
    buckets: Sequence[int] | None = None,
    seed: int = 0,
    shuffle: bool = True,
) -> SequenceBatches:
    """Length-bucketed batches for a tagger.

    Each batch holds ``words``/``words_mask`` and ``tags`` ``[B, W]``; with
    `max_word_length`, also ``chars [B, W, max_word_length]`` (`zoo.data.chars` ids);
    with `context_vocab`, also ``context`` ids ``[B, W]`` in that vocabulary.

    **Arguments:** `data`; `words`, `tags` (vocabularies); `lowercase` (words are
    looked up lowercased, characters keep their case); `batch_size`; `buckets`
    (default: 8 length quantiles); `seed`; `shuffle`.
    """
    unknown = sorted({t for s in data.tags for t in s if t not in tags})
    if unknown:
        raise DataError(f"tags {unknown[:8]} are not in the model's tag set")
    fields = {
        "words": [words.encode([w.lower() for w in s] if lowercase else s) for s in data.sentences],
        "tags": [tags.encode(t) for t in data.tags],
    }
    if context_vocab is not None:
        fields["context"] = [context_vocab.encode(s) for s in data.sentences]
    options = {
        "batch_size": batch_size,
        "pad_id": words.pad_id,
        "buckets": buckets or bucket_boundaries([len(s) for s in data.sentences], count=8),
        "seed": seed,
        "shuffle": shuffle,
    }
    if max_word_length is None:
        return SequenceBatches(fields, **options)
    return SpelledBatches(fields, data.sentences, max_length=max_word_length, **options)
