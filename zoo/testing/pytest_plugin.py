"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Adds ``--zoo-plugin NAME`` (repeatable; default: every loaded plugin), the
fixtures the base classes use, parametrization over components and models
(a class with ``component = "NAME"`` checks only that component, or the models
hosting it: a plugin's own test suite pins its own), and a summary line of
checks run and skipped over the components and models checked (the
placeholder of a class with nothing to check counts as neither).
Light at import: no JAX (JAX loads with the kit's registry, when a kit class is collected).

JAX's global configuration is watched: the kit records it before any plugin
loads, loads the plugins one at a time and records what each changed (then
puts the configuration back, so one plugin cannot change the others' checks);
`config_changes` gives what a plugin changed, `watch_config` does the same
around an import or a build, and ``test_jax_configuration_is_unchanged``
(`zoo.testing.base`) fails a plugin that changed it.
"""

from __future__ import annotations

import pytest

from zoo.testing.session import kit_registry

__all__ = ["selected_plugins"]

_MARK = "zoo_conformance"
_SUBJECTS = pytest.StashKey[dict[str, str]]()  # node id -> the component or model it checks


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
    config.stash[_SUBJECTS] = {}


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
    wants = {"zoo_component", "zoo_model"} & set(metafunc.fixturenames)
    if not wants:
        return  # not a kit check: load nothing
    from zoo.testing.cases import component_cases, model_cases

    kind = getattr(metafunc.cls, "zoo_kind", None)
    pinned = getattr(metafunc.cls, "component", None)
    plugins = selected_plugins(metafunc.config) if pinned is None else [_pinned_plugin(metafunc.cls, pinned, kind)]
    if "zoo_component" in wants:
        names = component_cases(kit_registry(), plugins, kind)
        names = names if pinned is None else [n for n in names if n == pinned]
        _parametrize(metafunc, "zoo_component", names, f"no {kind or 'component'} in plugins {plugins}")
    if "zoo_model" in wants:
        interface = getattr(metafunc.cls, "zoo_model_interface", None)
        every_host = metafunc.config.getoption("--zoo-every-host")
        names = model_cases(kit_registry(), plugins, interface, every_host=every_host)
        names = names if pinned is None else [n for n in names if _checks(n, pinned)]
        what = f"{interface.__name__} model" if interface else "model"
        _parametrize(metafunc, "zoo_model", names, f"no {what} uses {pinned or plugins}")


def _pinned_plugin(cls: type, name: str, kind: str | None) -> str:
    """The plugin registering `name`, the component (or model) that kit class `cls` pins
    with ``component = name``; a `pytest.UsageError` when none does or its kind differs."""
    registry = kit_registry()
    where = f"{cls.__name__}.component = {name!r}"
    entry = registry.components.get(name) or registry.architectures.get(name) or registry.presets.get(name)
    if entry is None:
        known = sorted(n for n, e in registry.components.items() if kind is None or e.kind == kind)
        raise pytest.UsageError(
            f"{where}: no installed plugin registers {name!r} (install the plugin that does); "
            f"installed {kind or 'component'}s: {known}"
        )
    actual = getattr(entry, "kind", None)
    if kind is not None and actual != kind:
        what = f"a {actual} component" if actual else "a model"
        raise pytest.UsageError(f"{where}: {name!r} is {what}, but {cls.__name__} checks {kind} components")
    return entry.plugin


def _checks(model: str, pinned: str) -> bool:
    """Whether kit model case `model` (``arch``, ``arch+component``, ``arch+slot=component``) checks `pinned`."""
    return model == pinned or model.rsplit("+", 1)[-1].rsplit("=", 1)[-1] == pinned


def _parametrize(metafunc: pytest.Metafunc, argname: str, names: list[str], reason: str) -> None:
    if names:
        metafunc.parametrize(argname, names, ids=names, scope="class")
    else:
        metafunc.parametrize(argname, [pytest.param(None, marks=pytest.mark.skip(reason=reason))], ids=["none"])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    subjects = config.stash[_SUBJECTS]
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is None or not getattr(cls, "_zoo_conformance", False):
            continue
        item.add_marker(_MARK)
        params = getattr(getattr(item, "callspec", None), "params", {})
        subject = params.get("zoo_component") or params.get("zoo_model")
        if subject is not None:  # None: the placeholder of a class with nothing to check
            subjects[item.nodeid] = subject


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    subjects = config.stash.get(_SUBJECTS, {})
    outcomes: dict[str, str] = {}
    for outcome in ("passed", "skipped", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", None)
            if nodeid not in subjects:
                continue  # not a kit check, or a placeholder
            if report.failed or outcome == "error":
                outcomes[nodeid] = "failed"  # a failing fixture (setup, teardown) fails the check too
            elif outcome == "skipped":
                outcomes.setdefault(nodeid, "skipped")
            elif report.when == "call":
                outcomes.setdefault(nodeid, "passed")
    if outcomes:
        counts = {k: sum(1 for v in outcomes.values() if v == k) for k in ("passed", "skipped", "failed")}
        checked = {subjects[n] for n in outcomes}
        terminalreporter.write_line(
            f"zoo conformance kit: {counts['passed']} checks passed, {counts['skipped']} skipped, "
            f"{counts['failed']} failed, over {len(checked)} components and models"
        )
