"""Entry point of the fastText classifier (its table is in zoo's registry.toml)."""

from zoo.plugin_api import CataloguePlugin

fasttext_classifier = CataloguePlugin("fasttext-classifier")
