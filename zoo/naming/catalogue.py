"""zoo's own catalogue: the `registry.toml` shipped inside the package.

It names every built-in component, architecture and preset together with the
plugin (entry point) that provides it. Reading it needs no plugin code and no
JAX, so `zoo list` is instant; a catalogue entry becomes buildable only once
its plugin has loaded and registered it (see `CataloguePlugin`).
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from zoo.errors import RegistryError
from zoo.naming.hookspecs import hookimpl
from zoo.naming.tables import Tables, read_tables

__all__ = ["CataloguePlugin", "catalogue", "catalogue_path"]


def catalogue_path() -> Path:
    """`zoo/registry.toml` in an installed wheel, `registry.toml` in a source checkout."""
    packaged = resources.files("zoo") / "registry.toml"
    if packaged.is_file():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "registry.toml"
    if checkout.is_file():
        return checkout
    raise RegistryError("zoo's registry.toml is missing from the installation; reinstall zoo (pip install zoo)")


@functools.cache
def catalogue() -> Tables:
    """The parsed catalogue (cached)."""
    return read_tables(catalogue_path())


class CataloguePlugin:
    """The entry-point object of a built-in plugin whose tables live in the catalogue.

    It registers exactly the catalogue entries tagged ``plugin = <name>``, so
    blocking its entry point blocks those names and nothing else.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"CataloguePlugin({self.name!r})"

    @hookimpl
    def zoo_register_tables(self, register) -> None:
        tables = catalogue().for_plugin(self.name)
        if not tables.names():
            raise RegistryError(f"registry.toml declares nothing for plugin {self.name!r}")
        register(tables)
