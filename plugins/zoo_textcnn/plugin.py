"""Entry points of the convolutional plugins (tables in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin, hookimpl


class TextCNNPlugin(CataloguePlugin):
    """`textcnn`'s tables, and its tokenisers for every zoo command: ``kim`` (Kim's 2014
    ``clean_str``) and ``words-marks`` (words and single punctuation marks), both lowercasing."""

    @hookimpl
    def zoo_register_tokenizers(self, register) -> None:
        from zoo_textcnn.data import LEGACY_TOKENIZER, text_splitter

        for name in ("kim", LEGACY_TOKENIZER):  # exactly what textcnn itself does with them
            register(name, text_splitter(lowercase=True, tokenizer=name))


cnn_encoder = CataloguePlugin("cnn-encoder")
textcnn = TextCNNPlugin("textcnn")
