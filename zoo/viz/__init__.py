"""Figures (optional ``plot`` extra: matplotlib): attention heatmaps."""
