"""The fused LSTM sequence equals the generic scan: values and gradients, masked, both directions."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from zoo.interfaces import RecurrentCell
from zoo_recurrent.cells import LSTMCell

B, T, E, H = 5, 7, 6, 8


@pytest.fixture(scope="module")
def inputs():
    keys = jax.random.split(jax.random.key(0), 6)
    cell = LSTMCell(E, H, key=keys[0])
    projected = jax.random.normal(keys[1], (B, T, 4 * H))
    mask = jnp.arange(T)[None] < jnp.asarray([7, 3, 5, 1, 0])[:, None]
    state = (jax.random.normal(keys[2], (B, H)), jax.random.normal(keys[3], (B, H)))
    target = jax.random.normal(keys[4], (B, T, H))
    return cell, projected, mask, state, target


def _generic(cell, p, m, s, reverse):
    return RecurrentCell.scan(cell, p, m, s, reverse=reverse)


def _fused(cell, p, m, s, reverse):
    return cell.scan(p, m, s, reverse=reverse)


def _close(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_values_and_gradients_match_under_vmap(inputs, reverse):
    cell, projected, mask, state, target = inputs

    def loss(run):
        def value(weight_h, p, h0, c0):
            c = eqx.tree_at(lambda x: x.weight_h, cell, weight_h)
            outs, (h, cc) = jax.vmap(lambda p_, m_, h_, c_: run(c, p_, m_, (h_, c_), reverse))(p, mask, h0, c0)
            return jnp.sum(outs * target) + jnp.sum(h**2) + jnp.sum(jnp.sin(cc))

        return jax.jit(jax.value_and_grad(value, argnums=(0, 1, 2, 3)))

    _close(loss(_fused)(cell.weight_h, projected, *state), loss(_generic)(cell.weight_h, projected, *state))


@pytest.mark.parametrize("reverse", [False, True])
def test_single_example_nested_vmap_and_a_batch_of_weights(inputs, reverse):
    cell, projected, mask, state, target = inputs
    one = (projected[1], mask[1], (state[0][1], state[1][1]))
    _close(_fused(cell, *one, reverse), _generic(cell, *one, reverse))
    grad = lambda run: jax.grad(lambda p: jnp.sum(run(cell, p, one[1], one[2], reverse)[0] * target[1]))(one[0])
    _close(grad(_fused), grad(_generic))
    nested = lambda run: jax.vmap(jax.vmap(lambda p, m: run(cell, p, m, one[2], reverse)[0]))(
        jnp.stack([projected, projected[::-1]]), jnp.stack([mask, mask[::-1]])
    )
    _close(nested(_fused), nested(_generic))


@pytest.mark.parametrize("reverse", [False, True])
def test_the_fused_projection_matches_projecting_first(inputs, reverse):
    """`LSTMCell.run` (projection inside the fused scan): values and every gradient, batched."""
    cell, _, mask, state, target = inputs
    xs = jax.random.normal(jax.random.key(7), (B, T, E))

    def generic(c, x, m, s):
        return RecurrentCell.scan(c, jax.vmap(c.project)(x), m, s, reverse=reverse)

    def loss(run):
        def value(c, x, h0, c0):
            outs, (h, cc) = jax.vmap(lambda x_, m_, h_, c_: run(c, x_, m_, (h_, c_)))(x, mask, h0, c0)
            return jnp.sum(outs * target) + jnp.sum(h**2) + jnp.sum(jnp.sin(cc))

        return eqx.filter_jit(eqx.filter_value_and_grad(lambda args: value(*args)))

    fused = lambda c, x, m, s: c.run(x, m, s, reverse=reverse)
    args = (cell, xs, *state)
    _close(loss(fused)(args), loss(generic)(args))
    one = lambda run: jax.grad(lambda x: jnp.sum(run(cell, x, mask[2], (state[0][2], state[1][2]))[0] ** 2))(xs[2])
    _close(one(fused), one(generic))  # unbatched


def test_run_cell_uses_the_fused_scan_and_holds_state_on_pads(inputs):
    from zoo.nn import run_cell

    cell, _, mask, _, _ = inputs
    xs = jax.random.normal(jax.random.key(9), (T, E))
    short, final = run_cell(cell, xs[:3], jnp.ones(3, bool))
    padded, final_padded = run_cell(cell, jnp.concatenate([xs[:3], 100.0 * xs[3:]]), mask[1])
    _close((padded[:3], final_padded), (short, final))
    assert bool(jnp.all(padded[3:] == 0))
