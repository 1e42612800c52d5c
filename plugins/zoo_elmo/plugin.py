"""Entry points of the ELMo plugins (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

lstmp = CataloguePlugin("lstmp")
elmo = CataloguePlugin("elmo")
