"""Byte-level character ids for models that read how words are spelled.

Every model that reads characters (a tagger's character-level word
representation, ELMo's character CNN) uses this one fixed encoding, so a batch
made for one can feed another and no character vocabulary needs to travel with
a model. A word becomes ``[BOW, byte_1, ..., byte_n, EOW]`` (UTF-8 bytes shifted
past the reserved ids), right-padded with `PAD`; the sentence-boundary tokens
have their own one-character spellings.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from zoo.data.batching import SequenceBatches
from zoo.errors import DataError

__all__ = [
    "BOS_CHAR",
    "BOW",
    "EOS_CHAR",
    "EOW",
    "NUM_CHARS",
    "PAD",
    "SpelledBatches",
    "encode_sentences",
    "encode_words",
    "spell",
]

PAD, BOW, EOW, BOS_CHAR, EOS_CHAR = 0, 1, 2, 3, 4
_OFFSET = 5  # byte b has id b + _OFFSET
NUM_CHARS = 256 + _OFFSET
"""Size of a character embedding table for this encoding."""


def spell(word: str, max_length: int) -> np.ndarray:
    """The ids of one word, ``[max_length]`` int32, boundaries included.

    A word longer than ``max_length - 2`` bytes keeps its first and last bytes
    (half each): prefixes and suffixes carry most of what spelling tells.
    """
    return _spelled(word, max_length).copy()


@functools.lru_cache(maxsize=1 << 17)
def _spelled(word: str, max_length: int) -> np.ndarray:
    if max_length < 3:
        raise DataError(f"max_length must leave room for one byte between the boundaries, got {max_length}")
    data = word.encode("utf-8")
    room = max_length - 2
    if len(data) > room:
        head = (room + 1) // 2
        data = data[:head] + data[len(data) - (room - head) :]
    out = np.zeros(max_length, dtype=np.int32)
    out[0] = BOW
    out[1 : 1 + len(data)] = np.frombuffer(data, dtype=np.uint8).astype(np.int32) + _OFFSET
    out[1 + len(data)] = EOW
    return out


def encode_words(words: Sequence[str], max_length: int, *, width: int | None = None) -> np.ndarray:
    """Spell `words` as ``[width, max_length]`` (rows past ``len(words)`` are all `PAD`)."""
    width = len(words) if width is None else width
    if len(words) > width:
        raise DataError(f"{len(words)} words do not fit in width {width}")
    out = np.zeros((width, max_length), dtype=np.int32)
    for row, word in enumerate(words):
        out[row] = _spelled(word, max_length)
    return out


def encode_sentences(sentences: Sequence[Sequence[str]], max_length: int, *, width: int | None = None) -> np.ndarray:
    """Spell a batch of sentences as ``[n, width, max_length]`` (width: the longest)."""
    width = max((len(s) for s in sentences), default=0) if width is None else width
    out = np.zeros((len(sentences), width, max_length), dtype=np.int32)
    for row, sentence in enumerate(sentences):
        out[row] = encode_words(sentence, max_length, width=width)
    return out


class SpelledBatches(SequenceBatches):
    """`SequenceBatches` whose batches also spell each example's tokens.

    Besides every field's ``name [B, W]`` and ``name_mask [B, W]``, a batch holds
    ``chars [B, W, max_length]``: the spelling of ``tokens[i]`` for each row i
    (filler rows and positions past a sentence are all `PAD`).

    **Arguments:** `fields` (as for `SequenceBatches`, aligned with `tokens`);
    `tokens`: each example's tokens as strings; `max_length`: characters per
    token, boundaries included; the rest as for `SequenceBatches`.
    """

    def __init__(
        self,
        fields: Mapping[str, Sequence[Sequence[int]]],
        tokens: Sequence[Sequence[str]],
        *,
        max_length: int,
        **options,
    ) -> None:
        super().__init__(fields, **options)
        if len(tokens) != self.size:
            raise DataError(f"{self.size} examples but {len(tokens)} token lists to spell")
        self.tokens, self.max_length = tokens, max_length

    def make_batch(self, bucket: int, indices: np.ndarray) -> dict[str, np.ndarray]:
        batch = super().make_batch(bucket, indices)
        width = self.buckets[bucket]
        chars = np.zeros((self.batch_size, width, self.max_length), dtype=np.int32)
        for row, index in enumerate(indices):
            chars[row] = encode_words(self.tokens[index], self.max_length, width=width)
        batch["chars"] = chars
        return batch
