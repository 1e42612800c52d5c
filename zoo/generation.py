"""Continuing a prompt with a `LanguageModel`, decoded by any `DecoderStrategy`.

The language model reads the prompt but its last token in one call (padded to
a power-of-two width, so prompts of similar lengths share one compilation; pads
hold the state), and the strategy decodes from the state it ends in, starting
with the prompt's last token and stepping with ``model.step``. The strategy is
built by name through the registry (``greedy``; ``sample`` with temperature,
top-k and top-p), so text generation and a seq2seq decoder sample with the same
code. The whole call is compiled once per model, strategy and prompt width.

A text has no end token here: a language model trained on a stream reads a
sentence end as one more token (a line break in the text), so a continuation
runs for exactly `length` tokens.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Int, PRNGKeyArray

from zoo.interfaces import DecoderStrategy, Hypotheses, LanguageModel

__all__ = ["NO_EOS", "generate", "generate_text", "text_strategy"]

NO_EOS = -1
"""The `eos` a strategy is given when nothing ends a text: an id no token has."""


def text_strategy(
    *, length: int, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, samples: int = 1
) -> DecoderStrategy:
    """The registry's ``greedy`` (temperature 0) or ``sample`` strategy for `length` tokens.

    Its parameters are checked against the strategy's declared domains (`zoo.build_component`),
    so a bad value is an `InvalidParameterError` naming it.
    """
    from zoo.building.builder import build_component

    if temperature == 0:
        return build_component("greedy", kind="strategy", max_length=length)
    return build_component(
        "sample",
        kind="strategy",
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        num_samples=samples,
        max_length=length,
    )


@eqx.filter_jit
def _decode(
    model: LanguageModel,
    strategy: DecoderStrategy,
    context: Int[Array, " width"],
    context_mask: Bool[Array, " width"],
    last: Int[Array, ""],
    key: PRNGKeyArray | None,
) -> Hypotheses:
    _, state = model(context, context_mask, model.init_state())
    return strategy(model.step, state, bos=last, eos=NO_EOS, pad=0, key=key)


def generate(
    model: LanguageModel,
    prompt: Int[Array, " prompt"] | np.ndarray | list[int],
    strategy: DecoderStrategy,
    *,
    key: PRNGKeyArray | None = None,
) -> Hypotheses:
    """Continue `prompt` (at least one id) with `strategy`.

    **Arguments:**

    - `model`: a `zoo.LanguageModel`.
    - `prompt`: ids ``[P]`` the continuation is conditioned on (`P >= 1`).
    - `strategy`: a `zoo.DecoderStrategy` (e.g. `text_strategy(...)`); it decodes
      ``strategy.max_length`` tokens and never meets an end token (`NO_EOS`).
    - `key`: the randomness of a sampling strategy (the same key gives the same ids).

    **Returns:** `Hypotheses` of the continuations, best first: ``tokens [n, max_length]``,
    ``scores [n]`` (their log-probability under the model), ``lengths [n]``.
    """
    if not isinstance(model, LanguageModel):
        raise TypeError(f"generate needs a zoo.LanguageModel, got {type(model).__name__}")
    if not isinstance(strategy, DecoderStrategy):
        raise TypeError(f"generate needs a zoo.DecoderStrategy, got {type(strategy).__name__}")
    prompt = np.asarray(prompt, dtype=np.int32).reshape(-1)
    if prompt.size == 0:
        raise ValueError("the prompt needs at least one token (e.g. the end-of-sentence id)")
    from zoo.budget import check_search

    leaves = jax.tree.leaves(model.init_state())
    state = sum(np.dtype(leaf.dtype).itemsize * int(np.prod(leaf.shape)) for leaf in leaves)
    what = f"generating {strategy.width} continuations"
    check_search(1, strategy.width, strategy.max_length, model.vocab_size, what, state_bytes=state)
    read = prompt.size - 1  # the last token is the strategy's first input
    width = 1 << (max(read, 1) - 1).bit_length()  # a power of two (at least 1): few compilations
    context = np.zeros(width, np.int32)
    context[:read] = prompt[:read]
    mask = np.arange(width) < read
    return _decode(model, strategy, jnp.asarray(context), jnp.asarray(mask), jnp.int32(prompt[-1]), key)


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
    """`samples` continuations of the text `prompt`, `length` tokens each, as text.

    The prompt is split at the model's level (words or characters) after a
    boundary token. `temperature` divides the log-probabilities (0: greedy, the
    same text every sample); `top_k` keeps the k most probable tokens (0: all);
    `top_p` the smallest set of them whose probability reaches p (1.0: all).
    The same key gives the same texts; they come most probable first.
    """
    from zoo.data.text import decode_text, encode_text

    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    vocab = model.vocabs["tokens"]
    strategy = text_strategy(length=length, temperature=temperature, top_k=top_k, top_p=top_p, samples=samples)
    found = generate(model, encode_text(vocab, prompt, model.level), strategy, key=key)
    texts = [decode_text(vocab, row, model.level) for row in np.asarray(found.tokens)]
    return texts * samples if len(texts) == 1 and samples > 1 else texts
