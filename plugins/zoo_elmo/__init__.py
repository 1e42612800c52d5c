"""ELMo: a character-aware bidirectional language model whose layers give contextual word vectors."""
