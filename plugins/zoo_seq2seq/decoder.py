"""A stacked recurrent decoder with an optional attention slot.

Luong-style attention (reads s_t) runs after the recurrence: in teacher forcing
the layers run one after another over all positions, then attention, the
attentional layer ``h̃_t = tanh(W_c [c_t; s_t])`` and the output layer run as
batched matrix products outside the time loop. Bahdanau-style attention (reads
s_{t-1}) feeds the context into the first layer's input, so it runs inside the
loop; the output layers stay outside.

The context has the attention's `context_size`; what reads it (the attentional layer, the first
layer's input under Bahdanau) is sized from it. Per-head weights ``[heads, src]`` are reported as
their mean over heads.
"""

from __future__ import annotations

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int, PRNGKeyArray, PyTree

from zoo.plugin_api import (
    Attention,
    ContextualEmbedder,
    Decoder,
    DecoderOutput,
    Embedder,
    EncoderOutput,
    LinearInValues,
    Memory,
    RecurrentCell,
    run_cell,
)
from zoo.plugin_api import dropout as apply_dropout

__all__ = ["RecurrentDecoder"]


def _split(key: PRNGKeyArray | None, n: int) -> list[PRNGKeyArray | None]:
    return [None] * n if key is None else list(jax.random.split(key, n))


def _over_heads(weights: Array) -> Float[Array, "tgt src"]:
    """Attention weights ``[tgt, src]`` as reported: per-head weights ``[tgt, heads, src]`` averaged over heads."""
    return weights if weights.ndim == 2 else jnp.mean(weights, axis=-2)


class RecurrentDecoder(Decoder):
    """Embed the previous token, step the stacked cells, attend, predict.

    **Arguments:**

    - `embedder`: the target-side `Embedder` (wired).
    - `cell`: cell factory; `attention`: attention factory or None (wired from slots).
    - `memory_size`: encoder output size; `final_size`: encoder summary size;
      `vocab_size`: target vocabulary size (wired).
    - `hidden_size`, `num_layers`, `dropout`: hyperparameters.
    - `key`: parameter key.

    The initial state of every layer is ``tanh(W_b final + b_b)`` (a learned bridge
    from the encoder summary, one projection per state tensor).

    The attentional layer ``W_c`` reads the context (``[context_size]``, the attention's) and the
    top state. Where the attention declares `LinearInValues`, the search pre-multiplies the memory's
    values by the context half of ``W_c`` once per source (`search_memory`); any other attention is
    called on the real memory and its context goes through ``W_c`` here, with the same results.
    """

    embedder: Embedder
    cells: tuple[RecurrentCell, ...]
    attention: Attention | None
    bridge: tuple[eqx.nn.Linear, ...]
    combine: eqx.nn.Linear | None
    output: eqx.nn.Linear
    vocab_size: int = eqx.field(static=True)
    hidden_size: int = eqx.field(static=True)
    num_layers: int = eqx.field(static=True)
    dropout: float = eqx.field(static=True)

    def __init__(
        self,
        embedder: Embedder,
        cell: Callable[..., RecurrentCell],
        attention: Callable[..., Attention] | None,
        memory_size: int,
        final_size: int,
        vocab_size: int,
        *,
        hidden_size: int = 256,
        num_layers: int = 1,
        dropout: float = 0.0,
        key: PRNGKeyArray,
    ) -> None:
        k_att, k_cells, k_bridge, k_comb, k_out = jax.random.split(key, 5)
        self.embedder = embedder
        self.attention = (
            None if attention is None else attention(query_size=hidden_size, key_size=memory_size, key=k_att)
        )
        feeds_context = self.attention is not None and self.attention.reads_previous_state
        context_size = 0 if self.attention is None else self.attention.context_size
        first = embedder.embedding_size + (context_size if feeds_context else 0)
        sizes = [first] + [hidden_size] * (num_layers - 1)
        self.cells = tuple(
            cell(input_size=size, hidden_size=hidden_size, key=k)
            for size, k in zip(sizes, jax.random.split(k_cells, num_layers), strict=True)
        )
        leaves = jax.tree.leaves(tuple(c.init_state() for c in self.cells))
        self.bridge = tuple(
            eqx.nn.Linear(final_size, leaf.size, key=k)
            for leaf, k in zip(leaves, jax.random.split(k_bridge, len(leaves)), strict=True)
        )
        self.combine = (
            None if self.attention is None else eqx.nn.Linear(context_size + hidden_size, hidden_size, key=k_comb)
        )
        self.output = eqx.nn.Linear(hidden_size, vocab_size, key=k_out)
        self.vocab_size, self.hidden_size = vocab_size, hidden_size
        self.num_layers, self.dropout = num_layers, dropout

    @property
    def _feeds_context(self) -> bool:
        return self.attention is not None and self.attention.reads_previous_state

    @property
    def _premixes(self) -> bool:
        """Whether the search hands the attention values already through ``W_c``'s context half:
        only for a `LinearInValues` attention read after the recurrence (Luong's placement)."""
        return self.combine is not None and not self._feeds_context and isinstance(self.attention, LinearInValues)

    def memory(self, enc: EncoderOutput, mask: Array) -> Memory:
        keys = enc.states[:, :0] if self.attention is None else self.attention.precompute(enc.states)
        return Memory(values=enc.states, keys=keys, mask=mask)

    def search_memory(self, enc: EncoderOutput, mask: Array) -> Memory:
        """With a `LinearInValues` attention in Luong's placement, the values are the encoder
        states through the context half of the attentional layer,
        ``W_c [c; s] = Σ_i a_i (W_cc h_i) + W_cs s``: one ``[src, memory] x [memory, hidden]``
        product per source instead of one per hypothesis and step. Any other attention (one
        whose context is not ``weights @ values``, Bahdanau's fed to the first layer) gets the
        real memory, `memory`'s."""
        memory = self.memory(enc, mask)
        if not self._premixes:
            return memory
        return memory._replace(values=enc.states @ self.combine.weight[:, : self.attention.context_size].T)

    def init_state(self, enc: EncoderOutput) -> PyTree:
        zeros = tuple(c.init_state() for c in self.cells)
        leaves, treedef = jax.tree.flatten(zeros)
        bridged = [
            jnp.tanh(linear(enc.final)).reshape(leaf.shape) for linear, leaf in zip(self.bridge, leaves, strict=True)
        ]
        return jax.tree.unflatten(treedef, bridged)

    def _layers(self, projected: Array, state: tuple, key: PRNGKeyArray | None) -> tuple[Array, tuple]:
        """One step through every layer, from the first layer's projected input:
        (top output [hidden], new states)."""
        keys = _split(key, self.num_layers)
        new = [self.cells[0].recur(projected, state[0])]
        x = self.cells[0].output(new[0])
        for layer in range(1, self.num_layers):
            cell = self.cells[layer]
            new.append(cell(apply_dropout(x, self.dropout, keys[layer]), state[layer]))
            x = cell.output(new[-1])
        return x, tuple(new)

    def _own_weight(self) -> Float[Array, "hidden hidden"]:
        """``W_cs``: the top state's half of the attentional layer."""
        return self.combine.weight[:, self.combine.weight.shape[1] - self.hidden_size :]

    def _readout(
        self, hidden: Array, context: Array | None, key: PRNGKeyArray | None, *, premixed: Array | None = None
    ) -> Array:
        """Logits from top states ``[..., hidden]`` and contexts ``[..., context_size]`` (``[..., hidden]``,
        already through ``W_cc``, where they come from `search_memory`'s premixed values; `premixed`
        is then ``W_cs``, sliced once outside the search loop rather than once a step)."""
        if premixed is not None:
            hidden = jnp.tanh(context + hidden @ premixed.T + self.combine.bias)
        elif self.combine is not None:
            joined = jnp.concatenate([context, hidden], axis=-1)
            hidden = jnp.tanh(joined @ self.combine.weight.T + self.combine.bias)
        hidden = apply_dropout(hidden, self.dropout, key)
        return hidden @ self.output.weight.T + self.output.bias

    def step(
        self, token: Int[Array, ""], state: PyTree, memory: Memory, *, key: PRNGKeyArray | None = None
    ) -> tuple[Float[Array, " vocab"], PyTree]:
        with jax.named_scope("recurrent-decoder.step"):
            k_emb, k_layers, k_out = _split(key, 3)
            x = self.embedder(token[None], key=k_emb)[0]
            context = None
            if self._feeds_context:
                context, _ = self.attention(self.cells[-1].output(state[-1]), memory)
                x = jnp.concatenate([x, context])
            return self._step_projected(self.cells[0].project(x), state, memory, context, k_layers, k_out)

    def _step_projected(
        self,
        projected: Array,
        state: tuple,
        memory: Memory,
        context: Array | None,
        k_layers: PRNGKeyArray | None = None,
        k_out: PRNGKeyArray | None = None,
        *,
        premixed: Array | None = None,
    ) -> tuple[Array, tuple]:
        """`step` after the first layer's input projection."""
        hidden, state = self._layers(projected, state, k_layers)
        if self.attention is not None and not self.attention.reads_previous_state:
            context, _ = self.attention(hidden, memory)
        return self._readout(hidden, context, k_out, premixed=premixed), state

    def search_step(self, lookups: int) -> Callable[[Array, tuple, Memory], tuple[Array, tuple]]:
        """`step` over `search_memory`'s memory, the first layer's projected input read
        from a table of the whole vocabulary where that pays.

        The table ``[vocab, proj]`` (one product of the embedding matrix) replaces a
        ``[embedding] x [embedding, proj]`` product per token fed, so it is built when
        the search feeds at least `vocab_size` tokens, and only where the first
        layer reads the token's embedding alone (a static embedder, no context fed in).
        """
        if self._feeds_context:
            return super().search_step(lookups)
        first = self.cells[0]
        if lookups >= self.vocab_size and not isinstance(self.embedder, ContextualEmbedder):
            table = jax.vmap(first.project)(self.embedder.vectors())
            project = lambda token: table[token]
        else:
            project = lambda token: first.project(self.embedder(token[None])[0])
        premixed = self._own_weight() if self._premixes else None

        def step(token: Array, state: tuple, memory: Memory) -> tuple[Array, tuple]:
            return self._step_projected(project(token), state, memory, None, premixed=premixed)

        return step

    def __call__(
        self,
        tokens: Int[Array, " tgt"],
        enc: EncoderOutput,
        memory: Memory,
        *,
        key: PRNGKeyArray | None = None,
    ) -> DecoderOutput:
        with jax.named_scope("recurrent-decoder"):
            k_emb, k_layers, k_out = _split(key, 3)
            state = self.init_state(enc)
            xs = self.embedder(tokens, key=k_emb)
            if self._feeds_context:
                hidden, contexts, weights = self._scan_feeding(xs, state, memory, k_layers)
            else:
                hidden = self._run_layers(xs, state, k_layers)
                contexts = weights = None
                if self.attention is not None:
                    contexts, weights = jax.vmap(self.attention, in_axes=(0, None))(hidden, memory)
            weights = None if weights is None else _over_heads(weights)
            return DecoderOutput(logits=self._readout(hidden, contexts, k_out), attention=weights)

    def _run_layers(self, xs: Array, state: tuple, key: PRNGKeyArray | None) -> Array:
        """Teacher forcing without context feeding: layer by layer over all positions."""
        keys = _split(key, self.num_layers)
        everywhere = jnp.ones(xs.shape[0], dtype=bool)
        for layer, cell in enumerate(self.cells):
            if layer > 0:
                xs = apply_dropout(xs, self.dropout, keys[layer])
            xs, _ = run_cell(cell, xs, everywhere, state[layer])
        return xs

    def _scan_feeding(self, xs: Array, state: tuple, memory: Memory, key: PRNGKeyArray | None):
        """Teacher forcing with Bahdanau attention: context from s_{t-1} enters the step."""
        keys = None if key is None else jax.random.split(key, xs.shape[0])

        def body(carry, inputs):
            x, k = inputs
            context, weights = self.attention(self.cells[-1].output(carry[-1]), memory)
            hidden, carry = self._layers(self.cells[0].project(jnp.concatenate([x, context])), carry, k)
            return carry, (hidden, context, weights)

        if keys is None:
            _, outs = jax.lax.scan(lambda c, x: body(c, (x, None)), state, xs)
        else:
            _, outs = jax.lax.scan(body, state, (xs, keys))
        return outs
