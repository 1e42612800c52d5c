"""Deliberately broken plugins for the kit's own tests: each a small subclass of a built-in with one
contract broken (see `tests/test_kit_catches_models.py`), plus an unchanged copy, the control.

The tables a test registers them under are here too: a model mutant is GloVe's architecture
under another name and factory.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from zoo_attention.additive import BahdanauAttention
from zoo_glove.model import GloVe

ATTENTION_SIZE = 5
"""The attention size `ConstantSizeAttention` reads: a number outside the spec."""

VECTOR_WIDTH = 4
"""The vector width `ConstantWidthGloVe` reads instead of its ``embedding_size``."""


def glove_table(name: str, factory: str) -> str:
    """GloVe's architecture table (as zoo's catalogue has it) under `name`, built by `factory`."""
    return f"""
[architectures.{name}]
factory = "{factory}"
summary = "GloVe under test"
vocabularies = {{ words = "vocab_size" }}
test = {{ vocab_size = 13, embedding_size = 6 }}

[architectures.{name}.params]
vocab_size = 10000
embedding_size = 100
window = 10
weighting = "harmonic"
symmetric = true
x_max = 100.0
alpha = 0.75

[architectures.{name}.domains]
vocab_size = "[1, inf)"
embedding_size = "[1, inf)"
window = "[1, inf)"
weighting = ["harmonic", "linear", "uniform"]
x_max = "(0, inf)"
alpha = "[0, inf)"
"""


# -- models ------------------------------------------------------------------------------------


class CopiedGloVe(GloVe):
    """The control: GloVe unchanged."""


class FixedKeyGloVe(GloVe):
    """Parameters not from the key: the context biases come from a hard-coded `jax.random.key(0)`."""

    def __init__(self, spec, *, key, vocabs):
        super().__init__(spec, key=key, vocabs=vocabs)
        self.context_bias = jax.random.uniform(jax.random.key(0), self.context_bias.shape, minval=-0.1, maxval=0.1)


class NumPyKeyGloVe(GloVe):
    """NumPy work on the key in `__init__`: the word vectors come from NumPy's generator seeded by
    the key's data, which a traced key (`eqx.filter_eval_shape`, as `zoo.load` builds) does not have."""

    def __init__(self, spec, *, key, vocabs):
        super().__init__(spec, key=key, vocabs=vocabs)
        rng = np.random.default_rng(np.asarray(jax.random.key_data(key)))
        self.word = jnp.asarray(rng.uniform(-0.1, 0.1, self.word.shape), jnp.float32)


class HalfPrecisionGloVe(GloVe):
    """Not float32 and no `dtype` declared: the word vectors are bfloat16."""

    def __init__(self, spec, *, key, vocabs):
        super().__init__(spec, key=key, vocabs=vocabs)
        self.word = self.word.astype(jnp.bfloat16)


class ConstantWidthGloVe(GloVe):
    """Shapes from outside the spec: its vectors are `VECTOR_WIDTH` wide, whatever ``embedding_size`` says."""

    def __init__(self, spec, *, key, vocabs):
        super().__init__(spec, key=key, vocabs=vocabs)
        k_word, k_context = jax.random.split(jax.random.fold_in(key, 1))
        shape = (self.num_embeddings, VECTOR_WIDTH)
        self.word = jax.random.uniform(k_word, shape, minval=-0.1, maxval=0.1)
        self.context = jax.random.uniform(k_context, shape, minval=-0.1, maxval=0.1)
        self.embedding_size = VECTOR_WIDTH


class X64GloVe(GloVe):
    """Global configuration changed: it switches on `jax_enable_x64` when built (and builds float64)."""

    def __init__(self, spec, *, key, vocabs):
        jax.config.update("jax_enable_x64", True)
        super().__init__(spec, key=key, vocabs=vocabs)


# -- components --------------------------------------------------------------------------------


class ConstantSizeAttention(BahdanauAttention):
    """Shapes from outside the spec: Bahdanau's attention size from a module constant, not a hyperparameter."""

    def __init__(self, query_size, key_size, *, key):
        super().__init__(query_size, key_size, attention_size=ATTENTION_SIZE, key=key)


class DefaultSizeAttention(BahdanauAttention):
    """Shapes from outside the spec: the attention size is an argument default its table does not register."""

    def __init__(self, query_size, key_size, *, attention_size=7, key):
        super().__init__(query_size, key_size, attention_size=attention_size, key=key)


X64_AT_IMPORT = """
import jax

jax.config.update({flag!r}, {value!r})

from zoo_attention.multiplicative import LuongGeneralAttention


class ConfiguringAttention(LuongGeneralAttention):
    '''Global configuration changed when its module is imported.'''
"""
"""Source of a factory module that sets a flag of `jax.config` when imported (format `flag`, `value`)."""
