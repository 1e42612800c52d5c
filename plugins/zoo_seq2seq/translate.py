"""Text in, text out: tokenise, batch in fixed shapes, decode, detokenise."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from zoo.data.batching import pad_sequences
from zoo.data.text import detokenize, tokenize

__all__ = ["Translation", "translate_texts"]


class Translation(NamedTuple):
    """One output for one input: its text, tokens and the strategy's score."""

    text: str
    tokens: list[str]
    score: float


def _round_up(n: int, multiple: int) -> int:
    return max(multiple, -(-n // multiple) * multiple)


def translate_texts(
    model: Any,
    texts: Sequence[str],
    *,
    chunk_size: int = 64,
    tokenizer: Callable[[str], list[str]] = tokenize,
    detokenizer: Callable[[Sequence[str]], str] = detokenize,
    **decode_params: Any,
) -> list[list[Translation]]:
    """Translate `texts` with `model.decode`; for each text, its n-best list, best first.

    Sources are sorted by length and decoded `chunk_size` at a time, padded to
    a multiple of 8 tokens and to a full chunk, so a long file compiles the
    search only a few times. `decode_params` go to `model.decode`
    (``strategy="beam", beam_size=5, alpha=0.6, n_best=3, key=...``).
    """
    src_vocab, tgt_vocab = model.vocabs["src"], model.vocabs["tgt"]
    encoded = [src_vocab.encode(tokenizer(t)) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
    results: list[list[Translation]] = [[] for _ in texts]
    for start in range(0, len(order), chunk_size):
        rows = order[start : start + chunk_size]
        width = _round_up(max(len(encoded[i]) for i in rows), 8)
        batch = [encoded[i] for i in rows] + [encoded[rows[0]]] * (chunk_size - len(rows))
        ids, mask = pad_sequences(batch, pad_id=src_vocab.pad_id, length=width)
        hyps = model.decode(ids, mask, **decode_params)
        tokens, scores = np.asarray(hyps.tokens), np.asarray(hyps.scores)
        for slot, i in enumerate(rows):
            for row, score in zip(tokens[slot], scores[slot], strict=True):
                if np.isfinite(score):
                    words = tgt_vocab.decode(row)
                    results[i].append(Translation(detokenizer(words), words, float(score)))
    return results
