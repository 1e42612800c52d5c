"""Plugin discovery and isolation.

Each entry point of the group ``zoo.plugins`` is one plugin, loaded on its
own: a plugin that fails to import or to register is recorded as broken and
reported with a warning naming it and its distribution, and every other plugin
keeps working. Environment controls:

- ``ZOO_DISABLE_PLUGINS=a,b``: never load these.
- ``ZOO_LOAD_PLUGINS=a,b``: load only these (set but empty: load none).
- ``ZOO_STRICT_PLUGINS=1``: a failing plugin raises instead of warning.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from zoo import hookspecs
from zoo.errors import PluginError

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginRecord",
    "PluginWarning",
    "discover_entry_points",
    "load_entry_point",
    "make_plugin_manager",
    "plugin_filter",
]

ENTRY_POINT_GROUP = "zoo.plugins"

LOADED, BROKEN, DISABLED, UNLISTED = "loaded", "broken", "disabled", "not allowed"


class PluginWarning(UserWarning):
    """A plugin failed to load; the others keep working."""


@dataclass
class PluginRecord:
    """What zoo knows of one plugin (one entry point).

    `status` is ``loaded``, ``broken``, ``disabled`` (``ZOO_DISABLE_PLUGINS``) or
    ``not allowed`` (absent from ``ZOO_LOAD_PLUGINS``); `error` says why when broken.
    """

    name: str
    distribution: str | None
    version: str | None
    value: str
    status: str = LOADED
    error: str | None = None
    names: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == LOADED


def discover_entry_points(group: str = ENTRY_POINT_GROUP) -> list[EntryPoint]:
    """Entry points of `group`, sorted by name (one per plugin)."""
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


def _env_list(environ: Mapping[str, str], key: str) -> set[str] | None:
    if key not in environ:
        return None
    return {item.strip() for item in environ[key].split(",") if item.strip()}


def plugin_filter(environ: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """Return ``status_of(plugin_name)`` under the environment's allow/block lists."""
    environ = os.environ if environ is None else environ
    blocked = _env_list(environ, "ZOO_DISABLE_PLUGINS") or set()
    allowed = _env_list(environ, "ZOO_LOAD_PLUGINS")

    def status_of(name: str) -> str:
        if name in blocked:
            return DISABLED
        if allowed is not None and name not in allowed:
            return UNLISTED
        return LOADED

    return status_of


def strict(environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    return environ.get("ZOO_STRICT_PLUGINS", "").strip().lower() in {"1", "true", "yes", "on"}


def make_plugin_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def record_for(ep: EntryPoint) -> PluginRecord:
    dist = getattr(ep, "dist", None)
    return PluginRecord(
        name=ep.name,
        distribution=dist.name if dist is not None else None,
        version=dist.version if dist is not None else None,
        value=ep.value,
    )


def _unknown_hooks(manager: pluggy.PluginManager, plugin: object) -> list[str]:
    known = {name for name in dir(hookspecs) if name.startswith("zoo_")}
    names = []
    for attr in dir(plugin):
        if attr.startswith("zoo_") and attr not in known and manager.parse_hookimpl_opts(plugin, attr) is not None:
            names.append(attr)
    return names


def load_entry_point(
    manager: pluggy.PluginManager,
    record: PluginRecord,
    load: Callable[[], Any],
    collect: Callable[[PluginRecord, list[Any]], None],
) -> None:
    """Load one plugin: import it, register its hooks, collect its tables.

    `collect(record, tables)` receives what the plugin passed to ``register``.
    Any failure marks `record` broken (and unregisters the plugin); it is the
    caller's job to warn or raise.
    """
    plugin = None
    try:
        plugin = load()
        manager.register(plugin, name=record.name)
        unknown = _unknown_hooks(manager, plugin)
        if unknown:
            known = sorted(n for n in dir(hookspecs) if n.startswith("zoo_"))
            raise PluginError(f"implements unknown hooks {unknown}; zoo's hooks are {known}")
        tables: list[Any] = []
        for impl in manager.hook.zoo_register_tables.get_hookimpls():
            if impl.plugin is plugin:
                impl.function(register=tables.append)
        collect(record, tables)
    except Exception as error:  # a broken plugin must never take the host down
        record.status, record.error = BROKEN, f"{type(error).__name__}: {error}"
        if plugin is not None and manager.is_registered(plugin):
            manager.unregister(plugin)


def report_broken(record: PluginRecord, environ: Mapping[str, str] | None = None) -> None:
    """Warn (or raise under ``ZOO_STRICT_PLUGINS=1``) about a broken plugin."""
    where = f" from distribution {record.distribution!r}" if record.distribution else ""
    message = (
        f"zoo plugin {record.name!r}{where} failed to load and is disabled: {record.error}. "
        f"Other plugins keep working; set ZOO_DISABLE_PLUGINS={record.name} to silence this, "
        "or ZOO_STRICT_PLUGINS=1 to make it fatal."
    )
    if strict(environ):
        raise PluginError(message)
    warnings.warn(message, PluginWarning, stacklevel=3)


def iter_loadable(
    eps: Iterable[EntryPoint], environ: Mapping[str, str] | None = None
) -> Iterable[tuple[EntryPoint, PluginRecord]]:
    status_of = plugin_filter(environ)
    for ep in eps:
        record = record_for(ep)
        record.status = status_of(ep.name)
        yield ep, record
