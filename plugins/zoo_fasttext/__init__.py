"""FastText plugin: skip-gram over words as sums of character n-grams."""
