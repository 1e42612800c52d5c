"""Entry points of the embedding plugins (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

token_embedding = CataloguePlugin("token-embedding")
