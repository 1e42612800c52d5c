"""Text tokenisation and back: punctuation-split words for translation-style data
(`tokenize`), and the words or characters of a token stream with their ids
(`split_text`, `encode_text`, `decode_text`: a language model's prompt and output).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from zoo.data.vocab import SPECIALS, Vocab
from zoo.errors import DataError

__all__ = ["LEVELS", "boundary_id", "decode_text", "detokenize", "encode_text", "split_text", "tokenize"]

LEVELS = ("word", "char")
"""How a token stream splits text: whitespace-separated words, or single characters."""

# a number with inner separators ("3.5", "1,000", "10:30"), a word with inner
# apostrophes or hyphens ("don't", "e-mail"), or any single other non-space character
_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:['’\-]\w+)*|[^\w\s]", re.UNICODE)
_NO_SPACE_BEFORE = set(".,!?;:%)]}…»-")
_NO_SPACE_AFTER = set("¿¡([{«$-")


def tokenize(text: str, *, lowercase: bool = True) -> list[str]:
    """Split `text` into words, numbers and punctuation marks, lowercased by default.

    ``"¿Qué hora es?"`` -> ``["¿", "qué", "hora", "es", "?"]``; words keep inner
    apostrophes and hyphens (``"don't"``), numbers their separators (``"3.5"``).
    Idempotent: tokenising the space-joined tokens gives the same tokens.
    """
    if lowercase:
        text = text.lower()
    return _TOKEN.findall(text)


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens into text: no space before closing punctuation, after opening
    marks, or around a lone hyphen (``1999 - 03`` -> ``1999-03``)."""
    out: list[str] = []
    for token in tokens:
        if out and token not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out.append(" ")
        out.append(token)
    return "".join(out)


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise DataError(f"level must be one of {list(LEVELS)}, got {level!r}")


def split_text(text: str, level: str, *, eos: str = SPECIALS["eos"]) -> list[str]:
    """Tokens of `text`: for ``"word"``, each non-blank line's words then `eos`;
    for ``"char"``, every character (newlines included)."""
    _check_level(level)
    if level == "char":
        return list(text)
    tokens: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if words:
            tokens += [*words, eos]
    return tokens


def boundary_id(vocab: Vocab, level: str) -> int:
    """The token that stands before every text: end-of-sentence for words, newline for characters."""
    if level == "char" and "\n" in vocab:
        return vocab.id("\n")
    if "eos" in vocab.specials:
        return vocab.eos_id
    return vocab.unk_id


def encode_text(vocab: Vocab, text: str, level: str) -> np.ndarray:
    """Ids ``[1 + tokens]`` of the boundary token followed by `text`'s tokens (no end-of-sentence after the last word).

    Generation conditions on this: a model trained on a stream has always seen
    a boundary before the start of a sentence or line.
    """
    tokens = split_text(text, level)
    if level == "word" and tokens:
        tokens = tokens[:-1]  # the prompt continues: no sentence end after it
    return np.concatenate([[boundary_id(vocab, level)], vocab.encode(tokens)]).astype(np.int32)


def decode_text(vocab: Vocab, ids: Iterable[int], level: str) -> str:
    """Text of `ids`: words joined by spaces with end-of-sentence as a line break; characters joined.

    Padding, begin-of-sequence and (for characters) end-of-sequence tokens are dropped.
    """
    _check_level(level)
    roles = {vocab.special_id(r): r for r in vocab.specials if r != "unk"}
    if level == "char":
        return "".join(vocab.tokens[int(i)] for i in ids if int(i) not in roles)
    lines: list[list[str]] = [[]]
    for i in ids:
        role = roles.get(int(i))
        if role == "eos":
            lines.append([])
        elif role is None:
            lines[-1].append(vocab.tokens[int(i)])
    return "\n".join(" ".join(words) for words in lines)
