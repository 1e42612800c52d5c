"""Sampling from a `LanguageModel`: temperature, top-k and nucleus (top-p) filtering.

`generate` compiles the whole loop: the prompt is read in one call (padded to
a fixed width, so prompts of different lengths share one compilation), then a
`lax.scan` samples one token per step from the filtered distribution, each
step with its own key folded from the caller's. The filter settings are traced
values, so changing them does not recompile.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.interfaces import LanguageModel

__all__ = ["filter_logits", "generate", "generate_text", "sample_token"]


def filter_logits(
    logits: Float[Array, " vocab"], *, top_k: int | Array = 0, top_p: float | Array = 1.0
) -> Float[Array, " vocab"]:
    """Keep the `top_k` largest logits (0: all) and the smallest set of most
    probable tokens whose probability reaches `top_p` (1.0: all); the rest get
    ``finfo.min``. The most probable token always survives.
    """
    logits = logits.astype(jnp.float32)
    floor = jnp.finfo(jnp.float32).min
    order = jnp.argsort(-logits)
    ranked = logits[order]
    rank = jnp.arange(logits.shape[-1])
    keep_k = (top_k <= 0) | (rank < top_k)
    ranked = jnp.where(keep_k, ranked, floor)
    probs = jax.nn.softmax(ranked)
    before = jnp.cumsum(probs) - probs  # mass of the better-ranked tokens
    # within float error of the target mass counts as reaching it
    keep_sorted = keep_k & ((top_p >= 1.0) | (before < top_p - 1e-6) | (rank == 0))
    keep = jnp.zeros_like(keep_sorted).at[order].set(keep_sorted)
    return jnp.where(keep, logits, floor)


def sample_token(
    logits: Float[Array, " vocab"],
    key: PRNGKeyArray,
    *,
    temperature: float | Array = 1.0,
    top_k: int | Array = 0,
    top_p: float | Array = 1.0,
) -> Int[Array, ""]:
    """Draw one token id from ``softmax(filtered logits / temperature)``.

    A temperature of 0 (or below) is greedy: the most probable token.
    """
    filtered = filter_logits(logits, top_k=top_k, top_p=top_p)
    scaled = filtered / jnp.maximum(temperature, 1e-6)
    drawn = jax.random.categorical(key, scaled)
    return jnp.where(temperature > 0, drawn, jnp.argmax(filtered)).astype(jnp.int32)


@eqx.filter_jit
def _generate(
    model: LanguageModel,
    prompt: Int[Array, " width"],
    prompt_mask: Bool[Array, " width"],
    keys: PRNGKeyArray,
    temperature: Array,
    top_k: Array,
    top_p: Array,
) -> Int[Array, "samples length"]:
    """`keys` ``[samples, length]``: one key per sampled token."""
    logits, state = model(prompt, prompt_mask, model.init_state())
    last = logits[jnp.sum(prompt_mask) - 1]

    def body(carry, step_key):
        logits, state = carry
        token = sample_token(logits, step_key, temperature=temperature, top_k=top_k, top_p=top_p)
        return model.step(token, state), token

    return jax.vmap(lambda row: jax.lax.scan(body, (last, state), row)[1])(keys)


def generate(
    model: LanguageModel,
    prompt: Int[Array, " prompt"] | np.ndarray,
    *,
    length: int,
    key: PRNGKeyArray,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    samples: int = 1,
) -> Int[Array, "samples length"]:
    """Continue `prompt` (at least one id) by `length` sampled tokens, `samples` times.

    **Arguments:**

    - `model`: a `zoo.LanguageModel`.
    - `prompt`: ids ``[P]`` the continuation is conditioned on.
    - `length`: tokens to sample; `key`: the randomness (the same key gives the same text).
    - `temperature`: divides the logits (0: greedy); `top_k` (0: off); `top_p` (1.0: off).
    - `samples`: independent continuations (one key each).

    **Returns:** ``[samples, length]`` token ids.
    """
    if not isinstance(model, LanguageModel):
        raise TypeError(f"generate needs a zoo.LanguageModel, got {type(model).__name__}")
    prompt = np.asarray(prompt, dtype=np.int32).reshape(-1)
    if prompt.size == 0:
        raise ValueError("the prompt needs at least one token (e.g. the end-of-sentence id)")
    if length < 1 or samples < 1:
        raise ValueError(f"length and samples must be positive, got {length} and {samples}")
    width = 1 << max(0, int(prompt.size - 1).bit_length())  # a power of two: few compilations
    padded = np.zeros(width, np.int32)
    padded[: prompt.size] = prompt
    mask = np.arange(width) < prompt.size
    keys = jax.vmap(lambda k: jax.random.split(k, length))(jax.random.split(key, samples))
    return _generate(
        model,
        jnp.asarray(padded),
        jnp.asarray(mask),
        keys,
        jnp.float32(temperature),
        jnp.int32(top_k),
        jnp.float32(top_p),
    )


def generate_text(
    model: LanguageModel,
    prompt: str = "",
    *,
    length: int,
    key: PRNGKeyArray,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    samples: int = 1,
) -> list[str]:
    """`generate` on text: the prompt is split at the model's level (words or
    characters) after a boundary token; returns each sample's continuation as text."""
    from zoo.data.text import decode_text, encode_text

    vocab = model.vocabs["tokens"]
    ids = encode_text(vocab, prompt, model.level)
    tokens = generate(
        model, ids, length=length, key=key, temperature=temperature, top_k=top_k, top_p=top_p, samples=samples
    )
    return [decode_text(vocab, row, model.level) for row in np.asarray(tokens)]
