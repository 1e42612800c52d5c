"""Attention mechanisms: Bahdanau (additive) and Luong (dot, general, concat)."""
