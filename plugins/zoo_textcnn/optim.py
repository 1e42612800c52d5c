"""TextCNN's training rules: Adam (the default) or Kim's Adadelta, then rescale each class's
weight vector to l2 norm <= s."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import optax

from zoo.plugin_api import skip_frozen
from zoo_textcnn.settings import LEARNING_RATES, OPTIMIZERS

__all__ = ["LEARNING_RATES", "OPTIMIZERS", "kim_optimizer", "max_norm", "textcnn_optimizer"]


def max_norm(limit: float, select: Callable[[Any], Any]) -> optax.GradientTransformation:
    """Project the selected weight matrices after each step so every row has l2 norm <= `limit`.

    Chain it after the optimiser: the update becomes ``project(p + u) - p``, so
    the new parameters are the projection of what the optimiser proposed.

    **Arguments:**

    - `limit`: the largest l2 norm a row may have (Kim's s = 3); 0 or less disables it.
    - `select`: ``select(params) -> array`` picks the matrix (``[classes, features]``)
      whose rows are bounded, as for `eqx.tree_at`.
    """
    if limit <= 0:
        return optax.identity()

    def init(params):
        del params
        return optax.EmptyState()

    def update(updates, state, params=None):
        if params is None:
            raise ValueError("max_norm needs the parameters: call update(updates, state, params)")
        current = select(params)
        proposed = current + select(updates)
        norms = jnp.linalg.norm(proposed, axis=-1, keepdims=True)
        projected = proposed * jnp.minimum(1.0, limit / jnp.maximum(norms, 1e-12))
        return eqx.tree_at(select, updates, projected - current), state

    return optax.GradientTransformation(init, update)


def kim_optimizer(
    *,
    max_norm_limit: float = 3.0,
    rho: float = 0.95,
    eps: float = 1e-6,
    learning_rate: float = 1.0,
    train_embeddings: bool = True,
):
    """Adadelta (ρ 0.95, ε 1e-6) plus the max-norm bound on the output layer of a `TextCNN`.

    With ``train_embeddings=False`` (CNN-static: the model stops their gradient) the
    word vectors get no Adadelta state and a zero update whatever their gradient;
    skipping the table's elementwise update makes a step much cheaper.
    """
    adadelta = optax.adadelta(learning_rate=learning_rate, rho=rho, eps=eps)
    if not train_embeddings:
        adadelta = skip_frozen(adadelta, lambda tree: tree.embedder)
    return optax.chain(adadelta, max_norm(max_norm_limit, lambda tree: tree.output.weight))


def textcnn_optimizer(
    name: str = "adam",
    *,
    learning_rate: float | None = None,
    max_norm_limit: float = 3.0,
    train_embeddings: bool = True,
):
    """Adam (`learning_rate` default 1e-3) or Kim's Adadelta (`kim_optimizer`, default 1.0), with the max-norm bound.

    Adam is the default: on 2,000 movie-review sentences Kim's Adadelta, started from his
    near-zero filters and zero classifier, learns slowly and patience stops it early (65.6%
    test accuracy against Adam's 70.5%, five seeds each; on TREC 89.4% against 90.7%).
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {list(OPTIMIZERS)}, got {name!r}")
    learning_rate = LEARNING_RATES[name] if learning_rate is None else learning_rate
    if name == "adadelta":
        return kim_optimizer(
            max_norm_limit=max_norm_limit, learning_rate=learning_rate, train_embeddings=train_embeddings
        )
    adam = optax.adam(learning_rate)
    if not train_embeddings:
        adam = skip_frozen(adam, lambda tree: tree.embedder)
    return optax.chain(adam, max_norm(max_norm_limit, lambda tree: tree.output.weight))
