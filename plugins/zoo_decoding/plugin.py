"""Entry points of the decoding strategies, one per algorithm (tables in registry.toml)."""

from zoo.plugin_api import CataloguePlugin

greedy = CataloguePlugin("greedy")
beam = CataloguePlugin("beam")
sample = CataloguePlugin("sample")
