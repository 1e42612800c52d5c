"""Entry point of the GloVe plugin (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

glove = CataloguePlugin("glove")
