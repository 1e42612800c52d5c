"""Elman RNN, LSTM and GRU cells.

Each cell splits its step into `project` (input weights, hoisted out of the
time loop as one matrix product) and `recur` (recurrent weights, inside it).
Weights are stored input-major (``x @ W``) so no transpose sits in the loop.
Each cell takes ``dtype`` (float32 unless given, as `eqx.nn.Linear` takes one): the
dtype of its parameters and state; no hyperparameter, so no file records it.
"""

from __future__ import annotations

import math

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.typing import DTypeLike
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from zoo.plugin_api import RecurrentCell
from zoo_recurrent.fused import lstm_layer, lstm_sequence

__all__ = ["ElmanCell", "GRUCell", "LSTMCell"]


def _uniform(key: PRNGKeyArray, shape: tuple[int, ...], scale: float, dtype: DTypeLike) -> Array:
    return jax.random.uniform(key, shape, dtype, minval=-scale, maxval=scale)


def _init_weights(
    input_size: int, hidden_size: int, gates: int, init_scale: float | None, key: PRNGKeyArray, dtype: DTypeLike
) -> tuple[Array, Array, Array]:
    """``W_x [in, gates*h]``, ``W_h [h, gates*h]``, ``b [gates*h]``: U(-s, s), s = 1/sqrt(h) by default."""
    scale = 1.0 / math.sqrt(hidden_size) if init_scale is None else init_scale
    kx, kh, kb = jax.random.split(key, 3)
    width = gates * hidden_size
    return (
        _uniform(kx, (input_size, width), scale, dtype),
        _uniform(kh, (hidden_size, width), scale, dtype),
        _uniform(kb, (width,), scale, dtype),
    )


class ElmanCell(RecurrentCell):
    """``h_t = act(W_x x_t + W_h h_{t-1} + b)`` (Elman 1990).

    **Arguments:** `input_size`, `hidden_size` (wired); `nonlinearity`
    (``"tanh"`` or ``"relu"``); `init_scale` (None: 1/sqrt(hidden)); `key`.
    """

    weight_x: Float[Array, "input hidden"]
    weight_h: Float[Array, "hidden hidden"]
    bias: Float[Array, " hidden"]
    input_size: int = eqx.field(static=True)
    hidden_size: int = eqx.field(static=True)
    nonlinearity: str = eqx.field(static=True)

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        nonlinearity: str = "tanh",
        init_scale: float | None = None,
        key: PRNGKeyArray,
        dtype: DTypeLike = jnp.float32,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        self.weight_x, self.weight_h, self.bias = _init_weights(input_size, hidden_size, 1, init_scale, key, dtype)
        self.input_size, self.hidden_size, self.nonlinearity = input_size, hidden_size, nonlinearity

    def init_state(self) -> Float[Array, " hidden"]:
        return jnp.zeros(self.hidden_size, self.weight_h.dtype)

    @jax.named_scope("rnn")
    def project(self, x: Float[Array, " input"]) -> Float[Array, " hidden"]:
        return x @ self.weight_x + self.bias

    @jax.named_scope("rnn")
    def recur(self, projected: Float[Array, " hidden"], state: Float[Array, " hidden"]) -> Float[Array, " hidden"]:
        pre = projected + state @ self.weight_h
        return jnp.tanh(pre) if self.nonlinearity == "tanh" else jax.nn.relu(pre)

    def output(self, state: Float[Array, " hidden"]) -> Float[Array, " hidden"]:
        return state


class LSTMCell(RecurrentCell):
    """Long short-term memory (Hochreiter & Schmidhuber 1997), gates i, f, g, o::

        i, f, g, o = W_x x_t + W_h h_{t-1} + b
        c_t = σ(f + forget_bias) ⊙ c_{t-1} + σ(i) ⊙ tanh(g);   h_t = σ(o) ⊙ tanh(c_t)

    **Arguments:** `input_size`, `hidden_size` (wired); `forget_bias` (added to
    the forget gate, 1.0 as Jozefowicz et al. 2015 advise); `init_scale`; `key`.
    The state is ``(h, c)``.
    """

    weight_x: Float[Array, "input gates"]
    weight_h: Float[Array, "hidden gates"]
    bias: Float[Array, " gates"]
    input_size: int = eqx.field(static=True)
    hidden_size: int = eqx.field(static=True)
    forget_bias: float = eqx.field(static=True)

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        forget_bias: float = 1.0,
        init_scale: float | None = None,
        key: PRNGKeyArray,
        dtype: DTypeLike = jnp.float32,
    ) -> None:
        self.weight_x, self.weight_h, self.bias = _init_weights(input_size, hidden_size, 4, init_scale, key, dtype)
        self.input_size, self.hidden_size, self.forget_bias = input_size, hidden_size, forget_bias

    def init_state(self) -> tuple[Array, Array]:
        return jnp.zeros(self.hidden_size, self.weight_h.dtype), jnp.zeros(self.hidden_size, self.weight_h.dtype)

    @jax.named_scope("lstm")
    def project(self, x: Float[Array, " input"]) -> Float[Array, " gates"]:
        return x @ self.weight_x + self.bias

    @jax.named_scope("lstm")
    def recur(self, projected: Float[Array, " gates"], state: tuple[Array, Array]) -> tuple[Array, Array]:
        h, c = state
        i, f, g, o = jnp.split(projected + h @ self.weight_h, 4)
        c = jax.nn.sigmoid(f + self.forget_bias) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return h, c

    def output(self, state: tuple[Array, Array]) -> Float[Array, " hidden"]:
        return state[0]

    @jax.named_scope("lstm")
    def scan(
        self,
        projected: Float[Array, "seq gates"],
        mask: Bool[Array, " seq"],
        state: tuple[Array, Array],
        *,
        reverse=False,
    ) -> tuple[Float[Array, "seq hidden"], tuple[Array, Array]]:
        """The same values as the generic scan; the gradient comes from `zoo_recurrent.fused`."""
        return lstm_sequence(self.weight_h, projected, mask, state, forget_bias=self.forget_bias, reverse=reverse)

    @jax.named_scope("lstm")
    def run(
        self,
        xs: Float[Array, "seq input"],
        mask: Bool[Array, " seq"],
        state: tuple[Array, Array],
        *,
        reverse=False,
    ) -> tuple[Float[Array, "seq hidden"], tuple[Array, Array]]:
        """The same values as `project` then `scan`, with the projection fused into the scan."""
        return lstm_layer(
            self.weight_x, self.bias, self.weight_h, xs, mask, state, forget_bias=self.forget_bias, reverse=reverse
        )


class GRUCell(RecurrentCell):
    """Gated recurrent unit (Cho et al. 2014)::

        r = σ(W_xr x + b_xr + W_hr h + b_hr),  z = σ(W_xz x + b_xz + W_hz h + b_hz)
        n = tanh(W_xn x + b_xn + r ⊙ (W_hn h + b_hn)),  h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}

    **Arguments:** `input_size`, `hidden_size` (wired); `init_scale`; `key`.
    """

    weight_x: Float[Array, "input gates"]
    weight_h: Float[Array, "hidden gates"]
    bias_x: Float[Array, " gates"]
    bias_h: Float[Array, " gates"]
    input_size: int = eqx.field(static=True)
    hidden_size: int = eqx.field(static=True)

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        init_scale: float | None = None,
        key: PRNGKeyArray,
        dtype: DTypeLike = jnp.float32,
    ) -> None:
        k1, k2 = jax.random.split(key)
        self.weight_x, self.weight_h, self.bias_x = _init_weights(input_size, hidden_size, 3, init_scale, k1, dtype)
        scale = 1.0 / math.sqrt(hidden_size) if init_scale is None else init_scale
        self.bias_h = _uniform(k2, (3 * hidden_size,), scale, dtype)
        self.input_size, self.hidden_size = input_size, hidden_size

    def init_state(self) -> Float[Array, " hidden"]:
        return jnp.zeros(self.hidden_size, self.weight_h.dtype)

    @jax.named_scope("gru")
    def project(self, x: Float[Array, " input"]) -> Float[Array, " gates"]:
        return x @ self.weight_x + self.bias_x

    @jax.named_scope("gru")
    def recur(self, projected: Float[Array, " gates"], state: Float[Array, " hidden"]) -> Float[Array, " hidden"]:
        xr, xz, xn = jnp.split(projected, 3)
        hr, hz, hn = jnp.split(state @ self.weight_h + self.bias_h, 3)
        r = jax.nn.sigmoid(xr + hr)
        z = jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        return (1.0 - z) * n + z * state

    def output(self, state: Float[Array, " hidden"]) -> Float[Array, " hidden"]:
        return state
