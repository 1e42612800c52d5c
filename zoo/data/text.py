"""Text tokenisation for translation-style data: lowercase, punctuation split, and back."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["detokenize", "tokenize"]

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
