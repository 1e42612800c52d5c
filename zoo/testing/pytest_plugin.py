"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Adds ``--zoo-plugin NAME`` (repeatable; default: every plugin zoo tried to load),
the fixtures the base classes use, parametrization over plugins, components and models
(a class with ``component = "NAME"`` checks only that component, or the models
hosting it: a plugin's own test suite pins its own), and a summary line of checks
passed, skipped, failed and errored, counted as pytest counts them (a class with
nothing to check for the selected plugins is deselected, not skipped).

A run fails when any subject (a plugin, a component with the models hosting it, a
model) had every check that ran skipped: nothing about it was checked.
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
_SUBJECT = "zoo_subject"  # the user property that names what a check is about
_CASE = "zoo_case"  # and the one that names the plugin, component or model it runs on
_SUBJECT_PARAMS = ("zoo_plugin", "zoo_component", "zoo_model")


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
        help="check each built-in component in every architecture that takes it, not in one (the full matrix; "
        "a third-party component is checked in every built-in architecture that takes it by default)",
    )
    group.addoption(
        "--zoo-host",
        action="append",
        default=None,
        metavar="ARCH",
        help="check each component only in architecture ARCH (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{_MARK}: a check of the zoo conformance kit")
    config.pluginmanager.register(KitOutcomes(), "zoo-kit-outcomes")


def selected_plugins(config: pytest.Config) -> list[str]:
    registry = kit_registry()
    chosen = config.getoption("--zoo-plugin") or []
    if not chosen:  # every plugin zoo tried to load (one the environment turns off is not checked)
        return sorted(n for n, r in registry.plugins.items() if r.status in ("loaded", "broken", "in conflict"))
    unknown = [name for name in chosen if name not in registry.plugins]
    if unknown:
        raise pytest.UsageError(f"--zoo-plugin: no plugin named {unknown}; installed: {sorted(registry.plugins)}")
    return chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wants = set(_SUBJECT_PARAMS) & set(metafunc.fixturenames)
    if not wants:
        return  # not a kit check: load nothing
    from zoo.testing.cases import component_cases, model_cases

    kind = getattr(metafunc.cls, "zoo_kind", None)
    pinned = getattr(metafunc.cls, "component", None)
    plugins = selected_plugins(metafunc.config) if pinned is None else [_pinned_plugin(metafunc.cls, pinned, kind)]
    if "zoo_plugin" in wants:
        _parametrize(metafunc, "zoo_plugin", plugins, "no plugin selected")
    if "zoo_component" in wants:
        names = component_cases(kit_registry(), plugins, kind)
        names = names if pinned is None else [n for n in names if n == pinned]
        _parametrize(metafunc, "zoo_component", names, f"no {kind or 'component'} in plugins {plugins}")
    if "zoo_model" in wants:
        interface = getattr(metafunc.cls, "zoo_model_interface", None)
        every_host = metafunc.config.getoption("--zoo-every-host")
        hosts = _hosts(metafunc.config)
        names = model_cases(kit_registry(), plugins, interface, every_host=every_host, hosts=hosts)
        names = names if pinned is None else [n for n in names if _checks(n, pinned)]
        what = f"{interface.__name__} model" if interface else "model"
        _parametrize(metafunc, "zoo_model", names, f"no {what} uses {pinned or plugins}")


def _hosts(config: pytest.Config) -> list[str] | None:
    """The architectures ``--zoo-host`` names (None: the default hosts), each checked to exist."""
    hosts = config.getoption("--zoo-host")
    if hosts is None:
        return None
    known = sorted(kit_registry().architectures)
    unknown = [name for name in hosts if name not in known]
    if unknown:
        raise pytest.UsageError(f"--zoo-host: no architecture named {unknown}; architectures: {', '.join(known)}")
    return hosts


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
    placeholders = []
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is None or not getattr(cls, "_zoo_conformance", False):
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        subject = next((params[k] for k in _SUBJECT_PARAMS if k in params), None)
        if subject is None:  # the placeholder of a class with nothing to check: not a check
            placeholders.append(item)
            continue
        item.add_marker(_MARK)
        case = next(params[k] for k in _SUBJECT_PARAMS if k in params)
        item.user_properties += [(_SUBJECT, _subject(params)), (_CASE, case)]
    if placeholders:
        config.hook.pytest_deselected(items=placeholders)
        items[:] = [item for item in items if item not in set(placeholders)]


def _subject(params: dict) -> str:
    """What a check is about, for the summary and the every-check-skipped rule: ``plugin NAME``,
    the component, or the model (a model case hosting a component counts for the component)."""
    if "zoo_plugin" in params:
        return f"plugin {params['zoo_plugin']}"
    if "zoo_component" in params:
        return params["zoo_component"]
    model = params["zoo_model"]
    return model.rsplit("+", 1)[-1].rsplit("=", 1)[-1] if "+" in model else model


class KitOutcomes:
    """The outcome of every kit check of one pytest session, by subject (registered per session:
    the kit's own tests run pytest inside pytest)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, list[str]] = {}  # subject -> each check's outcome, as pytest counts them
        self.cases: set[str] = set()  # the components and models checked

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        subject = dict(report.user_properties).get(_SUBJECT)
        if subject is None:
            return  # not a kit check
        if report.when == "call":
            outcome = report.outcome  # passed, failed, skipped
        elif report.failed:
            outcome = "error"  # a failing fixture (setup, teardown): counted as pytest counts it
        elif report.skipped:
            outcome = "skipped"
        else:
            return
        self.outcomes.setdefault(subject, []).append(outcome)
        if not subject.startswith("plugin "):
            self.cases.add(dict(report.user_properties)[_CASE])

    def vacuous(self) -> list[str]:
        """The subjects every one of whose checks that ran was skipped: nothing about them was checked."""
        return sorted(s for s, outcomes in self.outcomes.items() if set(outcomes) == {"skipped"})

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.vacuous() and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus: int, config: pytest.Config) -> None:
        if not self.outcomes:
            return
        every = [o for outcomes in self.outcomes.values() for o in outcomes]
        counts = {k: every.count(k) for k in ("passed", "skipped", "failed", "error")}
        plugins = len(selected_plugins(config))  # those selected, whichever of their checks -k kept
        terminalreporter.write_line(
            f"zoo conformance kit: {counts['passed']} checks passed, {counts['skipped']} skipped, "
            f"{counts['failed']} failed, {counts['error']} errors, over {len(self.cases)} "
            f"components and models of {plugins} plugins"
        )
        for subject in self.vacuous():
            terminalreporter.write_line(
                f"zoo conformance kit: FAILED {subject}: every one of its {len(self.outcomes[subject])} checks "
                "that ran was skipped, so nothing about it was checked (pytest -rs gives the reasons)"
            )
