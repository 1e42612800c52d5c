"""Entry point of the GloVe plugin (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

glove = CataloguePlugin("glove")
