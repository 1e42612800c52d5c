"""Entry point of the temporal-convolution plugin (tables in zoo's registry.toml)."""

from zoo.catalogue import CataloguePlugin

tcn_lm = CataloguePlugin("tcn-lm")
