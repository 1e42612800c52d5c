"""Seq2seq data: a parallel-corpus reader, a tokeniser, vocabularies and bucketed batches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zoo.plugin_api import (  # re-exported for plugin users
    MAX_LINE_CHARS,
    DataError,
    SequenceBatches,
    Vocab,
    detokenize,
    pad_sequences,
    read_lines,
    tokenize,
)

__all__ = [
    "PairFile",
    "build_vocabs",
    "detokenize",
    "encode_pairs",
    "encode_sources",
    "pair_batches",
    "read_pair_file",
    "read_pairs",
    "tokenize",
    "unknown_rate",
]

DROPPED = ("too long", "empty", "bad line")
"""Why `read_pair_file` drops a line: a side over `max_length` tokens, a side with no
tokens, fewer than two tab-separated columns."""


@dataclass
class PairFile:
    """What `read_pair_file` read: the kept pairs, their text, and what it dropped.

    - `sources`, `targets`: token lists of the kept pairs.
    - `texts`: the kept pairs' ``(source, target)`` text as written (stripped):
      BLEU scores outputs against the reference text, not its tokens.
    - `read`: non-blank lines read; `dropped`: reason -> lines (`DROPPED`);
      `first_bad`: where the first bad line is and what it holds, or None.
    """

    path: Path
    sources: list[list[str]] = field(default_factory=list)
    targets: list[list[str]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)
    read: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROPPED, 0))
    first_bad: str | None = None

    def summary(self, max_length: int | None = None) -> str:
        """``"F: 1,000 pairs read, 990 kept, 10 dropped (7 too long (> 50 tokens), 3 bad lines: the first ...)"``."""
        kept, lost = len(self.sources), sum(self.dropped.values())
        text = f"{self.path}: {self.read:,} pairs read, {kept:,} kept, {lost:,} dropped"
        if not lost:
            return text
        limit = f" (> {max_length} tokens)" if max_length is not None else ""
        why = {"too long": f"too long{limit}", "empty": "with an empty side", "bad line": "bad line"}
        parts = [
            f"{n:,} {why[reason]}{'s' * (reason == 'bad line' and n != 1)}" for reason, n in self.dropped.items() if n
        ]
        if self.first_bad:
            parts[-1] += f", the first {self.first_bad}"
        return f"{text} ({'; '.join(parts)})"


def read_pairs(
    path: str | Path,
    *,
    swap: bool = False,
    tokenizer: Callable[[str], list[str]] = tokenize,
    max_length: int | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
) -> tuple[list[list[str]], list[list[str]]]:
    """Read ``src<TAB>tgt[<TAB>...]`` lines (plain or gzip), tokenised; a line without
    a tab is a `DataError` naming it (`read_pair_file` counts and skips such lines).

    **Arguments:**

    - `path`: the corpus; gzip is told by its first bytes. Extra columns (an
      attribution, say) are ignored; blank lines are skipped.
    - `swap`: read the second column as the source (Tatoeba's ``en<TAB>es`` read
      as Spanish -> English).
    - `tokenizer`: text -> tokens (default `tokenize`: lowercase, punctuation split).
    - `max_length`: drop pairs with a side longer than this many tokens.
    - `encoding`, `errors`: how the file is decoded (see `zoo.data.textfile`: an
      undecodable or binary file is a `DataError` naming the line and byte).
    - `max_line_chars`: lines longer than this are skipped unread (a
      `LongLinesWarning` counts them), so one huge line cannot fill memory.

    **Returns:** ``(sources, targets)``, lists of token lists.
    """
    pairs = read_pair_file(
        path,
        swap=swap,
        tokenizer=tokenizer,
        max_length=max_length,
        encoding=encoding,
        errors=errors,
        max_line_chars=max_line_chars,
        strict=True,
    )
    return pairs.sources, pairs.targets


def read_pair_file(
    path: str | Path,
    *,
    swap: bool = False,
    tokenizer: Callable[[str], list[str]] = tokenize,
    max_length: int | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    max_line_chars: int = MAX_LINE_CHARS,
    strict: bool = False,
) -> PairFile:
    """`read_pairs`, keeping each pair's text and counting what it drops and why.

    Arguments as `read_pairs`'s; with `strict`, a bad line (no tab) is a `DataError`
    naming it, else it is counted and skipped. A file with no pair left is a
    `DataError` that says what was dropped.
    """
    pairs = PairFile(Path(path))
    text = {"encoding": encoding, "errors": errors, "max_chars": max_line_chars, "what": "pairs file"}
    for number, line in read_lines(pairs.path, **text):
        if not line.strip():
            continue
        pairs.read += 1
        columns = line.split("\t", 2)
        if len(columns) < 2:
            bad = f"{pairs.path}:{number}: expected 'source<TAB>target', got {line[:60]!r}"
            if strict:
                raise DataError(bad)
            pairs.dropped["bad line"] += 1
            pairs.first_bad = pairs.first_bad or bad
            continue
        src_text, tgt_text = (columns[1], columns[0]) if swap else (columns[0], columns[1])
        src, tgt = tokenizer(src_text), tokenizer(tgt_text)
        if not src or not tgt:
            pairs.dropped["empty"] += 1
        elif max_length is not None and max(len(src), len(tgt)) > max_length:
            pairs.dropped["too long"] += 1
        else:
            pairs.sources.append(src)
            pairs.targets.append(tgt)
            pairs.texts.append((src_text.strip(), tgt_text.strip()))
    if not pairs.sources:
        limit = f" of at most {max_length} tokens" if max_length is not None else ""
        raise DataError(f"{pairs.path} holds no non-empty pairs{limit}: {pairs.summary(max_length)}")
    return pairs


def unknown_rate(vocab: Vocab, sequences: Sequence[Sequence[str]]) -> float:
    """The fraction of the tokens of `sequences` that `vocab` encodes as ``<unk>`` (NaN for no tokens)."""
    total = sum(len(s) for s in sequences)
    unknown = sum(token not in vocab for s in sequences for token in s)
    return unknown / total if total else float("nan")


def build_vocabs(
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    *,
    joint: bool = False,
    min_count: int = 1,
    max_size: int | None = None,
) -> tuple[Vocab, Vocab]:
    """Source and target vocabularies (reserved ids first); with `joint`, one shared by both.

    Tokens seen fewer than `min_count` times, or beyond the `max_size` most
    frequent, become ``<unk>`` when encoded.
    """
    options = {"min_count": min_count, "max_size": max_size}
    if joint:
        shared = Vocab.build([*sources, *targets], **options)
        return shared, shared
    return Vocab.build(sources, **options), Vocab.build(targets, **options)


def encode_sources(vocab: Vocab, sources: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Pad-encoded sources ``[n, longest]`` and their masks."""
    return pad_sequences([vocab.encode(s) for s in sources], pad_id=vocab.pad_id)


def encode_pairs(
    src_vocab: Vocab, tgt_vocab: Vocab, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]
) -> dict[str, list[np.ndarray]]:
    """Source ids, and target ids ending with eos (the decoder adds bos itself)."""
    return {
        "src": [src_vocab.encode(s) for s in sources],
        "tgt": [tgt_vocab.encode(t, eos=True) for t in targets],
    }


def pair_batches(
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    *,
    batch_size: int,
    seed: int = 0,
    buckets: Sequence[int] | None = None,
) -> SequenceBatches:
    """Length-bucketed batches with ``src``, ``src_mask``, ``tgt``, ``tgt_mask``.

    Pairs of similar length share a bucket (4 quantile widths by default), so
    little compute goes to padding and the step compiles once per bucket.
    """
    if src_vocab.pad_id != tgt_vocab.pad_id:
        raise DataError("source and target vocabularies must share the pad id")
    return SequenceBatches(
        encode_pairs(src_vocab, tgt_vocab, sources, targets),
        batch_size=batch_size,
        pad_id=src_vocab.pad_id,
        buckets=buckets,
        seed=seed,
    )
