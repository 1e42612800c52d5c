"""Data: vocabularies, tokenisers, batching and corpora."""

from zoo.data.vocab import SPECIALS, Vocab, Vocabularies

__all__ = ["SPECIALS", "Vocab", "Vocabularies"]
