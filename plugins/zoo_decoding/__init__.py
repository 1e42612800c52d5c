"""Decoding strategies: they see only a step function, never a decoder."""
