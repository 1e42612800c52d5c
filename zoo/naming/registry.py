"""The registry: every name zoo can build and who provides it.

A `Registry` holds the tables that plugins registered, the plugin records, and
a pluggy manager, and explains a name it lacks. Resolving a name is
`zoo.naming.resolve`'s job, which reads these tables and never imports this
module (`Registry.describe` hands a name to it). Tests build their own
`Registry`; `default_registry()` is the process-wide one that the top-level
functions (`zoo.build`, ...) use.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

from zoo.building import store as _store
from zoo.errors import (
    PluginConflictError,
    PluginError,
    RegistryError,
    UnknownNameError,
    close_matches,
)
from zoo.naming import loader as _plugins
from zoo.naming.catalogue import catalogue
from zoo.naming.loader import PluginRecord
from zoo.naming.resolve import resolve
from zoo.naming.spec import ModelSpec
from zoo.naming.tables import (
    EXTENSION_SECTIONS,
    ArchitectureEntry,
    ComponentEntry,
    DemoEntry,
    ExportEntry,
    FormatEntry,
    PresetEntry,
    SubwordEntry,
    Tables,
    read_tables,
)

__all__ = ["Registry", "active_registry", "building_with", "default_registry", "reset_default_registry"]

Entry = ComponentEntry | ArchitectureEntry | PresetEntry
_EXTENSION_WHAT = {"formats": "vector format", "subwords": "subword model", "exports": "export"}


class Registry:
    """Names, their providers and plugin records.

    **Arguments:**

    - `tables`: initial tables (e.g. `zoo.naming.catalogue.catalogue()` for listing
      without loading plugins), attributed to the plugins they name.
    """

    def __init__(self, tables: Tables | None = None) -> None:
        self.components: dict[str, ComponentEntry] = {}
        self.architectures: dict[str, ArchitectureEntry] = {}
        self.presets: dict[str, PresetEntry] = {}
        self.demos: dict[str, DemoEntry] = {}
        self.formats: dict[str, FormatEntry] = {}
        self.subwords: dict[str, SubwordEntry] = {}
        self.exports: dict[str, ExportEntry] = {}
        self.providers: dict[str, list[str | None]] = {}
        self.extension_providers: dict[tuple[str, str], list[str | None]] = {}
        self.plugins: dict[str, PluginRecord] = {}
        self.manager = _plugins.make_plugin_manager()
        self.manager.register(_store.RESOLVER, name="zoo.store")  # stored names first: see zoo.building.store
        if tables is not None:
            self.add_tables(tables)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_catalogue(cls, environ: Mapping[str, str] | None = None) -> Registry:
        """Catalogue entries whose plugin the environment allows; loads no plugin code."""
        status_of = _plugins.plugin_filter(environ)
        tables = catalogue()
        allowed = Tables()
        for plugin in sorted(tables.plugins()):
            if status_of(plugin) == _plugins.LOADED:
                allowed.update(tables.for_plugin(plugin))
        return cls(allowed)

    @classmethod
    def for_listing(cls, environ: Mapping[str, str] | None = None) -> Registry:
        """The catalogue (no plugin code) plus plugins the catalogue does not describe.

        Third-party plugins register their names only when loaded, so their
        (light) entry points are loaded; built-in ones are not. A built-in
        whose entry-point name another entry point also declares is listed by
        neither (`load_plugins` records and reports the conflict).
        """
        eps = _plugins.discover_entry_points()
        rivals = _plugins.rival_entry_points(eps)
        registry = cls.from_catalogue(_plugins.also_disabled(environ, rivals))
        known = catalogue().plugins()
        others = [ep for ep in eps if ep.name not in known or ep.name in rivals]
        registry.load_plugins(others, environ)
        return registry

    @classmethod
    def with_plugins(
        cls,
        entry_points: Iterable[EntryPoint] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Registry:
        """A registry filled by loading every plugin entry point."""
        registry = cls()
        registry.load_plugins(entry_points, environ)
        return registry

    def add_tables(self, tables: Tables, plugin: str | None = None) -> list[str]:
        """Add entries; return the names that became contested."""
        contested = []
        for name, entry in tables.demos.items():
            self.demos.setdefault(name, entry)
        for section in EXTENSION_SECTIONS:
            for name, entry in getattr(tables, section).items():
                owner = plugin if plugin is not None else entry.plugin
                owners = self.extension_providers.setdefault((section, name), [])
                if owner not in owners:
                    owners.append(owner)
                if len(owners) == 1:
                    getattr(self, section)[name] = entry
        for section in ("components", "architectures", "presets"):
            for name, entry in getattr(tables, section).items():
                owner = plugin if plugin is not None else entry.plugin
                if name in self.providers and owner not in self.providers[name]:
                    self.providers[name].append(owner)
                    contested.append(name)
                    continue
                self.providers[name] = [owner]
                getattr(self, section)[name] = entry
        return contested

    def load_plugins(
        self,
        entry_points: Iterable[EntryPoint] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> list[PluginRecord]:
        """Load each entry point on its own; return the new records.

        A failing plugin is recorded as broken and reported with a
        `PluginWarning` (an error under ``ZOO_STRICT_PLUGINS=1``). Entry points
        sharing one name are recorded under it as ``in conflict`` and none is
        loaded; one named like a plugin this registry already holds is not
        loaded either (the one held keeps its names). Both are reported the
        same way. A plugin slow to load is named in a warning.
        """
        eps = _plugins.discover_entry_points() if entry_points is None else list(entry_points)
        records: list[PluginRecord] = []
        batch: set[str] = set()
        slow = _plugins.slow_threshold(environ)
        for ep, record in _plugins.iter_loadable(eps, environ):
            held = self.plugins.get(record.name)
            if held is not None:
                same = (held.distribution, held.value) == (record.distribution, record.value)
                wanted = record.status in (_plugins.LOADED, _plugins.CONFLICT)
                if record.name not in batch and held.ok and wanted and not same:
                    record.status = _plugins.CONFLICT
                    record.error = _plugins.conflict_error([held, record], first_kept=True)
                    records.append(record)
                    _plugins.report_broken(record, environ)
                continue  # a rival in this batch (recorded once), or a name this registry settled before
            batch.add(record.name)
            self.plugins[record.name] = record
            records.append(record)
            if record.status == _plugins.CONFLICT:
                _plugins.report_broken(record, environ)
            elif record.status == _plugins.LOADED:
                _plugins.load_entry_point(self.manager, record, ep.load, self._collect)
                if record.status == _plugins.BROKEN:
                    _plugins.report_broken(record, environ)
                else:
                    _plugins.report_slow(record, slow)
        return records

    def _collect(self, record: PluginRecord, raw_tables: list[Any]) -> None:
        parsed = []
        for raw in raw_tables:
            if isinstance(raw, Tables):
                for entry in [*raw.components.values(), *raw.architectures.values()]:
                    if entry.plugin != record.name:
                        raise RegistryError(f"entry {entry.name!r} belongs to {entry.plugin!r}")
                parsed.append(raw)
            elif isinstance(raw, str | Path | Mapping):
                parsed.append(read_tables(raw, plugin=record.name))
            else:
                raise RegistryError(f"register() takes TOML text, a Path or a mapping, got {type(raw).__name__}")
        names: list[str] = []
        for tables in parsed:
            names += tables.names()
            for name in self.add_tables(tables, plugin=record.name):
                others = [p for p in self.providers[name] if p != record.name]
                _plugins.warnings.warn(
                    f"zoo plugins {others[0]!r} and {record.name!r} both register {name!r}; "
                    f"building it raises until one is disabled (ZOO_DISABLE_PLUGINS)",
                    _plugins.PluginWarning,
                    stacklevel=4,
                )
        record.names = tuple(names)

    # -- lookup -------------------------------------------------------------------------

    def all_names(self) -> list[str]:
        return sorted(self.providers)

    def _check_uncontested(self, name: str) -> None:
        owners = self.providers.get(name, [])
        if len(owners) > 1:
            raise PluginConflictError(
                f"{name!r} is registered by several plugins: {', '.join(map(repr, owners))}. "
                f"Disable all but one, e.g. ZOO_DISABLE_PLUGINS={owners[-1]}"
            )

    def _explain_missing(self, name: str, what: str, pool: Iterable[str]) -> Exception:
        """The error for a name this registry lacks: why, and what is close."""
        known = catalogue()
        for section in ("components", "architectures", "presets"):
            entry = getattr(known, section).get(name)
            if entry is not None and entry.plugin:
                record = self.plugins.get(entry.plugin)
                if record is None:
                    why = "is not installed (reinstall zoo, or check ZOO_LOAD_PLUGINS)"
                else:
                    why = f"is {record.status}" + (f": {record.error}" if record.error else "")
                    if record.status == _plugins.DISABLED:
                        why += " (ZOO_DISABLE_PLUGINS)"
                    elif record.status == _plugins.UNLISTED:
                        why += " (ZOO_LOAD_PLUGINS)"
                in_conflict = record is not None and record.status == _plugins.CONFLICT
                error = PluginConflictError if in_conflict else PluginError
                return error(f"{what} {name!r} comes from plugin {entry.plugin!r}, which {why}")
        return UnknownNameError(f"unknown {what} {name!r}.{close_matches(name, pool)}")

    def component(self, name: str) -> ComponentEntry:
        if name in self.components:
            self._check_uncontested(name)
            return self.components[name]
        if name in self.architectures or name in self.presets:
            raise UnknownNameError(
                f"{name!r} is a model, not a component: a name starts with one model, then '+component' parts"
            )
        raise self._explain_missing(name, "component", self.components)

    def model(self, name: str) -> ArchitectureEntry | PresetEntry:
        """An architecture or a preset."""
        for table in (self.architectures, self.presets):
            if name in table:
                self._check_uncontested(name)
                return table[name]
        if name in self.components:
            entry = self.components[name]
            hosts = [a.name for a in self.architectures.values() if any(s.kind == entry.kind for s in a.slots)]
            hint = f" (e.g. '{hosts[0]}+{name}')" if hosts else ""
            raise UnknownNameError(
                f"{name!r} is a component of kind {entry.kind!r}, not a model; add it to an architecture with '+'{hint}"
            )
        raise self._explain_missing(name, "model", [*self.architectures, *self.presets])

    def entry(self, name: str) -> Entry:
        """Any entry by name: component, architecture or preset."""
        if name in self.components:
            return self.component(name)
        return self.model(name)

    def extension(self, section: str, name: str) -> FormatEntry | SubwordEntry | ExportEntry:
        """The entry `name` of an extension section (``"formats"``, ``"subwords"``, ``"exports"``);
        `PluginConflictError` when two plugins declare it, `UnknownNameError` naming close ones."""
        what = _EXTENSION_WHAT[section]
        owners = self.extension_providers.get((section, name), [])
        if len(owners) > 1:
            raise PluginConflictError(
                f"{what} {name!r} is declared by several plugins: {', '.join(map(repr, owners))}. "
                f"Disable all but one, e.g. ZOO_DISABLE_PLUGINS={owners[-1]}"
            )
        table = getattr(self, section)
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise UnknownNameError(f"no {what} {name!r} (installed: {known}).{close_matches(name, table)}")
        return table[name]

    def provider(self, name: str) -> PluginRecord | None:
        owners = self.providers.get(name) or [None]
        return self.plugins.get(owners[0]) if owners[0] else None

    # -- listing ------------------------------------------------------------------------

    def list_models(self, pattern: str = "*", *, exclude: str | Iterable[str] = ()) -> list[str]:
        """Architectures and presets matching the wildcard `pattern`, minus `exclude`."""
        return _match([*self.architectures, *self.presets], pattern, exclude)

    def list_components(
        self, pattern: str = "*", *, kind: str | None = None, exclude: str | Iterable[str] = ()
    ) -> list[str]:
        names = [n for n, e in self.components.items() if kind is None or e.kind == kind]
        return _match(names, pattern, exclude)

    # -- resolution and building ----------------------------------------------------------

    def describe(self, name: str, **overrides: Any) -> ModelSpec:
        """Resolve `name` with `overrides` into a `ModelSpec`, building nothing."""
        return resolve(self, name, overrides)

    def call_hook(self, hook: str, **kwargs: Any) -> Any:
        """Call a plugin hook; a plugin that raises (even `SystemExit`) becomes a `PluginError` naming the hook."""
        try:
            return getattr(self.manager.hook, hook)(**kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as error:
            if getattr(error, "raised_by_core", False):  # the store's own refusal: zoo's, not a plugin's
                raise
            raise PluginError(
                f"a plugin's {hook} hook failed: {type(error).__name__}: {error}. "
                "Disable it with ZOO_DISABLE_PLUGINS=NAME (zoo plugins lists them)"
            ) from error

    def resolve_weights(self, name: str, tag: str) -> Path:
        path = self.call_hook("zoo_resolve_weights", name=name, tag=tag)
        if path is None:
            stored = _store.default_store().describe_missing(f"{name}.{tag}")
            raise UnknownNameError(
                f"no plugin provides weights for {name}.{tag}, and {stored} Or build {name!r} without a tag "
                "and train it, or load a file with zoo.load(path)"
            )
        if not isinstance(path, str | os.PathLike):
            raise PluginError(f"a plugin's zoo_resolve_weights returned {path!r} for {name}.{tag}, not a path")
        return Path(path)


def _match(names: Iterable[str], pattern: str, exclude: str | Iterable[str]) -> list[str]:
    excludes = [exclude] if isinstance(exclude, str) else list(exclude)
    return sorted(
        n for n in names if fnmatch.fnmatchcase(n, pattern) and not any(fnmatch.fnmatchcase(n, e) for e in excludes)
    )


_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry, loading plugins on first use."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Registry.with_plugins()
    return _DEFAULT


_ACTIVE: ContextVar[Registry | None] = ContextVar("zoo_active_registry", default=None)


def active_registry() -> Registry:
    """The registry of the build in progress (see `building_with`), else the process-wide one.

    An architecture that builds a nested model (a tagger's contextual embedder)
    resolves it from the registry its own build uses.
    """
    return _ACTIVE.get() or default_registry()


@contextlib.contextmanager
def building_with(registry: Registry) -> Iterator[Registry]:
    """Make `registry` the active one while a model is built."""
    token = _ACTIVE.set(registry)
    try:
        yield registry
    finally:
        _ACTIVE.reset(token)


def reset_default_registry() -> None:
    """Forget the process-wide registry (plugins load again on next use)."""
    global _DEFAULT
    _DEFAULT = None
