"""Plugin discovery and isolation.

Each entry point of the group ``zoo.plugins`` is one plugin, loaded on its
own: a plugin that fails to import or to register is recorded as broken and
reported with a warning naming it and its distribution, and every other plugin
keeps working. "Fails" covers any exception, `SystemExit` and `GeneratorExit`
included; only `KeyboardInterrupt` goes through. An entry-point name declared
by two entry points (two distributions, or a third-party one named like a
built-in) is a conflict: neither is loaded, both are named in the report, and
every other plugin keeps working. A plugin that takes more than
``ZOO_SLOW_PLUGIN_SECONDS`` (default 2) to import and register is named in a
warning. What cannot be contained: a plugin that calls `os._exit`, kills its
own process or crashes the interpreter ends zoo too; block it with
``ZOO_DISABLE_PLUGINS``. Environment controls:

- ``ZOO_DISABLE_PLUGINS=a,b``: never load these.
- ``ZOO_LOAD_PLUGINS=a,b``: load only these (set but empty: load none).
- ``ZOO_STRICT_PLUGINS=1``: a failing or conflicting plugin raises instead of warning.
- ``ZOO_SLOW_PLUGIN_SECONDS=s``: warn about plugins slower than `s` seconds to load (0: never).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import pluggy

from zoo.errors import PluginError
from zoo.naming import hookspecs

__all__ = [
    "ENTRY_POINT_GROUP",
    "SLOW_SECONDS",
    "PluginRecord",
    "PluginWarning",
    "conflict_error",
    "discover_entry_points",
    "load_entry_point",
    "make_plugin_manager",
    "plugin_filter",
    "rival_entry_points",
]

ENTRY_POINT_GROUP = "zoo.plugins"

LOADED, BROKEN, DISABLED, UNLISTED, CONFLICT = "loaded", "broken", "disabled", "not allowed", "in conflict"

SLOW_SECONDS = 2.0
"""Default of ``ZOO_SLOW_PLUGIN_SECONDS``: a plugin slower than this to load is named in a warning."""


class PluginWarning(UserWarning):
    """A plugin failed to load, conflicts with another or is slow; the others keep working."""


@dataclass
class PluginRecord:
    """What zoo knows of one plugin (one entry point).

    `status` is ``loaded``, ``broken``, ``disabled`` (``ZOO_DISABLE_PLUGINS``),
    ``not allowed`` (absent from ``ZOO_LOAD_PLUGINS``) or ``in conflict`` (another
    entry point has its name); `error` says why when broken or in conflict.
    `seconds` is how long importing and registering it took (None if not loaded).
    """

    name: str
    distribution: str | None
    version: str | None
    value: str
    status: str = LOADED
    error: str | None = None
    names: tuple[str, ...] = ()
    seconds: float | None = None

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


def also_disabled(environ: Mapping[str, str] | None, names: Iterable[str]) -> Mapping[str, str] | None:
    """`environ` (default ``os.environ``) with `names` added to ``ZOO_DISABLE_PLUGINS``."""
    names = list(names)
    if not names:
        return environ
    environ = os.environ if environ is None else environ
    blocked = ",".join([environ.get("ZOO_DISABLE_PLUGINS", ""), *names])
    return {**environ, "ZOO_DISABLE_PLUGINS": blocked}


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


def _describe(error: BaseException) -> str:
    """``Type: message``; a `SystemExit` says which exit the plugin asked for."""
    if isinstance(error, SystemExit):
        return f"SystemExit: the plugin called sys.exit({error.code!r}) while loading"
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def load_entry_point(
    manager: pluggy.PluginManager,
    record: PluginRecord,
    load: Callable[[], Any],
    collect: Callable[[PluginRecord, list[Any]], None],
) -> None:
    """Load one plugin: import it, register its hooks, collect its tables.

    `collect(record, tables)` receives what the plugin passed to ``register``.
    Any failure (`SystemExit` and other `BaseException`s too) marks `record`
    broken and unregisters the plugin; it is the caller's job to warn or raise.
    A `KeyboardInterrupt` is cleaned up the same way, then re-raised. Sets
    `record.seconds` to the time the import and registration took.
    """
    plugin = None
    start = time.perf_counter()
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
    except BaseException as error:  # a broken plugin must never take the host down, not even by sys.exit
        record.status, record.error = BROKEN, _describe(error)
        if plugin is not None and manager.is_registered(plugin):
            manager.unregister(plugin)
        if isinstance(error, KeyboardInterrupt):
            raise
    finally:
        record.seconds = time.perf_counter() - start


def _warn_or_raise(message: str, environ: Mapping[str, str] | None) -> None:
    if strict(environ):
        raise PluginError(message)
    warnings.warn(message, PluginWarning, stacklevel=4)


def report_broken(record: PluginRecord, environ: Mapping[str, str] | None = None) -> None:
    """Warn (or raise under ``ZOO_STRICT_PLUGINS=1``) about a broken or conflicting plugin."""
    if record.status == CONFLICT:
        what = f"zoo plugin {record.name!r} is disabled: {record.error}"
    else:
        where = f" from distribution {record.distribution!r}" if record.distribution else ""
        what = f"zoo plugin {record.name!r}{where} failed to load and is disabled: {record.error}"
    _warn_or_raise(
        f"{what}. Other plugins keep working; set ZOO_DISABLE_PLUGINS={record.name} to silence this, "
        "or ZOO_STRICT_PLUGINS=1 to make it fatal.",
        environ,
    )


def slow_threshold(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds from ``ZOO_SLOW_PLUGIN_SECONDS`` (default `SLOW_SECONDS`); None when 0 turns the warning off."""
    environ = os.environ if environ is None else environ
    text = environ.get("ZOO_SLOW_PLUGIN_SECONDS", "").strip()
    if not text:
        return SLOW_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if math.isnan(seconds) or seconds < 0:
        warnings.warn(
            f"ZOO_SLOW_PLUGIN_SECONDS={text!r} is not a number of seconds (0 turns the warning off); "
            f"using {SLOW_SECONDS:g}",
            PluginWarning,
            stacklevel=3,
        )
        return SLOW_SECONDS
    return seconds or None


def report_slow(record: PluginRecord, threshold: float | None) -> None:
    """Warn when `record` took longer than `threshold` seconds (`slow_threshold`) to load; never fatal."""
    if threshold is None or record.seconds is None or record.seconds <= threshold:
        return
    where = f" from distribution {record.distribution!r}" if record.distribution else ""
    warnings.warn(
        f"zoo plugin {record.name!r}{where} took {record.seconds:.1f} s to load (more than {threshold:g} s); "
        "a plugin's entry module should be light, with heavy imports behind its factories. "
        f"Set ZOO_DISABLE_PLUGINS={record.name} if you do not use it, "
        "or ZOO_SLOW_PLUGIN_SECONDS to change the threshold (0: never warn).",
        PluginWarning,
        stacklevel=3,
    )


def _provider(record: PluginRecord) -> str:
    if record.distribution is None:
        return f"{record.value!r} (no distribution)"
    version = f" {record.version}" if record.version else ""
    return f"{record.value!r} from distribution {record.distribution!r}{version}"


_TIMES = {2: "twice", 3: "three times"}


def conflict_error(records: Sequence[PluginRecord], *, first_kept: bool = False) -> str:
    """Why plugins sharing one entry-point name are not loaded, naming every provider.

    `first_kept`: the first of `records` was loaded before the others appeared and stays.
    """
    providers = [_provider(r) for r in records]
    every = " and ".join([", ".join(providers[:-1]), providers[-1]])
    times = _TIMES.get(len(records), f"{len(records)} times")
    outcome = (
        "zoo keeps the first, loaded already, and does not load the others"
        if first_kept
        else "zoo cannot tell which is meant and loads none of them (the names they register are unavailable)"
    )
    return f"its entry-point name is declared {times}, by {every}; {outcome}: uninstall all but one"


def rival_entry_points(eps: Iterable[EntryPoint]) -> dict[str, list[EntryPoint]]:
    """Entry-point names declared more than once, with their entry points."""
    by_name: dict[str, list[EntryPoint]] = {}
    for ep in eps:
        by_name.setdefault(ep.name, []).append(ep)
    return {name: group for name, group in by_name.items() if len(group) > 1}


def iter_loadable(
    eps: Iterable[EntryPoint], environ: Mapping[str, str] | None = None
) -> Iterable[tuple[EntryPoint, PluginRecord]]:
    """``(entry point, record)`` pairs, each record's status set by the environment and by name conflicts."""
    status_of = plugin_filter(environ)
    eps = list(eps)
    rivals = rival_entry_points(eps)
    for ep in eps:
        record = record_for(ep)
        record.status = status_of(ep.name)
        if record.status == LOADED and ep.name in rivals:
            record.status, record.error = CONFLICT, conflict_error([record_for(e) for e in rivals[ep.name]])
        yield ep, record
