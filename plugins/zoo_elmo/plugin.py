"""Entry points of the ELMo plugins (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

lstmp = CataloguePlugin("lstmp")
elmo = CataloguePlugin("elmo")
