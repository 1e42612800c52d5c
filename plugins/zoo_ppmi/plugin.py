"""Entry point of the PPMI-SVD plugin (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

ppmi_svd = CataloguePlugin("ppmi-svd")
