"""Deliberately broken components, one contract broken each, for the tests of the conformance kit.

Each is a small subclass of a built-in that breaks exactly one contract of `zoo.interfaces`;
`Unchanged*` are the controls (a subclass that changes nothing must pass every check).
`tests/test_kit_catches_components.py` installs each as a third-party plugin and asserts that
the kit fails the check named for the contract it breaks.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from zoo.interfaces import Memory
from zoo_attention.multiplicative import LuongGeneralAttention
from zoo_embedding.token import TokenEmbedding
from zoo_recurrent.cells import ElmanCell
from zoo_recurrent.encoder import RecurrentEncoder

__all__ = [
    "CachesKeys",
    "ContextOfKeys",
    "FixedDropoutKey",
    "HeadsEncoder",
    "FixedKeyBias",
    "HalfPrecisionTable",
    "HalfPrecisionOutputs",
    "KeepsLastWeights",
    "MeanOnFullMask",
    "NoisyCalls",
    "NumpyInit",
    "ReverseBlind",
    "UnchangedAttention",
    "UnchangedCell",
    "UnchangedEmbedder",
]


class UnchangedAttention(LuongGeneralAttention):
    """Control: `luong-general` as it is."""


class MeanOnFullMask(LuongGeneralAttention):
    """Masks with a large negative constant and zeroes nothing after the softmax: with every
    position masked, each pad gets 1/n and the context is the mean of the padded values."""

    def __call__(self, query, memory: Memory):
        scores = jnp.where(memory.mask, memory.keys @ query, -1e9)
        weights = jax.nn.softmax(scores)
        return weights @ memory.values, weights


class CachesKeys(LuongGeneralAttention):
    """Stores the projected keys on the module in `precompute` and reads them back when attending:
    after precomputing A then B, attending to A uses B's keys."""

    def precompute(self, values):
        keys = super().precompute(values)
        object.__setattr__(self, "_keys", keys)
        return keys

    def __call__(self, query, memory: Memory):
        return super().__call__(query, memory._replace(keys=self._keys))


class KeepsLastWeights(LuongGeneralAttention):
    """Computes the right weights but keeps the last ones on the module (for plotting, say): state
    that jit drops and that leaks between the sources a decoder attends to."""

    def __call__(self, query, memory: Memory):
        context, weights = super().__call__(query, memory)
        object.__setattr__(self, "last_weights", weights)
        return context, weights


class UnchangedCell(ElmanCell):
    """Control: `rnn` as it is."""


class FixedKeyBias(ElmanCell):
    """Draws its bias from a hard-coded key: every build has the same bias, whatever its key."""

    def __init__(self, input_size, hidden_size, *, nonlinearity="tanh", init_scale=None, key):
        super().__init__(input_size, hidden_size, nonlinearity=nonlinearity, init_scale=init_scale, key=key)
        self.bias = jax.random.uniform(jax.random.key(0), self.bias.shape, minval=-0.1, maxval=0.1)


class ReverseBlind(ElmanCell):
    """A hand-written reverse scan that flips the inputs but not the mask: with right padding,
    `reverse=True` reads pads first and skips real positions."""

    def scan(self, projected, mask, state, *, reverse=False):
        if not reverse:
            return super().scan(projected, mask, state)
        outputs, final = super().scan(projected[::-1], mask, state)
        return outputs[::-1], final


class UnchangedEmbedder(TokenEmbedding):
    """Control: `token-embedding` as it is."""


class NumpyInit(TokenEmbedding):
    """Normalises its rows with NumPy in `__init__`: fine on a concrete key, impossible under
    `eqx.filter_eval_shape`, which is how `zoo.load` builds a model before reading its file."""

    def __init__(self, num_embeddings, *, embedding_size=128, dropout=0.0, init_scale=None, key):
        super().__init__(num_embeddings, embedding_size=embedding_size, dropout=dropout, init_scale=init_scale, key=key)
        table = np.asarray(self.weight)
        self.weight = jnp.asarray(table / np.linalg.norm(table, axis=1, keepdims=True))


_CALLS = itertools.count()


class NoisyCalls(TokenEmbedding):
    """Adds noise from a call counter even without a key: the same ids twice give different vectors."""

    def __call__(self, ids, mask=None, *, key=None):
        out = super().__call__(ids, mask, key=key)
        return out + 1e-3 * jax.random.normal(jax.random.key(next(_CALLS)), out.shape)


class HalfPrecisionTable(TokenEmbedding):
    """Stores its table in bfloat16 without declaring a `dtype`."""

    def __init__(self, num_embeddings, *, embedding_size=128, dropout=0.0, init_scale=None, key):
        super().__init__(num_embeddings, embedding_size=embedding_size, dropout=dropout, init_scale=init_scale, key=key)
        self.weight = self.weight.astype(jnp.bfloat16)


class HalfPrecisionOutputs(TokenEmbedding):
    """float32 parameters, but returns bfloat16 vectors without declaring a `dtype`."""

    def __call__(self, ids, mask=None, *, key=None):
        return super().__call__(ids, mask, key=key).astype(jnp.bfloat16)


class ContextOfKeys(LuongGeneralAttention):
    """Returns the weighted sum of the projected keys (the query's width) for the context, in place
    of the values (the key's width): right only while query_size equals key_size."""

    def __call__(self, query, memory: Memory):
        _, weights = super().__call__(query, memory)
        return weights @ memory.keys, weights


class FixedDropoutKey(RecurrentEncoder):
    """Draws its dropout from a fixed key when called without one: key=None still drops units."""

    def __call__(self, x, mask, *, key=None):
        return super().__call__(x, mask, key=jax.random.key(0) if key is None else key)


class HeadsEncoder(RecurrentEncoder):
    """A correct encoder that needs `hidden_size` to be a multiple of `num_heads` (as one splitting
    its states into heads does): hosts that fix `hidden_size` to another number cannot take it."""

    def __init__(self, input_size, cell, *, hidden_size=8, num_heads=2, num_layers=1, dropout=0.0, key):
        if hidden_size % num_heads:
            raise ValueError(f"hidden_size={hidden_size} must be a multiple of num_heads={num_heads}")
        super().__init__(input_size, cell, hidden_size=hidden_size, num_layers=num_layers, dropout=dropout, key=key)
