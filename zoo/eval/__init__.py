"""Evaluation: perplexity, accuracy, analogies, similarity, BLEU."""
