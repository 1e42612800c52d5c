"""Entry points of the decoding strategies, one per algorithm (tables in registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

greedy = CataloguePlugin("greedy")
beam = CataloguePlugin("beam")
sample = CataloguePlugin("sample")
