"""Entry points of the convolutional plugins (tables in zoo's registry.toml)."""

from zoo.catalogue import CataloguePlugin

cnn_encoder = CataloguePlugin("cnn-encoder")
textcnn = CataloguePlugin("textcnn")
