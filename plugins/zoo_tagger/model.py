"""The bidirectional sequence tagger: word (+ character, + contextual) features, a BiRNN, softmax per token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, Int, PRNGKeyArray

from zoo.plugin_api import (
    NUM_CHARS,
    ContextualEmbedder,
    DataError,
    Embedder,
    Encoder,
    Model,
    ModelSpec,
    RecordError,
    Vocabularies,
    build_from_spec,
    encode_sentences,
    frozen,
    pad_sequences,
    scalar_mix,
)
from zoo.plugin_api import dropout as apply_dropout

__all__ = ["Tagger", "with_context"]

_MIXES = ("scalar", "top", "token")


def _keys(key: PRNGKeyArray | None, n: int) -> list[PRNGKeyArray | None]:
    return [None] * n if key is None else list(jax.random.split(key, n))


def _context_model(spec_json: str, vocabs: Vocabularies, key: PRNGKeyArray) -> ContextualEmbedder:
    """Rebuild the nested contextual embedder (e.g. ELMo) from its recorded spec."""
    inner = Vocabularies({"words": vocabs["context"]}) if "context" in vocabs else Vocabularies()
    try:
        model = build_from_spec(spec_json, key=key, vocabs=inner)
    except RecordError as error:
        raise DataError(f"the tagger's 'context' parameter is not a model spec: {error}") from error
    if not isinstance(model, ContextualEmbedder):
        raise DataError(f"{model.spec.name!r} is not a ContextualEmbedder; a tagger's context must give layers")
    return model


class Tagger(Model):
    """Tag every token of a sentence: ``p(t_k | s) = softmax(W h_k + b)``, ``h = BiRNN(x)``.

    Token features ``x_k`` concatenate the word's vector (slot ``embedder``, looked
    up lowercased with `lowercase`), optionally a character-level representation
    of its spelling (slot ``chars``: ``cnn`` or ``recurrent``, its summary over the
    word's characters), and optionally a pretrained contextual embedder's layers
    (`context`, e.g. ELMo), mixed per task as γ Σ_j softmax(s)_j h_{k,j}. The
    encoder (slot ``encoder``: a bidirectional, stacked ``recurrent`` over the
    ``cell`` slot) reads them; padding never changes a real token's tag.

    Hyperparameters: ``vocab_size``, ``num_tags``, ``dropout`` (on the features and
    the encoder output), ``word_dropout`` (training replaces words by ``<unk>`` at
    this rate), ``char_embedding_size``, ``max_word_length`` (characters kept per
    word, boundaries included), ``lowercase``, ``context`` (the JSON spec of a
    nested contextual embedder, "" for none; see `with_context`), ``context_mix``
    (``scalar``, ``top`` or ``token``: the learned mix, the top layer, the
    context-independent token layer), ``fine_tune_context``, ``pad_id``, ``unk_id``.

    Batches hold ``words``, ``words_mask`` and ``tags`` ``[B, S]``, plus ``chars``
    ``[B, S, max_word_length]`` when the model reads characters and ``context``
    ``[B, S]`` (ids in the context vocabulary) when it has one.

    ??? cite
        Plank, Søgaard & Goldberg 2016, Multilingual Part-of-Speech Tagging with Bidirectional
        Long Short-Term Memory Models and Auxiliary Loss; Peters et al. 2018, Deep contextualized
        word representations.
    """

    embedder: Embedder
    char_embedding: Float[Array, "chars dim"] | None
    chars: Encoder | None
    context: ContextualEmbedder | None
    mix_weights: Float[Array, " layers"] | None
    mix_gamma: Float[Array, ""] | None
    encoder: Encoder
    output: eqx.nn.Linear
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if p["context_mix"] not in _MIXES:
            raise DataError(f"context_mix must be one of {_MIXES}, got {p['context_mix']!r}")
        k_emb, k_char, k_chars, k_ctx, k_enc, k_out = jax.random.split(key, 6)
        cell = spec.slot("cell").partial()
        self.embedder = spec.slot("embedder").build(num_embeddings=p["vocab_size"], key=k_emb)
        size = self.embedder.embedding_size
        self.chars = spec.slot("chars").build(input_size=p["char_embedding_size"], cell=cell, key=k_chars)
        self.char_embedding = None
        if self.chars is not None:
            shape = (NUM_CHARS, p["char_embedding_size"])
            self.char_embedding = jax.random.uniform(k_char, shape, minval=-0.1, maxval=0.1)
            size += self.chars.final_size
        self.context = _context_model(p["context"], vocabs, k_ctx) if p["context"] else None
        self.mix_weights = self.mix_gamma = None
        if self.context is not None:
            size += self.context.embedding_size
            if p["context_mix"] == "scalar":
                self.mix_weights, self.mix_gamma = jnp.zeros(self.context.num_layers), jnp.ones(())
        self.encoder = spec.slot("encoder").build(input_size=size, cell=cell, key=k_enc)
        self.output = eqx.nn.Linear(self.encoder.output_size, p["num_tags"], key=k_out)
        self.spec, self.vocabs = spec, vocabs

    @property
    def reads_chars(self) -> bool:
        """Whether batches must carry ``chars``."""
        return self.chars is not None or self.context is not None

    # -- one sentence -----------------------------------------------------------------------

    def _context_features(self, batch_row: Mapping[str, Array], mask: Array) -> Float[Array, "seq dim"]:
        context = self.context if self.spec["fine_tune_context"] else frozen(self.context)
        ids = batch_row.get("context", jnp.zeros_like(batch_row["words"]))
        layers = context.layers(ids, mask, chars=batch_row.get("chars"))
        mix = self.spec["context_mix"]
        if mix == "top":
            return layers[-1]
        if mix == "token":
            return layers[0]
        return scalar_mix(layers, self.mix_weights, self.mix_gamma)

    def features(self, row: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, "seq dim"]:
        """Token features ``[seq, dim]`` of one sentence (`row`: one batch row's fields)."""
        words, mask = row["words"], row["words_mask"]
        k_drop, k_emb, k_chars = _keys(key, 3)
        rate = self.spec["word_dropout"]
        if k_drop is not None and rate > 0:
            words = jnp.where(jax.random.bernoulli(k_drop, rate, words.shape) & mask, self.spec["unk_id"], words)
        parts = [self.embedder(words, mask, key=k_emb)]
        if self.chars is not None:
            chars = row["chars"]
            spelled = jnp.take(self.char_embedding, chars, axis=0)  # [seq, letters, dim]
            keys = None if k_chars is None else jax.random.split(k_chars, chars.shape[0])
            encode = lambda x, m, k: self.chars(x, m, key=k).final
            if keys is None:
                parts.append(jax.vmap(lambda x, m: encode(x, m, None))(spelled, chars != 0))
            else:
                parts.append(jax.vmap(encode)(spelled, chars != 0, keys))
        if self.context is not None:
            parts.append(self._context_features(row, mask))
        return jnp.concatenate(parts, axis=-1)

    @jax.named_scope("bilstm-tagger")
    def __call__(self, row: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, "seq tags"]:
        """Tag logits ``[seq, num_tags]`` of one sentence."""
        k_feat, k_in, k_enc, k_out = _keys(key, 4)
        rate, mask = self.spec["dropout"], row["words_mask"]
        x = apply_dropout(self.features(row, key=k_feat), rate, k_in)
        states = self.encoder(x, mask, key=k_enc).states
        return jax.vmap(self.output)(apply_dropout(states, rate, k_out))

    # -- batches ----------------------------------------------------------------------------

    def logits(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, "b seq tags"]:
        rows = {k: v for k, v in batch.items() if k != "tags"}
        if key is None:
            return jax.vmap(lambda r: self(r))(rows)
        keys = jax.random.split(key, batch["words"].shape[0])
        return jax.vmap(lambda r, k: self(r, key=k))(rows, keys)

    @jax.named_scope("bilstm-tagger.loss")
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean cross-entropy per real token."""
        logp = jax.nn.log_softmax(self.logits(batch, key=key).astype(jnp.float32), axis=-1)
        nll = -jnp.take_along_axis(logp, batch["tags"][..., None], axis=-1)[..., 0]
        mask = batch["words_mask"].astype(jnp.float32)
        return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_len, k_tok, k_tag, k_chr, k_nchr = jax.random.split(key, 5)
        longest = max(1, min(length - 2, 6))
        lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
        mask = jnp.arange(longest)[None, :] < lengths[:, None]
        words = jnp.where(mask, jax.random.randint(k_tok, (batch_size, longest), 2, max(3, p["vocab_size"])), 0)
        tags = jnp.where(mask, jax.random.randint(k_tag, (batch_size, longest), 0, p["num_tags"]), 0)
        pad = ((0, 0), (0, length - longest))
        batch = {
            "words": jnp.pad(words, pad).astype(jnp.int32),
            "words_mask": jnp.pad(mask, pad),
            "tags": jnp.pad(tags, pad).astype(jnp.int32),
        }
        if self.reads_chars:
            letters = p["max_word_length"]
            spelled = jax.random.randint(k_chr, (batch_size, longest, letters), 5, NUM_CHARS)
            count = jax.random.randint(k_nchr, (batch_size, longest, 1), 1, letters - 1)
            position = jnp.arange(letters)
            chars = jnp.where(position == 0, 1, jnp.where(position == count + 1, 2, spelled))
            chars = jnp.where((position <= count + 1) & mask[..., None], chars, 0)
            batch["chars"] = jnp.pad(chars, (*pad, (0, 0))).astype(jnp.int32)
        if "context" in self.vocabs:
            batch["context"] = batch["words"]
        return batch

    # -- text in, tags out ------------------------------------------------------------------

    def encode(self, sentences: Sequence[Sequence[str]], width: int) -> dict[str, np.ndarray]:
        """A batch ``[len(sentences), width]`` of tokenised sentences, as `loss` reads it."""
        words = self.vocabs["words"]
        lower = self.spec["lowercase"]
        ids, mask = pad_sequences(
            [words.encode([w.lower() for w in s] if lower else s) for s in sentences], pad_id=0, length=width
        )
        batch = {"words": ids, "words_mask": mask}
        if self.reads_chars:
            batch["chars"] = encode_sentences(sentences, self.spec["max_word_length"], width=width)
        if "context" in self.vocabs:
            batch["context"] = pad_sequences(
                [self.vocabs["context"].encode(s) for s in sentences], pad_id=0, length=width
            )[0]
        return batch

    def tag(self, sentences: Sequence[Sequence[str]], *, batch_size: int = 64) -> list[list[str]]:
        """The most probable tag of every token of each tokenised sentence.

        Sentences run in chunks of `batch_size`, padded to power-of-two widths, so
        a long list compiles a few times, not once per length.
        """
        tags = self.vocabs["tags"]
        out: list[list[str]] = []
        for start in range(0, len(sentences), batch_size):
            chunk = [list(s) for s in sentences[start : start + batch_size]]
            longest = max(1, *(len(s) for s in chunk))
            width = 1 << (longest - 1).bit_length()
            batch = self.encode(chunk + [[]] * (batch_size - len(chunk)), width)
            best = np.asarray(_predict(self, {k: jnp.asarray(v) for k, v in batch.items()}))
            out += [[tags.tokens[int(t)] for t in best[row, : len(s)]] for row, s in enumerate(chunk)]
        return out


@eqx.filter_jit
def _predict(model: Tagger, batch: dict[str, Array]) -> Int[Array, "b seq"]:
    return jnp.argmax(model.logits(batch), axis=-1)


def with_context(
    name: str,
    context: ContextualEmbedder,
    *,
    key: PRNGKeyArray,
    vocab: Mapping[str, Any],
    **overrides: Any,
) -> Tagger:
    """Build the tagger `name` around a trained contextual embedder (e.g. a loaded ELMo).

    The embedder's spec goes into the tagger's ``context`` hyperparameter and its
    weights into the tagger, so the saved tagger rebuilds from its file alone.
    `vocab` gives the tagger's ``words`` and ``tags`` vocabularies.
    """
    import zoo

    vocabs = dict(vocab)
    inner = getattr(context, "vocabs", None) or {}
    if "words" in inner:
        vocabs["context"] = inner["words"]
    tagger = zoo.build(name, key=key, vocab=vocabs, context=context.spec.to_json(), **overrides)
    return eqx.tree_at(lambda t: t.context, tagger, context)
