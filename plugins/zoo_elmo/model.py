"""ELMo (Peters et al. 2018): a character-aware bidirectional LM whose layers are mixed per task."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import (
    BOS_CHAR,
    BOW,
    EOS_CHAR,
    EOW,
    NUM_CHARS,
    ContextualEmbedder,
    DataError,
    Embedder,
    Encoder,
    Model,
    ModelSpec,
    RecurrentCell,
    Vocab,
    Vocabularies,
    encode_sentences,
    pad_sequences,
    run_cell,
    scalar_mix,
    spell,
)
from zoo.plugin_api import dropout as apply_dropout
from zoo_elmo.softmax import draw_log_uniform, sampled_nll

__all__ = ["ELMo"]


def _keys(key: PRNGKeyArray | None, n: int) -> list[PRNGKeyArray | None]:
    return [None] * n if key is None else list(jax.random.split(key, n))


def _with_boundaries(values: Array, mask: Bool[Array, " seq"], first: Array, last: Array) -> Array:
    """``[first, v_1 .. v_n, last, pad..]``: `values` ``[seq, ...]`` framed by sentence boundaries."""
    length = jnp.sum(mask)
    framed = jnp.concatenate([first[None], values, jnp.zeros_like(values[:1])], axis=0)
    at_end = (jnp.arange(framed.shape[0]) == length + 1).reshape((-1,) + (1,) * (values.ndim - 1))
    return jnp.where(at_end, last[None], framed)


def _reversal(mask: Bool[Array, " seq"]) -> Int[Array, " seq"]:
    """Indices that reverse the real (leading) positions and keep the pads: an involution."""
    length = jnp.sum(mask)
    positions = jnp.arange(mask.shape[0])
    return jnp.where(positions < length, length - 1 - positions, positions)


class ELMo(ContextualEmbedder, Model):
    """Embeddings from a bidirectional language model.

    A token layer turns each token into a vector: a character CNN with highway
    layers over its spelling (slot ``chars``), a word embedding (slot
    ``embedder``), or both, projected to ``projection_size``. A forward and a
    backward LM (``num_layers`` recurrent layers each, over the ``cell`` slot:
    ``lstmp`` by default, residual between layers) read the sentence framed by
    ``<s>`` and ``</s>``; the forward LM predicts the next token and the backward
    LM the previous one through one shared softmax. Layer 0 is the token vector
    (repeated for both directions), layer j the two LMs' states ``[→h_j; ←h_j]``.

    As an `Embedder` it returns ``γ Σ_j softmax(s)_j h_{k,j}`` with fixed
    ``mix_weights`` (default: equal) and ``mix_gamma``; task models learn their own
    s and γ over `layers`. It is stateless: every sentence starts from zero
    states, so the same sentence always gives the same vectors.

    With ``sampled_softmax = K``, training estimates the softmax on K shared
    negative samples (as ELMo's biLM was trained); evaluation is always exact.

    Batches for `loss` hold ``ids [B, S]`` (the model's vocabulary; the targets),
    ``ids_mask [B, S]`` and, with a character layer, ``chars [B, S, max_word_length]``.

    ??? cite
        Peters et al. 2018, Deep contextualized word representations.
    """

    char_embedding: Float[Array, "chars dim"] | None
    chars: Encoder | None
    embedder: Embedder | None
    token_projection: eqx.nn.Linear
    forward_cells: tuple[RecurrentCell, ...]
    backward_cells: tuple[RecurrentCell, ...]
    softmax: eqx.nn.Linear
    num_embeddings: int = eqx.field(static=True)
    embedding_size: int = eqx.field(static=True)
    num_layers: int = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if spec.slot("chars").is_empty and spec.slot("embedder").is_empty:
            raise DataError("ELMo needs a token layer: a 'chars' encoder, an 'embedder', or both")
        size, layers = p["projection_size"], p["num_layers"]
        k_char, k_chars, k_emb, k_proj, k_fwd, k_bwd, k_out = jax.random.split(key, 7)
        cell = spec.slot("cell").partial()
        self.chars = spec.slot("chars").build(input_size=p["char_embedding_size"], cell=cell, key=k_chars)
        self.char_embedding = None
        token_size = 0
        if self.chars is not None:
            shape = (NUM_CHARS, p["char_embedding_size"])
            self.char_embedding = jax.random.uniform(k_char, shape, minval=-0.25, maxval=0.25)
            token_size += self.chars.final_size
        self.embedder = spec.slot("embedder").build(num_embeddings=p["vocab_size"], key=k_emb)
        if self.embedder is not None:
            token_size += self.embedder.embedding_size
        self.token_projection = eqx.nn.Linear(token_size, size, key=k_proj)
        self.forward_cells = tuple(
            cell(input_size=size, hidden_size=size, key=k) for k in jax.random.split(k_fwd, layers)
        )
        self.backward_cells = tuple(
            cell(input_size=size, hidden_size=size, key=k) for k in jax.random.split(k_bwd, layers)
        )
        self.softmax = eqx.nn.Linear(size, p["vocab_size"], key=k_out)
        self.num_embeddings, self.embedding_size, self.num_layers = p["vocab_size"], 2 * size, layers + 1
        self.spec, self.vocabs = spec, vocabs

    # -- the biLM over one sentence ---------------------------------------------------------

    def _framed(self, ids: Int[Array, " seq"], mask: Bool[Array, " seq"], chars: Array | None):
        """Ids, mask and spellings with ``<s>`` first and ``</s>`` after the last real token."""
        p = self.spec.params
        framed_ids = _with_boundaries(ids, mask, jnp.asarray(p["bos_id"]), jnp.asarray(p["eos_id"]))
        framed_mask = jnp.arange(ids.shape[0] + 2) <= jnp.sum(mask) + 1
        framed_chars = None
        if chars is not None:
            letters = chars.shape[-1]
            bos = jnp.zeros(letters, chars.dtype).at[:3].set(jnp.asarray([BOW, BOS_CHAR, EOW], chars.dtype))
            eos = jnp.zeros(letters, chars.dtype).at[:3].set(jnp.asarray([BOW, EOS_CHAR, EOW], chars.dtype))
            framed_chars = _with_boundaries(jnp.where(mask[:, None], chars, 0), mask, bos, eos)
        return framed_ids, framed_mask, framed_chars

    def tokens(self, ids: Int[Array, " n"], chars: Int[Array, "n letters"] | None) -> Float[Array, "n proj"]:
        """The context-independent token layer ``[n, projection_size]``."""
        parts = []
        if self.chars is not None:
            if chars is None:
                raise DataError("this ELMo reads characters: pass chars (zoo.data.chars ids)")
            spelled = jnp.take(self.char_embedding, chars, axis=0)
            parts.append(jax.vmap(lambda x, m: self.chars(x, m).final)(spelled, chars != 0))
        if self.embedder is not None:
            parts.append(self.embedder(ids))
        return jax.vmap(self.token_projection)(jnp.concatenate(parts, axis=-1))

    def _bilm(self, ids, mask, chars, key):
        """Token vectors and each layer's forward and backward states over the framed sentence.

        The backward LM reads the real tokens reversed; both directions run in one
        scan per layer (their cells stacked), which halves the sequential steps.
        """
        rate = self.spec["dropout"]
        k_tok, *k_layers = _keys(key, 1 + len(self.forward_cells))
        x = self.tokens(ids, chars)
        flip = _reversal(mask)
        below = apply_dropout(jnp.stack([x, x[flip]]), rate, k_tok)  # [2, seq, proj]
        forward, backward = [], []
        for layer, cells in enumerate(zip(self.forward_cells, self.backward_cells, strict=True)):
            stacked = jax.tree.map(lambda f, b: jnp.stack([f, b]), *cells)
            out = eqx.filter_vmap(lambda cell, xs: run_cell(cell, xs, mask)[0])(stacked, below)
            if self.spec["residual"] and layer > 0:
                out = out + below
            forward.append(out[0])
            backward.append(out[1][flip])
            below = apply_dropout(out, rate, k_layers[layer])
        return x, forward, backward

    def layers(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        chars: Int[Array, "seq letters"] | None = None,
        key: PRNGKeyArray | None = None,
    ) -> Float[Array, "layers seq dim"]:
        mask = jnp.ones(ids.shape, bool) if mask is None else mask
        framed_ids, framed_mask, framed_chars = self._framed(ids, mask, chars)
        x, forward, backward = self._bilm(framed_ids, framed_mask, framed_chars, key)
        stack = [jnp.concatenate([x, x], -1)]
        stack += [jnp.concatenate([f, b], -1) for f, b in zip(forward, backward, strict=True)]
        layers = jnp.stack(stack)[:, 1 : ids.shape[0] + 1]  # drop the boundaries
        return jnp.where(mask[None, :, None], layers, 0.0)

    @jax.named_scope("elmo")
    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"] | None = None,
        *,
        key: PRNGKeyArray | None = None,
        chars: Int[Array, "seq letters"] | None = None,
    ) -> Float[Array, "seq dim"]:
        """Contextual vectors ``[seq, 2 * projection_size]``: the default mix of `layers`.

        Without `chars`, a character-level model spells `ids` from its vocabulary.
        """
        if chars is None and self.chars is not None:
            chars = jnp.asarray(_spellings(self._words(), self.spec["max_word_length"]))[ids]
        weights = self.spec["mix_weights"] or [0.0] * self.num_layers
        if len(weights) != self.num_layers:
            raise DataError(f"mix_weights needs {self.num_layers} values (one per layer), got {weights}")
        layers = self.layers(ids, mask, chars=chars, key=key)
        return scalar_mix(layers, jnp.asarray(weights, layers.dtype), self.spec["mix_gamma"])

    def vectors(self) -> Float[Array, "vocab dim"]:
        """Layer 0 (context-independent) for every vocabulary id, ``[vocab, 2 * projection_size]``."""
        ids = jnp.arange(self.num_embeddings)
        chars = jnp.asarray(_spellings(self._words(), self.spec["max_word_length"])) if self.chars is not None else None
        x = _token_layer(self, ids, chars)
        return jnp.concatenate([x, x], axis=-1)

    def _words(self) -> Vocab:
        if "words" not in self.vocabs:
            raise DataError("this ELMo has no vocabulary to spell ids with; pass chars, or build it with vocab=")
        return self.vocabs["words"]

    # -- language-model training ------------------------------------------------------------

    def _directional_nll(self, ids, mask, chars, key, negatives=None):
        """Summed forward and backward next/previous-token NLL and the count of predictions.

        `negatives`: ``(sampled ids, log expected counts)`` for a sampled softmax, or None (exact).
        """
        k_bilm, k_out = _keys(key, 2)
        framed_ids, framed_mask, framed_chars = self._framed(ids, mask, chars)
        _, forward, backward = self._bilm(framed_ids, framed_mask, framed_chars, k_bilm)
        rate = self.spec["dropout"]
        top_f = apply_dropout(forward[-1], rate, k_out)
        top_b = apply_dropout(backward[-1], rate, None if k_out is None else jax.random.fold_in(k_out, 1))

        def nll(states, targets, valid):
            if negatives is not None:
                return sampled_nll(states, targets, valid, self.softmax.weight, self.softmax.bias, *negatives)
            logits = jax.vmap(self.softmax)(states).astype(jnp.float32)
            logp = jax.nn.log_softmax(logits, axis=-1)
            picked = jnp.take_along_axis(logp, targets[:, None], axis=-1)[:, 0]
            return -jnp.sum(jnp.where(valid, picked, 0.0))

        valid_f = framed_mask[1:]  # position t predicts t+1
        valid_b = framed_mask[1:]  # position t+1 predicts t
        forward_nll = nll(top_f[:-1], framed_ids[1:], valid_f)
        backward_nll = nll(top_b[1:], framed_ids[:-1], valid_b)
        count = jnp.sum(valid_f)
        return forward_nll, backward_nll, count

    def lm_nll(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None):
        """``(forward NLL sum, backward NLL sum, predictions)`` over a batch (per direction).

        In training (a `key`) with ``sampled_softmax = K > 0``, the softmax is
        estimated on K log-uniform negative samples shared by the batch; without a
        key it is exact.
        """
        ids, mask, chars = batch["ids"], batch["ids_mask"], batch.get("chars")
        negatives = None
        if key is not None and 0 < self.spec["sampled_softmax"] < self.num_embeddings:
            key, k_neg = jax.random.split(key)
            negatives = draw_log_uniform(k_neg, self.num_embeddings, self.spec["sampled_softmax"])
        keys = jax.random.split(key, ids.shape[0]) if key is not None else None
        one = lambda i, m, c, k: self._directional_nll(i, m, c, k, negatives)
        if chars is None:
            f, b, n = jax.vmap(lambda i, m, k: one(i, m, None, k), in_axes=(0, 0, 0 if keys is not None else None))(
                ids, mask, keys
            )
        else:
            f, b, n = jax.vmap(one, in_axes=(0, 0, 0, 0 if keys is not None else None))(ids, mask, chars, keys)
        # Filler rows (no real token) still predict </s> after <s>; leave them out.
        real = jnp.any(mask, axis=-1)
        return jnp.sum(jnp.where(real, f, 0.0)), jnp.sum(jnp.where(real, b, 0.0)), jnp.sum(jnp.where(real, n, 0))

    @jax.named_scope("elmo.loss")
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean of the forward and backward LMs' cross-entropy per prediction."""
        forward, backward, count = self.lm_nll(batch, key=key)
        return (forward + backward) / (2.0 * jnp.maximum(count, 1))

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_len, k_tok, k_chr, k_n = jax.random.split(key, 4)
        longest = max(1, min(length - 2, 6))
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        mask = jnp.arange(longest)[None, :] < lengths[:, None]
        ids = jnp.where(mask, jax.random.randint(k_tok, (batch_size, longest), 4, max(5, p["vocab_size"])), 0)
        pad = ((0, 0), (0, length - longest))
        batch = {"ids": jnp.pad(ids, pad).astype(jnp.int32), "ids_mask": jnp.pad(mask, pad)}
        if self.chars is not None:
            letters = p["max_word_length"]
            spelled = jax.random.randint(k_chr, (batch_size, longest, letters), 5, NUM_CHARS)
            count = jax.random.randint(k_n, (batch_size, longest, 1), 1, letters - 1)
            position = jnp.arange(letters)
            chars = jnp.where(position == 0, BOW, jnp.where(position == count + 1, EOW, spelled))
            chars = jnp.where((position <= count + 1) & mask[..., None], chars, 0)
            batch["chars"] = jnp.pad(chars, (*pad, (0, 0))).astype(jnp.int32)
        return batch

    # -- text in, vectors out ---------------------------------------------------------------

    def encode(self, sentences: Sequence[Sequence[str]], width: int) -> dict[str, np.ndarray]:
        """A batch ``[len(sentences), width]`` of tokenised sentences, as `loss` reads it."""
        vocab = self.vocabs.get("words")
        encoded = [vocab.encode(s) if vocab is not None else np.zeros(len(s), np.int32) for s in sentences]
        ids, mask = pad_sequences(encoded, pad_id=0, length=width)
        batch = {"ids": ids, "ids_mask": mask}
        if self.chars is not None:
            batch["chars"] = encode_sentences(sentences, self.spec["max_word_length"], width=width)
        return batch

    def embed(
        self, sentences: Sequence[Sequence[str]], *, layers: bool = False, batch_size: int = 32
    ) -> list[np.ndarray]:
        """Vectors of tokenised sentences: ``[len, dim]`` each (the default mix), or with
        `layers` ``[num_layers, len, dim]``. Any word works; characters spell it.

        Sentences run in chunks of `batch_size`, padded to power-of-two widths (at
        least 16), so a long list compiles a few times, not once per length.
        """
        weights = np.asarray(self.spec["mix_weights"] or [0.0] * self.num_layers, dtype=np.float32)
        mix = np.exp(weights - weights.max()) / np.sum(np.exp(weights - weights.max()))
        out: list[np.ndarray] = []
        for start in range(0, len(sentences), batch_size):
            chunk = [list(s) for s in sentences[start : start + batch_size]]
            width = max(16, 1 << (max(1, *(len(s) for s in chunk)) - 1).bit_length())
            batch = {k: jnp.asarray(v) for k, v in self.encode(chunk + [[]] * (batch_size - len(chunk)), width).items()}
            stack = np.asarray(_layers_batch(self, batch))  # [B, layers, width, dim]
            for row, sentence in enumerate(chunk):
                found = stack[row, :, : len(sentence)]
                out.append(found if layers else self.spec["mix_gamma"] * np.tensordot(mix, found, axes=1))
        return out


@eqx.filter_jit
def _layers_batch(model: ELMo, batch: dict[str, Array]) -> Array:
    chars = batch.get("chars")
    if chars is None:
        return jax.vmap(lambda i, m: model.layers(i, m))(batch["ids"], batch["ids_mask"])
    return jax.vmap(lambda i, m, c: model.layers(i, m, chars=c))(batch["ids"], batch["ids_mask"], chars)


@eqx.filter_jit
def _token_layer(model: ELMo, ids: Array, chars: Array | None) -> Array:
    return model.tokens(ids, chars)


@functools.lru_cache(maxsize=8)
def _spellings(vocab: Vocab, max_length: int) -> np.ndarray:
    """``[len(vocab), max_length]`` spellings of every vocabulary entry (boundaries for ``<s>``/``</s>``)."""
    rows = np.zeros((len(vocab), max_length), dtype=np.int32)
    bos, eos = vocab.specials.get("bos"), vocab.specials.get("eos")
    for index, token in enumerate(vocab.tokens):
        if token == bos:
            rows[index, :3] = (BOW, BOS_CHAR, EOW)
        elif token == eos:
            rows[index, :3] = (BOW, EOS_CHAR, EOW)
        else:
            rows[index] = spell(token, max_length)
    return rows
