"""Frozen submodules: no gradient, no optimiser state, no update."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from zoo.training.freezing import frozen, skip_frozen


class _Pair(eqx.Module):
    pretrained: eqx.nn.Linear
    head: eqx.nn.Linear

    def __call__(self, x):
        return self.head(jnp.tanh(frozen(self.pretrained)(x)))


def test_a_frozen_part_gets_no_gradient_no_state_and_no_update():
    k1, k2 = jax.random.split(jax.random.key(0))
    model = _Pair(eqx.nn.Linear(3, 4, key=k1), eqx.nn.Linear(4, 2, key=k2))
    x = jnp.ones(3)
    grads = eqx.filter_grad(lambda m: jnp.sum(m(x) ** 2))(model)
    assert bool(jnp.all(grads.pretrained.weight == 0)) and bool(jnp.any(grads.head.weight != 0))

    params = eqx.filter(model, eqx.is_inexact_array)
    optimizer = skip_frozen(optax.adam(0.1), lambda m: m.pretrained)
    state = optimizer.init(params)
    held = sum(leaf.size for leaf in jax.tree.leaves(state) if jnp.ndim(leaf) > 0)
    head = model.head.weight.size + model.head.bias.size
    assert held == 2 * head  # Adam's two moments of the head only
    ones = jax.tree.map(jnp.ones_like, params)  # even a non-zero gradient leaves the frozen part alone
    updates, _ = optimizer.update(ones, state, params)
    new = eqx.apply_updates(model, updates)
    np.testing.assert_array_equal(new.pretrained.weight, model.pretrained.weight)
    assert not np.allclose(new.head.weight, model.head.weight)
