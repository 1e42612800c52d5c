"""The temporal convolutional language model: embeddings, dilated causal blocks, softmax."""

from __future__ import annotations

import equinox as eqx
import jax
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray

from zoo.plugin_api import Embedder, ModelSpec, RegistryError, Vocabularies
from zoo_lm.conv import TemporalBlock
from zoo_lm.linear_output import LinearOutputLanguageModel

__all__ = ["ConvolutionalLanguageModel"]


class ConvolutionalLanguageModel(LinearOutputLanguageModel):
    """A stack of residual blocks of dilated causal convolutions predicting the next token.

    Block i dilates by ``2^i`` (1, 2, 4, 8, ...), so `num_levels` blocks of
    kernel k see ``1 + 2 (k-1) (2^num_levels - 1)`` tokens: the receptive field
    grows exponentially with depth while the parameters grow linearly. The
    output layer is ``softmax(W h_t + b)``, with ``W`` the embedding table when
    `tie_embeddings` (then `embedding_size` must equal `hidden_size`).

    Slots: ``embedder`` (its own ``dropout`` is the embedding dropout).
    Hyperparameters: ``vocab_size``, ``hidden_size`` (channels), ``num_levels``,
    ``kernel_size``, ``dropout`` (after every convolution), ``weight_norm``,
    ``init_std``, ``tie_embeddings``, ``level``. The state is every
    convolution's last ``(k-1) d`` inputs: reading a stream in chunks with it
    carried equals reading it whole.

    ??? cite

        Bai, Kolter & Koltun 2018, An Empirical Evaluation of Generic Convolutional
        and Recurrent Networks for Sequence Modeling; van den Oord et al. 2016, WaveNet.
    """

    embedder: Embedder
    blocks: tuple[TemporalBlock, ...]
    output_weight: Float[Array, "vocab hidden"] | None
    output_bias: Float[Array, " vocab"]
    vocab_size: int = eqx.field(static=True)
    level: str = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if p["num_levels"] < 1 or p["kernel_size"] < 1:
            raise RegistryError(
                f"num_levels and kernel_size must be positive, got {p['num_levels']} and {p['kernel_size']}"
            )
        if p["level"] not in ("word", "char"):
            raise RegistryError(f"level must be 'word' or 'char', got {p['level']!r}")
        k_emb, k_blocks, k_out = jax.random.split(key, 3)
        self.embedder = spec.slot("embedder").build(num_embeddings=p["vocab_size"], key=k_emb)
        hidden = p["hidden_size"]
        if p["tie_embeddings"] and self.embedder.embedding_size != hidden:
            raise RegistryError(
                f"tie_embeddings needs embedding_size == hidden_size, got {self.embedder.embedding_size} "
                f"and {hidden}; set both or tie_embeddings=false"
            )
        sizes = [self.embedder.embedding_size] + [hidden] * p["num_levels"]
        keys = jax.random.split(k_blocks, p["num_levels"])
        self.blocks = tuple(
            TemporalBlock(
                sizes[i],
                sizes[i + 1],
                kernel_size=p["kernel_size"],
                dilation=2**i,
                dropout=p["dropout"],
                weight_norm=p["weight_norm"],
                init_std=p["init_std"],
                key=keys[i],
            )
            for i in range(p["num_levels"])
        )
        untied = p["init_std"] * jax.random.normal(k_out, (p["vocab_size"], hidden))  # vocabulary-major
        self.output_weight = None if p["tie_embeddings"] else untied
        self.output_bias = jax.numpy.zeros(p["vocab_size"])
        self.vocab_size, self.level = p["vocab_size"], p["level"]
        self.spec, self.vocabs = spec, vocabs

    @property
    def receptive_field(self) -> int:
        """Tokens an output depends on, the current one included."""
        return 1 + sum(b.first.history + b.second.history for b in self.blocks)

    def init_state(self) -> tuple[tuple[Array, Array], ...]:
        return tuple(block.init_state() for block in self.blocks)

    def features(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"],
        state: tuple[tuple[Array, Array], ...],
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq hidden"], tuple[tuple[Array, Array], ...]]:
        """The last block's outputs."""
        keys = [None] * (len(self.blocks) + 1) if key is None else list(jax.random.split(key, len(self.blocks) + 1))
        x = self.embedder(ids, mask, key=keys[-1])
        finals = []
        for block, block_state, k in zip(self.blocks, state, keys, strict=False):
            x, final = block(x, mask, block_state, key=k)
            finals.append(final)
        return x, tuple(finals)

    def output_layer(self) -> tuple[Float[Array, "vocab hidden"], Float[Array, " vocab"]]:
        weight = self.embedder.vectors() if self.output_weight is None else self.output_weight
        return weight, self.output_bias
