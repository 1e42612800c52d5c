"""Entry points of the attention plugins, one per algorithm (tables in registry.toml)."""

from zoo.plugin_api import CataloguePlugin

bahdanau = CataloguePlugin("bahdanau")
luong_dot = CataloguePlugin("luong-dot")
luong_general = CataloguePlugin("luong-general")
luong_concat = CataloguePlugin("luong-concat")
multihead = CataloguePlugin("multihead")
