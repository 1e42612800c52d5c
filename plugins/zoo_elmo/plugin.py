"""Entry points of the ELMo plugins (tables in zoo's registry.toml)."""

from zoo.catalogue import CataloguePlugin

lstmp = CataloguePlugin("lstmp")
elmo = CataloguePlugin("elmo")
