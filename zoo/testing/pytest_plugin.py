"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Adds ``--zoo-plugin NAME`` (repeatable; default: every loaded plugin), the
fixtures the base classes use, parametrization over components and models,
and a summary line of checks run and skipped. Light at import: no JAX.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

_REGISTRY: dict[str, Any] = {}
_MARK = "zoo_conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zoo", "zoo conformance kit")
    group.addoption(
        "--zoo-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="run the conformance kit over this plugin's components (repeatable)",
    )
    group.addoption(
        "--zoo-every-host",
        action="store_true",
        help="check each component in every architecture that takes it, not in one (the full matrix)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{_MARK}: a check of the zoo conformance kit")


def kit_registry():
    """One registry with every plugin loaded, shared by the session."""
    if "registry" not in _REGISTRY:
        from zoo.plugins import PluginWarning
        from zoo.registry import Registry

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PluginWarning)  # broken plugins fail their own checks
            _REGISTRY["registry"] = Registry.with_plugins()
    return _REGISTRY["registry"]


def selected_plugins(config: pytest.Config) -> list[str]:
    registry = kit_registry()
    chosen = config.getoption("--zoo-plugin") or []
    if not chosen:
        return sorted(registry.plugins)
    unknown = [name for name in chosen if name not in registry.plugins]
    if unknown:
        raise pytest.UsageError(f"--zoo-plugin: no plugin named {unknown}; installed: {sorted(registry.plugins)}")
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    from zoo.testing.cases import component_cases, model_cases

    plugins = selected_plugins(metafunc.config)
    if "zoo_component" in metafunc.fixturenames:
        kind = getattr(metafunc.cls, "zoo_kind", None)
        names = component_cases(kit_registry(), plugins, kind)
        _parametrize(metafunc, "zoo_component", names, f"no {kind or 'component'} in plugins {plugins}")
    if "zoo_model" in metafunc.fixturenames:
        interface = getattr(metafunc.cls, "zoo_model_interface", None)
        every_host = metafunc.config.getoption("--zoo-every-host")
        names = model_cases(kit_registry(), plugins, interface, every_host=every_host)
        what = f"{interface.__name__} model" if interface else "model"
        _parametrize(metafunc, "zoo_model", names, f"no {what} uses plugins {plugins}")


def _parametrize(metafunc: pytest.Metafunc, argname: str, names: list[str], reason: str) -> None:
    if names:
        metafunc.parametrize(argname, names, ids=names, scope="class")
    else:
        metafunc.parametrize(argname, [pytest.param(None, marks=pytest.mark.skip(reason=reason))], ids=["none"])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is not None and getattr(cls, "_zoo_conformance", False):
            item.add_marker(_MARK)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    counts = {"passed": 0, "skipped": 0, "failed": 0}
    subjects: set[str] = set()
    for outcome in counts:
        for report in terminalreporter.stats.get(outcome, []):
            if _MARK in getattr(report, "keywords", {}) and (report.when == "call" or outcome == "skipped"):
                counts[outcome] += 1
                subject = report.nodeid.rsplit("[", 1)[-1].rstrip("]")
                if subject != "none":
                    subjects.add(subject)
    if sum(counts.values()):
        terminalreporter.write_line(
            f"zoo conformance kit: {counts['passed']} checks passed, {counts['skipped']} skipped, "
            f"{counts['failed']} failed, over {len(subjects)} components and models"
        )
