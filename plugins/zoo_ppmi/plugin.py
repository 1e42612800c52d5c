"""Entry point of the PPMI-SVD plugin (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

ppmi_svd = CataloguePlugin("ppmi-svd")
