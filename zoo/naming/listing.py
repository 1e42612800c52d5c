"""Top-level convenience functions over the process-wide registry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from zoo.naming.loader import PluginRecord
from zoo.naming.registry import default_registry
from zoo.naming.spec import ModelSpec

__all__ = ["describe", "list_components", "list_models", "list_plugins"]


def describe(name: str, **overrides: Any) -> ModelSpec:
    """Resolve `name` and `overrides` into a `ModelSpec` without building anything."""
    return default_registry().describe(name, **overrides)


def list_models(pattern: str = "*", *, exclude: str | Iterable[str] = ()) -> list[str]:
    """Model names (architectures and presets) matching a wildcard, e.g. ``"seq2seq*"``."""
    return default_registry().list_models(pattern, exclude=exclude)


def list_components(pattern: str = "*", *, kind: str | None = None) -> list[str]:
    """Component names matching a wildcard, optionally of one kind (``"attention"``)."""
    return default_registry().list_components(pattern, kind=kind)


def list_plugins() -> list[PluginRecord]:
    """Every plugin entry point with its distribution, version, status and error."""
    return sorted(default_registry().plugins.values(), key=lambda r: r.name)
