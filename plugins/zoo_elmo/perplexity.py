"""Forward and backward perplexity of a biLM (an ELMo model) on sentences."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax.numpy as jnp

from zoo_elmo.data import lm_batches

__all__ = ["perplexity"]


@eqx.filter_jit
def _nll(model, batch):
    return model.lm_nll(batch)


def perplexity(
    model: Any, sentences: Sequence[Sequence[str]], *, batch_size: int = 32, buckets: Sequence[int] | None = None
) -> dict[str, float]:
    """Forward and backward perplexity of `sentences` (each predicts its tokens and a boundary)."""
    data = lm_batches(
        sentences,
        model.vocabs["words"],
        batch_size=batch_size,
        buckets=buckets,
        max_word_length=model.spec["max_word_length"] if model.chars is not None else None,
        shuffle=False,
    )
    forward = backward = count = 0.0
    for batch in data:
        f, b, n = _nll(model, {k: jnp.asarray(v) for k, v in batch.items()})
        forward, backward, count = forward + float(f), backward + float(b), count + float(n)
    return {
        "perplexity_forward": math.exp(forward / max(count, 1.0)),
        "perplexity_backward": math.exp(backward / max(count, 1.0)),
        "predictions": count,
    }
