"""Word2vec plugins: skip-gram and CBOW with negative sampling."""
