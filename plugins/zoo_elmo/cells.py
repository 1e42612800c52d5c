"""The LSTM with a projection layer (LSTMP), as in ELMo's biLM."""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray

from zoo.plugin_api import RecurrentCell

__all__ = ["LSTMPCell"]


class LSTMPCell(RecurrentCell):
    """An LSTM whose visible state is a projection of its output (Sak et al. 2014)::

        i, f, g, o = W_x x_t + W_h h_{t-1} + b                       (each [cell_size])
        c_t = clip(σ(f + forget_bias) ⊙ c_{t-1} + σ(i) ⊙ tanh(g), ±cell_clip)
        h_t = clip(W_p (σ(o) ⊙ tanh(c_t)), ±proj_clip)              ([hidden_size])

    A big memory (`cell_size`) with a small recurrent and output state
    (`hidden_size`) keeps the recurrent matrices and the next layer small.

    **Arguments:** `input_size`, `hidden_size` (the projection, wired); `cell_size`;
    `cell_clip`, `proj_clip` (0: no clipping); `forget_bias`; `key`. The state is ``(h, c)``.

    ??? cite
        Sak, Senior & Beaufays 2014, Long Short-Term Memory Recurrent Neural Network
        Architectures for Large Scale Acoustic Modeling; Peters et al. 2018 (ELMo's biLM).
    """

    weight_x: Float[Array, "input gates"]
    weight_h: Float[Array, "hidden gates"]
    bias: Float[Array, " gates"]
    weight_p: Float[Array, "cell hidden"]
    input_size: int = eqx.field(static=True)
    hidden_size: int = eqx.field(static=True)
    cell_size: int = eqx.field(static=True)
    cell_clip: float = eqx.field(static=True)
    proj_clip: float = eqx.field(static=True)
    forget_bias: float = eqx.field(static=True)

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        cell_size: int = 512,
        cell_clip: float = 3.0,
        proj_clip: float = 3.0,
        forget_bias: float = 1.0,
        key: PRNGKeyArray,
    ) -> None:
        kx, kh, kb, kp = jax.random.split(key, 4)
        width = 4 * cell_size

        def uniform(k, shape, fan_in):
            bound = 1.0 / math.sqrt(fan_in)
            return jax.random.uniform(k, shape, minval=-bound, maxval=bound)

        self.weight_x = uniform(kx, (input_size, width), cell_size)
        self.weight_h = uniform(kh, (hidden_size, width), cell_size)
        self.bias = uniform(kb, (width,), cell_size)
        self.weight_p = uniform(kp, (cell_size, hidden_size), cell_size)
        self.input_size, self.hidden_size, self.cell_size = input_size, hidden_size, cell_size
        self.cell_clip, self.proj_clip, self.forget_bias = cell_clip, proj_clip, forget_bias

    def init_state(self) -> tuple[Array, Array]:
        return jnp.zeros(self.hidden_size), jnp.zeros(self.cell_size)

    @jax.named_scope("lstmp")
    def project(self, x: Float[Array, " input"]) -> Float[Array, " gates"]:
        return x @ self.weight_x + self.bias

    @jax.named_scope("lstmp")
    def recur(self, projected: Float[Array, " gates"], state: tuple[Array, Array]) -> tuple[Array, Array]:
        h, c = state
        i, f, g, o = jnp.split(projected + h @ self.weight_h, 4)
        c = jax.nn.sigmoid(f + self.forget_bias) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        if self.cell_clip > 0:
            c = jnp.clip(c, -self.cell_clip, self.cell_clip)
        h = (jax.nn.sigmoid(o) * jnp.tanh(c)) @ self.weight_p
        if self.proj_clip > 0:
            h = jnp.clip(h, -self.proj_clip, self.proj_clip)
        return h, c

    def output(self, state: tuple[Array, Array]) -> Float[Array, " hidden"]:
        return state[0]
