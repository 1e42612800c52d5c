"""PPMI-SVD word vectors (plugin ``ppmi-svd``)."""
