"""The recurrent language model: embedder, stacked recurrent cells, softmax."""

from __future__ import annotations

import equinox as eqx
import jax
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray, PyTree

from zoo.plugin_api import Embedder, ModelSpec, RecurrentCell, RegistryError, Vocabularies, run_cell
from zoo.plugin_api import dropout as apply_dropout
from zoo_lm.linear_output import LinearOutputLanguageModel

__all__ = ["RecurrentLanguageModel"]


def _uniform(key: PRNGKeyArray, shape: tuple[int, ...], scale: float) -> Array:
    return jax.random.uniform(key, shape, minval=-scale, maxval=scale)


class RecurrentLanguageModel(LinearOutputLanguageModel):
    """A stack of recurrent layers over token embeddings, predicting the next token.

    ``h^0_t = E[w_t]``; ``h^l_t = cell_l(D(h^{l-1}_t), h^l_{t-1})`` (plus
    ``h^{l-1}_t`` with `residual`, where sizes agree);
    ``p(w_{t+1} | w_{≤t}) = softmax(W D(h^L_t) + b)``. D is dropout on the
    non-recurrent connections only (Zaremba et al. 2014): the recurrent state
    itself is never dropped. The embeddings' dropout is the embedder's own (an
    unscoped ``dropout=0.5`` sets both, as the paper does). With `tie_embeddings` the output matrix is the input
    embedding table, ``W = E P`` (Press & Wolf 2017), where a learned projection
    ``P [hidden, embedding]`` appears only when the sizes differ.

    Slots: ``embedder``, ``cell``. Hyperparameters: ``vocab_size``, ``hidden_size``,
    ``num_layers``, ``residual``, ``dropout``, ``tie_embeddings``, ``init_scale``
    (U(-s, s) for the output layer; None: 1/sqrt(hidden_size)), ``level`` (``"word"`` or ``"char"``).
    The state is a tuple with one cell state per layer.

    ??? cite

        Zaremba, Sutskever & Vinyals 2014, Recurrent Neural Network Regularization;
        Press & Wolf 2017, Using the Output Embedding to Improve Language Models.
    """

    embedder: Embedder
    layers: tuple[RecurrentCell, ...]
    projection: Float[Array, "hidden embedding"] | None
    output_weight: Float[Array, "vocab hidden"] | None
    output_bias: Float[Array, " vocab"]
    vocab_size: int = eqx.field(static=True)
    level: str = eqx.field(static=True)
    residual: bool = eqx.field(static=True)
    dropout: float = eqx.field(static=True)
    spec: ModelSpec = eqx.field(static=True)
    vocabs: Vocabularies = eqx.field(static=True)

    def __init__(self, spec: ModelSpec, *, key: PRNGKeyArray, vocabs: Vocabularies) -> None:
        p = spec.params
        if not 1 <= p["num_layers"] <= 8:
            raise RegistryError(f"num_layers must be between 1 and 8, got {p['num_layers']}")
        if p["level"] not in ("word", "char"):
            raise RegistryError(f"level must be 'word' or 'char', got {p['level']!r}")
        k_emb, k_cells, k_proj, k_out, k_bias = jax.random.split(key, 5)
        vocab_size, hidden, scale = p["vocab_size"], p["hidden_size"], p["init_scale"]
        scale = 1.0 / hidden**0.5 if scale is None else scale
        self.embedder = spec.slot("embedder").build(num_embeddings=vocab_size, key=k_emb)
        cell = spec.slot("cell").partial()
        sizes = [self.embedder.embedding_size] + [hidden] * (p["num_layers"] - 1)
        cell_keys = jax.random.split(k_cells, p["num_layers"])
        self.layers = tuple(
            cell(input_size=size, hidden_size=hidden, key=k) for size, k in zip(sizes, cell_keys, strict=True)
        )
        embedding = self.embedder.embedding_size
        tied = p["tie_embeddings"]
        self.projection = _uniform(k_proj, (hidden, embedding), scale) if tied and hidden != embedding else None
        self.output_weight = None if tied else _uniform(k_out, (vocab_size, hidden), scale)
        self.output_bias = _uniform(k_bias, (vocab_size,), scale)
        self.vocab_size, self.level = vocab_size, p["level"]
        self.residual, self.dropout = p["residual"], p["dropout"]
        self.spec, self.vocabs = spec, vocabs

    def init_state(self) -> tuple[PyTree, ...]:
        return tuple(cell.init_state() for cell in self.layers)

    def features(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"],
        state: tuple[PyTree, ...],
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq width"], tuple[PyTree, ...]]:
        """The top layer's outputs after dropout (through the tied projection, if any)."""
        keys = [None] * (len(self.layers) + 2) if key is None else list(jax.random.split(key, len(self.layers) + 2))
        x = self.embedder(ids, mask, key=keys[-1])
        finals = []
        for layer, (cell, layer_state) in enumerate(zip(self.layers, state, strict=True)):
            inputs = x if layer == 0 else apply_dropout(x, self.dropout, keys[layer])
            out, final = run_cell(cell, inputs, mask, layer_state)
            x = out + x if self.residual and out.shape == x.shape else out
            finals.append(final)
        x = apply_dropout(x, self.dropout, keys[-2])
        return (x if self.projection is None else x @ self.projection), tuple(finals)

    def output_layer(self) -> tuple[Float[Array, "vocab width"], Float[Array, " vocab"]]:
        """``(W, b)``: the output matrix is stored vocabulary-major, ``[vocab, width]``
        like an embedding table (tied or not): its gradient then needs no transposed
        copy of the ``[positions, vocab]`` logit gradient (measured faster on XLA:CPU)."""
        weight = self.embedder.vectors() if self.output_weight is None else self.output_weight
        return weight, self.output_bias
