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


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """Left-aligned columns; the last column is not padded."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=False)] + [str(row[-1])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
