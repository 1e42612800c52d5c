"""Entry point of the tagger plugin (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

bilstm_tagger = CataloguePlugin("bilstm-tagger")
