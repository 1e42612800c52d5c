"""A whole-sequence LSTM with a hand-written backward pass, batched natively under `vmap`.

Autodiff of a scanned LSTM cell accumulates the recurrent weight gradient
``dW_h += h_{t-1}ᵀ dz_t`` inside the backward loop, one small matrix product
per step. Here the backward loop only carries ``dh, dc`` and emits the gate
gradients ``dz_t``; ``dW_h = Σ_t h_{t-1}ᵀ dz_t`` is then one large matrix
product over all steps and the whole batch.

The function is written per example (zoo's convention) but registered with
`jax.custom_batching.custom_vmap`: under `vmap` it runs one natively batched
scan with a batched `custom_vjp`, so the weight gradient contracts over batch
and time at once instead of materialising a per-example gradient.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import custom_batching
from jaxtyping import Array, Bool, Float

__all__ = ["lstm_layer", "lstm_sequence"]


def _gates(z: Array, forget_bias: float) -> tuple[Array, Array, Array, Array]:
    i, f, g, o = jnp.split(z, 4, axis=-1)
    return jax.nn.sigmoid(i), jax.nn.sigmoid(f + forget_bias), jnp.tanh(g), jax.nn.sigmoid(o)


def _forward(weight_h, projected, mask, h0, c0, forget_bias):
    """Time-major batched forward: `projected` [T, B, 4H], `mask` [T, B]; returns outputs and residuals."""

    def body(carry, inputs):
        h, c = carry
        p, m = inputs
        i, f, g, o = _gates(p + h @ weight_h, forget_bias)
        c_new = f * c + i * g
        tc = jnp.tanh(c_new)
        keep = m[:, None]
        h_next, c_next = jnp.where(keep, o * tc, h), jnp.where(keep, c_new, c)
        return (h_next, c_next), (h_next, h, c, i, f, g, o, tc)

    (h, c), (hs, *saved) = jax.lax.scan(body, (h0, c0), (projected, mask))
    return (hs, h, c), saved


def _backward(weight_h, mask, saved, d_hs, d_h_last, d_c_last):
    """Time-major batched backward: gate gradients per step, then ``dW_h`` as one product."""
    h_prev, c_prev, i, f, g, o, tc = saved

    def body(carry, inputs):
        dh, dc = carry
        d_out, m, cp, i, f, g, o, tc = inputs
        dh = dh + d_out
        dc_new = dc + dh * o * (1.0 - tc * tc)
        dz = jnp.concatenate(
            [
                dc_new * g * i * (1.0 - i),
                dc_new * cp * f * (1.0 - f),
                dc_new * i * (1.0 - g * g),
                dh * tc * o * (1.0 - o),
            ],
            axis=-1,
        )
        keep = m[:, None]
        dz = jnp.where(keep, dz, 0.0)
        return (jnp.where(keep, dz @ weight_h.T, dh), jnp.where(keep, dc_new * f, dc)), dz

    inputs = (d_hs, mask, c_prev, i, f, g, o, tc)
    (dh0, dc0), dz = jax.lax.scan(body, (d_h_last, d_c_last), inputs, reverse=True)
    return jnp.einsum("tbh,tbg->hg", h_prev, dz), dz, dh0, dc0


def _time_major(x, reverse):
    """``[B, T, ...]`` -> ``[T, B, ...]`` in processing order."""
    x = jnp.swapaxes(x, 0, 1)
    return x[::-1] if reverse else x


def _batch_major(x, reverse):
    """The inverse of `_time_major`."""
    return jnp.swapaxes(x[::-1] if reverse else x, 0, 1)


def _broadcast(args, in_batched, axis_size):
    return [a if b else jnp.broadcast_to(a, (axis_size, *a.shape)) for a, b in zip(args, in_batched, strict=True)]


@functools.cache
def _per_example(forget_bias: float, reverse: bool, projects: bool):
    """The per-example sequence function for one (forget_bias, direction, projection), with its rules.

    Its arguments are ``(weights, inputs, mask, h0, c0)``: `weights` is ``(weight_h,)``
    and `inputs` the projected inputs ``[seq, 4H]``, or, when `projects`, ``(weight_h,
    weight_x, bias)`` and the raw inputs ``[seq, input]``, projected inside so that the
    ``4H``-wide tensors are made and read time-major (only the narrower inputs and
    their gradient change layout).
    """

    def forward_batched(weights, inputs, mask, h0, c0):
        x = _time_major(inputs, reverse)
        projected = x @ weights[1] + weights[2] if projects else x
        (hs, h, c), saved = _forward(weights[0], projected, _time_major(mask, reverse), h0, c0, forget_bias)
        return (_batch_major(hs, reverse), h, c), [*saved, x] if projects else saved

    def backward_batched(weights, mask, saved, d_hs, d_h, d_c):
        lstm_saved, x = (saved[:-1], saved[-1]) if projects else (saved, None)
        dw_h, dz, dh0, dc0 = _backward(
            weights[0], _time_major(mask, reverse), lstm_saved, _time_major(d_hs, reverse), d_h, d_c
        )
        if not projects:
            return (dw_h,), _batch_major(dz, reverse), dh0, dc0
        d_weights = (dw_h, jnp.einsum("tbi,tbg->ig", x, dz), jnp.sum(dz, axis=(0, 1)))
        return d_weights, _batch_major(dz @ weights[1].T, reverse), dh0, dc0

    def forward_one(weights, inputs, mask, h0, c0):
        out, saved = forward_batched(weights, inputs[None], mask[None], h0[None], c0[None])
        return jax.tree.map(lambda x: x[0], out), jax.tree.map(lambda x: x[:, 0], saved)

    def backward_one(weights, mask, saved, d_hs, d_h, d_c):
        saved = jax.tree.map(lambda x: x[:, None], saved)
        d_weights, d_inputs, dh0, dc0 = backward_batched(weights, mask[None], saved, d_hs[None], d_h[None], d_c[None])
        return d_weights, d_inputs[0], dh0[0], dc0[0]

    forward, backward = custom_batching.custom_vmap(forward_one), custom_batching.custom_vmap(backward_one)
    axis = lambda batched: 0 if batched else None

    @forward.def_vmap
    def _(axis_size, in_batched, weights, *data):
        if any(in_batched[0]):  # a batch of weights (an ensemble): nothing shared to gain
            in_axes = [jax.tree.map(axis, in_batched[0]), *(axis(b) for b in in_batched[1:])]
            out = jax.vmap(forward_one, in_axes=in_axes)(weights, *data)
            return out, jax.tree.map(lambda _: True, out)
        out, saved = forward_batched(weights, *_broadcast(data, in_batched[1:], axis_size))
        saved = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), saved)  # the batch axis first for vmap
        return (out, saved), jax.tree.map(lambda _: True, (out, saved))

    @backward.def_vmap
    def _(axis_size, in_batched, weights, mask, saved, d_hs, d_h, d_c):
        if any(in_batched[0]):
            in_axes = [jax.tree.map(axis, in_batched[0]), axis(in_batched[1]), jax.tree.map(axis, in_batched[2])]
            in_axes += [axis(b) for b in in_batched[3:]]
            out = jax.vmap(backward_one, in_axes=in_axes)(weights, mask, saved, d_hs, d_h, d_c)
            return out, jax.tree.map(lambda _: True, out)
        mask, d_hs, d_h, d_c = _broadcast([mask, d_hs, d_h, d_c], [in_batched[1], *in_batched[3:]], axis_size)
        saved = jax.tree.map(
            lambda x, b: jnp.swapaxes(x if b else jnp.broadcast_to(x, (axis_size, *x.shape)), 0, 1),
            saved,
            in_batched[2],
        )
        d_weights, d_inputs, dh0, dc0 = backward_batched(weights, mask, saved, d_hs, d_h, d_c)
        # The weight gradients are already summed over the batch: the weights are shared by every example.
        return (d_weights, d_inputs, dh0, dc0), (jax.tree.map(lambda _: False, d_weights), True, True, True)

    @jax.custom_vjp
    def run(weights, inputs, mask, h0, c0):
        return forward(weights, inputs, mask, h0, c0)[0]

    def run_fwd(weights, inputs, mask, h0, c0):
        out, saved = forward(weights, inputs, mask, h0, c0)
        return out, (weights, mask, saved)

    def run_bwd(residuals, cotangents):
        weights, mask, saved = residuals
        d_weights, d_inputs, dh0, dc0 = backward(weights, mask, saved, *cotangents)
        return d_weights, d_inputs, None, dh0, dc0

    run.defvjp(run_fwd, run_bwd)
    return run


def lstm_sequence(
    weight_h: Float[Array, "hidden gates"],
    projected: Float[Array, "seq gates"],
    mask: Bool[Array, " seq"],
    state: tuple[Float[Array, " hidden"], Float[Array, " hidden"]],
    *,
    forget_bias: float,
    reverse: bool = False,
) -> tuple[Float[Array, "seq hidden"], tuple[Array, Array]]:
    """Run LSTM steps over projected inputs ``[seq, 4*hidden]`` (gates i, f, g, o).

    Positions where `mask` is False hold the state. **Returns:** ``(h_t for
    every position [seq, hidden], final (h, c))``; equal to scanning
    `LSTMCell.recur`, with a faster gradient.
    """
    run = _per_example(float(forget_bias), bool(reverse), False)
    hs, h, c = run((weight_h,), projected, mask, state[0], state[1])
    return hs, (h, c)


def lstm_layer(
    weight_x: Float[Array, "input gates"],
    bias: Float[Array, " gates"],
    weight_h: Float[Array, "hidden gates"],
    inputs: Float[Array, "seq input"],
    mask: Bool[Array, " seq"],
    state: tuple[Float[Array, " hidden"], Float[Array, " hidden"]],
    *,
    forget_bias: float,
    reverse: bool = False,
) -> tuple[Float[Array, "seq hidden"], tuple[Array, Array]]:
    """`lstm_sequence` of ``inputs @ weight_x + bias`` ``[seq, input]``, the projection fused in.

    The same values as projecting first; under `vmap` the ``[seq, batch, 4*hidden]``
    projection and its gradient stay in the scan's time-major layout.
    """
    run = _per_example(float(forget_bias), bool(reverse), True)
    hs, h, c = run((weight_h, weight_x, bias), inputs, mask, state[0], state[1])
    return hs, (h, c)
