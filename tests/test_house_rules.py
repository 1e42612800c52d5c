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


# -- the declared plugin API, imports, contracts ---------------------------------------------

PLUGIN_API = {"zoo", "zoo.plugin_api", "zoo.testing"}
"""What a plugin may import from zoo (see `zoo.plugin_api`)."""


def _imports(path: Path, *, skip_type_checking: bool = True) -> list[tuple[str, int]]:
    """Every module `path` imports, anywhere in the file (``from a.b import c`` gives ``a.b`` and ``a.b.c``),
    with its line; imports under ``if TYPE_CHECKING:`` are left out."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if skip_type_checking and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.module, child.lineno))
                found.extend((f"{child.module}.{alias.name}", child.lineno) for alias in child.names)
            walk(child)

    walk(tree)
    return found


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_plugins_import_only_the_declared_api_and_no_other_plugin():
    offenders = []
    for package in PLUGIN_PACKAGES:
        for path in sorted((ROOT / "plugins" / package).rglob("*.py")):
            for name, line in _imports(path, skip_type_checking=False):
                top = name.split(".")[0]
                where = f"{path.relative_to(ROOT)}:{line}"
                if top == "zoo" and name not in PLUGIN_API and name.rsplit(".", 1)[0] not in PLUGIN_API:
                    offenders.append(f"{where} imports {name} (import it from zoo.plugin_api)")
                elif top in PLUGIN_PACKAGES and top != package:
                    offenders.append(f"{where} imports another plugin, {name}")
    assert offenders == []


def test_every_name_of_the_plugin_api_resolves():
    import zoo.plugin_api as api

    assert api.__all__ and sorted(api.__all__) == api.__all__
    for name in api.__all__:
        assert getattr(api, name) is not None, name


def test_no_import_cycles_in_the_core_or_the_plugins():
    """Every import that runs counts: at module level and inside a function (imports under
    ``if TYPE_CHECKING:`` never run; naming and resolution have their own test below)."""
    modules = {_module_name(p, ROOT): p for p in (ROOT / "zoo").rglob("*.py")}
    modules |= {
        _module_name(p, ROOT / "plugins"): p for pkg in PLUGIN_PACKAGES for p in (ROOT / "plugins" / pkg).rglob("*.py")
    }
    graph = {name: {m for m, _ in _imports(path) if m in modules and m != name} for name, path in modules.items()}
    cycles, done = [], set()

    def visit(node, trail):
        if node in trail:
            cycles.append(" -> ".join([*trail[trail.index(node) :], node]))
            return
        if node in done:
            return
        for nxt in sorted(graph[node]):
            visit(nxt, [*trail, node])
        done.add(node)

    for name in sorted(graph):
        visit(name, [])
    assert cycles == []


def test_resolution_reads_tables_and_imports_no_registry():
    """The registry holds tables, resolution reads them: ``zoo.naming.resolve`` imports neither
    the registry nor anything that imports it, not even for a type (the registry hands names to
    resolution, never the other way round)."""
    naming = {
        _module_name(p, ROOT): p for p in (ROOT / "zoo").rglob("*.py") if _module_name(p, ROOT).startswith("zoo.")
    }
    reached, todo = set(), ["zoo.naming.resolve"]
    while todo:
        module = todo.pop()
        for imported, _ in _imports(naming[module], skip_type_checking=False):
            if imported in naming and imported not in reached:
                reached.add(imported)
                todo.append(imported)
    assert "zoo.naming.registry" not in reached, sorted(reached)


def test_the_interfaces_module_holds_contracts_only():
    """Abstract interfaces, their outputs (NamedTuples), the kind table and capability protocols:
    no implementation a family shares, and no import of the core but the spec it types."""
    import typing

    from zoo import interfaces

    zoo_imports = {m for m, _ in _imports(ROOT / "zoo" / "interfaces.py") if m.split(".")[0] == "zoo"}
    assert zoo_imports <= {"zoo.naming.spec", "zoo.naming.spec.ModelSpec"}
    for name in interfaces.__all__:
        value = getattr(interfaces, name)
        if not inspect.isclass(value) or value.__module__ != interfaces.__name__:
            continue
        is_record = issubclass(value, tuple) and hasattr(value, "_fields")
        is_protocol = getattr(value, "_is_protocol", False) and typing.Protocol in value.__mro__
        assert is_record or is_protocol or inspect.isabstract(value), f"zoo.interfaces.{name} is not a contract"


# -- the core knows no algorithm family -------------------------------------------------------

FAMILY = "fasttext|word2vec|skipgram|cbow|glove|gensim|seq2seq|elmo|textcnn|tagger"
"""Names of algorithm families (and of the tools they come from)."""
KEPT_BY_THE_CORE = "word2vec|glove|gensim|^Tagger$"
"""What the core's code may still name: the exchange formats it reads and writes (word2vec text and
binary, GloVe text), gensim's `KeyedVectors` API it answers and the capability of tagging tokens
(`zoo.interfaces.Tagger`); other family names appear only in strings, as examples in help and messages."""
MOST_FAMILY_LINES = 57  # a ratchet: lower it when a line goes (57: gensim's _load_word2vec_format)


def _family_lines() -> list[tuple[str, int, str, bool]]:
    """``(path, line, token, is_string)`` of every code line of `zoo/` (docstrings and comments aside)
    naming a family, with its first token that does."""
    import io
    import re
    import tokenize

    family = re.compile(FAMILY, re.IGNORECASE)
    found = []
    for path in sorted((ROOT / "zoo").rglob("*.py")):
        source = path.read_text()
        docstrings = set()
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                docstrings |= set(range(node.lineno, node.end_lineno + 1))
        lines = {}
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT and token.start[0] not in docstrings and family.search(token.string):
                lines.setdefault(token.start[0], (token.string, token.type == tokenize.STRING))
        found += [(str(path.relative_to(ROOT)), n, *named) for n, named in sorted(lines.items())]
    return found


def test_the_core_names_no_algorithm_family_in_its_code():
    """No module of the core implements or dispatches on a family: the families that the core keeps nothing of
    are never named in its code, and the rest only as the exchange formats and gensim's API, or as examples."""
    import re

    lines = _family_lines()
    kept = re.compile(KEPT_BY_THE_CORE, re.IGNORECASE)
    named = [f"{path}:{n}: {text}" for path, n, text, string in lines if not string and not kept.search(text)]
    assert named == [], "code (not a string) of the core names a family"
    assert len(lines) <= MOST_FAMILY_LINES, "\n".join(f"{path}:{n}: {text}" for path, n, text, _ in lines)
