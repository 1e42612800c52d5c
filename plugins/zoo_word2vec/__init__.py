"""The word2vec family: skip-gram, CBOW and FastText with negative sampling, one sampler and one training loop."""
