"""Entry point of the fasttext plugin (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

fasttext = CataloguePlugin("fasttext")
