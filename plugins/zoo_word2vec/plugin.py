"""Entry points of the word2vec plugins (tables in zoo's registry.toml)."""

from zoo.naming.catalogue import CataloguePlugin

word2vec_skipgram = CataloguePlugin("word2vec-skipgram")
word2vec_cbow = CataloguePlugin("word2vec-cbow")
