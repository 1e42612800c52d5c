"""GloVe word vectors (plugin ``glove``)."""
