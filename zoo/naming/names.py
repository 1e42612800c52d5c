"""Parse composite model names.

Grammar::

    name := arch ("+" component | "+" slot "=" component)* ["." tag]

``seq2seq+luong-general``, ``seq2seq+gru+bahdanau+beam``,
``seq2seq+encoder=recurrent+attention=none``, ``lstm-lm.ptb``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zoo.errors import NameSyntaxError

__all__ = ["IDENTIFIER", "ParsedName", "parse_name"]

IDENTIFIER = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


@dataclass(frozen=True)
class ParsedName:
    """A model name split into its parts.

    **Arguments:**

    - `arch`: the architecture or preset name.
    - `parts`: each `+` part as `(slot or None, component)`, in order.
    - `tag`: the weights tag after `.`, or None.
    """

    arch: str
    parts: tuple[tuple[str | None, str], ...]
    tag: str | None = None

    def __str__(self) -> str:
        text = self.arch
        for slot, component in self.parts:
            text += f"+{slot}={component}" if slot else f"+{component}"
        return text + (f".{self.tag}" if self.tag else "")


def _check(word: str, what: str, name: str) -> str:
    if not IDENTIFIER.fullmatch(word):
        raise NameSyntaxError(
            f"invalid {what} {word!r} in model name {name!r}: use lowercase letters, digits,"
            " '-' and '_' (grammar: arch(+component|+slot=component)*[.tag])"
        )
    return word


def parse_name(name: str) -> ParsedName:
    """Split `name` into architecture, `+` parts and tag.

    Raises `NameSyntaxError` naming the offending part.
    """
    if not isinstance(name, str) or not name.strip():
        raise NameSyntaxError(f"a model name must be a non-empty string, got {name!r}")
    text = name.strip()
    tag = None
    if "." in text:
        text, tag = text.rsplit(".", 1)
        _check(tag, "tag", name)
    pieces = text.split("+")
    arch = _check(pieces[0], "architecture", name)
    parts: list[tuple[str | None, str]] = []
    for piece in pieces[1:]:
        if "=" in piece:
            slot, _, component = piece.partition("=")
            parts.append((_check(slot, "slot", name), _check(component, "component", name)))
        else:
            parts.append((None, _check(piece, "component", name)))
    return ParsedName(arch, tuple(parts), tag)
