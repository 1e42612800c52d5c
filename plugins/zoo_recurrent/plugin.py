"""Entry points of the recurrent plugins, one per algorithm (tables in registry.toml)."""

from zoo.plugin_api import CataloguePlugin

rnn = CataloguePlugin("rnn")
lstm = CataloguePlugin("lstm")
gru = CataloguePlugin("gru")
recurrent_encoder = CataloguePlugin("recurrent-encoder")
