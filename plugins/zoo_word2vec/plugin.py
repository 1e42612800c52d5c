"""Entry points of the word-vector family: skip-gram, CBOW, FastText (skip-gram and CBOW) and fastText's classifier
(tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin, hookimpl


class ClassifierPlugin(CataloguePlugin):
    """`fasttext-classifier`'s tables, and the ``fasttext`` tokeniser for every zoo command: text
    split at the bytes fastText splits it at (space, tab, newline, vertical tab, form feed,
    carriage return, NUL), case kept."""

    @hookimpl
    def zoo_register_tokenizers(self, register) -> None:
        from zoo_word2vec.classifier.splitting import fasttext_split

        register("fasttext", fasttext_split)


word2vec_skipgram = CataloguePlugin("word2vec-skipgram")
word2vec_cbow = CataloguePlugin("word2vec-cbow")
fasttext = CataloguePlugin("fasttext")
fasttext_cbow = CataloguePlugin("fasttext-cbow")
fasttext_classifier = ClassifierPlugin("fasttext-classifier")
