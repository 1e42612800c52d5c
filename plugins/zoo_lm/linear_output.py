"""Language models whose logits are an affine map of per-position features.

Their training loss goes through `zoo_lm.softmax_loss.linear_softmax_nll`, which reads the
positions in chunks and never holds a whole batch's ``[positions, vocab]`` logits.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int, PRNGKeyArray, PyTree

from zoo.plugin_api import Embedder, LanguageModel
from zoo_lm.softmax_loss import linear_softmax_nll

__all__ = ["PADDED_LOGIT", "LinearOutputLanguageModel"]

PADDED_LOGIT = -1e30
"""The output bias of a row padded onto the vocabulary (when its tables are split over devices):
a logit no softmax gives any weight (`zoo.training.parallel.split_tables` brings it into the
range of a narrower float)."""


class LinearOutputLanguageModel(LanguageModel):
    """A `LanguageModel` whose logits are an affine map of per-position features.

    A final subclass implements `features` and `output_layer` (and `init_state`);
    `__call__` composes them (under ``jax.named_scope(spec.arch)``), and the training loss goes through
    `zoo.training.softmax_loss.linear_softmax_nll`, which reads the positions in chunks and
    never holds a whole batch's ``[positions, vocab]`` logits.

    Its vocabulary tables (`vocabulary_tables`) are the embedder's table and the output layer:
    ``zoo.train(..., shard_tables=True)`` splits them by rows over a mesh's devices.
    """

    embedder: eqx.AbstractVar[Embedder]

    @abc.abstractmethod
    def features(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"],
        state: PyTree,
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq width"], PyTree]:
        """The output layer's inputs ``[seq, width]`` at every position, and the state
        after the last real one (dropout drawn from `key`, as `__call__` draws it)."""

    @abc.abstractmethod
    def output_layer(self) -> tuple[Float[Array, "vocab width"], Float[Array, " vocab"]]:
        """``(W [vocab_size, width], b [vocab_size])``: the logits are ``features W^T + b``."""

    def vocabulary_tables(self) -> Sequence[tuple[Array, float]]:
        """``((leaf, fill), ...)``: the arrays with one row per token (the embedder's table where
        its `vectors` is one, the output matrix, the output bias), each with the value a padding
        row takes: 0, and for the bias `PADDED_LOGIT`, so padding never takes probability."""
        weight, bias = self.output_layer()
        return ((self.embedder.vectors(), 0.0), (weight, 0.0), (bias, PADDED_LOGIT))

    def __call__(
        self,
        ids: Int[Array, " seq"],
        mask: Bool[Array, " seq"],
        state: PyTree,
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq vocab"], PyTree]:
        with jax.named_scope(self.spec.arch):
            x, state = self.features(ids, mask, state, key=key)
            weight, bias = self.output_layer()
            return x @ weight.T + bias, state

    def carried_loss(
        self, batch: Mapping[str, Array], carry: PyTree, *, key: PRNGKeyArray | None = None
    ) -> tuple[Float[Array, ""], PyTree]:
        """`LanguageModel.carried_loss` through the chunked softmax: the same value and gradients."""
        with jax.named_scope(f"{self.spec.arch}.loss"):
            count = jnp.maximum(jnp.sum(batch["mask"]), 1)
            x, carry = self._over_batch(self.features, batch, carry, key)
            weights = (batch["mask"] / count).astype(jnp.float32).reshape(-1)
            targets = batch["targets"].reshape(-1)
            return linear_softmax_nll(x.reshape(-1, x.shape[-1]), *self.output_layer(), targets, weights), carry
