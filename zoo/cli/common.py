"""Helpers shared by CLI commands (light: no JAX)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from typing import Any

from zoo.errors import UnknownParameterError

__all__ = ["parse_overrides", "table"]


def parse_value(text: str) -> Any:
    """A TOML literal (``3``, ``0.5``, ``true``, ``[3, 4]``, ``"x"``) or else the raw string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_overrides(items: Iterable[str] | None) -> dict[str, Any]:
    """``["encoder.num_layers=2", "dropout=0.3"]`` -> ``{"encoder.num_layers": 2, "dropout": 0.3}``."""
    overrides: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UnknownParameterError(f"--set expects KEY=VALUE, got {item!r}")
        overrides[key.strip()] = parse_value(value.strip())
    return overrides


def printable(text: object) -> str:
    """`text` with every control or invisible formatting character escaped as Python writes it
    (``\\x1b``, ``\\n``, ``\\u202e``): a name or source from a file never drives the terminal."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """Left-aligned columns, every cell `printable`; the last column is not padded."""
    rows = [[printable(c) for c in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=False)] + [str(row[-1])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
