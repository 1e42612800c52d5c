"""The recurrent encoder: stacked, optionally bidirectional and residual."""

from __future__ import annotations

import functools
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.typing import DTypeLike
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from zoo.plugin_api import Encoder, EncoderOutput, RecurrentCell, run_cell
from zoo.plugin_api import dropout as apply_dropout

__all__ = ["RecurrentEncoder"]


class RecurrentEncoder(Encoder):
    """A stack of recurrent layers over a padded sequence.

    Layer l reads the outputs of layer l-1 (dropout between layers when a key
    is given). Bidirectional layers concatenate a forward and a backward pass,
    ``h_t = [→h_t; ←h_t]``. With `residual`, a layer whose input and output sizes
    agree adds its input to its output. Pads hold the state, so padding never
    changes the states at real positions or the final summary.

    **Arguments:**

    - `input_size`: size of the input vectors (wired).
    - `cell`: a cell factory ``cell(input_size=, hidden_size=, key=)`` (wired from the cell slot).
    - `hidden_size`: per direction; `num_layers` (>= 1); `bidirectional`; `residual`; `dropout`.
    - `key`: parameter key.
    - `dtype`: given to each cell (None: the cell's own default, float32 for zoo's cells); no
      hyperparameter, so no file records it.
    """

    forward: tuple[RecurrentCell, ...]
    backward: tuple[RecurrentCell, ...] | None
    input_size: int = eqx.field(static=True)
    output_size: int = eqx.field(static=True)
    final_size: int = eqx.field(static=True)
    num_layers: int = eqx.field(static=True)
    residual: bool = eqx.field(static=True)
    dropout: float = eqx.field(static=True)

    def __init__(
        self,
        input_size: int,
        cell: Callable[..., RecurrentCell],
        *,
        hidden_size: int = 256,
        num_layers: int = 1,
        bidirectional: bool = False,
        residual: bool = False,
        dropout: float = 0.0,
        key: PRNGKeyArray,
        dtype: DTypeLike | None = None,
    ) -> None:
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        directions = 2 if bidirectional else 1
        keys = jax.random.split(key, (num_layers, 2))
        sizes = [input_size] + [hidden_size * directions] * (num_layers - 1)
        cell = cell if dtype is None else functools.partial(cell, dtype=dtype)
        self.forward = tuple(
            cell(input_size=size, hidden_size=hidden_size, key=k[0]) for size, k in zip(sizes, keys, strict=True)
        )
        self.backward = (
            tuple(cell(input_size=size, hidden_size=hidden_size, key=k[1]) for size, k in zip(sizes, keys, strict=True))
            if bidirectional
            else None
        )
        self.input_size = input_size
        self.output_size = hidden_size * directions
        self.final_size = hidden_size * directions
        self.num_layers = num_layers
        self.residual = residual
        self.dropout = dropout

    @jax.named_scope("recurrent")
    def __call__(
        self,
        x: Float[Array, "src input"],
        mask: Bool[Array, " src"],
        *,
        key: PRNGKeyArray | None = None,
    ) -> EncoderOutput:
        keys = [None] * self.num_layers if key is None else list(jax.random.split(key, self.num_layers))
        finals: list[Array] = []
        for layer in range(self.num_layers):
            inputs = x if layer == 0 else apply_dropout(x, self.dropout, keys[layer])
            out, last = run_cell(self.forward[layer], inputs, mask)
            finals = [self.forward[layer].output(last)]
            if self.backward is not None:
                back, first = run_cell(self.backward[layer], inputs, mask, reverse=True)
                out = jnp.concatenate([out, back], axis=-1)
                finals.append(self.backward[layer].output(first))
            if self.residual and out.shape[-1] == x.shape[-1]:
                out = out + jnp.where(mask[:, None], x, 0.0)
            x = out
        return EncoderOutput(states=x, final=jnp.concatenate(finals))
