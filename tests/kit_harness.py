"""Run the conformance kit over one plugin, installed as a real third-party distribution, in-process.

A test of the kit installs a deliberately broken component (a *mutant*: a small subclass or copy
of a built-in with one contract broken) and asserts that the kit fails the check named for that
contract, with a message naming it; an unchanged copy must pass every check::

    from kit_harness import run_kit

    def test_the_kit_catches_state_cached_on_the_module(tmp_path):
        run = run_kit(tmp_path, name="kit-caches-keys", kind="attention",
                      factory="kit_mutants_components:CachesKeys", select="TestAttention")
        run.assert_caught("test_is_stateless", "stateless")

`run_kit(tmp_path, *, name, kind=..., factory=..., ...)` writes a ``.dist-info`` (``METADATA`` and
an ``entry_points.txt`` naming entry point `name` in group ``zoo.plugins``) and a plugin module
registering the tables into ``tmp_path / "site"``, puts that folder on `sys.path`, clears the kit's
session registry (`zoo.testing.session._REGISTRY`) so the kit loads every plugin afresh, and
runs ``pytest --pyargs zoo.testing.suite --zoo-plugin NAME`` in this process (`pytest.main`; no
subprocess, no xdist). Afterwards it puts back `sys.path`, the kit's registry, JAX's configuration
(a mutant may change it) and `sys.modules` (the modules under the site are dropped).

Arguments of `run_kit` (keyword-only after `tmp_path`):

- `name`: the entry-point (plugin) name and, unless `tables` is given, the component's name.
- `kind`: the component kind (``"attention"``, ``"cell"``, ``"encoder"``, ``"embedder"``,
  ``"strategy"``, ...), for the generated table.
- `factory`: ``"module:Class"`` or the class itself; the module must be importable (``tests/`` is
  on `sys.path`, so ``"kit_mutants_components:CachesKeys"`` works), or one of `modules`.
- `params`, `test`, `domains`, `roles`: the table's ``params``, ``test``, ``domains`` and ``roles``
  (dicts of numbers, strings and booleans; domains as strings such as ``"(0, inf)"``; roles as
  ``{role: param}``).
- `tables`: the plugin's whole TOML instead of the generated ``[components.NAME]`` table (e.g. an
  ``[architectures.NAME]`` table for a model mutant); `kind`, `params`, `test`, `domains` are then unused.
- `modules`: ``{module name: source}`` written into the site (importable while the kit runs), for
  a mutant that must own its module (module constants, import-time side effects).
- `prelude`: source put at the top of the generated entry-point module (runs when the plugin loads).
- `select`: a ``-k`` expression choosing the kit's classes or checks, e.g. ``"TestAttention"`` or
  ``"TestComponents or TestModels"`` (default: every class that applies; fewer is faster).
- `args`: further pytest arguments.

It returns a `KitRun`:

- `run.outcomes`: ``{"TestClass::test_name[subject]": Outcome}`` in the order the checks ran;
  an `Outcome` has `id`, `check` (the test function's name), `outcome` (``"passed"``,
  ``"failed"``, ``"skipped"`` or ``"error"``: a fixture failed) and `message` (the assertion or
  skip message, e.g. ``"AssertionError: ..."``).
- `run.failures`: the failed and errored outcomes, in order; `run.first_failure`.
- `run.check(name)`: the one outcome of check `name` (``"test_x"``, ``"TestClass::test_x"`` or
  a full id, as `Outcome.is_named` takes it); a name matching none or several raises, listing them.
- `run.assert_caught(check, *words)`: the FIRST failure is check `check` and its message contains
  every one of `words` (case-insensitive); the failure message shows every outcome.
- `run.assert_passes()`: no check failed or errored, and at least one passed.
- `run.exit_code`, `run.output` (the terminal text, with the kit's summary line), `run.summary`
  (that line: ``"zoo conformance kit: N checks passed, ..."``).

The pieces, for a test that runs the kit some other way (``zoo check`` in-process, say):
`component_table(name, kind, factory, params=, test=, domains=, roles=)` gives the TOML of one component;
`install_plugin(site, name, tables, modules=, prelude=)` writes the distribution;
`isolated_site(site)` is the context `run_kit` runs the kit in.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import pytest

from zoo.testing import session as kit_session

__all__ = ["KitRun", "Outcome", "component_table", "install_plugin", "isolated_site", "run_kit"]


@dataclass(frozen=True)
class Outcome:
    """One check's result: ``outcome`` is ``passed``, ``failed``, ``skipped`` or ``error``."""

    id: str
    outcome: str
    message: str = ""

    @property
    def check(self) -> str:
        """The test function's name (``test_x``), without class or parameters."""
        return self.id.rsplit("::", 1)[-1].split("[", 1)[0]

    def is_named(self, name: str) -> bool:
        """Whether `name` (``test_x``, ``TestClass::test_x``, ``TestClass::test_x[params]``) names this check."""
        bare = self.id.split("[", 1)[0]
        return name in (self.id, self.check, bare) or bare.endswith(f"::{name}")


@dataclass
class KitRun:
    """The outcome of every check of one `run_kit` (see the module docstring)."""

    outcomes: dict[str, Outcome]
    exit_code: int
    output: str
    failures: list[Outcome] = field(init=False)

    def __post_init__(self) -> None:
        self.failures = [o for o in self.outcomes.values() if o.outcome in ("failed", "error")]

    @property
    def first_failure(self) -> Outcome | None:
        return self.failures[0] if self.failures else None

    @property
    def summary(self) -> str:
        lines = [line for line in self.output.splitlines() if line.startswith("zoo conformance kit:")]
        return lines[-1] if lines else ""

    def table(self) -> str:
        """Every outcome, one a line (for assertion messages)."""
        rows = [f"  {o.outcome:7} {o.id}" + (f"\n          {o.message[:400]}" if o.message else "") for o in self]
        return "\n".join(rows) or f"  (no checks ran; exit code {self.exit_code})\n{self.output[-3000:]}"

    def __iter__(self):
        return iter(self.outcomes.values())

    def check(self, name: str) -> Outcome:
        found = [o for o in self if o.is_named(name)]
        if len(found) != 1:
            what = "no check" if not found else f"{len(found)} checks"
            raise LookupError(f"{what} named {name!r} ran; the kit ran:\n{self.table()}")
        return found[0]

    def assert_caught(self, check: str, *words: str) -> Outcome:
        """The first failure is `check` (a name as `check()` takes) and its message has every word."""
        first = self.first_failure
        assert first is not None, f"the kit passed the mutant (expected {check!r} to fail):\n{self.table()}"
        assert first.is_named(check), f"the first failing check is {first.id}, not {check!r}:\n{self.table()}"
        missing = [w for w in words if w.lower() not in first.message.lower()]
        assert not missing, f"{first.id} failed without naming {missing}: {first.message}"
        return first

    def assert_passes(self) -> None:
        assert not self.failures, f"{len(self.failures)} checks failed:\n{self.table()}"
        assert any(o.outcome == "passed" for o in self), f"no check passed:\n{self.table()}"


class _Recorder:
    """Collects each check's outcome (pytest plugin object)."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Outcome] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        short = "::".join(report.nodeid.split("::")[1:])  # without the file part
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
            self.outcomes[short] = Outcome(short, outcome, _message(report))
        elif report.skipped and short not in self.outcomes:
            self.outcomes[short] = Outcome(short, "skipped", _message(report))
        elif report.when == "call" and report.passed:
            self.outcomes[short] = Outcome(short, "passed")


def _message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, line, "Skipped: reason")
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    return str(longrepr)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} into a TOML table")


def _factory_path(factory: str | type) -> str:
    return factory if isinstance(factory, str) else f"{factory.__module__}:{factory.__qualname__}"


def component_table(
    name: str, kind: str, factory: str | type, *, params=None, test=None, domains=None, roles=None, summary: str = ""
) -> str:
    """The TOML of one ``[components.NAME]`` table."""
    lines = [
        f"[components.{name}]",
        f"kind = {_toml_value(kind)}",
        f"factory = {_toml_value(_factory_path(factory))}",
        f"summary = {_toml_value(summary or f'{name}, a {kind} under test')}",
    ]
    for key, value in (("params", params), ("domains", domains), ("roles", roles), ("test", test)):
        if value:
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def install_plugin(
    site: Path, name: str, tables: str, *, modules: dict[str, str] | None = None, prelude: str = ""
) -> str:
    """Write distribution ``zoo-kit-NAME`` into `site`: its ``.dist-info`` with entry point `name`,
    a plugin module registering `tables`, and `modules`; return the plugin module's name."""
    module = "kit_plugin_" + re.sub(r"\W", "_", name)
    site.mkdir(parents=True, exist_ok=True)
    for mod, source in (modules or {}).items():
        (site / f"{mod}.py").write_text(source, encoding="utf-8")
    (site / f"{module}.py").write_text(
        f"{prelude}\nfrom zoo.naming.hookspecs import hookimpl\n\nTABLES = {tables!r}\n\n\n"
        "@hookimpl\ndef zoo_register_tables(register):\n    register(TABLES)\n",
        encoding="utf-8",
    )
    dist = f"zoo-kit-{name}"
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[zoo.plugins]\n{name} = {module}\n", encoding="utf-8")
    return module


def run_kit(
    tmp_path: Path,
    *,
    name: str,
    kind: str = "attention",
    factory: str | type | None = None,
    params: dict | None = None,
    test: dict | None = None,
    domains: dict | None = None,
    roles: dict | None = None,
    tables: str | None = None,
    modules: dict[str, str] | None = None,
    prelude: str = "",
    select: str | None = None,
    args: tuple[str, ...] = (),
) -> KitRun:
    """Install `name` as a third-party plugin under `tmp_path` and run the kit over it (see the module docstring)."""
    if tables is None:
        if factory is None:
            raise TypeError("run_kit needs a factory or the plugin's tables")
        tables = component_table(name, kind, factory, params=params, test=test, domains=domains, roles=roles)
    site = tmp_path / "site"
    install_plugin(site, name, tables, modules=modules, prelude=prelude)
    (tmp_path / "kit.ini").write_text("[pytest]\n", encoding="utf-8")
    argv = [
        "--pyargs",
        "zoo.testing.suite",
        "--zoo-plugin",
        name,
        "-c",
        str(tmp_path / "kit.ini"),
        "--rootdir",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        "--capture=sys",
        "-q",
        "-W",
        "error",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        *(["-k", select] if select else []),
        *args,
    ]
    recorder = _Recorder()
    output = io.StringIO()
    with isolated_site(site), contextlib.redirect_stdout(output):
        code = pytest.main(argv, plugins=[recorder])
    return KitRun(recorder.outcomes, int(code), output.getvalue())


@contextlib.contextmanager
def isolated_site(site: Path):
    """`site` on `sys.path` and a fresh kit registry while it lasts; then `sys.path`, the kit's registry,
    JAX's configuration and `sys.modules` (the modules under `site` dropped) as they were."""
    saved_registry = dict(kit_session._REGISTRY)
    saved_config = dict(jax.config.values)
    saved_path = list(sys.path)
    kit_session._REGISTRY.clear()
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = saved_path
        kit_session._REGISTRY.clear()
        kit_session._REGISTRY.update(saved_registry)
        for key, value in saved_config.items():
            if jax.config.values.get(key) != value:
                jax.config.update(key, value)
        root = str(site)
        for mod_name, mod in list(sys.modules.items()):
            if str(getattr(mod, "__file__", None) or "").startswith(root):
                del sys.modules[mod_name]
        importlib.invalidate_caches()
