"""Dilated causal convolutional language model (temporal convolutional network)."""
