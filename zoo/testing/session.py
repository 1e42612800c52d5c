"""The conformance kit's session: one registry with every plugin loaded, and a watch on JAX's
global configuration that records which plugin changed it while loading, importing or building."""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["config_changes", "jax_configuration", "kit_registry", "watch_config"]

_REGISTRY: dict[str, Any] = {}
"""The kit's session state: ``registry``, ``config`` (JAX's configuration before any plugin
loaded) and ``changes`` (plugin -> list of ``(action, {flag: (before, after)})``)."""


def jax_configuration() -> dict[str, Any]:
    """Every flag of `jax.config` and its value now."""
    import jax

    return dict(jax.config.values)


def _restore(before: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Put JAX's configuration back to `before`; return what had changed (flag -> (before, after))."""
    import jax

    changed = {k: (v, jax.config.values.get(k)) for k, v in before.items() if jax.config.values.get(k) != v}
    for flag, (value, _) in changed.items():
        jax.config.update(flag, value)
    return changed


@contextlib.contextmanager
def watch_config(plugins: str | Iterable[str], action: str) -> Iterator[None]:
    """Record any change `action` (e.g. ``"importing its factory"``) makes to JAX's configuration
    against each of `plugins` (a name or several), and put the configuration back afterwards."""
    before = jax_configuration()
    try:
        yield
    finally:
        changed = _restore(before)
        for plugin in [plugins] if isinstance(plugins, str) else plugins:
            if changed:
                _REGISTRY.setdefault("changes", {}).setdefault(plugin, []).append((action, changed))


def config_changes(plugin: str) -> list[tuple[str, dict[str, tuple[Any, Any]]]]:
    """What `plugin` changed in JAX's configuration this session, as ``[(action, {flag: (before, after)})]``."""
    return list(_REGISTRY.get("changes", {}).get(plugin, []))


def kit_registry():
    """One registry with every plugin loaded, shared by the session.

    Plugins load one entry-point name at a time, each under `watch_config`.
    """
    if "registry" not in _REGISTRY:
        from zoo.naming.loader import PluginWarning, discover_entry_points
        from zoo.naming.registry import Registry

        _REGISTRY["config"] = jax_configuration()
        registry = Registry()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PluginWarning)  # broken plugins fail their own checks
            for name, eps in itertools.groupby(discover_entry_points(), key=lambda ep: ep.name):
                with watch_config(name, "loading (its entry point's import and registration)"):
                    registry.load_plugins(list(eps))
        _REGISTRY["registry"] = registry
    return _REGISTRY["registry"]
