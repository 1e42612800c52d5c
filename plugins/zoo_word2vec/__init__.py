"""The word2vec family: skip-gram, CBOW and FastText with negative sampling, one sampler and one
training loop; fastText's supervised classifier (`zoo_word2vec.classifier`); fastText's files
(`zoo_word2vec.fasttext_files`); gensim's training API (`zoo_word2vec.gensim_api`)."""
