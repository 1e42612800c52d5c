"""Rules of the house that no other test covers."""

import ast
import inspect
import tomllib
from pathlib import Path

from zoo.naming import hookspecs
from zoo.naming.catalogue import CataloguePlugin, catalogue
from zoo.naming.loader import discover_entry_points

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_PACKAGES = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").exists())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_core_never_imports_a_plugin():
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & {*PLUGIN_PACKAGES, "plugins"})
        for path in (ROOT / "zoo").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_every_plugin_package_ships_in_the_wheel():
    packages = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    assert sorted(p.split("/")[-1] for p in packages if p.startswith("plugins/")) == PLUGIN_PACKAGES
    first_party = PYPROJECT["tool"]["ruff"]["lint"]["isort"]["known-first-party"]
    assert set(PLUGIN_PACKAGES) <= set(first_party)


def test_one_entry_point_per_catalogue_plugin_and_nothing_else():
    declared = PYPROJECT["project"]["entry-points"]["zoo.plugins"]
    assert set(declared) == catalogue().plugins()
    for ep in discover_entry_points():
        if ep.name in declared:
            plugin = ep.load()
            assert isinstance(plugin, CataloguePlugin)
            assert plugin.name == ep.name, f"entry point {ep.name!r} loads the plugin of {plugin.name!r}"


def test_every_hook_is_documented_and_tested():
    hooks = [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("zoo_")]
    assert hooks
    tests = "".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    for name in hooks:
        assert len(inspect.getdoc(getattr(hookspecs, name)) or "") > 80, f"hook {name} needs a real docstring"
        assert f"def {name}(" in tests, f"hook {name} has no implementation in the tests"


def test_registry_is_shipped_in_the_wheel():
    force = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"registry.toml": "zoo/registry.toml"}


def test_public_functions_survive_submodule_imports():
    import importlib

    import zoo

    for module in ("zoo.building.builder", "zoo.training.trainer", "zoo.building.weights", "zoo.naming.listing"):
        importlib.import_module(module)
    for name in zoo.__all__:
        value = getattr(zoo, name)
        assert not inspect.ismodule(value), f"zoo.{name} is shadowed by a submodule of the same name"
