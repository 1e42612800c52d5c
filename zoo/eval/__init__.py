"""Evaluation: word analogies, word-pair similarity, BLEU.

The shipped evaluation sets are reachable by name (`datasets.dataset_path`):
``google`` (analogies), ``wordsim353`` and ``simlex999`` (word pairs).
"""

from zoo.eval.analogy import AnalogyResult, AnalogySection, evaluate_analogies, read_analogies
from zoo.eval.datasets import DATASETS, dataset_path
from zoo.eval.similarity import WordPairsResult, evaluate_word_pairs, pearson, rankdata, read_word_pairs, spearman

__all__ = [
    "DATASETS",
    "AnalogyResult",
    "AnalogySection",
    "WordPairsResult",
    "dataset_path",
    "evaluate_analogies",
    "evaluate_word_pairs",
    "pearson",
    "rankdata",
    "read_analogies",
    "read_word_pairs",
    "spearman",
]
