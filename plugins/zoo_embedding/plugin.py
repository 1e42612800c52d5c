"""Entry points of the embedding plugins (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

token_embedding = CataloguePlugin("token-embedding")
