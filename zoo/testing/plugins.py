"""Checks of each selected plugin as a whole: it loads, its names are its own, and it gives the kit
something to check.

A plugin that zoo refuses (broken: its import or its tables fail; in conflict: another entry
point has its name) registers nothing, so no component or model check of it would run: these
checks fail for it, with the plugin's own error, so that ``zoo check BROKEN`` exits non-zero.
"""

from __future__ import annotations

import pytest

from zoo.testing.base import ConformanceTests

__all__ = ["PluginChecks", "plugin_subjects"]

_HOW = {
    "disabled": "it is disabled by ZOO_DISABLE_PLUGINS; unset that to check it",
    "not allowed": "it is not in ZOO_LOAD_PLUGINS; add it there to check it",
}


def plugin_subjects(registry, plugin: str) -> list[str]:
    """The components, architectures and presets `plugin` registers (the kit's subjects), sorted."""
    return sorted(
        name
        for section in (registry.components, registry.architectures, registry.presets)
        for name, entry in section.items()
        if entry.plugin == plugin
    )


class PluginChecks(ConformanceTests):
    """What every selected plugin passes: it loads, its names are its own, it registers a subject."""

    @pytest.fixture(scope="class")
    @classmethod
    def record(cls, registry, zoo_plugin):
        return registry.plugins[zoo_plugin]

    def test_plugin_loads(self, zoo_plugin, record):
        assert record.ok, (
            f"plugin {zoo_plugin!r} loads: it is {record.status}: "
            + (record.error or _HOW.get(record.status, "zoo plugins says why"))
            + ". zoo registers nothing of a plugin it refuses, so no other check of it can run"
        )

    def test_plugin_names_are_its_own(self, registry, zoo_plugin, record):
        if not record.ok:
            pytest.skip(f"plugin {zoo_plugin!r} is {record.status}: test_plugin_loads says why")
        contested = {
            name: [p for p in owners if p != zoo_plugin]
            for name, owners in registry.providers.items()
            if zoo_plugin in owners and len(owners) > 1
        }
        assert not contested, (
            f"plugin names are its own, plugin {zoo_plugin!r}: "
            + "; ".join(f"{name!r} is also registered by {', '.join(map(repr, o))}" for name, o in contested.items())
            + ". A name two plugins register cannot be built; rename yours"
        )

    def test_plugin_registers_something_to_check(self, registry, zoo_plugin, record):
        if not record.ok:
            pytest.skip(f"plugin {zoo_plugin!r} is {record.status}: test_plugin_loads says why")
        assert plugin_subjects(registry, zoo_plugin), (
            f"something to check, plugin {zoo_plugin!r}: it registers no component, architecture or preset "
            f"(it registered {list(record.names) or 'nothing'}), so the kit has nothing to check"
        )
