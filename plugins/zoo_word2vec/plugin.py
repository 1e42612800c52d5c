"""Entry points of the word-vector family: skip-gram, CBOW, FastText and fastText's classifier
(tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

word2vec_skipgram = CataloguePlugin("word2vec-skipgram")
word2vec_cbow = CataloguePlugin("word2vec-cbow")
fasttext = CataloguePlugin("fasttext")
fasttext_classifier = CataloguePlugin("fasttext-classifier")
