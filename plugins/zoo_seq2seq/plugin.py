"""Entry points of the seq2seq plugins (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

seq2seq = CataloguePlugin("seq2seq")
recurrent_decoder = CataloguePlugin("recurrent-decoder")
