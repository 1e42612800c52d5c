"""Figures (optional ``plot`` extra: matplotlib): attention heatmaps, word-vector maps."""
