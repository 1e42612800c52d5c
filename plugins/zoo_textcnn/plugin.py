"""Entry points of the convolutional plugins (tables in zoo's registry.toml)."""

from zoo.catalogue import CataloguePlugin
from zoo.hookspecs import hookimpl


class TextCNNPlugin(CataloguePlugin):
    """`textcnn`'s tables, and its tokenisers for every zoo command: ``kim`` (Kim's 2014
    ``clean_str``) and ``words-marks`` (words and single punctuation marks), both lowercasing."""

    @hookimpl
    def zoo_register_tokenizers(self, register) -> None:
        from zoo_textcnn.data import LEGACY_TOKENIZER, kim_tokenize, words_and_marks

        register("kim", lambda text: kim_tokenize(text.lower(), lowercase=False))
        register(LEGACY_TOKENIZER, lambda text: words_and_marks(text.lower()))


cnn_encoder = CataloguePlugin("cnn-encoder")
textcnn = TextCNNPlugin("textcnn")
