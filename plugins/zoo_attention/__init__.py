"""Attention mechanisms: Bahdanau (additive), Luong (dot, general, concat) and multi-head
scaled dot-product (Vaswani et al. 2017)."""
