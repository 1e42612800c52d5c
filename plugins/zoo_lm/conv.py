"""Causal dilated 1-D convolution and the residual block of a temporal convolutional network.

A causal convolution's output at t reads inputs ``t - (k-1)d, ..., t - d, t``
only. Its state is the last ``(k-1)d`` inputs it saw, so a long sequence read
chunk by chunk, the state carried along, gives exactly what one pass gives.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from zoo.plugin_api import dropout as apply_dropout

__all__ = ["CausalConv1d", "TemporalBlock"]


class CausalConv1d(eqx.Module):
    """``y_t = b + Σ_j W_j x_{t - (k-1-j) d}`` with optional weight normalisation.

    Computed as one matrix product of the k shifted copies of the input, ``[T, k*in] @ [k*in, out]``.

    **Arguments:** `in_size`, `out_size`; `kernel_size` k; `dilation` d;
    `weight_norm` (``W = g v / ||v||`` per output channel, Salimans & Kingma 2016);
    `init_std` (v ~ N(0, std²)); `key`.
    """

    weight: Float[Array, "kernel fan_in fan_out"]
    gain: Float[Array, " fan_out"] | None
    bias: Float[Array, " fan_out"]
    kernel_size: int = eqx.field(static=True)
    dilation: int = eqx.field(static=True)

    def __init__(
        self,
        in_size: int,
        out_size: int,
        *,
        kernel_size: int,
        dilation: int,
        weight_norm: bool = True,
        init_std: float = 0.01,
        key: PRNGKeyArray,
    ) -> None:
        k_w, k_b = jax.random.split(key)
        self.weight = init_std * jax.random.normal(k_w, (kernel_size, in_size, out_size))
        self.gain = jnp.sqrt(jnp.sum(self.weight**2, axis=(0, 1))) if weight_norm else None
        bound = 1.0 / (kernel_size * in_size) ** 0.5
        self.bias = jax.random.uniform(k_b, (out_size,), minval=-bound, maxval=bound)
        self.kernel_size, self.dilation = kernel_size, dilation

    @property
    def history(self) -> int:
        """How many past inputs an output reads besides the current one: ``(k-1) d``."""
        return (self.kernel_size - 1) * self.dilation

    def init_state(self) -> Float[Array, "history fan_in"]:
        return jnp.zeros((self.history, self.weight.shape[1]))

    def kernel(self) -> Float[Array, "kernel fan_in fan_out"]:
        if self.gain is None:
            return self.weight
        norm = jnp.sqrt(jnp.sum(self.weight**2, axis=(0, 1)))
        return self.weight * (self.gain / jnp.maximum(norm, 1e-12))

    @jax.named_scope("CausalConv1d")
    def __call__(
        self, x: Float[Array, "seq fan_in"], mask: Bool[Array, " seq"], state: Float[Array, "history fan_in"]
    ) -> tuple[Float[Array, "seq fan_out"], Float[Array, "history fan_in"]]:
        """Outputs ``[seq, out]`` and the last `history` real inputs (the mask must be a prefix)."""
        length = x.shape[0]
        full = jnp.concatenate([state, x])
        shifted = [full[j * self.dilation : j * self.dilation + length] for j in range(self.kernel_size)]
        taps = jnp.concatenate(shifted, axis=-1)
        kernel = self.kernel()
        y = taps @ kernel.reshape(-1, kernel.shape[-1]) + self.bias
        start = jnp.sum(mask.astype(jnp.int32))
        return y, jax.lax.dynamic_slice_in_dim(full, start, self.history)


class TemporalBlock(eqx.Module):
    """Two causal convolutions with ReLU and dropout, plus a residual path (Bai et al. 2018)::

        h = D(ReLU(conv1(x)));  h = D(ReLU(conv2(h)));  y = ReLU(h + x)   (x through a 1x1 map if sizes differ)

    The state is the pair of the two convolutions' states.
    """

    first: CausalConv1d
    second: CausalConv1d
    shortcut: Float[Array, "fan_in fan_out"] | None
    dropout: float = eqx.field(static=True)

    def __init__(
        self,
        in_size: int,
        out_size: int,
        *,
        kernel_size: int,
        dilation: int,
        dropout: float,
        weight_norm: bool,
        init_std: float,
        key: PRNGKeyArray,
    ) -> None:
        k1, k2, k3 = jax.random.split(key, 3)
        conv = dict(kernel_size=kernel_size, dilation=dilation, weight_norm=weight_norm, init_std=init_std)
        self.first = CausalConv1d(in_size, out_size, **conv, key=k1)
        self.second = CausalConv1d(out_size, out_size, **conv, key=k2)
        self.shortcut = None if in_size == out_size else init_std * jax.random.normal(k3, (in_size, out_size))
        self.dropout = dropout

    def init_state(self) -> tuple[Array, Array]:
        return self.first.init_state(), self.second.init_state()

    @jax.named_scope("TemporalBlock")
    def __call__(
        self,
        x: Float[Array, "seq fan_in"],
        mask: Bool[Array, " seq"],
        state: tuple[Array, Array],
        *,
        key: PRNGKeyArray | None = None,
    ) -> tuple[Float[Array, "seq fan_out"], tuple[Array, Array]]:
        k1, k2 = (None, None) if key is None else jax.random.split(key)
        h, s1 = self.first(x, mask, state[0])
        h = apply_dropout(jax.nn.relu(h), self.dropout, k1)
        h, s2 = self.second(h, mask, state[1])
        h = apply_dropout(jax.nn.relu(h), self.dropout, k2)
        residual = x if self.shortcut is None else x @ self.shortcut
        return jax.nn.relu(h + residual), (s1, s2)
