"""fastText's tokens: a line split at the characters fastText's ``Dictionary::readWord`` splits at."""

from __future__ import annotations

import re

__all__ = ["SEPARATORS", "fasttext_split"]

SEPARATORS = " \t\n\v\f\r\0"
"""What separates fastText's tokens (``'\\n'`` also ends its line)."""

_SPLIT = re.compile("[" + re.escape(SEPARATORS) + "]+")


def fasttext_split(text: str) -> list[str]:
    """The tokens of `text` as fastText reads them: runs of anything but `SEPARATORS` (so a
    no-break space, unlike for ``str.split``, stays inside a token), case kept."""
    return [token for token in _SPLIT.split(text) if token]
