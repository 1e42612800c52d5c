"""Frozen submodules: no gradient flows into them and the optimiser keeps no state for them.

A model freezes a part (pretrained word vectors, a pretrained contextual
embedder) by reading it through `frozen`; its recipe wraps the optimiser with
`skip_frozen` so that part gets neither optimiser state nor an update pass. The
gradient of a frozen part is zero anyway, but an optimiser over it would still
hold moments the size of its arrays and update them elementwise every step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import optax

__all__ = ["frozen", "skip_frozen"]


def frozen(module: Any) -> Any:
    """`module` with every array behind `stop_gradient`."""
    arrays, static = eqx.partition(module, eqx.is_array)
    return eqx.combine(jax.lax.stop_gradient(arrays), static)


def skip_frozen(optimizer: optax.GradientTransformation, select: Callable[[Any], Any]) -> optax.GradientTransformation:
    """`optimizer` on every parameter except the subtree ``select(params)``, which gets a zero update and no state.

    `select` picks the frozen part as for `eqx.tree_at` (e.g. ``lambda m: m.embedder``).
    """

    def labels(params: Any) -> Any:
        tree = jax.tree.map(lambda _: "train", params)
        return eqx.tree_at(select, tree, replace_fn=lambda sub: jax.tree.map(lambda _: "frozen", sub))

    return optax.multi_transform({"train": optimizer, "frozen": optax.set_to_zero()}, labels)
