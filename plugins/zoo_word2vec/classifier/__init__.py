"""fastText's supervised text classifier (Joulin et al. 2017): ``fasttext-classifier``."""
