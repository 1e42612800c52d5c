"""Sequence tagging: the bidirectional recurrent tagger and its readers."""
