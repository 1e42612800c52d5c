"""Softmax cross-entropy of an output layer that never holds all the logits at once.

A language model's last layer maps every position's features ``x [N, D]`` to
logits ``x W^T + b`` over the vocabulary. With N = 700 positions (batch 20,
unroll 35) and a 10,000-word vocabulary, the logits, their softmax and their
gradient are 28 MB each, and the training step's peak memory is mostly these.
`linear_softmax_nll` reads the positions in chunks instead and forms the
loss's gradients in the same pass (the gradient of a softmax cross-entropy is
known once its softmax is: ``(softmax - onehot) w_i``), so only one chunk's
logits ever exist and the backward pass is three scalings. The matrix products
are the ones the plain loss and its gradient need, no more.

A chunk takes every ``chunks``-th position (chunk c: positions c, c + chunks, ...),
not a contiguous run: when the positions are a data-parallel batch split over
devices, every chunk then holds rows of every device, and each device computes
its own rows of each chunk (with contiguous chunks the compiler gathers the
whole batch onto every device, and each computes the whole softmax).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

__all__ = ["linear_softmax_nll", "chunk_rows"]

CHUNK_BYTES = 8 << 20
"""Logits per chunk, in bytes of float32: small enough that a step's temporary
memory stays within what malloc reuses (one 64 MiB heap per thread), large
enough that each product keeps the matrix library's speed."""


def chunk_rows(positions: int, vocab: int, chunk_bytes: int = CHUNK_BYTES) -> int:
    """Rows per chunk: the positions split as evenly as possible into chunks of
    at most `chunk_bytes` of float32 logits (at least one row each); into a number
    of chunks that divides the positions where one up to twice the fewest does
    (no padding, and a batch split evenly over devices stays split evenly)."""
    needed = max(1, -(-positions * vocab * 4 // chunk_bytes))
    dividing = (c for c in range(needed, min(2 * needed, positions) + 1) if positions % c == 0)
    return max(1, -(-positions // next(dividing, needed)))


def linear_softmax_nll(
    x: Float[Array, "n d"],
    weight: Float[Array, "vocab d"],
    bias: Float[Array, " vocab"],
    targets: Int[Array, " n"],
    weights: Float[Array, " n"],
    *,
    chunk_bytes: int = CHUNK_BYTES,
) -> Float[Array, ""]:
    """``Σ_i w_i (logsumexp(l_i) - l_i[t_i])`` with ``l_i = x_i W^T + b``, a scalar.

    Differentiable in `x`, `weight`, `bias` and `weights` (the gradient of the
    last is each position's NLL); `targets` are indices into the vocabulary. A
    position with weight 0 (padding) adds nothing and gets a zero gradient.
    Computed in float32 whatever the inputs' dtype. Reverse mode only (a
    `jax.custom_vjp`): `jax.jvp` and forward-over-reverse Hessians of it fail.
    """
    rows = chunk_rows(x.shape[0], weight.shape[0], chunk_bytes)
    return _nll(rows, x, weight, bias, targets, weights)


def _chunked(rows: int, *arrays: Array) -> list[Array]:
    """Each array's leading axis padded to a multiple of `rows` and dealt into ``[chunks, rows, ...]``:
    chunk c holds positions c, c + chunks, c + 2 chunks, ..."""
    n = arrays[0].shape[0]
    chunks = -(-n // rows)
    pad = lambda a: jnp.pad(a, [(0, chunks * rows - n)] + [(0, 0)] * (a.ndim - 1))
    return [jnp.swapaxes(pad(a).reshape(rows, chunks, *a.shape[1:]), 0, 1) for a in arrays]


def _unchunked(a: Array, n: int) -> Array:
    """`_chunked`'s inverse: ``[chunks, rows, ...]`` back to the first `n` positions ``[n, ...]``."""
    return jnp.swapaxes(a, 0, 1).reshape(-1, *a.shape[2:])[:n]


def _chunk_logits(x, weight, bias):
    return x.astype(jnp.float32) @ weight.astype(jnp.float32).T + bias.astype(jnp.float32)


def _chunk_nll(logits, targets):
    """``[rows]`` NLL and the log-normaliser of one chunk's logits."""
    lse = jax.nn.logsumexp(logits, axis=-1)
    return lse - jnp.take_along_axis(logits, targets[:, None], axis=-1)[:, 0], lse


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _nll(rows, x, weight, bias, targets, weights):
    def body(total, chunk):
        xc, tc, wc = chunk
        nll, _ = _chunk_nll(_chunk_logits(xc, weight, bias), tc)
        return total + jnp.sum(wc * nll), None

    total, _ = jax.lax.scan(body, jnp.float32(0.0), tuple(_chunked(rows, x, targets, weights.astype(jnp.float32))))
    return total


def _nll_fwd(rows, x, weight, bias, targets, weights):
    n = x.shape[0]
    vocab = weight.shape[0]
    w32 = weight.astype(jnp.float32)

    def body(carry, chunk):
        total, d_weight, d_bias = carry
        xc, tc, wc = chunk
        logits = _chunk_logits(xc, weight, bias)
        nll, lse = _chunk_nll(logits, tc)
        target = jnp.arange(vocab) == tc[:, None]
        d_logits = (jnp.exp(logits - lse[:, None]) - target) * wc[:, None]
        d_x = d_logits @ w32
        d_weight = d_weight + d_logits.T @ xc.astype(jnp.float32)
        return (total + jnp.sum(wc * nll), d_weight, d_bias + jnp.sum(d_logits, axis=0)), (d_x, nll)

    zero = (jnp.float32(0.0), jnp.zeros(w32.shape, jnp.float32), jnp.zeros(vocab, jnp.float32))
    chunks = tuple(_chunked(rows, x, targets, weights.astype(jnp.float32)))
    (total, d_weight, d_bias), (d_x, nll) = jax.lax.scan(body, zero, chunks)
    grads = (
        _unchunked(d_x, n).astype(x.dtype),
        d_weight.astype(weight.dtype),
        d_bias.astype(bias.dtype),
        _unchunked(nll, n).astype(weights.dtype),
    )
    return total, grads


def _nll_bwd(rows, grads, g):
    d_x, d_weight, d_bias, nll = grads
    return tuple(None if a is None else (g * a).astype(a.dtype) for a in (d_x, d_weight, d_bias, None, nll))


_nll.defvjp(_nll_fwd, _nll_bwd)
