"""Perplexity of a `LanguageModel` over a token stream.

The stream is read in order with the state carried from chunk to chunk, so
the chunk length changes nothing but speed; with one row (the default, as in
Zaremba et al.'s evaluation) every token after the first is predicted from
all the tokens before it. Perplexity is ``exp(mean NLL per predicted token)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from zoo.plugin_api import LanguageModel
from zoo_lm.stream import StreamBatches

__all__ = ["perplexity", "perplexity_from_nll", "stream_nll"]


@eqx.filter_jit
def _chunk_nll(model: LanguageModel, batch: Mapping[str, jnp.ndarray], carry, total):
    nll, carry = model.token_nll(batch, carry)
    return carry, total + jnp.sum(nll, dtype=jnp.float32)


def stream_nll(
    model: LanguageModel, ids: Sequence[int] | np.ndarray, *, batch_size: int = 1, unroll: int = 256
) -> tuple[float, int]:
    """Summed NLL (nats) of every predicted token of `ids`, and how many were predicted.

    `batch_size` rows are read side by side (faster; each row starts from a fresh
    state); `unroll` is the chunk length, which does not change the result.
    """
    source = StreamBatches(ids, batch_size=batch_size, unroll=unroll, drop_last=False)
    carry = model.initial_carry(batch_size)
    total = jnp.float32(0.0)
    for batch in source:
        carry, total = _chunk_nll(model, batch, carry, total)
    return float(total), source.tokens_per_epoch()


def perplexity_from_nll(total_nll: float, count: int) -> dict[str, float]:
    """``nll`` (mean nats per token), ``perplexity`` (its exp), ``bits`` (per token) and ``tokens``."""
    if count <= 0:
        raise ValueError("no predicted tokens: perplexity is undefined")
    mean = total_nll / count
    return {"perplexity": math.exp(mean), "nll": mean, "bits": mean / math.log(2), "tokens": float(count)}


def perplexity(
    model: LanguageModel, ids: Sequence[int] | np.ndarray, *, batch_size: int = 1, unroll: int = 256
) -> dict[str, float]:
    """`perplexity_from_nll` of `stream_nll`: the model's perplexity on `ids`."""
    return perplexity_from_nll(*stream_nll(model, ids, batch_size=batch_size, unroll=unroll))
