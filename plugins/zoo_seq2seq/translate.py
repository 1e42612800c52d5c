"""Text in, text out: tokenise, batch in fixed shapes, decode, detokenise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from zoo.plugin_api import detokenize, get_tokenizer, pad_sequences

__all__ = ["Translation", "replace_unknowns", "translate_texts", "translate_tokens"]


class Translation(NamedTuple):
    """One output for one input: its text, tokens and the strategy's score."""

    text: str
    tokens: list[str]
    score: float


def replace_unknowns(words: Sequence[str], attention: np.ndarray, source: Sequence[str], unknown: str) -> list[str]:
    """Replace each `unknown` output word by the source word it attended to most
    (Luong et al. 2015): names and numbers outside the vocabulary are copied.

    **Arguments:** `words` (decoded, eos excluded); `attention` ``[>= len(words), >= len(source)]``,
    row t over source positions; `source`: the source tokens.
    """
    out = list(words)
    for t, word in enumerate(words):
        if word == unknown and len(source):
            out[t] = source[int(np.argmax(attention[t, : len(source)]))]
    return out


def _round_up(n: int, multiple: int) -> int:
    return max(multiple, -(-n // multiple) * multiple)


def translate_texts(
    model: Any,
    texts: Sequence[str],
    *,
    chunk_size: int = 64,
    tokenizer: str | Callable[[str], list[str]] | None = None,
    detokenizer: Callable[[Sequence[str]], str] = detokenize,
    replace_unk: bool = False,
    **decode_params: Any,
) -> list[list[Translation]]:
    """Translate `texts` with `model.decode`; for each text, its n-best list, best first.

    Text is split by `tokenizer` (default: the one the model was trained with,
    its ``tokenizer`` hyperparameter). Sources are sorted by length and decoded `chunk_size` at a time, padded to
    a multiple of 8 tokens and to a power of two of rows (at most `chunk_size`), so a long file compiles the
    search only a few times and one sentence is decoded once, not `chunk_size` times. `decode_params` go to
    `model.decode`
    (``strategy="beam", beam_size=5, alpha=0.6, n_best=3, key=...``). With
    `replace_unk`, ``<unk>`` in an output becomes the source word it attended to most.
    """
    tokenizer = get_tokenizer(tokenizer if tokenizer is not None else model.spec.params.get("tokenizer", "punct"))
    sources = [tokenizer(t) for t in texts]
    return translate_tokens(
        model, sources, chunk_size=chunk_size, detokenizer=detokenizer, replace_unk=replace_unk, **decode_params
    )


def translate_tokens(
    model: Any,
    sources: Sequence[Sequence[str]],
    *,
    chunk_size: int = 64,
    detokenizer: Callable[[Sequence[str]], str] = detokenize,
    replace_unk: bool = False,
    **decode_params: Any,
) -> list[list[Translation]]:
    """`translate_texts` for sources already split into tokens: each one's n-best list, best first."""
    src_vocab, tgt_vocab = model.vocabs["src"], model.vocabs["tgt"]
    encoded = [src_vocab.encode(s) for s in sources]
    unknown = tgt_vocab.specials.get("unk")
    order = sorted(range(len(sources)), key=lambda i: len(encoded[i]))
    results: list[list[Translation]] = [[] for _ in sources]
    for start in range(0, len(order), chunk_size):
        rows = order[start : start + chunk_size]
        width = _round_up(max(len(encoded[i]) for i in rows), 8)
        filled = min(chunk_size, 1 << (len(rows) - 1).bit_length())  # a power of two: few shapes to compile
        batch = [encoded[i] for i in rows] + [encoded[rows[0]]] * (filled - len(rows))
        ids, mask = pad_sequences(batch, pad_id=src_vocab.pad_id, length=width)
        hyps = model.decode(ids, mask, **decode_params)
        tokens, scores = np.asarray(hyps.tokens), np.asarray(hyps.scores)
        attention = _attention(model, ids, tokens) if replace_unk and unknown is not None else None
        for slot, i in enumerate(rows):
            for rank, (row, score) in enumerate(zip(tokens[slot], scores[slot], strict=True)):
                if np.isfinite(score):
                    words = tgt_vocab.decode(row)
                    if attention is not None:
                        words = replace_unknowns(words, attention[rank][slot], sources[i], unknown)
                    results[i].append(Translation(detokenizer(words), words, float(score)))
    return results


def _attention(model: Any, ids: np.ndarray, tokens: np.ndarray) -> np.ndarray | None:
    """Attention ``[n_best, batch, tgt, src]`` of every hypothesis, or None without attention."""
    import jax
    import jax.numpy as jnp

    ids = jnp.asarray(ids)
    weights = [jax.vmap(model.attention_weights)(ids, jnp.asarray(tokens[:, r])) for r in range(tokens.shape[1])]
    return None if weights[0] is None else np.stack([np.asarray(w) for w in weights])
