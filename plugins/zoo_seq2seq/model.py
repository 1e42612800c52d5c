"""The encoder-decoder architecture (Sutskever et al. 2014), attention optional."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import (
    Decoder,
    DecoderOutput,
    DecoderStrategy,
    Embedder,
    Encoder,
    EncoderOutput,
    Hypotheses,
    Memory,
    Model,
    ModelSpec,
    Vocabularies,
    build_component,
    check_search,
)

__all__ = ["Seq2Seq", "reverse_valid"]


def reverse_valid(ids: Int[Array, " src"], mask: Bool[Array, " src"]) -> Int[Array, " src"]:
    """Reverse the real tokens of a right-padded sequence, keeping pads at the end."""
    length = jnp.sum(mask)
    positions = jnp.arange(ids.shape[0])
    return ids[jnp.where(positions < length, length - 1 - positions, positions)]


def _keys(key: PRNGKeyArray | None, n: int) -> list[PRNGKeyArray | None]:
    return [None] * n if key is None else list(jax.random.split(key, n))


class Seq2Seq(Model):
    """Encode a source sequence, decode a target sequence token by token.

    Slots: ``embedder`` (built twice: source and target), ``cell`` (shared by
    encoder and decoder), ``encoder``, ``decoder``, ``attention`` (optional) and
    ``strategy`` (how `decode` searches). Hyperparameters: ``src_vocab_size``,
    ``tgt_vocab_size``, ``reverse_source`` (Sutskever et al.'s trick), and the
    reserved ids ``pad_id``, ``bos_id``, ``eos_id``.

    Batches for `loss` hold ``src [B, S]``, ``src_mask [B, S]``, ``tgt [B, T]``
    (the target tokens ending with eos, no bos) and ``tgt_mask [B, T]``.
    """

    src_embedder: Embedder
    encoder: Encoder
    decoder: Decoder
    strategy: DecoderStrategy
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        _check_vocabs(p, vocabs)
        k_src, k_tgt, k_enc, k_dec = jax.random.split(key, 4)
        embedder = spec.slot("embedder")
        self.src_embedder = embedder.build(num_embeddings=p["src_vocab_size"], key=k_src)
        cell = spec.slot("cell").partial()
        self.encoder = spec.slot("encoder").build(input_size=self.src_embedder.embedding_size, cell=cell, key=k_enc)
        self.decoder = spec.slot("decoder").build(
            embedder=embedder.build(num_embeddings=p["tgt_vocab_size"], key=k_tgt),
            cell=cell,
            attention=spec.slot("attention").partial(),
            memory_size=self.encoder.output_size,
            final_size=self.encoder.final_size,
            vocab_size=p["tgt_vocab_size"],
            key=k_dec,
        )
        self.strategy = spec.slot("strategy").build()
        self.spec, self.vocabs = spec, vocabs

    # -- one example ----------------------------------------------------------------------

    @jax.named_scope("seq2seq.encode")
    def encode(
        self, src: Int[Array, " src"], mask: Bool[Array, " src"], *, key: PRNGKeyArray | None = None
    ) -> tuple[EncoderOutput, Memory]:
        """Encode one source ``[src]``; return the encoder output and attention memory."""
        if self.spec["reverse_source"]:
            src = reverse_valid(src, mask)
        k_emb, k_enc = _keys(key, 2)
        enc = self.encoder(self.src_embedder(src, mask, key=k_emb), mask, key=k_enc)
        return enc, self.decoder.memory(enc, mask)

    @jax.named_scope("seq2seq")
    def __call__(
        self,
        src: Int[Array, " src"],
        src_mask: Bool[Array, " src"],
        tgt_in: Int[Array, " tgt"],
        *,
        key: PRNGKeyArray | None = None,
    ) -> DecoderOutput:
        """Teacher forcing for one pair: logits ``[tgt, vocab]`` and attention ``[tgt, src]``."""
        k_enc, k_dec = _keys(key, 2)
        enc, memory = self.encode(src, src_mask, key=k_enc)
        return self.decoder(tgt_in, enc, memory, key=k_dec)

    # -- batches --------------------------------------------------------------------------

    def decoder_inputs(self, tgt: Int[Array, "batch tgt"]) -> Int[Array, "batch tgt"]:
        """Shift right: ``[bos, y_1, ..., y_{T-1}]``."""
        bos = jnp.full((tgt.shape[0], 1), self.spec["bos_id"], dtype=tgt.dtype)
        return jnp.concatenate([bos, tgt[:, :-1]], axis=1)

    @jax.named_scope("seq2seq.loss")
    def loss(self, batch: Mapping[str, Array], *, key: PRNGKeyArray | None = None) -> Float[Array, ""]:
        """Mean cross-entropy per real target token, with optional label smoothing."""
        tgt, tgt_mask = batch["tgt"], batch["tgt_mask"]
        tgt_in = self.decoder_inputs(tgt)
        if key is None:
            out = jax.vmap(self)(batch["src"], batch["src_mask"], tgt_in)
        else:
            keys = jax.random.split(key, tgt.shape[0])
            out = jax.vmap(lambda s, m, t, k: self(s, m, t, key=k))(batch["src"], batch["src_mask"], tgt_in, keys)
        logp = jax.nn.log_softmax(out.logits.astype(jnp.float32), axis=-1)
        nll = -jnp.take_along_axis(logp, tgt[..., None], axis=-1)[..., 0]
        smoothing = self.spec["label_smoothing"]
        if smoothing:
            nll = (1.0 - smoothing) * nll - smoothing * jnp.mean(logp, axis=-1)
        mask = tgt_mask.astype(jnp.float32)
        return jnp.sum(nll * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def example_batch(self, *, key: PRNGKeyArray, batch_size: int = 3, length: int = 8) -> dict[str, Array]:
        p = self.spec.params
        k_sl, k_tl, k_s, k_t = jax.random.split(key, 4)
        longest = max(1, min(length - 2, 6))
        first = 4  # the first id after pad, unk, bos, eos

        def field(k_len, k_tok, vocab_size, eos):
            lengths = jax.random.randint(k_len, (batch_size,), 1, longest + 1)
            tokens = jax.random.randint(k_tok, (batch_size, longest), first, max(first + 1, vocab_size))
            positions = jnp.arange(longest)
            if eos:
                tokens = jnp.where(positions == lengths[:, None] - 1, p["eos_id"], tokens)
            mask = positions < lengths[:, None]
            tokens = jnp.where(mask, tokens, p["pad_id"])
            pad = length - longest
            return (
                jnp.pad(tokens, ((0, 0), (0, pad)), constant_values=p["pad_id"]).astype(jnp.int32),
                jnp.pad(mask, ((0, 0), (0, pad))),
            )

        src, src_mask = field(k_sl, k_s, p["src_vocab_size"], eos=False)
        tgt, tgt_mask = field(k_tl, k_t, p["tgt_vocab_size"], eos=True)
        return {"src": src, "src_mask": src_mask, "tgt": tgt, "tgt_mask": tgt_mask}

    def decode(
        self,
        src: Int[Array, "batch src"],
        src_mask: Bool[Array, "batch src"] | None = None,
        *,
        strategy: str | DecoderStrategy | None = None,
        key: PRNGKeyArray | None = None,
        **strategy_params: Any,
    ) -> Hypotheses:
        """Decode a batch; hypotheses have shapes ``[batch, n_best, ...]``.

        `strategy` names a strategy component (``"greedy"``, ``"beam"``, ...)
        with `strategy_params` (``beam_size=5``), or is a built strategy; by
        default the model's own. The search is compiled once per strategy and shape.
        """
        src = jnp.asarray(src)
        mask = src != self.spec["pad_id"] if src_mask is None else jnp.asarray(src_mask)
        chosen = _choose_strategy(self, strategy, strategy_params)
        check_search(src.shape[0], chosen.width, chosen.max_length, self.spec["tgt_vocab_size"], "decoding")
        return _decode_batch(self, chosen, src, mask, key)

    def attention_weights(self, src: Int[Array, " src"], tokens: Int[Array, " tgt"]) -> Float[Array, "tgt src"] | None:
        """Attention of one decoded output: row t is where the decoder looked for ``tokens[t]``."""
        src = jnp.asarray(src)
        tokens = jnp.asarray(tokens)
        mask = src != self.spec["pad_id"]
        tgt_in = self.decoder_inputs(tokens[None])[0]
        return self(src, mask, tgt_in).attention

    def translate(
        self, sources: str | Sequence[str], *, with_scores: bool = False, **decode_params: Any
    ) -> str | list[str] | list[list[tuple[str, float]]]:
        """Translate text with the model's vocabularies.

        Text is split by the model's ``tokenizer`` (by default ``punct``:
        lowercase, punctuation split) and outputs are detokenised; `decode_params` go to `decode`
        (``strategy="beam", beam_size=5, n_best=3``). Returns the best output of
        each input (a string for a string), or with `with_scores` every input's
        n-best list of ``(text, score)``, best first.
        """
        from zoo_seq2seq.translate import translate_texts

        single = isinstance(sources, str)
        texts = [sources] if single else list(sources)
        results = translate_texts(self, texts, **decode_params)
        if with_scores:
            return [[(t.text, t.score) for t in options] for options in results]
        best = [options[0].text if options else "" for options in results]
        return best[0] if single else best


def _check_vocabs(params: Mapping[str, Any], vocabs: Vocabularies) -> None:
    for role in vocabs:
        vocab = vocabs[role]
        for special in ("pad", "bos", "eos"):
            if special in vocab.specials and vocab.special_id(special) != params[f"{special}_id"]:
                raise ValueError(
                    f"the {role!r} vocabulary puts {special} at id {vocab.special_id(special)} but the "
                    f"model expects {params[f'{special}_id']}; build it with Vocab.build (reserved ids first)"
                )


def _choose_strategy(model: Seq2Seq, strategy: Any, params: Mapping[str, Any]) -> DecoderStrategy:
    if isinstance(strategy, DecoderStrategy):
        if params:
            raise TypeError("pass strategy parameters when building the strategy, not to decode()")
        return strategy
    if strategy is None and not params:
        return model.strategy
    own = model.spec.slot("strategy")
    name = strategy or own.component
    base = own.params if name == own.component else {}
    return build_component(name, kind="strategy", **{**base, **params})


@eqx.filter_jit
def _decode_batch(model: Seq2Seq, strategy: DecoderStrategy, src: Array, mask: Array, key: Any) -> Hypotheses:
    p = model.spec.params
    search_step = model.decoder.search_step(src.shape[0] * strategy.width * strategy.max_length)

    @jax.named_scope("seq2seq.decode")
    def one(source, source_mask, k):
        enc, _ = model.encode(source, source_mask)  # its memory goes unused, and compiled away
        memory = model.decoder.search_memory(enc, source_mask)

        def step(token, state):
            return search_step(token, state, memory)

        init = model.decoder.init_state(enc)
        return strategy(step, init, bos=p["bos_id"], eos=p["eos_id"], pad=p["pad_id"], key=k)

    if key is None:
        return jax.vmap(lambda s, m: one(s, m, None))(src, mask)
    return jax.vmap(one)(src, mask, jax.random.split(key, src.shape[0]))
