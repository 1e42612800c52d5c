"""Entry points of the language-model plugins (tables in zoo's registry.toml).

``lm`` provides the recurrent architecture and ``tcn-lm`` the convolutional one;
``rnn-lm``, ``lstm-lm`` and ``gru-lm`` each provide their named presets, so
blocking one leaves the others.
"""

from zoo.plugin_api import CataloguePlugin

lm = CataloguePlugin("lm")
rnn_lm = CataloguePlugin("rnn-lm")
lstm_lm = CataloguePlugin("lstm-lm")
gru_lm = CataloguePlugin("gru-lm")
tcn_lm = CataloguePlugin("tcn-lm")
